// qdml/simd/quantized_linear_average_pooling.hpp - the fast path of
// QUANTIZED_LINEAR_AVERAGE_POOLING, bit-identical to
// reference/quantized_linear_average_pooling.hpp (docs/semantics.md section 17):
//   sum    = +0.0; for each tap inside the input, in window order:
//            sum = sum + fp32(X - InputZP) * InputScale     (X - InputZP exact in binary32)
//   Output = Q((sum / fp32(count)) / OutputScale, OutputZP)  (a NaN average: the profile's value)
// Each lane computes one output element with the reference's binary32
// operations in the reference's order (no FMA, true divisions); the lanes are
//   - channels (Form::Channels): Input and Output with channel stride 1
//     (NHWC memory through DML strides): every lane of an output position
//     has the same taps and count, the parameters per lane (broadcast once
//     when every channel has the same); each task computes the products
//     fp32(X - InputZP) * InputScale of the input rows its windows read,
//     once per element (the same binary32 value for every window that reads
//     it), into a ring of the rows one output row reads, just before the
//     first output row that reads them, then adds them window by window,
//     the columns whose taps all lie inside the input along x in one call;
//   - output columns (Form::Columns): pooling stride 1 along the last
//     dimension, Input and Output with column stride 1 (packed NCHW): the
//     columns whose taps all lie inside the input along that dimension, the
//     others one by one;
//   - else one element at a time (Form::Scalar), the same steps over float.
// Tasks: the output's rows (N x [C] x oD x oH, C when channels are not the
// lanes) in fixed groups, a function of the shape alone (docs/threads.md).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/core/executor.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/quantized_linear_average_pooling.hpp"
#include "qdml/reference/quantized_linear_average_pooling.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/options.hpp"
#include "qdml/simd/tuning.hpp"

