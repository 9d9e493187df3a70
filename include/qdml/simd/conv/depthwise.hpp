// qdml/simd/conv/depthwise.hpp - depthwise QUANTIZED_LINEAR_CONVOLUTION
// (one input channel per group: GroupCount == Cin, Cout = m * Cin for any
// channel multiplier m), bit-identical to qdml::reference::quantized_linear_convolution
// (SPEC.md section 6):
//   acc = Bias[oc] + sum_{ky,kx} (X[n][ic][oy*sy + ky*dy - padTop][ox*sx + kx*dx - padLeft] - XZP)
//                              * (F[oc][0][ky][kx] - FZP[oc])      (int32, wraps; padding taps 0)
//   Output = Q(fp32(acc) * (fp32(InputScale * FilterScale[oc]) / OutputScale), OutputZP)
// with ic = oc / m.
//
// Each channel is a 2-D plane, vectorized along the output width:
//   - an input row is copied once into a row buffer whose padding columns
//     hold XZP (any DML strides: a contiguous row is a memcpy, else a gather),
//     then widened once into a pair row P[j] = (x[j], x[j + dx]) of int16
//     pairs; with stride sx > 1, one row per tap pair t holds
//     (x[o*sx + 2t*dx], x[o*sx + (2t+1)*dx]) at o, so every tap reads P at o;
//   - pair rows live in a ring of (kH-1)*dy + 1 slots (an input row is built
//     once and serves every output row and every output channel of its
//     input channel that reads it); rows of the top/bottom padding read a
//     constant row of (XZP, XZP) pairs;
//   - a row kernel (simd/conv/depthwise_kernels.hpp) multiplies and adds
//     the kH * ceil(kW/2) tap pairs per output with vpmaddwd / vpdpwssd and
//     requantizes; XZP is folded into the bias (Bias - XZP * sum(w')), so
//     the padding contributes XZP*w' - XZP*w' = 0 exactly (the ranges are
//     checked in depthwise_kernels.hpp).
// The filter part (weight pairs w' = F - FZP, their sums, FilterScale) is a
// DepthwiseFilter, built once by prepare_depthwise (the prepared form keeps it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "qdml/core/quantize.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/simd/conv/depthwise_kernels.hpp"
#include "qdml/simd/gemm/isa.hpp"

namespace qdml::simd::conv {

/// Whether the depthwise path computes `op`: one input channel per group
/// (GroupCount == Cin; FilterTensor Sizes[1] == 1), any channel multiplier.
template <class TIn, class TFilter, class TOut>
bool is_depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op) noexcept {
    return op.FilterTensor.sizes[1] == 1;
}

/// The filter side of a depthwise convolution, derived once: weight pairs
/// w'[oc][ky][t] = (F - FZP at kx = 2t, at kx = 2t+1 or 0) as int16 halves,
/// sum(w') per output channel (mod 2^32) and FilterScale per output channel.
struct DepthwiseFilter {
    std::uint32_t cout = 0, kh = 0, kw = 0, pairs = 0;  ///< pairs = ceil(kW / 2)
    std::vector<std::uint32_t> weights;                 ///< [oc][ky][t]
    std::vector<std::uint32_t> sum;                     ///< [oc]
    std::vector<float> scale;                           ///< [oc]

    const std::uint32_t* channel(std::uint32_t oc) const noexcept {
        return weights.data() + std::size_t{oc} * kh * pairs;
    }
};

/// Reads FilterTensor, FilterScaleTensor and FilterZeroPointTensor of a
/// validated depthwise `op` (is_depthwise) into a DepthwiseFilter.
template <class TIn, class TFilter, class TOut>
DepthwiseFilter prepare_depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op) {
    const auto& F = op.FilterTensor;
    DepthwiseFilter f;
    f.cout = F.sizes[0];
    f.kh = F.sizes[2];
    f.kw = F.sizes[3];
    f.pairs = (f.kw + 1) / 2;
    f.weights.resize(std::size_t{f.cout} * f.kh * f.pairs);
    f.sum.assign(f.cout, 0u);
    f.scale.resize(f.cout);
    for (std::uint32_t oc = 0; oc < f.cout; ++oc) {
        const std::int32_t zp = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[{0, oc, 0, 0}] : 0;
        std::uint32_t* w = f.weights.data() + std::size_t{oc} * f.kh * f.pairs;
        for (std::uint32_t ky = 0; ky < f.kh; ++ky)
            for (std::uint32_t t = 0; t < f.pairs; ++t) {
                const std::int32_t lo = F[{oc, 0, ky, 2 * t}] - zp;
                const std::int32_t hi = 2 * t + 1 < f.kw ? F[{oc, 0, ky, 2 * t + 1}] - zp : 0;
                w[ky * f.pairs + t] = kernel::pair_word(lo, hi);
                f.sum[oc] += static_cast<std::uint32_t>(lo + hi);
            }
        f.scale[oc] = op.FilterScaleTensor[{0, oc, 0, 0}];
    }
    return f;
}

