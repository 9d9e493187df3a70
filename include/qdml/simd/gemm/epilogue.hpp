// qdml/simd/gemm/epilogue.hpp - the requantize epilogue, fused into every
// micro-kernel's store (docs/semantics.md section 5):
//   acc  = dot + row.bias + col.bias[n] (+ row.neg_ra * col.zp[n]) (+ row.neg_azp * col.sum[n])   (mod 2^32)
//   mult = fp32(AScale[m] * BScale[n]) / OutputScale[m]      (per column, per row, or per element)
//   out  = Q(fp32(acc) * mult, OutputZP[m])
// The zero-point terms are those of pack.hpp; a term whose zero point is the
// same for every row (column) is folded into a per-column (per-row) bias.
// The multiplier is precomputed once per call where one factor is uniform,
// else formed per element in the same binary32 order.
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
#include "qdml/simd/gemm/pack.hpp"

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

    const RowParams& row(std::size_t m) const noexcept { return rows[m]; }
    /// Whether the left operand's row sums enter the result (BZP' not all 0;
    /// known after prepare_columns): pack_left may skip them otherwise.
    bool needs_row_sums() const noexcept { return var_b || bzp0 != 0; }
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
    e.mode = rows_uniform ? MultMode::PerColumn : detail::uniform(s.b_scale) ? MultMode::PerRow : MultMode::PerElement;
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
    if (s.b_scale.size() == 1)
        std::fill(scale, scale + N, s.b_scale[0]);
    else
        std::copy(s.b_scale.begin(), s.b_scale.begin() + N, scale);
    if (e.mode != MultMode::PerColumn)
        std::fill(mult, mult + N, 0.0f);
    else if (s.b_scale.size() == 1)
        std::fill(mult, mult + N, N > 0 ? requantize_multiplier(s.a_scale[0], s.b_scale[0], s.out_scale[0]) : 0.0f);
    else
        for (std::size_t n = 0; n < N; ++n) mult[n] = requantize_multiplier(s.a_scale[0], scale[n], s.out_scale[0]);
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

/// Row constants: depend on the left operand's row sums and A's / the
/// output's parameters. After prepare_columns (which fixes var_b and the
/// multiplier mode).
inline void prepare_rows(const RequantSpec& s, const PackedLeft& a, Epilogue& e) {
    e.M = a.M;
    e.out_lo = s.out_lo;
    e.out_hi = s.out_hi;
    e.rows.resize(a.M);
    bool small = e.mode == MultMode::PerRow;
    for (std::size_t m = 0; m < a.M; ++m) {
        RowParams& r = e.rows[m];
        r.neg_azp = 0u - static_cast<std::uint32_t>(detail::at(s.a_zp, m));
        r.zp = detail::at(s.out_zp, m);
        r.lo = static_cast<float>(s.out_lo - r.zp);
        r.hi = static_cast<float>(s.out_hi - r.zp);
        r.a_scale = detail::at(s.a_scale, m);
        r.out_scale = detail::at(s.out_scale, m);
        if (e.mode == MultMode::PerRow) r.mult = requantize_multiplier(r.a_scale, s.b_scale[0], r.out_scale);
        small = small && requantize_fits_int32(r.mult);
    }
    e.rows_small = small;
    e.same_zp = detail::uniform(s.out_zp);
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

/// Scalar store of one element (the generic kernel): Q through core's requantize.
template <class TOut>
inline void store_one(const Epilogue& e, std::size_t m, std::size_t n, std::uint32_t dot) noexcept {
    const RowParams& r = e.row(m);
    const TOut q = requantize<TOut>(corrected(e, r, n, dot), multiplier(e, r, n), r.zp);
    std::memcpy(e.out + m * e.out_rs + n * e.out_cs, &q, 1);
}

#if QDML_GEMM_X86
/// The bytes of q (values already in the output range) to columns n0.. of row m.
template <std::size_t W>
inline void scatter_bytes(const Epilogue& e, std::size_t m, std::size_t n0, const std::uint8_t* bytes) noexcept {
    const std::size_t count = std::min(W, e.N - n0);
    std::uint8_t* dst = e.out + m * e.out_rs + n0 * e.out_cs;
    for (std::size_t j = 0; j < count; ++j) dst[j * e.out_cs] = bytes[j];
}

/// 16 columns n0.. of row m from a 512-bit dot product (AVX-512 VNNI and AMX).
/// The requantize step of 16 int32 sums (docs/semantics.md section 5): `Q(fp32(acc) *
/// mult)` as `min(hi, max(lo, v))`, round to nearest even, plus the output
/// zero point, as 16 int32 lanes (stored as bytes by the caller). Every
/// AVX-512 store of the vector kernels goes through it.
QDML_TARGET_AVX512 inline __m512i requantize16(__m512i acc, __m512 mult, __m512 lo, __m512 hi, __m512i zp) noexcept {
    // (The all-lanes maskz forms: g++ 12's unmasked ones warn -Wuninitialized inside its own header.)
    constexpr __mmask16 all = 0xffff;
    __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), mult);
    v = _mm512_maskz_max_ps(all, v, lo);  // max(NaN, lo) is lo: Q maps NaN to lo - zp
    v = _mm512_maskz_min_ps(all, v, hi);
    return _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), zp);  // rne (MXCSR)
}