namespace qdml::simd {

namespace detail {

/// Which lanes the vector path takes for an operator (see the top of the file).
enum class PoolForm { Channels, Columns, Scalar };

template <class T>
PoolForm pool_form(const QuantizedLinearAveragePooling<T>& op) noexcept {
    const auto& in = op.InputTensor;
    const auto& out = op.OutputTensor;
    const bool channels = in.strides[1] == 1 && out.strides[1] == 1 && out.sizes[1] > 1;
    const bool columns = in.strides[4] == 1 && out.strides[4] == 1 && op.Strides[2] == 1 && out.sizes[4] > 1;
    if (channels && (!columns || out.sizes[1] >= out.sizes[4])) return PoolForm::Channels;
    if (columns) return PoolForm::Columns;
    return PoolForm::Scalar;
}

/// The parameters of each lane, as binary32 (zero points and Q's bounds are
/// small integers, exact), OutputZeroPoint as quantize_int's integer:
/// arrays indexed by channel, read per lane (Form::Channels, unless every
/// channel has the same values) or one channel's, the same in every lane.
struct PoolLanes {
    const float* x_zp;   ///< InputZeroPoint
    const float* x_scale;  ///< InputScale
    const float* y_scale;  ///< OutputScale
    const std::int32_t* y_zp_magic;  ///< kRoundMagicBits - OutputZeroPoint
    const float* lo_z;   ///< T's low end - OutputZeroPoint (Q's lower clamp)
    const float* hi_z;   ///< T's high end - OutputZeroPoint
    const float* nan_z;  ///< a NaN average's output - OutputZeroPoint (the profile's, section 17)
};

/// One tap: sum + fp32(x - zp) * scale, the product rounded on its own; V = float or vector.
template <class V>
QDML_ALWAYS_INLINE inline V pool_tap(const V& sum, const V& x, const V& x_zp, const V& x_scale) noexcept {
    return sum + dequantize_step(x - x_zp, x_scale);
}

/// The end of an element: Q((sum / count) / OutputScale, OutputZP) as int32
/// lanes (V = float, I = int32, or A's vectors): the true divisions in this
/// order; a NaN quotient replaced by the profile's value (nan_z, within
/// [lo_z, hi_z]: T's low end - zp in the exact profile, what Q gives NaN);
/// clamp_min_max to [lo_z, hi_z] (kernel::clamp_float on vectors, the same
/// bits); then Q's rounding, core's quantize_round_clamped, with the zero
/// point per lane as y_zp_magic = kRoundMagicBits - zp.
template <class A, class V, class I>
QDML_ALWAYS_INLINE inline auto pool_finish(const V& sum, const V& count, const V& y_scale, const I& y_zp_magic,
                                           const V& lo_z, const V& hi_z, const V& nan_z) noexcept {
    using O = VecOps<V>;
    V v = O::div(O::div(sum, count), y_scale);
    v = O::select(v == v, v, nan_z);
    if constexpr (std::is_arithmetic_v<V>)
        v = clamp_min_max(v, lo_z, hi_z);
    else
        v = kernel::clamp_float<A>(v, lo_z, hi_z);
    return quantize_round_clamped(v, y_zp_magic);
}

/// `positions` runs of `lanes` output elements, run q at out + q * out_step
/// (lanes at stride 1), lane j of run q reading its taps at
/// x[q * x_step + off[k] + j] (k < taps, in window order), count `count`,
/// the parameters of lane j at index j * per_lane of the PoolLanes arrays
/// (per_lane 0: the same in every lane, broadcast once); on ISA tag A, in
/// vectors of W lanes (four at a time first), the last lanes one by one
/// with the same steps over float. The taps are input elements (TX = T),
/// or (TX = float) their products fp32(X - InputZP) * InputScale already,
/// PoolProductsRow's, the same binary32 values.
template <class T, class A>
struct PoolRow {
    template <class TX>
    QDML_ALWAYS_INLINE void operator()(T* out, std::ptrdiff_t out_step, const TX* x, std::ptrdiff_t x_step,
                                       std::size_t positions, const std::int64_t* off, std::size_t taps, float count,
                                       const PoolLanes* pl, std::size_t lanes, std::size_t per_lane) const noexcept {
        if (per_lane)
            run<true>(out, out_step, x, x_step, positions, off, taps, count, *pl, lanes);
        else
            run<false>(out, out_step, x, x_step, positions, off, taps, count, *pl, lanes);
    }

