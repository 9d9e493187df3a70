// qdml/simd/gemm/epilogue.hpp - the requantize epilogue, fused into every
// micro-kernel's store (docs/semantics.md section 5):
//   acc  = dot + row.bias + col.bias[n] (+ row.neg_ra * col.zp[n]) (+ row.neg_azp * col.sum[n])   (mod 2^32)
//   mult = fp32(AScale[m] * BScale[n]) / OutputScale[m]      (per column, per row, or per element)
//   out  = Q(fp32(acc) * mult, OutputZP[m])
// The zero-point terms are those of pack.hpp; a term whose zero point is the
// same for every row (column) is folded into a per-column (per-row) bias.
// The multiplier is precomputed once per call where one factor is uniform,
// else formed per element in the same binary32 order.
// In the DirectML profile (RequantSpec::directml, docs/semantics.md section
// 10) the scales apply one at a time and the quantize step is DirectML's:
//   out  = quantize_directml(((fp32(acc) * s1) * s2) / OutputScale[m], OutputZP[m])
// with (s1, s2) = (AScale[m], BScale[n]), or (BScale[n], AScale[m]) when
// col_scale_first (the NHWC convolution, whose columns are the filter's).
// Every store then takes its per-element form (MultMode::PerElement).
// The int32 store (RequantSpec::int32_out: MATRIX_MULTIPLY_INTEGER,
// docs/semantics.md section 12) writes acc itself, wrapped, as INT32: no
// scale, no output zero point, no Q (the stores' fused forms are skipped).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/simd/gemm/types.hpp"

namespace qdml::simd::gemm {

/// Per-row epilogue constants.
struct RowParams {
    std::uint32_t bias = 0;     ///< -bzp' * ra[m] when BZP is uniform
    std::uint32_t neg_ra = 0;   ///< -ra[m] when BZP varies per column
    std::uint32_t neg_azp = 0;  ///< -azp'[m] when AZP varies per row
    std::int32_t zp = 0;        ///< OutputZP[m]
    float lo = 0, hi = 0;       ///< Q's clamp bounds: type range minus zp
    float mult = 0;             ///< multiplier when BScale is uniform
    float a_scale = 0, out_scale = 0;
};

enum class MultMode { PerColumn, PerRow, PerElement };

/// The requantize descriptor: per-tensor, per-row and per-column parameters as
/// DML allows for matmul (and, with rows = output channels, convolution).
/// Each array holds one value (per tensor) or one per row / column.
struct RequantSpec {
    std::vector<std::int32_t> a_zp, b_zp, out_zp;  ///< a_zp, b_zp already shifted (azp', bzp')
    std::vector<float> a_scale, b_scale, out_scale;
    std::int32_t out_lo = 0, out_hi = 255;         ///< output type range
    bool directml = false;         ///< the DirectML profile's requantize (see the top of this file)
    bool col_scale_first = false;  ///< DirectML: BScale[n] before AScale[m] (the NHWC convolution)
    bool int32_out = false;  ///< store acc as int32 (no requantize; the scales and out_zp unused, may be empty)
};

/// Everything the epilogue reads, derived once per call (columns: once per
/// packed right operand).
struct Epilogue {
    std::size_t M = 0, N = 0;
    bool var_a = false, var_b = false;  ///< AZP' varies over rows / BZP' over columns
    MultMode mode = MultMode::PerColumn;
    std::vector<RowParams> rows;
    // Column arrays, padded with zeros to whole panels (plus 4 for wide tiles).
    AlignedArray<std::uint32_t> col_bias, col_zp, col_sum;
    AlignedArray<float> col_mult, col_scale;
    std::int32_t out_lo = 0, out_hi = 255;  ///< output type range
    std::uint8_t* out = nullptr;
    std::uint64_t out_rs = 0, out_cs = 1;
    std::uint32_t bzp0 = 0;  ///< bzp'[0] (every column's when !var_b)
    std::uint32_t neg_azp0 = 0;  ///< -azp' when AZP' is uniform, else 0 (the column bias's factor)
    /// Every per-column (cols_small, prepare_columns) or per-row (rows_small,
    /// prepare_rows) multiplier passes requantize_fits_int32 (|mult| < 1):
    /// then store_rows32 needs no clamp at all.
    bool cols_small = false, rows_small = false;
    bool same_zp = false;  ///< every row's OutputZP is the same (prepare_rows)
    /// DirectML profile: every value ((fp32(acc) * s1) * s2) / OutputScale
    /// is finite and below 2^30 in magnitude for any int32 acc (prepare_rows:
    /// dml_small_bound), so quantize_directml is clamp(rne(v) + zp) with no
    /// wrap, saturation or NaN: the saturating packs give it.
    bool dml_small = false;
    double col_scale_max = 0;  ///< max |BScale[n]|; infinity if one is not finite (prepare_columns)
    bool directml = false;   ///< RequantSpec::directml (mode is then PerElement)
    bool col_first = false;  ///< RequantSpec::col_scale_first
    bool int32_out = false;  ///< RequantSpec::int32_out: `out` holds int32 elements (strides in elements)

