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
//     has the same taps and count, the parameters per lane; each task first
//     computes the products fp32(X - InputZP) * InputScale of the input rows
//     its windows read, once per element (the same binary32 value for every
//     window that reads it), then adds them window by window;
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
/// small integers, exact): arrays indexed by channel, read per lane
/// (Form::Channels) or one channel's, the same in every lane (the others).
struct PoolLanes {
    const float* x_zp;   ///< InputZeroPoint
    const float* x_scale;  ///< InputScale
    const float* y_scale;  ///< OutputScale
    const float* y_zp;   ///< OutputZeroPoint
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
/// lanes, a NaN quotient replaced by the profile's value first (nan_z: T's
/// low end - zp in the exact profile, which is what Q gives NaN).
template <class V>
QDML_ALWAYS_INLINE inline auto pool_finish(const V& sum, const V& count, const V& y_scale, const V& y_zp,
                                           const V& lo_z, const V& hi_z, const V& nan_z) noexcept {
    using O = VecOps<V>;
    V v = O::div(O::div(sum, count), y_scale);  // true divisions, in this order
    v = O::select(v == v, v, nan_z);
    return quantize_int_lanes(v, lo_z, hi_z, y_zp);
}

/// `lanes` output elements at out[0..lanes) (stride 1), lane j reading its
/// taps at x[off[k] + j] (k < taps, in window order), count `count`, the
/// parameters of lane j at index j * per_lane of the PoolLanes arrays; on
/// ISA tag A, in vectors of W lanes (four at a time first), the last lanes
/// one by one with the same steps over float. The taps are input elements
/// (TX = T), or (TX = float) their products fp32(X - InputZP) * InputScale
/// already, PoolProductsRow's, the same binary32 values.
template <class T, class A>
struct PoolRow {
    template <class TX>
    QDML_ALWAYS_INLINE void operator()(T* out, const TX* x, const std::int64_t* off, std::size_t taps, float count,
                                       const PoolLanes* pl, std::size_t lanes, std::size_t per_lane) const noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size;
        constexpr bool kProducts = std::is_same_v<TX, float>;
        const PoolLanes p = *pl;
        const F vcount(count);
        const auto param = [per_lane](const float* a, std::size_t j) QDML_ALWAYS_INLINE {
            return per_lane ? kernel::load_float<A>(a + j) : F(a[0]);
        };
        const auto tap = [](const F& sum, const TX* q, const F& zp, const F& s) QDML_ALWAYS_INLINE {
            if constexpr (kProducts) return F(sum + kernel::load_float<A>(q));
            else return pool_tap(sum, kernel::load_float<A>(q), zp, s);
        };
        const auto finish = [&](std::size_t j, const F& sum) QDML_ALWAYS_INLINE {
            return pool_finish(sum, vcount, param(p.y_scale, j), param(p.y_zp, j), param(p.lo_z, j),
                               param(p.hi_z, j), param(p.nan_z, j));
        };
        std::size_t j = 0;
        for (; j + 4 * W <= lanes; j += 4 * W) {
            F zp0(0.0f), zp1(0.0f), zp2(0.0f), zp3(0.0f), s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
            if constexpr (!kProducts) {
                zp0 = param(p.x_zp, j), zp1 = param(p.x_zp, j + W), zp2 = param(p.x_zp, j + 2 * W),
                zp3 = param(p.x_zp, j + 3 * W);
                s0 = param(p.x_scale, j), s1 = param(p.x_scale, j + W), s2 = param(p.x_scale, j + 2 * W),
                s3 = param(p.x_scale, j + 3 * W);
            }
            F sum0(0.0f), sum1(0.0f), sum2(0.0f), sum3(0.0f);
            for (std::size_t k = 0; k < taps; ++k) {
                const TX* q = x + off[k] + static_cast<std::ptrdiff_t>(j);
                sum0 = tap(sum0, q, zp0, s0);
                sum1 = tap(sum1, q + W, zp1, s1);
                sum2 = tap(sum2, q + 2 * W, zp2, s2);
                sum3 = tap(sum3, q + 3 * W, zp3, s3);
            }
            kernel::store_int<A>(out + j, finish(j, sum0));
            kernel::store_int<A>(out + j + W, finish(j + W, sum1));
            kernel::store_int<A>(out + j + 2 * W, finish(j + 2 * W, sum2));
            kernel::store_int<A>(out + j + 3 * W, finish(j + 3 * W, sum3));
        }
        for (; j + W <= lanes; j += W) {
            F zp(0.0f), s(0.0f);
            if constexpr (!kProducts) zp = param(p.x_zp, j), s = param(p.x_scale, j);
            F sum(0.0f);
            for (std::size_t k = 0; k < taps; ++k) sum = tap(sum, x + off[k] + static_cast<std::ptrdiff_t>(j), zp, s);
            kernel::store_int<A>(out + j, finish(j, sum));
        }
        for (; j < lanes; ++j) {  // the last lanes: the same steps over float
            const std::size_t i = j * per_lane;
            float sum = 0.0f;
            for (std::size_t k = 0; k < taps; ++k) {
                const TX v = x[off[k] + static_cast<std::ptrdiff_t>(j)];
                if constexpr (kProducts) sum = sum + v;
                else sum = pool_tap(sum, static_cast<float>(v), p.x_zp[i], p.x_scale[i]);
            }
            out[j] = static_cast<T>(
                pool_finish(sum, count, p.y_scale[i], p.y_zp[i], p.lo_z[i], p.hi_z[i], p.nan_z[i]));
        }
    }
};