  private:
    template <bool PerLane, class TX>
    QDML_ALWAYS_INLINE static void run(T* out, std::ptrdiff_t out_step, const TX* x, std::ptrdiff_t x_step,
                                       std::size_t positions, const std::int64_t* off, std::size_t taps, float count,
                                       const PoolLanes& p, std::size_t lanes) noexcept {
        using F = kernel::fbatch<A>;
        using I = kernel::ibatch<A>;
        constexpr std::size_t W = F::size;
        constexpr bool kProducts = std::is_same_v<TX, float>;
        const F vcount(count);
        // The parameters loaded per vector (PerLane), or broadcast here once (in
        // registers: the output's stores may alias the arrays).
        const F b_x_zp(p.x_zp[0]), b_x_scale(p.x_scale[0]), b_y_scale(p.y_scale[0]), b_lo_z(p.lo_z[0]),
            b_hi_z(p.hi_z[0]), b_nan_z(p.nan_z[0]);
        const I b_y_zp_magic(p.y_zp_magic[0]);
        const auto param = [](const float* a, std::size_t j, const F& b) QDML_ALWAYS_INLINE {
            if constexpr (PerLane) return kernel::load_float<A>(a + j);
            else return b;
        };
        const auto tap = [](const F& sum, const TX* q, const F& zp, const F& s) QDML_ALWAYS_INLINE {
            if constexpr (kProducts) return F(sum + kernel::load_float<A>(q));
            else return pool_tap(sum, kernel::load_float<A>(q), zp, s);
        };
        const auto finish = [&](std::size_t j, const F& sum) QDML_ALWAYS_INLINE {
            I zp_magic = b_y_zp_magic;
            if constexpr (PerLane) zp_magic = kernel::load_batch<A>(p.y_zp_magic + j);
            return pool_finish<A>(sum, vcount, param(p.y_scale, j, b_y_scale), zp_magic, param(p.lo_z, j, b_lo_z),
                                  param(p.hi_z, j, b_hi_z), param(p.nan_z, j, b_nan_z));
        };
        for (std::size_t q = 0; q < positions; ++q, out += out_step, x += x_step) {
            std::size_t j = 0;
            for (; j + 4 * W <= lanes; j += 4 * W) {
                F zp0(0.0f), zp1(0.0f), zp2(0.0f), zp3(0.0f), s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
                if constexpr (!kProducts) {
                    zp0 = param(p.x_zp, j, b_x_zp), zp1 = param(p.x_zp, j + W, b_x_zp),
                    zp2 = param(p.x_zp, j + 2 * W, b_x_zp), zp3 = param(p.x_zp, j + 3 * W, b_x_zp);
                    s0 = param(p.x_scale, j, b_x_scale), s1 = param(p.x_scale, j + W, b_x_scale),
                    s2 = param(p.x_scale, j + 2 * W, b_x_scale), s3 = param(p.x_scale, j + 3 * W, b_x_scale);
                }
                F sum0(0.0f), sum1(0.0f), sum2(0.0f), sum3(0.0f);
                for (std::size_t k = 0; k < taps; ++k) {
                    const TX* xk = x + off[k] + static_cast<std::ptrdiff_t>(j);
                    sum0 = tap(sum0, xk, zp0, s0);
                    sum1 = tap(sum1, xk + W, zp1, s1);
                    sum2 = tap(sum2, xk + 2 * W, zp2, s2);
                    sum3 = tap(sum3, xk + 3 * W, zp3, s3);
                }
                kernel::store_int4<A>(out + j, finish(j, sum0), finish(j + W, sum1), finish(j + 2 * W, sum2),
                                      finish(j + 3 * W, sum3));
            }
            for (; j + W <= lanes; j += W) {
                F zp(0.0f), s(0.0f);
                if constexpr (!kProducts) zp = param(p.x_zp, j, b_x_zp), s = param(p.x_scale, j, b_x_scale);
                F sum(0.0f);
                for (std::size_t k = 0; k < taps; ++k)
                    sum = tap(sum, x + off[k] + static_cast<std::ptrdiff_t>(j), zp, s);
                kernel::store_int<A>(out + j, finish(j, sum));
            }
            for (; j < lanes; ++j) {  // the last lanes: the same steps over float
                const std::size_t i = PerLane ? j : 0;
                float sum = 0.0f;
                for (std::size_t k = 0; k < taps; ++k) {
                    const TX v = x[off[k] + static_cast<std::ptrdiff_t>(j)];
                    if constexpr (kProducts) sum = sum + v;
                    else sum = pool_tap(sum, static_cast<float>(v), p.x_zp[i], p.x_scale[i]);
                }
                out[j] = static_cast<T>(
                    pool_finish<A>(sum, count, p.y_scale[i], p.y_zp_magic[i], p.lo_z[i], p.hi_z[i], p.nan_z[i]));
            }
        }
    }
};

/// The products fp32(x - InputZP) * InputScale of `positions` runs of
/// `lanes` channels, run q's at x + q * x_step, stored packed (run q at
/// out + q * lanes); the parameters of channel j at index j * per_lane:
/// each input element's product once, which every window that reads it
/// then adds (PoolRow with TX = float).
template <class T, class A>
struct PoolProductsRow {
    QDML_ALWAYS_INLINE void operator()(float* out, const T* x, std::ptrdiff_t x_step, std::size_t positions,
                                       const PoolLanes* pl, std::size_t lanes, std::size_t per_lane) const noexcept {
        if (per_lane) {
            run<true>(out, x, x_step, positions, *pl, lanes);
        } else if (x_step == static_cast<std::ptrdiff_t>(lanes)) {  // packed: one run of every element
            run<false>(out, x, 0, 1, *pl, positions * lanes);
        } else {
            run<false>(out, x, x_step, positions, *pl, lanes);
        }
    }