namespace detail {

/// The row kernels of one ISA path.
template <class TIn, class TOut>
struct DepthwiseKernels {
    void (*pair_row)(const TIn*, std::size_t, std::uint32_t*, std::size_t) noexcept;
    void (*row)(const DepthwiseTaps&, const DepthwiseChannel&, TOut*, std::size_t) noexcept;
    gemm::Isa isa;  ///< the path these run: Generic, Avx2 or Avx512Vnni
};

/// The best row kernels at or below `cap` (AMX has nothing for depthwise:
/// it runs the AVX-512 VNNI kernels; AVX-VNNI runs the AVX2 ones).
template <class TIn, class TOut>
DepthwiseKernels<TIn, TOut> depthwise_kernels(gemm::Isa cap) noexcept {
    const gemm::Isa isa = gemm::select_isa(cap);
#if QDML_GEMM_X86
    if (isa >= gemm::Isa::Avx512Vnni)
        return {kernel::pair_row_avx512<TIn>, kernel::row_avx512<TOut>, gemm::Isa::Avx512Vnni};
    if (isa >= gemm::Isa::Avx2) return {kernel::pair_row_avx2<TIn>, kernel::row_avx2<TOut>, gemm::Isa::Avx2};
#endif
    (void)isa;
    return {kernel::pair_row_generic<TIn>, kernel::row_generic<TOut>, gemm::Isa::Generic};
}

inline std::size_t round_up(std::size_t n, std::size_t m) noexcept { return (n + m - 1) / m * m; }

/// Longest input row buffer the depthwise path builds (elements); a longer
/// one (a huge dilation or padding) runs the reference instead.
inline constexpr std::size_t kMaxRowElements = std::size_t{1} << 24;

}  // namespace detail

/// The path depthwise() runs under `cap` (Generic, Avx2 or Avx512Vnni).
inline gemm::Isa depthwise_isa(gemm::Isa cap = gemm::Isa::Best) noexcept {
    return detail::depthwise_kernels<std::uint8_t, std::uint8_t>(cap).isa;
}