/// out[j] = fp32(x[j] - InputZP) * InputScale for `lanes` channels (the
/// parameters of channel j at index j): each input element's product once,
/// which every window that reads it then adds (PoolRow with TX = float).
template <class T, class A>
struct PoolProductsRow {
    QDML_ALWAYS_INLINE void operator()(float* out, const T* x, const PoolLanes* pl, std::size_t lanes) const noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size;
        const PoolLanes p = *pl;
        std::size_t j = 0;
        for (; j + W <= lanes; j += W)
            kernel::store_vec<A>(out + j, dequantize_step(F(kernel::load_float<A>(x + j) - kernel::load_float<A>(p.x_zp + j)),
                                                          kernel::load_float<A>(p.x_scale + j)));
        for (; j < lanes; ++j) out[j] = dequantize_step(static_cast<float>(x[j]) - p.x_zp[j], p.x_scale[j]);
    }
};

/// Where pool_taps' offsets point: position p of spatial dimension k at
/// (p - base[k]) * stride[k] elements.
struct TapMemory {
    std::int64_t stride[3];
    std::int64_t base[3];
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
                for (int k = 0; k < dims; ++k)
                    e += (std::int64_t{o[k]} * op.Strides[k] + std::int64_t{t[k]} * op.Dilations[k] -
                          op.StartPadding[k] - m.base[k]) *
                         m.stride[k];
                off[n++] = e;
            }
    return n;
}