  private:
    template <bool PerLane>
    QDML_ALWAYS_INLINE static void run(float* out, const T* x, std::ptrdiff_t x_step, std::size_t positions,
                                       const PoolLanes& p, std::size_t lanes) noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size;
        const F b_x_zp(p.x_zp[0]), b_x_scale(p.x_scale[0]);  // in registers: the stores may alias the arrays
        const auto param = [](const float* a, std::size_t j, const F& b) QDML_ALWAYS_INLINE {
            if constexpr (PerLane) return kernel::load_float<A>(a + j);
            else return b;
        };
        for (std::size_t q = 0; q < positions; ++q, out += lanes, x += x_step) {
            std::size_t j = 0;
            for (; j + W <= lanes; j += W)
                kernel::store_vec<A>(out + j, dequantize_step(F(kernel::load_float<A>(x + j) - param(p.x_zp, j, b_x_zp)),
                                                              param(p.x_scale, j, b_x_scale)));
            for (; j < lanes; ++j) {
                const std::size_t i = PerLane ? j : 0;
                out[j] = dequantize_step(static_cast<float>(x[j]) - p.x_zp[i], p.x_scale[i]);
            }
        }
    }
};

/// Where pool_taps' offsets point: position p of spatial dimension k at
/// (p - base[k]) * stride[k] elements; with `ring` > 0, positions of
/// dimension 1 (rows) in a ring of that many: at ((p - base[1]) % ring) * stride[1].
struct TapMemory {
    std::int64_t stride[3];
    std::int64_t base[3];
    std::int64_t ring;
};

/// The taps of one output position along the three spatial dimensions:
/// the offsets in `m` of those inside the input, in window order, and
/// their number; `dims` limits it to the first dimensions (the others'
/// taps taken as one at offset 0).
template <class T>
std::size_t pool_taps(const QuantizedLinearAveragePooling<T>& op, const std::array<std::uint32_t, 3>& o, int dims,
                      const TapMemory& m, std::int64_t* off) noexcept {
    const auto& X = op.InputTensor;
    std::uint32_t w[3], first[3], last[3];  // the taps t with p inside: [first, last)
    for (int k = 0; k < 3; ++k) {
        w[k] = k < dims ? op.WindowSize[k] : 1;
        first[k] = last[k] = 0;
        bool any = false;
        for (std::uint32_t t = 0; t < w[k]; ++t) {
            const std::int64_t p = std::int64_t{o[k]} * op.Strides[k] + std::int64_t{t} * op.Dilations[k] -
                                   op.StartPadding[k];
            const bool inside = k >= dims || (p >= 0 && p < X.sizes[2 + k]);
            if (inside && !any) first[k] = t, any = true;
            if (inside) last[k] = t + 1;
        }
        if (!any) return 0;
    }
    std::size_t n = 0;
    for (std::uint32_t t0 = first[0]; t0 < last[0]; ++t0)
        for (std::uint32_t t1 = first[1]; t1 < last[1]; ++t1)
            for (std::uint32_t t2 = first[2]; t2 < last[2]; ++t2) {
                const std::uint32_t t[3] = {t0, t1, t2};
                std::int64_t e = 0;
                for (int k = 0; k < dims; ++k) {
                    const std::int64_t d = std::int64_t{o[k]} * op.Strides[k] + std::int64_t{t[k]} * op.Dilations[k] -
                                           op.StartPadding[k] - m.base[k];
                    e += (k == 1 && m.ring ? d % m.ring : d) * m.stride[k];
                }
                off[n++] = e;
            }
    return n;
}

/// Runs the operator with row kernels `row` (PoolRow on the chosen ISA) and
/// `dq` (PoolProductsRow: Form::Channels dequantizes each input row a task
/// reads once, into a ring of product rows, channels innermost, which its
/// windows then add).
template <class T, class Row, class Dq>
void pool_run(const QuantizedLinearAveragePooling<T>& op, Fidelity f, const Executor& ex, const Row& row,
              const Dq& dq) {
    const auto& X = op.InputTensor;
    const auto& Y = op.OutputTensor;
    const std::uint32_t N = Y.sizes[0], C = Y.sizes[1], oD = Y.sizes[2], oH = Y.sizes[3], oW = Y.sizes[4];
    if (std::uint64_t{N} * C * oD * oH * oW == 0) return;
    const PoolForm form = pool_form(op);
    // The parameters of each channel (the views are broadcast to the output: channel c at {0, c, 0, 0, 0}).
    std::vector<float> prm(6 * std::size_t{C});
    std::vector<std::int32_t> y_zp_magic(C);
    float* const a[6] = {prm.data(),         prm.data() + C,     prm.data() + 2 * C,
                         prm.data() + 3 * C, prm.data() + 4 * C, prm.data() + 5 * C};
    const T nan_directml = reference::detail::average_pooling_nan_directml(op);
    for (std::uint32_t c = 0; c < C; ++c) {
        const std::array<std::uint32_t, 5> i{0, c, 0, 0, 0};
        const std::int32_t x_zp = op.InputZeroPointTensor ? std::int32_t{(*op.InputZeroPointTensor)[i]} : 0;
        const std::int32_t y_zp = op.OutputZeroPointTensor ? std::int32_t{(*op.OutputZeroPointTensor)[i]} : 0;
        const QuantizeParams q = QuantizeParams::make<T>(y_zp);
        a[0][c] = static_cast<float>(x_zp);
        a[1][c] = op.InputScaleTensor[i];
        a[2][c] = op.OutputScaleTensor[i];
        a[3][c] = q.lo;
        a[4][c] = q.hi;
        a[5][c] = f == Fidelity::DirectML ? static_cast<float>(std::int32_t{nan_directml} - y_zp) : q.lo;
        y_zp_magic[c] = kRoundMagicBits - y_zp;
    }
    const auto lanes_of = [&](std::uint32_t c) {
        return PoolLanes{a[0] + c, a[1] + c, a[2] + c, y_zp_magic.data() + c, a[3] + c, a[4] + c, a[5] + c};
    };
    // Form::Channels: parameters equal in every channel (per tensor, or per
    // channel with one value) are read once and broadcast (per_lane 0).
    std::size_t per_lane = 0;
    for (std::uint32_t c = 1; c < C && !per_lane; ++c) {
        if (y_zp_magic[c] != y_zp_magic[0]) per_lane = 1;
        for (int i = 0; i < 6; ++i)
            if (std::memcmp(a[i] + c, a[i], sizeof(float)) != 0) per_lane = 1;
    }
    const std::uint64_t window = std::uint64_t{op.WindowSize[0]} * op.WindowSize[1] * op.WindowSize[2];
    // At most the window's taps and the input's positions (each tap inside is a distinct position).
    const std::size_t max_taps = static_cast<std::size_t>(
        std::min<std::uint64_t>(window, std::uint64_t{X.sizes[2]} * X.sizes[3] * X.sizes[4]));
    const float full = fp32(static_cast<std::int64_t>(window));
    const auto count_of = [&](std::size_t taps) {
        return op.IncludePadding ? full : fp32(static_cast<std::int64_t>(taps));
    };
    const std::uint64_t rows_c = form == PoolForm::Channels ? 1 : C;  // rows: n, [c], z, y
    const std::uint64_t rows = std::uint64_t{N} * rows_c * oD * oH;
    const std::uint64_t row_elements = std::uint64_t{oW} * (form == PoolForm::Channels ? C : 1);
    const std::uint64_t per = std::max<std::uint64_t>(1, kTaskBytes / (row_elements * sizeof(T)));
    const std::uint64_t tasks = (rows + per - 1) / per;
    const auto elem = [](auto* base, const auto& view, std::uint64_t n, std::uint64_t c, std::uint64_t z,
                         std::uint64_t y, std::uint64_t xx) {
        return base + (n * view.strides[0] + c * view.strides[1] + z * view.strides[2] + y * view.strides[3] +
                       xx * view.strides[4]);
    };
    const TapMemory in_memory{{static_cast<std::int64_t>(X.strides[2]), static_cast<std::int64_t>(X.strides[3]),
                               static_cast<std::int64_t>(X.strides[4])},
                              {0, 0, 0},
                              0};
    // The input positions [lo, hi) of dimension k that outputs [o0, o1) read (empty: lo >= hi).
    const auto span = [&](int k, std::uint32_t o0, std::uint32_t o1, std::int64_t& lo, std::int64_t& hi) {
        lo = std::max<std::int64_t>(0, std::int64_t{o0} * op.Strides[k] - op.StartPadding[k]);
        hi = std::min<std::int64_t>(X.sizes[2 + k], std::int64_t{o1 - 1} * op.Strides[k] +
                                                        std::int64_t{op.WindowSize[k] - 1} * op.Dilations[k] -
                                                        op.StartPadding[k] + 1);
    };
    const auto task = [&](std::size_t k) {
        std::vector<std::int64_t> off(std::max<std::size_t>(max_taps, 1)), cols(off.size()), rows_off(off.size());
        // Form::Channels: the products of a segment's input rows (each row written before it is read)
        std::unique_ptr<float[]> products;
        std::size_t products_size = 0;
        const std::uint64_t r1 = std::min(rows, (k + 1) * per);
        for (std::uint64_t r = k * per; r < r1; ++r) {
            const std::uint32_t y = static_cast<std::uint32_t>(r % oH), z = static_cast<std::uint32_t>(r / oH % oD);
            const std::uint64_t c = r / oH / oD % rows_c, n = r / oH / oD / rows_c;
            if (form == PoolForm::Channels) {
                // A segment: this task's rows of image n and output depth z, [y, y1).
                const std::uint32_t y1 = static_cast<std::uint32_t>(std::min<std::uint64_t>(oH, y + (r1 - r)));
                r += y1 - y - 1;
                const PoolLanes pl = lanes_of(0);
                std::int64_t z0, z1, ya, yb;
                span(0, z, z + 1, z0, z1);
                span(1, y, y1, ya, yb);
                const std::uint32_t Wd = X.sizes[4];
                const std::int64_t sy = std::int64_t{Wd} * C;
                // The products of the input rows: per plane [z0, z1), a ring of the rows one output row
                // reads (input row iy in slot (iy - ya) % ring), each computed once, just before the first
                // output row that reads it, so that it is read while it is in the cache.
                const std::int64_t reach = std::int64_t{op.WindowSize[1] - 1} * op.Dilations[1];  // first to last row of a window
                const std::int64_t ring = std::max<std::int64_t>(1, std::min(yb - ya, reach + 1));
                const TapMemory m{{ring * sy, sy, std::int64_t{C}}, {z0, ya, 0}, ring};
                const std::size_t size = z1 > z0 && yb > ya ? static_cast<std::size_t>((z1 - z0) * ring * sy) : 0;
                if (size > products_size) products.reset(new float[size]), products_size = size;
                std::int64_t done = ya;  // the rows [.., done) computed
                const auto products_of = [&](std::int64_t from, std::int64_t to) {  // rows [from, to) (and on)
                    for (done = std::max(done, from); done < std::min(to, yb); ++done)
                        for (std::int64_t iz = z0; iz < z1; ++iz)
                            dq(products.get() + (iz - z0) * m.stride[0] + (done - ya) % ring * sy,
                               elem(X.data, X, n, 0, static_cast<std::uint64_t>(iz), static_cast<std::uint64_t>(done), 0),
                               static_cast<std::ptrdiff_t>(X.strides[4]), std::size_t{Wd}, &pl, std::size_t{C},
                               per_lane);
                };
                const auto inside = [&](int k, std::uint32_t o) {  // every tap of output o inside along k
                    const std::int64_t first = std::int64_t{o} * op.Strides[k] - op.StartPadding[k];
                    return first >= 0 && first + std::int64_t{op.WindowSize[k] - 1} * op.Dilations[k] < X.sizes[2 + k];
                };
                // The columns [xa, xb) with every tap inside along x (a range: both bounds are monotonic in ox).
                std::uint32_t xa = 0;
                while (xa < oW && !inside(2, xa)) ++xa;
                std::uint32_t xb = xa;
                while (xb < oW && inside(2, xb)) ++xb;
                const std::int64_t sx = std::int64_t{op.Strides[2]}, dx = std::int64_t{op.Dilations[2]};
                for (std::uint32_t oy = y; oy < y1; ++oy) {
                    const std::int64_t iy = std::int64_t{oy} * op.Strides[1] - op.StartPadding[1];  // the window's first row
                    products_of(iy, iy + reach + 1);
                    // The taps along z and y inside the input, in window order: their rows' offsets.
                    const std::size_t zy = pool_taps(op, {z, oy, 0}, 2, m, rows_off.data());
                    if (xb > xa) {  // the columns with every tap inside along x, in one call: offsets from the first tap's
                        std::size_t taps = 0;
                        for (std::size_t t = 0; t < zy; ++t)
                            for (std::uint32_t tx = 0; tx < op.WindowSize[2]; ++tx)
                                cols[taps++] = rows_off[t] + tx * dx * C;
                        const float* const x0 = zy ? products.get() + (xa * sx - op.StartPadding[2]) * C : products.get();
                        row(elem(Y.data, Y, n, 0, z, oy, xa), static_cast<std::ptrdiff_t>(Y.strides[4]), x0,
                            static_cast<std::ptrdiff_t>(zy ? sx * C : 0), std::size_t{xb - xa}, cols.data(), taps,
                            count_of(taps), &pl, std::size_t{C}, per_lane);
                    }
                    for (std::uint32_t ox = 0; ox < oW; ++ox) {  // the others one by one
                        if (ox == xa) ox = xb;
                        if (ox >= oW) break;
                        std::size_t taps = 0;
                        for (std::size_t t = 0; t < zy; ++t)
                            for (std::uint32_t tx = 0; tx < op.WindowSize[2]; ++tx) {
                                const std::int64_t px = ox * sx + tx * dx - op.StartPadding[2];
                                if (px >= 0 && px < Wd) off[taps++] = rows_off[t] + px * C;
                            }
                        row(elem(Y.data, Y, n, 0, z, oy, ox), std::ptrdiff_t{0}, static_cast<const float*>(products.get()),
                            std::ptrdiff_t{0}, std::size_t{1}, off.data(), taps, count_of(taps), &pl, std::size_t{C},
                            per_lane);
                    }
                }
                continue;
            }
            const PoolLanes pl = lanes_of(static_cast<std::uint32_t>(c));
            const T* const xc = elem(X.data, X, n, c, 0, 0, 0);
            std::uint32_t lo = oW, hi = oW;  // Form::Columns: the columns [lo, hi) with every tap inside along x
            if (form == PoolForm::Columns) {
                const std::int64_t reach = std::int64_t{op.WindowSize[2] - 1} * op.Dilations[2];
                const std::int64_t b = std::min<std::int64_t>(oW, std::int64_t{X.sizes[4]} - reach + op.StartPadding[2]);
                lo = std::min<std::uint32_t>(op.StartPadding[2], oW);
                hi = b > lo ? static_cast<std::uint32_t>(b) : lo;
            }
            if (hi > lo) {  // the taps along z and y, then x's, relative to column lo's first tap
                const std::size_t zy = pool_taps(op, {z, y, 0}, 2, in_memory, off.data());
                const std::size_t taps = zy * op.WindowSize[2];  // every one inside the input: at most max_taps
                for (std::size_t t = 0; t < zy; ++t)
                    for (std::uint32_t tx = 0; tx < op.WindowSize[2]; ++tx)
                        cols[t * op.WindowSize[2] + tx] = off[t] + std::int64_t{tx} * op.Dilations[2];
                const T* x0 = xc + (std::int64_t{lo} - op.StartPadding[2]);
                row(elem(Y.data, Y, n, c, z, y, lo), std::ptrdiff_t{0}, x0, std::ptrdiff_t{0}, std::size_t{1},
                    cols.data(), taps, count_of(taps), &pl, std::size_t{hi - lo}, std::size_t{0});
            }
            for (std::uint32_t ox = 0; ox < oW; ++ox) {  // the other columns, one by one
                if (ox == lo) ox = hi;
                if (ox >= oW) break;
                const std::size_t taps = pool_taps(op, {z, y, ox}, 3, in_memory, off.data());
                row(elem(Y.data, Y, n, c, z, y, ox), std::ptrdiff_t{0}, xc, std::ptrdiff_t{0}, std::size_t{1},
                    off.data(), taps, count_of(taps), &pl, std::size_t{1}, std::size_t{0});
            }
        }
    };
    const bool threaded = std::uint64_t{N} * C * oD * oH * oW * std::max<std::uint64_t>(max_taps, 1) >= kMinThreadedBytes;
    qdml::detail::parallel_for(threaded ? ex : Executor{}, static_cast<std::size_t>(tasks), task);
}

}  // namespace detail