    const RowParams& row(std::size_t m) const noexcept { return rows[m]; }
    /// Whether the left operand's row sums enter the result (BZP' not all 0;
    /// known after prepare_columns): pack_left may skip them otherwise.
    bool needs_row_sums() const noexcept { return var_b || bzp0 != 0; }
    /// The common case of the vector kernels' fused stores: uniform zero
    /// points, a per-column multiplier, contiguous output rows, a
    /// requantized (8-bit) output.
    bool common_store() const noexcept {
        return !(var_a || var_b || int32_out || mode != MultMode::PerColumn || out_cs != 1);
    }
    /// The bytes of output element (m, n).
    std::uint8_t* element(std::size_t m, std::size_t n) const noexcept {
        return out + (m * out_rs + n * out_cs) * (int32_out ? sizeof(std::int32_t) : 1);
    }
};

namespace detail {
/// Whether every element has the same bits (each equals the next: one memcmp).
template <class T>
bool uniform(const std::vector<T>& v) noexcept {
    return v.size() < 2 || std::memcmp(v.data(), v.data() + 1, (v.size() - 1) * sizeof(T)) == 0;
}
template <class T>
const T& at(const std::vector<T>& v, std::size_t i) noexcept {
    return v.size() == 1 ? v[0] : v[i];
}
}  // namespace detail

/// Column constants: depend on the right operand's sums and B's parameters
/// (and on AZP', when it is uniform). The multiplier table is filled here.
/// Each array is a plain loop over the columns (vectorized), written up to
/// whole panels plus 4 (the columns past N are 0): a batch of small products
/// calls this once per distinct right operand.
inline void prepare_columns(const RequantSpec& s, const PackedRight& b, Epilogue& e) {
    const std::size_t N = b.N, width = b.panels * kPanel + 4 * kPanel;
    e.N = N;
    e.var_a = !detail::uniform(s.a_zp);
    e.var_b = !detail::uniform(s.b_zp);
    e.bzp0 = static_cast<std::uint32_t>(s.b_zp[0]);
    const bool rows_uniform = detail::uniform(s.a_scale) && detail::uniform(s.out_scale);
    e.directml = s.directml;
    e.col_first = s.col_scale_first;
    e.int32_out = s.int32_out;
    e.mode = s.int32_out      ? MultMode::PerColumn  // (unused: no multiplier)
             : s.directml     ? MultMode::PerElement
             : rows_uniform   ? MultMode::PerColumn
             : detail::uniform(s.b_scale) ? MultMode::PerRow
                                          : MultMode::PerElement;
    e.col_bias.resize(width);
    e.col_zp.resize(width);
    e.col_sum.resize(width);
    e.col_mult.resize(width);
    e.col_scale.resize(width);
    const std::uint32_t K = static_cast<std::uint32_t>(b.K);
    const std::uint32_t neg_azp = e.neg_azp0 = e.var_a ? 0u : 0u - static_cast<std::uint32_t>(s.a_zp[0]);
    std::uint32_t *zp = e.col_zp.data(), *sum = e.col_sum.data(), *bias = e.col_bias.data();
    float *scale = e.col_scale.data(), *mult = e.col_mult.data();
    const std::uint32_t* cb = b.col_sum.data();
    if (s.b_zp.size() == 1)
        std::fill(zp, zp + N, e.bzp0);
    else
        for (std::size_t n = 0; n < N; ++n) zp[n] = static_cast<std::uint32_t>(s.b_zp[n]);
    for (std::size_t n = 0; n < N; ++n) sum[n] = cb[n] - K * zp[n];  // cb'[n] = cb[n] - K * bzp'[n]
    for (std::size_t n = 0; n < N; ++n) bias[n] = neg_azp * sum[n];
    if (s.int32_out)
        std::fill(scale, scale + N, 0.0f);
    else if (s.b_scale.size() == 1)
        std::fill(scale, scale + N, s.b_scale[0]);
    else
        std::copy(s.b_scale.begin(), s.b_scale.begin() + N, scale);
    if (e.mode != MultMode::PerColumn || s.int32_out)
        std::fill(mult, mult + N, 0.0f);
    else if (s.b_scale.size() == 1)
        std::fill(mult, mult + N, N > 0 ? requantize_multiplier(s.a_scale[0], s.b_scale[0], s.out_scale[0]) : 0.0f);
    else
        for (std::size_t n = 0; n < N; ++n) mult[n] = requantize_multiplier(s.a_scale[0], scale[n], s.out_scale[0]);
    double col_max = 0;
    for (std::size_t n = 0; n < N; ++n)
        col_max = std::isfinite(scale[n]) ? std::max(col_max, static_cast<double>(std::fabs(scale[n])))
                                          : std::numeric_limits<double>::infinity();
    e.col_scale_max = col_max;
    bool small = true;
    for (std::size_t n = 0; n < N; ++n) small &= requantize_fits_int32(mult[n]);
    e.cols_small = e.mode == MultMode::PerColumn && small;
    const std::size_t pad = (width - N) * 4;
    std::memset(zp + N, 0, pad);
    std::memset(sum + N, 0, pad);
    std::memset(bias + N, 0, pad);
    std::memset(mult + N, 0, pad);
    std::memset(scale + N, 0, pad);
}

/// The column constants that depend on the right operand's sums (col_sum,
/// col_bias), the others left as prepare_columns set them: a batch whose
/// right operand changes from product to product (the spec, K and N
/// staying) calls this alone.
inline void update_columns(const PackedRight& b, Epilogue& e) noexcept {
    const std::uint32_t K = static_cast<std::uint32_t>(b.K), neg_azp = e.neg_azp0;
    const std::uint32_t *cb = b.col_sum.data(), *zp = e.col_zp.data();
    std::uint32_t *sum = e.col_sum.data(), *bias = e.col_bias.data();
    for (std::size_t n = 0; n < b.N; ++n) sum[n] = cb[n] - K * zp[n];
    for (std::size_t n = 0; n < b.N; ++n) bias[n] = neg_azp * sum[n];
}

/// The row constants that depend on the left operand's sums (bias, neg_ra),
/// the others left as prepare_rows set them: a batch whose left operand
/// changes from product to product (the spec staying) calls this alone.
/// Reads no sums when the epilogue needs none (pack_left may skip them).
inline void update_row_sums(const PackedLeft& a, Epilogue& e) noexcept {
    if (!e.needs_row_sums()) {
        for (std::size_t m = 0; m < a.M; ++m) e.rows[m].bias = e.rows[m].neg_ra = 0;
        return;
    }
    for (std::size_t m = 0; m < a.M; ++m) {
        const std::uint32_t ra = a.row_sum[m];
        e.rows[m].bias = e.var_b ? 0u : 0u - e.bzp0 * ra;
        e.rows[m].neg_ra = 0u - ra;
    }
}

/// Whether DirectML's requantize of row r stays below 2^30 for every int32
/// acc and column (Epilogue::dml_small): |fp32(acc)| <= 2^31, so
/// |v| <= 2^31 * max|BScale| * |AScale[m]| / |OutputScale[m]| up to three
/// roundings (relative 2^-24 each); below 0.4999 that is under 2^30. The
/// scales finite and at most 2^64 (no intermediate product overflows), the
/// output scale not 0: v is finite, never NaN. (Doubles: the bound's
/// products are exact or rounded far below the margin.)
inline bool dml_small_bound(double col_scale_max, const RowParams& r) noexcept {
    const double as = std::fabs(static_cast<double>(r.a_scale)), os = std::fabs(static_cast<double>(r.out_scale));
    const double limit = 18446744073709551616.0;  // 2^64
    return col_scale_max <= limit && as <= limit && os > 0 && os <= limit && col_scale_max * as < 0.4999 * os;
}

/// Row constants: depend on the left operand's row sums and A's / the
/// output's parameters. After prepare_columns (which fixes var_b and the
/// multiplier mode).
inline void prepare_rows(const RequantSpec& s, const PackedLeft& a, Epilogue& e) {
    e.M = a.M;
    e.out_lo = s.out_lo;
    e.out_hi = s.out_hi;
    e.rows.resize(a.M);
    bool small = e.mode == MultMode::PerRow, dml = true;
    for (std::size_t m = 0; m < a.M; ++m) {
        RowParams& r = e.rows[m];
        r.neg_azp = 0u - static_cast<std::uint32_t>(detail::at(s.a_zp, m));
        if (s.int32_out) continue;  // (no output parameters)
        r.zp = detail::at(s.out_zp, m);
        r.lo = static_cast<float>(s.out_lo - r.zp);
        r.hi = static_cast<float>(s.out_hi - r.zp);
        r.a_scale = detail::at(s.a_scale, m);
        r.out_scale = detail::at(s.out_scale, m);
        if (e.mode == MultMode::PerRow) r.mult = requantize_multiplier(r.a_scale, s.b_scale[0], r.out_scale);
        small = small && requantize_fits_int32(r.mult);
        dml = dml && dml_small_bound(e.col_scale_max, r);
    }
    e.rows_small = small;
    e.dml_small = e.directml && !s.int32_out && dml;
    e.same_zp = detail::uniform(s.out_zp);  // (int32_out: empty, true)
    update_row_sums(a, e);
}

/// The int32 accumulator of element (m, n) from the raw u8 x s8 dot product.
inline std::int32_t corrected(const Epilogue& e, const RowParams& r, std::size_t n, std::uint32_t dot) noexcept {
    std::uint32_t acc = dot + r.bias + e.col_bias[n];
    if (e.var_b) acc += r.neg_ra * e.col_zp[n];
    if (e.var_a) acc += r.neg_azp * e.col_sum[n];
    return wrap_int32(acc);
}

/// The multiplier of element (m, n).
inline float multiplier(const Epilogue& e, const RowParams& r, std::size_t n) noexcept {
    switch (e.mode) {
        case MultMode::PerColumn: return e.col_mult[n];
        case MultMode::PerRow: return r.mult;
        case MultMode::PerElement: break;
    }
    return requantize_multiplier(r.a_scale, e.col_scale[n], r.out_scale);
}

/// Scalar store of one element (the generic kernel): acc itself
/// (int32_out), Q through core's requantize, or DirectML's requantize_directml.
template <class TOut>
inline void store_one(const Epilogue& e, std::size_t m, std::size_t n, std::uint32_t dot) noexcept {
    const RowParams& r = e.row(m);
    const std::int32_t acc = corrected(e, r, n, dot);
    if (e.int32_out) {
        std::memcpy(e.element(m, n), &acc, sizeof acc);
        return;
    }
    if constexpr (sizeof(TOut) == 1) {  // (an int32 TOut is int32_out's)
        const TOut q = !e.directml ? requantize<TOut>(acc, multiplier(e, r, n), r.zp)
                       : e.col_first ? requantize_directml<TOut>(acc, e.col_scale[n], r.a_scale, r.out_scale, r.zp)
                                     : requantize_directml<TOut>(acc, r.a_scale, e.col_scale[n], r.out_scale, r.zp);
        std::memcpy(e.element(m, n), &q, 1);
    }
}

/// The bytes of q (values already in the output range) to columns n0.. of row m.
template <std::size_t W>
inline void scatter_bytes(const Epilogue& e, std::size_t m, std::size_t n0, const std::uint8_t* bytes) noexcept {
    const std::size_t count = std::min(W, e.N - n0);
    std::uint8_t* dst = e.out + m * e.out_rs + n0 * e.out_cs;
    for (std::size_t j = 0; j < count; ++j) dst[j * e.out_cs] = bytes[j];
}

/// The int32 sums v (int32_out) to columns n0.. of row m (any column stride).
template <std::size_t W>
inline void scatter_int32(const Epilogue& e, std::size_t m, std::size_t n0, const std::int32_t* v) noexcept {
    const std::size_t count = std::min(W, e.N - n0);
    for (std::size_t j = 0; j < count; ++j) std::memcpy(e.element(m, n0 + j), v + j, sizeof *v);
}

}  // namespace qdml::simd::gemm

/// The parameters of every ISA's tile<...>(a, b, e, m0, p), spelled for the
/// explicit instantiations that compile them once (x86/*/gemm_kernel.hpp,
/// QDML_EXTERN_GEMM_KERNELS: runtime/dispatch.hpp).
#define QDML_DETAIL_GEMM_TILE_PARAMS                                                                  \
    const qdml::simd::gemm::PackedLeft&, const qdml::simd::gemm::PackedRight&, const qdml::simd::gemm::Epilogue&, \
        std::size_t, std::size_t