/// Runs the operator with row kernels `row` (PoolRow on the chosen ISA) and
/// `dq` (PoolProductsRow: Form::Channels dequantizes each task's input rows
/// once into a buffer of products, channels innermost, which its windows
/// then add).
template <class T, class Row, class Dq>
void pool_run(const QuantizedLinearAveragePooling<T>& op, Fidelity f, const Executor& ex, const Row& row,
              const Dq& dq) {
    const auto& X = op.InputTensor;
    const auto& Y = op.OutputTensor;
    const std::uint32_t N = Y.sizes[0], C = Y.sizes[1], oD = Y.sizes[2], oH = Y.sizes[3], oW = Y.sizes[4];
    if (std::uint64_t{N} * C * oD * oH * oW == 0) return;
    const PoolForm form = pool_form(op);
    // The parameters of each channel (the views are broadcast to the output: channel c at {0, c, 0, 0, 0}).
    std::vector<float> prm(7 * std::size_t{C});
    float* const a[7] = {prm.data(), prm.data() + C, prm.data() + 2 * C, prm.data() + 3 * C,
                         prm.data() + 4 * C, prm.data() + 5 * C, prm.data() + 6 * C};
    const T nan_directml = reference::detail::average_pooling_nan_directml(op);
    for (std::uint32_t c = 0; c < C; ++c) {
        const std::array<std::uint32_t, 5> i{0, c, 0, 0, 0};
        const std::int32_t x_zp = op.InputZeroPointTensor ? std::int32_t{(*op.InputZeroPointTensor)[i]} : 0;
        const std::int32_t y_zp = op.OutputZeroPointTensor ? std::int32_t{(*op.OutputZeroPointTensor)[i]} : 0;
        const QuantizeParams q = QuantizeParams::make<T>(y_zp);
        a[0][c] = static_cast<float>(x_zp);
        a[1][c] = op.InputScaleTensor[i];
        a[2][c] = op.OutputScaleTensor[i];
        a[3][c] = static_cast<float>(y_zp);
        a[4][c] = q.lo;
        a[5][c] = q.hi;
        a[6][c] = f == Fidelity::DirectML ? static_cast<float>(std::int32_t{nan_directml} - y_zp) : q.lo;
    }
    const auto lanes_of = [&](std::uint32_t c) {
        return PoolLanes{a[0] + c, a[1] + c, a[2] + c, a[3] + c, a[4] + c, a[5] + c, a[6] + c};
    };
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
                              {0, 0, 0}};
    // The input positions [lo, hi) of dimension k that outputs [o0, o1) read (empty: lo >= hi).
    const auto span = [&](int k, std::uint32_t o0, std::uint32_t o1, std::int64_t& lo, std::int64_t& hi) {
        lo = std::max<std::int64_t>(0, std::int64_t{o0} * op.Strides[k] - op.StartPadding[k]);
        hi = std::min<std::int64_t>(X.sizes[2 + k], std::int64_t{o1 - 1} * op.Strides[k] +
                                                        std::int64_t{op.WindowSize[k] - 1} * op.Dilations[k] -
                                                        op.StartPadding[k] + 1);
    };
    const auto task = [&](std::size_t k) {
        std::vector<std::int64_t> off(std::max<std::size_t>(max_taps, 1)), cols(off.size());
        std::vector<float> products;  // Form::Channels: the products of the segment's input rows
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
                const TapMemory m{{(yb - ya) * sy, sy, std::int64_t{C}}, {z0, ya, 0}};
                if (z1 > z0 && yb > ya) {
                    products.resize(static_cast<std::size_t>((z1 - z0) * (yb - ya) * sy));
                    for (std::int64_t iz = z0; iz < z1; ++iz)
                        for (std::int64_t iy = ya; iy < yb; ++iy)
                            for (std::uint32_t ix = 0; ix < Wd; ++ix)
                                dq(products.data() + (iz - z0) * m.stride[0] + (iy - ya) * sy + std::int64_t{ix} * C,
                                   elem(X.data, X, n, 0, static_cast<std::uint64_t>(iz), static_cast<std::uint64_t>(iy), ix),
                                   &pl, std::size_t{C});
                }
                // A position whose every tap lies inside the input reads the whole window:
                // its taps' offsets from the first tap's, in window order (`whole`), once.
                std::size_t whole_taps = 0;
                for (std::uint32_t t0 = 0; t0 < op.WindowSize[0] && window <= max_taps; ++t0)
                    for (std::uint32_t t1 = 0; t1 < op.WindowSize[1]; ++t1)
                        for (std::uint32_t t2 = 0; t2 < op.WindowSize[2]; ++t2)
                            cols[whole_taps++] = std::int64_t{t0} * op.Dilations[0] * m.stride[0] +
                                                 std::int64_t{t1} * op.Dilations[1] * m.stride[1] +
                                                 std::int64_t{t2} * op.Dilations[2] * m.stride[2];
                const auto inside = [&](int k, std::uint32_t o) {  // every tap of output o inside along k
                    const std::int64_t first = std::int64_t{o} * op.Strides[k] - op.StartPadding[k];
                    return first >= 0 && first + std::int64_t{op.WindowSize[k] - 1} * op.Dilations[k] < X.sizes[2 + k];
                };
                const bool z_inside = inside(0, z);
                for (std::uint32_t oy = y; oy < y1; ++oy) {
                    const bool zy_inside = whole_taps == window && z_inside && inside(1, oy);
                    for (std::uint32_t ox = 0; ox < oW; ++ox) {
                        T* const o = elem(Y.data, Y, n, 0, z, oy, ox);
                        if (zy_inside && inside(2, ox)) {
                            const std::int64_t first =
                                (std::int64_t{z} * op.Strides[0] - op.StartPadding[0] - m.base[0]) * m.stride[0] +
                                (std::int64_t{oy} * op.Strides[1] - op.StartPadding[1] - m.base[1]) * m.stride[1] +
                                (std::int64_t{ox} * op.Strides[2] - op.StartPadding[2]) * m.stride[2];
                            row(o, static_cast<const float*>(products.data() + first), cols.data(), whole_taps,
                                count_of(whole_taps), &pl, std::size_t{C}, std::size_t{1});
                            continue;
                        }
                        const std::size_t taps = pool_taps(op, {z, oy, ox}, 3, m, off.data());
                        row(o, static_cast<const float*>(products.data()), off.data(), taps, count_of(taps), &pl,
                            std::size_t{C}, std::size_t{1});
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
                row(elem(Y.data, Y, n, c, z, y, lo), x0, cols.data(), taps, count_of(taps), &pl,
                    std::size_t{hi - lo}, std::size_t{0});
            }
            for (std::uint32_t ox = 0; ox < oW; ++ox) {  // the other columns, one by one
                if (ox == lo) ox = hi;
                if (ox >= oW) break;
                const std::size_t taps = pool_taps(op, {z, y, ox}, 3, in_memory, off.data());
                row(elem(Y.data, Y, n, c, z, y, ox), xc, off.data(), taps, count_of(taps), &pl, std::size_t{1},
                    std::size_t{0});
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