/// The bits of reference::quantized_linear_average_pooling(op, o.fidelity):
/// the element-wise ISA path under `o.isa` (select_elementwise_isa), tasks
/// on `o.executor`.
template <class T>
void quantized_linear_average_pooling(const QuantizedLinearAveragePooling<T>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::quantized_linear_average_pooling(op, o.fidelity);
    } else {
        const ElementWiseIsa isa = select_elementwise_isa(o.isa);
#if QDML_X86
        if (isa == ElementWiseIsa::Avx512) {
            using A = x86::avx512bw::ElementWise;
            detail::pool_run(op, o.fidelity, o.executor, on_arch<A>(detail::PoolRow<T, A>{}),
                             on_arch<A>(detail::PoolProductsRow<T, A>{}));
            return;
        }
        if (isa == ElementWiseIsa::Avx2) {
            using A = x86::avx2::ElementWise;
            detail::pool_run(op, o.fidelity, o.executor, on_arch<A>(detail::PoolRow<T, A>{}),
                             on_arch<A>(detail::PoolProductsRow<T, A>{}));
            return;
        }
#endif
        (void)isa;
        detail::pool_run(op, o.fidelity, o.executor, detail::PoolRow<T, Arch>{}, detail::PoolProductsRow<T, Arch>{});
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "average pooling, " the lanes ("channels", "columns" or "scalar"), then
/// the element-wise ISA path under `o.isa`.
template <class T>
std::string path(const QuantizedLinearAveragePooling<T>& op, const GemmOptions& o = {}) {
    if constexpr (!kAvailable) return "scalar";
    const detail::PoolForm form = detail::pool_form(op);
    const char* lanes = form == detail::PoolForm::Channels ? "channels as lanes"
                        : form == detail::PoolForm::Columns ? "columns as lanes"
                                                             : "one element at a time";
    return std::string("average pooling, ") + lanes + ", " + arch_name(o.isa);
}

}  // namespace qdml::simd