QDML_TARGET_AVX512 inline void store16(const Epilogue& e, std::size_t m, std::size_t n0, __m512i dot) noexcept {
    const RowParams& r = e.row(m);
    __m512i acc = _mm512_add_epi32(dot, _mm512_set1_epi32(static_cast<int>(r.bias)));
    acc = _mm512_add_epi32(acc, _mm512_load_si512(e.col_bias.data() + n0));
    if (e.var_b)
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(r.neg_ra)),
                                                       _mm512_load_si512(e.col_zp.data() + n0)));
    if (e.var_a)
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(r.neg_azp)),
                                                       _mm512_load_si512(e.col_sum.data() + n0)));
    __m512 mult;
    if (e.mode == MultMode::PerColumn)
        mult = _mm512_load_ps(e.col_mult.data() + n0);
    else if (e.mode == MultMode::PerRow)
        mult = _mm512_set1_ps(r.mult);
    else
        mult = _mm512_div_ps(_mm512_mul_ps(_mm512_set1_ps(r.a_scale), _mm512_load_ps(e.col_scale.data() + n0)),
                             _mm512_set1_ps(r.out_scale));
    const __m512i q = requantize16(acc, mult, _mm512_set1_ps(r.lo), _mm512_set1_ps(r.hi), _mm512_set1_epi32(r.zp));
    const std::size_t count = e.N - n0 < 16 ? e.N - n0 : 16;
    if (e.out_cs == 1) {
        _mm512_mask_cvtepi32_storeu_epi8(e.out + m * e.out_rs + n0, static_cast<__mmask16>((1u << count) - 1u), q);
    } else {
        alignas(16) std::uint8_t bytes[16];
        _mm512_mask_cvtepi32_storeu_epi8(bytes, 0xffff, q);
        scatter_bytes<16>(e, m, n0, bytes);
    }
}

/// Rows m0..m0+rows-1 x columns n0..n0+15 from 16-lane int32 dot products
/// `c` (row r at c + r * 16; AMX tile stores) that already hold the column
/// bias when `has_col_bias` (accumulators that started from it), else not:
/// store16's arithmetic with the per-column vectors loaded once for all rows
/// in the common case (uniform zero points, per-column multiplier,
/// contiguous output rows).
QDML_TARGET_AVX512 inline void store_rows16(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                                            const std::int32_t* c, bool has_col_bias = true) noexcept {
    const __m512i col_bias = _mm512_load_si512(e.col_bias.data() + n0);
    if (e.var_a || e.var_b || e.mode != MultMode::PerColumn || e.out_cs != 1) {
        for (std::size_t r = 0; r < rows; ++r) {  // store16 adds the column bias
            const __m512i dot = _mm512_load_si512(c + 16 * r);
            store16(e, m0 + r, n0, has_col_bias ? _mm512_sub_epi32(dot, col_bias) : dot);
        }
        return;
    }
    const std::size_t count = e.N - n0 < 16 ? e.N - n0 : 16;
    const auto mask = static_cast<__mmask16>((1u << count) - 1u);
    const __m512 mult = _mm512_load_ps(e.col_mult.data() + n0);
    const __m512i add = has_col_bias ? _mm512_setzero_si512() : col_bias;
    std::uint8_t* out = e.out + m0 * e.out_rs + n0;
    const RowParams* rp = e.rows.data() + m0;
    for (std::size_t r = 0; r < rows; ++r, out += e.out_rs, ++rp) {
        const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(_mm512_load_si512(c + 16 * r), add),
                                             _mm512_set1_epi32(static_cast<int>(rp->bias)));
        const __m512i q =
            requantize16(acc, mult, _mm512_set1_ps(rp->lo), _mm512_set1_ps(rp->hi), _mm512_set1_epi32(rp->zp));
        _mm512_mask_cvtepi32_storeu_epi8(out, mask, q);
    }
}