/// Computes a validated depthwise `op` (is_depthwise) with the filter `f`
/// prepared from it (or from a filter with the same descs and data); same
/// bits as the reference. `cap` caps the ISA path as QDML_ISA does.
template <class TIn, class TFilter, class TOut>
void depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
               gemm::Isa cap = gemm::Isa::Best) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const auto k = detail::depthwise_kernels<TIn, TOut>(cap);
    const std::size_t N = Out.sizes[0], Cout = Out.sizes[1], oH = Out.sizes[2], oW = Out.sizes[3];
    const std::size_t Cin = X.sizes[1], H = X.sizes[2], W = X.sizes[3];
    const std::size_t m = Cout / Cin, kh = f.kh, pairs = f.pairs;
    const std::size_t sy = op.Strides[0], sx = op.Strides[1], dy = op.Dilations[0], dx = op.Dilations[1];
    const std::size_t pad_top = op.StartPadding[0], pad_left = op.StartPadding[1];

    // Per output channel: bias with XZP folded in, multiplier, Q's bounds.
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
    const std::int32_t out_zp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[{0, 0, 0, 0}] : 0;
    std::vector<DepthwiseChannel> channels(Cout);
    for (std::uint32_t oc = 0; oc < Cout; ++oc) {
        DepthwiseChannel& c = channels[oc];
        const std::uint32_t bias = op.BiasTensor ? static_cast<std::uint32_t>((*op.BiasTensor)[{0, oc, 0, 0}]) : 0u;
        c.bias = bias - static_cast<std::uint32_t>(std::int32_t{x_zp}) * f.sum[oc];
        c.mult = requantize_multiplier(op.InputScaleTensor[{0, 0, 0, 0}], f.scale[oc], op.OutputScaleTensor[{0, 0, 0, 0}]);
        c.q = QuantizeParams::make<TOut>(out_zp);
    }

    // Pair rows: one shared row when sx == 1 (tap pair t reads it at +2t*dx),
    // else one row per tap pair; every row readable to the width rounded up to 16.
    const std::size_t width = detail::round_up(oW, 16);
    const bool shared = sx == 1;
    const std::size_t slot_len =
        shared ? detail::round_up(width + 2 * (pairs - 1) * dx, 16) : pairs * width;
    const std::size_t row_len = shared ? slot_len + dx : (width - 1) * sx + (2 * pairs - 1) * dx + 1;
    if (row_len > detail::kMaxRowElements) {  // a dilation in the millions: no row buffer, the reference's loop
        reference::quantized_linear_convolution(op);
        return;
    }
    std::vector<TIn> xrow(row_len + 16, x_zp);  // padding columns keep XZP
    const std::size_t copy_at = std::min(pad_left, row_len), copy_n = std::min(W, row_len - copy_at);
    const std::size_t slots = std::min((kh - 1) * dy + 1, H);
    std::vector<std::uint32_t> ring((slots + 1) * slot_len);
    std::uint32_t* const pad_row = ring.data() + slots * slot_len;
    std::fill(pad_row, pad_row + slot_len, kernel::pair_word(x_zp, x_zp));
    std::vector<std::size_t> tag(slots);
    std::vector<const std::uint32_t*> taps(kh * pairs);
    std::vector<TOut> out_row(Out.strides[3] == 1 ? 0 : width);

    // Pair row(s) of input row y of channel (n, ic) into `slot`.
    const auto build = [&](std::uint32_t* slot, std::size_t n, std::size_t ic, std::size_t y) {
        const TIn* src = &X[{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(ic), static_cast<std::uint32_t>(y), 0}];
        const std::uint64_t xs = X.strides[3];
        if (xs == 1)
            std::memcpy(xrow.data() + copy_at, src, copy_n * sizeof(TIn));
        else
            for (std::size_t j = 0; j < copy_n; ++j) xrow[copy_at + j] = src[j * xs];
        if (shared) {
            k.pair_row(xrow.data(), dx, slot, slot_len);
            return;
        }
        for (std::size_t t = 0; t < pairs; ++t)
            for (std::size_t o = 0; o < width; ++o)
                slot[t * width + o] = kernel::pair_word(xrow[o * sx + 2 * t * dx], xrow[o * sx + (2 * t + 1) * dx]);
    };

    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t ic = 0; ic < Cin; ++ic) {
            std::fill(tag.begin(), tag.end(), H);  // no row built
            for (std::size_t oy = 0; oy < oH; ++oy) {
                for (std::size_t ky = 0; ky < kh; ++ky) {
                    const std::size_t yp = oy * sy + ky * dy;  // row in the padded input
                    const std::uint32_t* row = pad_row;
                    if (yp >= pad_top && yp - pad_top < H) {
                        const std::size_t y = yp - pad_top, s = y % slots;
                        std::uint32_t* slot = ring.data() + s * slot_len;
                        if (tag[s] != y) {
                            build(slot, n, ic, y);
                            tag[s] = y;
                        }
                        row = slot;
                    }
                    for (std::size_t t = 0; t < pairs; ++t)
                        taps[ky * pairs + t] = row == pad_row ? row : shared ? row + 2 * t * dx : row + t * width;
                }
                for (std::size_t j = 0; j < m; ++j) {
                    const auto oc = static_cast<std::uint32_t>(ic * m + j);
                    const DepthwiseTaps t{taps.data(), f.channel(oc), taps.size()};
                    TOut* dst = &Out[{static_cast<std::uint32_t>(n), oc, static_cast<std::uint32_t>(oy), 0}];
                    if (out_row.empty()) {
                        k.row(t, channels[oc], dst, oW);
                    } else {
                        k.row(t, channels[oc], out_row.data(), oW);
                        for (std::size_t o = 0; o < oW; ++o) dst[o * Out.strides[3]] = out_row[o];
                    }
                }
            }
        }
}

/// Computes a validated depthwise `op` (is_depthwise), preparing its filter on the way.
template <class TIn, class TFilter, class TOut>
void depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, gemm::Isa cap = gemm::Isa::Best) {
    depthwise(op, prepare_depthwise(op), cap);
}

}  // namespace qdml::simd::conv