namespace detail {
/// One row of 16 columns for store_rows32: int32 of round(fp32(acc) * mult),
/// acc = the dot products + the row's bias (when not 0), the product clamped
/// to hi (Clamp).
template <bool PerColumn, bool Clamp>
QDML_TARGET_AVX512 inline __m512i q32(const RowParams& rp, __m512i acc, __m512 col_mult) noexcept {
    constexpr __mmask16 all = 0xffff;
    if (rp.bias != 0) acc = _mm512_add_epi32(acc, _mm512_set1_epi32(static_cast<int>(rp.bias)));
    __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), PerColumn ? col_mult : _mm512_set1_ps(rp.mult));
    if constexpr (Clamp) v = _mm512_maskz_min_ps(all, _mm512_set1_ps(rp.hi), v);
    return _mm512_maskz_cvtps_epi32(all, v);
}
template <bool PerColumn, bool Clamp>
QDML_TARGET_AVX512 inline __m512i q32(const RowParams& rp, const std::int32_t* c, __m512 col_mult) noexcept {
    return q32<PerColumn, Clamp>(rp, _mm512_load_si512(c), col_mult);
}

/// store_rows32's loop; AddColBias: the dot products lack the column bias.
template <bool PerColumn, bool Clamp, bool SameZp, bool AddColBias>
QDML_TARGET_AVX512 void rows32(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                               const std::int32_t* c0, const std::int32_t* c1) noexcept {
    const bool is_signed = e.out_lo < 0;
    const std::size_t count = std::min<std::size_t>(32, e.N - n0);
    const auto mask = static_cast<__mmask32>(count == 32 ? ~0u : (1u << count) - 1u);
    const __m512 cm0 = _mm512_load_ps(e.col_mult.data() + n0), cm1 = _mm512_load_ps(e.col_mult.data() + n0 + 16);
    const __m512i zp = _mm512_set1_epi16(static_cast<short>(e.rows[m0].zp));  // (SameZp: every row's)
    const __m512i cb0 = _mm512_load_si512(e.col_bias.data() + n0), cb1 = _mm512_load_si512(e.col_bias.data() + n0 + 16);
    const auto dots = [&](const std::int32_t* c, __m512i cb) QDML_TARGET_AVX512 {
        return AddColBias ? _mm512_add_epi32(_mm512_load_si512(c), cb) : _mm512_load_si512(c);
    };
    // One row: columns n0..n0+31 as int16 with the zero point added (saturating).
    const auto words = [&](std::size_t r) QDML_TARGET_AVX512 {
        const RowParams& rp = e.rows[m0 + r];
        const __m512i lo = q32<PerColumn, Clamp>(rp, dots(c0 + 16 * r, cb0), cm0);
        const __m512i hi = q32<PerColumn, Clamp>(rp, dots(c1 + 16 * r, cb1), cm1);
        return _mm512_adds_epi16(_mm512_packs_epi32(lo, hi), SameZp ? zp : _mm512_set1_epi16(static_cast<short>(rp.zp)));
    };
    // dword order after the packs: per 128-bit lane l, (row r, columns 4l..4l+3),
    // (r, 16+4l..), (r + 1, 4l..), (r + 1, 16+4l..).
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    for (std::size_t r = 0; r < rows; r += 2) {
        const std::size_t r1 = r + 1 < rows ? r + 1 : r;
        const __m512i w0 = words(r), w1 = words(r1);
        const __m512i packed = is_signed ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1);
        const __m512i bytes = _mm512_maskz_permutexvar_epi32(0xffff, order, packed);
        std::uint8_t* out = e.out + (m0 + r) * e.out_rs + n0;
        _mm256_mask_storeu_epi8(out, mask, _mm512_maskz_extracti64x4_epi64(0xf, bytes, 0));
        if (r1 != r) _mm256_mask_storeu_epi8(out + e.out_rs, mask, _mm512_maskz_extracti64x4_epi64(0xf, bytes, 1));
    }
}
}  // namespace detail

/// Rows m0..m0+rows-1 x columns n0..n0+31 from two tiles of 16-lane int32
/// dot products that already hold the column bias when `has_col_bias` (row r
/// of the columns n0.. at c0 + 16 r, of n0 + 16.. at c1 + 16 r), two rows at a time, in the
/// common case (uniform zero points, a per-column or per-row multiplier,
/// contiguous output rows); false (and nothing stored) otherwise. Q with
/// fewer steps, the same values: the low clamp and NaN come from
/// saturation, since rounding commutes with a clamp to integers: min(hi, v)
/// keeps NaN (minps returns its second operand), cvtps2dq maps NaN and
/// every v < -2^31 to -2^31, the int16 pack and the saturating zero point
/// add keep it far below the type, and the final saturating byte pack sends
/// it to the type's minimum, Q's lo + zp; values in range are unchanged by
/// the packs. When every multiplier has |mult| < 1 the high clamp goes the
/// same way: |v| < 2^31 converts without overflow, and the packs saturate
/// it to the type's maximum. A row's bias is added only when it is not 0
/// (B's zero point 0: every row's).
QDML_TARGET_AVX512 inline bool store_rows32(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                                           const std::int32_t* c0, const std::int32_t* c1,
                                           bool has_col_bias = true) noexcept {
    if (e.var_a || e.var_b || e.mode == MultMode::PerElement || e.out_cs != 1 ||
        !((e.out_lo == 0 && e.out_hi == 255) || (e.out_lo == -128 && e.out_hi == 127)))
        return false;
    const auto run = [&](auto same_zp, auto add_col_bias) {
        constexpr bool Z = decltype(same_zp)::value, B = decltype(add_col_bias)::value;
        if (e.mode == MultMode::PerColumn)
            e.cols_small ? detail::rows32<true, false, Z, B>(e, m0, rows, n0, c0, c1)
                         : detail::rows32<true, true, Z, B>(e, m0, rows, n0, c0, c1);
        else
            e.rows_small ? detail::rows32<false, false, Z, B>(e, m0, rows, n0, c0, c1)
                         : detail::rows32<false, true, Z, B>(e, m0, rows, n0, c0, c1);
    };
    const auto with_zp = [&](auto add_col_bias) {
        e.same_zp ? run(std::true_type{}, add_col_bias) : run(std::false_type{}, add_col_bias);
    };
    has_col_bias ? with_zp(std::false_type{}) : with_zp(std::true_type{});
    return true;
}

/// 8 columns n0.. of row m from a 256-bit dot product (AVX2 and AVX-VNNI).
QDML_TARGET_AVX2 inline void store8(const Epilogue& e, std::size_t m, std::size_t n0, __m256i dot) noexcept {
    const RowParams& r = e.row(m);
    __m256i acc = _mm256_add_epi32(dot, _mm256_set1_epi32(static_cast<int>(r.bias)));
    acc = _mm256_add_epi32(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_bias.data() + n0)));
    if (e.var_b)
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(r.neg_ra)),
                                    _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_zp.data() + n0))));
    if (e.var_a)
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(r.neg_azp)),
                                    _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_sum.data() + n0))));
    __m256 mult;
    if (e.mode == MultMode::PerColumn)
        mult = _mm256_load_ps(e.col_mult.data() + n0);
    else if (e.mode == MultMode::PerRow)
        mult = _mm256_set1_ps(r.mult);
    else
        mult = _mm256_div_ps(_mm256_mul_ps(_mm256_set1_ps(r.a_scale), _mm256_load_ps(e.col_scale.data() + n0)),
                             _mm256_set1_ps(r.out_scale));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), mult);
    v = _mm256_max_ps(v, _mm256_set1_ps(r.lo));  // max(NaN, lo) is lo
    v = _mm256_min_ps(v, _mm256_set1_ps(r.hi));
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(r.zp));
    // Low byte of each lane (values are in the output range): mask, then two
    // non-saturating packs (every value is <= 255), then the two 128-bit halves.
    q = _mm256_and_si256(q, _mm256_set1_epi32(0xff));
    q = _mm256_packus_epi16(_mm256_packus_epi32(q, q), q);
    const std::uint64_t packed = static_cast<std::uint32_t>(_mm256_cvtsi256_si32(q)) |
                                 std::uint64_t{static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(q, 1)))} << 32;
    if (e.out_cs == 1 && e.N - n0 >= 8) {
        std::memcpy(e.out + m * e.out_rs + n0, &packed, 8);
    } else {
        std::uint8_t bytes[8];
        std::memcpy(bytes, &packed, 8);
        scatter_bytes<8>(e, m, n0, bytes);
    }
}
#endif

}  // namespace qdml::simd::gemm
