// qdml/simd/conv/depthwise.hpp - depthwise QUANTIZED_LINEAR_CONVOLUTION
// (one input channel per group: GroupCount == Cin, Cout = m * Cin for any
// channel multiplier m), bit-identical to qdml::reference::quantized_linear_convolution
// (docs/semantics.md section 6):
//   acc = Bias[oc] + sum_{ky,kx} (X[n][ic][oy*sy + ky*dy - padTop][ox*sx + kx*dx - padLeft] - XZP)
//                              * (F[oc][0][ky][kx] - FZP[oc])      (int32, wraps; padding taps 0)
//   Output = Q(fp32(acc) * (fp32(InputScale * FilterScale[oc]) / OutputScale), OutputZP)
// with ic = oc / m.
//
// Each channel is a 2-D plane, vectorized along the output width; words of
// two (int16 pairs) or four (bytes) of an output's taps are multiplied by the
// matching weights and summed (depthwise_kernels.hpp: the forms, the zero
// point folded into the bias, the ranges). Two drivers:
//   - plane (dx = sx = sy = 1): the padded input plane of a channel is
//     staged once with pitch P = padLeft + W + padRight, so the word of
//     filter row ky of output (oy, ox) starts at (oy + ky*dy)*P + ox; AVX-512
//     VNNI quads (weights in int8), row by row: 16 outputs o + p, o + p + 4,
//     ... are one unaligned 64-byte load, four loads give 64 outputs, one
//     plain store (the row's last block masked); pairs (AVX2): a flat pass
//     over the plane, two 32-byte loads per 16 outputs. NHWC by strides with
//     quads: every channel's plane staged at once by transposing the input
//     rows, an NHWC output computed in bands of rows transposed into it;
//   - rows (every other case): an input row is copied once into a row buffer
//     (any DML strides), widened into a word row W[j] = word at x[j] (one row
//     per tap group when sx > 1), kept in a ring of (kH-1)*dy + 1 + sy slots
//     (built one output row ahead; rows of the top/bottom padding read a
//     constant row of XZP words), and a row kernel sums kH * ceil(kW / G)
//     words per output.
// NHWC in and out with pixel stride C (C a multiple of 16, kH <= 3, unit
// strides, multiplier 1, AVX-512 VNNI quads; C a multiple of 8 with pairs)
// has forms with no transposition, channels across lanes
// (depthwise_nhwc_quads / depthwise_nhwc_pairs: words of vertically
// neighbouring input elements, built once per pair of output rows); channel
// planes with a stride above 1 or a horizontal dilation take the pairs form
// between two transpositions (depthwise_planes_pairs).
// Which form runs is select_depthwise_form()'s choice (depthwise_form.hpp:
// the forms in order, with their conditions); depthwise() dispatches on it.
// The filter part (the weight words, sum(w'), FilterScale) is a
// DepthwiseFilter, built once by prepare_depthwise (the prepared form keeps it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "qdml/core/quantize.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/simd/conv/depthwise_form.hpp"
#include "qdml/simd/conv/depthwise_kernels.hpp"
#include "qdml/simd/x86/avx2/depthwise.hpp"
#include "qdml/simd/x86/avx512vnni/depthwise.hpp"
#include "qdml/simd/kernel/transpose.hpp"
#include "qdml/simd/isa.hpp"
#include "qdml/simd/tuning.hpp"

namespace qdml::simd::conv {

using simd::kernel::transpose_bytes;

/// Whether the depthwise path computes `op`: one input channel per group
/// (GroupCount == Cin; FilterTensor Sizes[1] == 1), any channel multiplier.
template <class TIn, class TFilter, class TOut>
bool is_depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op) noexcept {
    return op.FilterTensor.sizes[1] == 1;
}

/// The filter side of a depthwise convolution, derived once: the weights
/// w' = F - FZP of output channel oc, row ky, grouped by two (int16 halves of
/// a word: kx = 2t, 2t+1) and, when every w' fits int8, by four (bytes of a
/// word: kx = 4t..4t+3); a missing tap's weight is 0. Also sum(w') per
/// output channel (mod 2^32) and FilterScale per output channel.
struct DepthwiseFilter {
    std::uint32_t cout = 0, kh = 0, kw = 0;
    bool quads = false;                       ///< every w' is in [-128, 127]: quad_weights is filled
    std::vector<std::uint32_t> pair_weights;  ///< [oc][ky][t], t < ceil(kW / 2)
    std::vector<std::uint32_t> quad_weights;  ///< [oc][ky][t], t < ceil(kW / 4)
    std::vector<std::uint32_t> sum;           ///< [oc]
    std::vector<float> scale;                 ///< [oc]
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
    const std::uint32_t pairs = (f.kw + 1) / 2, quads = (f.kw + 3) / 4;
    f.pair_weights.resize(std::size_t{f.cout} * f.kh * pairs);
    f.quad_weights.assign(std::size_t{f.cout} * f.kh * quads, 0u);
    f.sum.assign(f.cout, 0u);
    f.scale.resize(f.cout);
    f.quads = true;
    std::vector<std::int32_t> w(f.kw + 3);  // one filter row, w' with zeros past kW
    for (std::uint32_t oc = 0; oc < f.cout; ++oc) {
        const std::int32_t zp = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[{0, oc, 0, 0}] : 0;
        for (std::uint32_t ky = 0; ky < f.kh; ++ky) {
            for (std::uint32_t kx = 0; kx < f.kw; ++kx) {
                w[kx] = F[{oc, 0, ky, kx}] - zp;
                f.sum[oc] += static_cast<std::uint32_t>(w[kx]);
                f.quads = f.quads && w[kx] >= -128 && w[kx] <= 127;
            }
            const std::size_t row = std::size_t{oc} * f.kh + ky;
            for (std::uint32_t t = 0; t < pairs; ++t) f.pair_weights[row * pairs + t] = kernel::pair_word(w[2 * t], w[2 * t + 1]);
            for (std::uint32_t t = 0; t < quads; ++t)
                for (std::uint32_t b = 0; b < 4; ++b)
                    f.quad_weights[row * quads + t] |= std::uint32_t{static_cast<std::uint8_t>(w[4 * t + b])} << (8 * b);
        }
        f.scale[oc] = op.FilterScaleTensor[{0, oc, 0, 0}];
    }
    if (!f.quads) f.quad_weights.clear();
    return f;
}

namespace detail {

/// The kernels of one ISA path and word form: `group` input elements per
/// word (2: int16 pairs of TIn, 4: bytes of x, INT8 inputs offset by +128 to
/// UINT8, for vpdpbusd's unsigned operand).
template <class TIn, class TOut>
struct DepthwiseKernels {
    void (*word_row)(const std::uint8_t*, std::size_t, std::uint32_t*, std::size_t) noexcept;
    std::uint32_t (*word_at)(const std::uint8_t*, std::size_t) noexcept;
    void (*row)(const DepthwiseTaps&, const DepthwiseChannel&, TOut*, std::size_t) noexcept;
    /// Quads with dx = 1 from an input row of stride 1 in place (no row buffer), or null.
    void (*direct)(const std::uint8_t*, std::size_t, std::size_t, std::uint8_t, std::uint8_t, std::uint32_t*,
                   std::size_t) noexcept;
    /// A whole plane with dx = sx = sy = 1, or null: quads (stores into the
    /// output rows) or pairs (stores a flat plane of pitch P).
    void (*plane)(const kernel::PlaneArgs<TOut>&, const DepthwiseChannel&) noexcept;
    std::size_t group;
    simd::Isa isa;  ///< the path these run: Generic, Avx2 or Avx512Vnni
    /// `plane` for exactly 1-6 taps (kH * words per filter row), unrolled, or null.
    void (*plane_taps[6])(const kernel::PlaneArgs<TOut>&, const DepthwiseChannel&) noexcept = {};
    /// Byte rows of element stride 1 into a staged plane (x ^ flip), or null.
    void (*stage)(const std::uint8_t*, std::size_t, std::size_t, std::size_t, std::uint8_t, std::uint8_t*,
                  std::size_t) noexcept = nullptr;
    /// Pairs: TIn rows of element stride 1 into the staged int16 plane, or null.
    void (*stage_pairs)(const TIn*, std::size_t, std::size_t, std::size_t, std::int16_t*, std::size_t) noexcept = nullptr;
    /// Rows of bytes out of a flat plane into output rows of element stride 1, or null.
    void (*store_rows)(const std::uint8_t*, std::size_t, std::uint8_t*, std::uint64_t, std::size_t,
                       std::size_t) noexcept = nullptr;
};

/// The kernels of depthwise path `isa` (depthwise_isa's result: AMX runs the
/// AVX-512 VNNI kernels, AVX-VNNI the AVX2 ones); byte quads where the path
/// has them and the weights fit int8 (depthwise_word_size).
template <class TIn, class TOut>
DepthwiseKernels<TIn, TOut> depthwise_kernels(simd::Isa isa, bool quads) noexcept {
#if QDML_X86
    if (depthwise_word_size(isa, quads) == 4)
        return {kernel::quad_row_generic, kernel::quad_at, kernel::row_avx512<TOut, true>,
                kernel::quad_row_direct_avx512, kernel::plane_quads_avx512<TOut>, 4, simd::Isa::Avx512Vnni,
                {kernel::plane_quads_avx512<TOut, 1>, kernel::plane_quads_avx512<TOut, 2>,
                 kernel::plane_quads_avx512<TOut, 3>, kernel::plane_quads_avx512<TOut, 4>},
                kernel::stage_rows_avx512};
    if (isa >= simd::Isa::Avx512Vnni)
        return {kernel::pair_row_avx512<TIn>, kernel::pair_at<TIn>, kernel::row_avx512<TOut, false>, nullptr,
                kernel::plane_pairs_avx2<TOut>, 2, simd::Isa::Avx512Vnni,
                {kernel::plane_pairs_avx2<TOut, 1>, kernel::plane_pairs_avx2<TOut, 2>, kernel::plane_pairs_avx2<TOut, 3>,
                 kernel::plane_pairs_avx2<TOut, 4>, kernel::plane_pairs_avx2<TOut, 5>, kernel::plane_pairs_avx2<TOut, 6>},
                nullptr, kernel::stage_pairs_avx2<TIn>, kernel::copy_rows_avx2};
    if (isa >= simd::Isa::Avx2)
        return {kernel::pair_row_avx2<TIn>, kernel::pair_at<TIn>, kernel::row_avx2<TOut>, nullptr,
                kernel::plane_pairs_avx2<TOut>, 2, simd::Isa::Avx2,
                {kernel::plane_pairs_avx2<TOut, 1>, kernel::plane_pairs_avx2<TOut, 2>, kernel::plane_pairs_avx2<TOut, 3>,
                 kernel::plane_pairs_avx2<TOut, 4>, kernel::plane_pairs_avx2<TOut, 5>, kernel::plane_pairs_avx2<TOut, 6>},
                nullptr, kernel::stage_pairs_avx2<TIn>, kernel::copy_rows_avx2};
#endif
    (void)isa;
    (void)quads;
    return {kernel::pair_row_generic<TIn>, kernel::pair_at<TIn>, kernel::row_generic<TOut>, nullptr, nullptr, 2,
            simd::Isa::Generic};
}

/// Copies `count` input elements (stride `stride`) as row-buffer bytes (x ^ flip).
/// (Loops, not memcpy: rows are short, and the compiler vectorizes the
/// stride-1 loop inline where a library call would cost more than the copy.)
template <class TIn>
void copy_row(const TIn* src, std::uint64_t stride, std::uint8_t flip, std::uint8_t* dst, std::size_t count) noexcept {
    if (stride == 1 && count >= 32) {
        // 32 bytes at a time (the last 32 overlapping), xor flip: rows of a
        // hundred bytes cost less than a memcpy call each (Zen 4, the 3x3
        // 32-channel 112^2 bench row: the staging took a fifth of its time).
        const auto* s = reinterpret_cast<const std::uint8_t*>(src);
        const std::uint64_t x = 0x0101010101010101ull * flip;
        const auto copy32 = [&](std::size_t j) {
            std::uint64_t v[4];
            std::memcpy(v, s + j, 32);
            for (std::uint64_t& w : v) w ^= x;
            std::memcpy(dst + j, v, 32);
        };
        std::size_t j = 0;
        for (; j + 32 <= count; j += 32) copy32(j);
        if (j < count) copy32(count - 32);
    } else if (stride == 1 && flip == 0)
        std::memcpy(dst, src, count);
    else if (stride == 1)
        for (std::size_t j = 0; j < count; ++j) dst[j] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(src[j]) ^ flip);
    else
        for (std::size_t j = 0; j < count; ++j) dst[j] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(src[j * stride]) ^ flip);
}

/// Writes `count` outputs of `src` to `dst` with element stride `stride`.
template <class TOut>
void store_row(const TOut* src, TOut* dst, std::uint64_t stride, std::size_t count) noexcept {
    if (stride == 1)
        for (std::size_t o = 0; o < count; ++o) dst[o] = src[o];
    else
        for (std::size_t o = 0; o < count; ++o) dst[o * stride] = src[o];
}

/// Whether depthwise_plane stages an NHWC-by-strides input (channels_inner)
/// itself, transposing each input row into the padded planes of all channels
/// at once (byte quads only; depthwise_transposes says the same).
template <class TIn, class TOut>
bool plane_stages_nhwc(const DepthwiseKernels<TIn, TOut>& k) noexcept {
    return k.plane && k.group == 4;
}

/// The staged planes of depthwise_plane when it transposes an NHWC input
/// (thread-local, kept between calls: only the interiors change, so the
/// padding is written again only when the geometry or its byte differ).
struct StagedPlanes {
    std::vector<std::uint8_t> bytes;
    std::size_t key[7] = {};
};
inline StagedPlanes& staged_planes() {
    thread_local StagedPlanes s;
    return s;
}

/// The Plane form (select_depthwise_form; kernels with `plane`, dx = sx = sy
/// = 1, the plane within plane_length's bound): per input channel, the
/// padded input plane (bytes in UINT8 form for quads, int16 for pairs) with
/// pitch P = padLeft + W + padRight (padding holds XZP in that form), one
/// kernel call per output channel over oH * P outputs (P - oW of them per
/// row are not outputs). Quads store into output rows of element stride 1;
/// otherwise the kernel writes a plane of pitch P and its rows are copied out.
template <class TIn, class TFilter, class TOut>
void depthwise_plane(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                     const DepthwiseKernels<TIn, TOut>& k, const std::vector<DepthwiseChannel>& channels,
                     std::uint8_t zp_byte, std::uint8_t flip) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const std::size_t N = Out.sizes[0], Cout = Out.sizes[1], oH = Out.sizes[2], oW = Out.sizes[3];
    const std::size_t Cin = X.sizes[1], H = X.sizes[2], W = X.sizes[3];
    const std::size_t m = Cout / Cin, kh = f.kh, G = k.group, groups = (f.kw + G - 1) / G, dy = op.Dilations[0];
    const std::size_t pad_top = op.StartPadding[0], pad_left = op.StartPadding[1];
    const std::size_t P = oW + f.kw - 1, computed = round_up(oH * P, 128);
    std::vector<std::size_t> offsets(kh * groups);
    for (std::size_t ky = 0; ky < kh; ++ky)
        for (std::size_t t = 0; t < groups; ++t) offsets[ky * groups + t] = ky * dy * P + G * t;
    const std::size_t plane_len = plane_length(op, G);  // nonzero: select_depthwise_form checked it
    // The staged plane, padding XZP in the word form (written once: only the interior changes).
    const bool quads = G == 4;
    const bool nhwc_in = plane_stages_nhwc(k) && channels_inner(X), nhwc_out = plane_stages_nhwc(k) && channels_inner(Out);
    const bool all_staged = nhwc_in || nhwc_out;  // every channel's plane staged at once (the thread's planes)
    std::vector<std::uint8_t> bytes(quads && !all_staged ? plane_len : 0, zp_byte);
    StagedPlanes& staged = staged_planes();
    if (all_staged) {
        const std::size_t key[7] = {plane_len, Cin, P, H, W, pad_top * P + pad_left, zp_byte};
        if (!std::equal(key, key + 7, staged.key) || staged.bytes.size() != Cin * plane_len) {
            staged.bytes.assign(Cin * plane_len, zp_byte);
            std::copy(key, key + 7, staged.key);
        }
    }
    std::vector<std::int16_t> halves(quads ? 0 : plane_len, static_cast<std::int16_t>(op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0}));
    const bool in_place = quads && Out.strides[3] == 1;  // quads store output rows (pairs: a flat plane of pitch P)
    std::vector<TOut> out_plane(in_place || nhwc_out ? 0 : computed);
    kernel::PlaneArgs<TOut> a;
    a.in = quads ? static_cast<const void*>(bytes.data()) : static_cast<const void*>(halves.data());
    a.offsets = offsets.data();
    a.taps = offsets.size();
    a.pitch = P;
    a.ow = quads ? oW : P;
    a.oh = oH;
    a.out_row_stride = in_place ? Out.strides[2] : P;
    const std::uint32_t* weights = quads ? f.quad_weights.data() : f.pair_weights.data();
    const auto plane = a.taps <= 6 && k.plane_taps[a.taps - 1] ? k.plane_taps[a.taps - 1] : k.plane;
    for (std::size_t n = 0; n < N; ++n) {
        const auto nn = static_cast<std::uint32_t>(n);
        if (nhwc_in)  // every channel's plane at once: input row y (pixels x channels) transposed
            for (std::size_t y = 0; y < H; ++y)
                transpose_bytes(reinterpret_cast<const std::uint8_t*>(&X[{nn, 0, static_cast<std::uint32_t>(y), 0}]),
                                X.strides[3], staged.bytes.data() + (pad_top + y) * P + pad_left, plane_len, W, Cin,
                                flip, k.isa);
        else if (all_staged && k.stage && X.strides[3] == 1)
            for (std::size_t ic = 0; ic < Cin; ++ic)
                k.stage(reinterpret_cast<const std::uint8_t*>(&X[{nn, static_cast<std::uint32_t>(ic), 0, 0}]),
                        X.strides[2], H, W, flip, staged.bytes.data() + ic * plane_len + pad_top * P + pad_left, P);
        else if (all_staged)
            for (std::size_t ic = 0; ic < Cin; ++ic)
                for (std::size_t y = 0; y < H; ++y)
                    copy_row(&X[{nn, static_cast<std::uint32_t>(ic), static_cast<std::uint32_t>(y), 0}], X.strides[3],
                             flip, staged.bytes.data() + ic * plane_len + (pad_top + y) * P + pad_left, W);
        if (nhwc_out) {
            // Bands of output rows: every channel's band computed (rows of oW)
            // into a buffer of about 32 KB, then transposed row by row into
            // the channel-inner output.
            const std::size_t band = std::max<std::size_t>(1, 32768 / (Cout * oW)), band_len = band * oW;
            thread_local std::vector<TOut> bands;
            bands.resize(Cout * band_len);
            a.ow = oW;
            a.out_row_stride = oW;
            for (std::size_t y0 = 0; y0 < oH; y0 += band) {
                a.oh = std::min(band, oH - y0);
                for (std::size_t oc = 0; oc < Cout; ++oc) {
                    a.in = staged.bytes.data() + oc / m * plane_len + y0 * P;
                    a.weights = weights + oc * a.taps;
                    a.out = bands.data() + oc * band_len;
                    plane(a, channels[oc]);
                }
                for (std::size_t r = 0; r < a.oh; ++r)
                    transpose_bytes(reinterpret_cast<const std::uint8_t*>(bands.data() + r * oW), band_len,
                                    reinterpret_cast<std::uint8_t*>(&Out[{nn, 0, static_cast<std::uint32_t>(y0 + r), 0}]),
                                    Out.strides[3], Cout, oW, 0, k.isa);
            }
            continue;
        }
        for (std::size_t ic = 0; ic < Cin; ++ic) {
            const TIn* channel = &X[{nn, static_cast<std::uint32_t>(ic), 0, 0}];
            if (all_staged)
                a.in = staged.bytes.data() + ic * plane_len;
            else if (quads && k.stage && X.strides[3] == 1)
                k.stage(reinterpret_cast<const std::uint8_t*>(channel), X.strides[2], H, W, flip,
                        bytes.data() + pad_top * P + pad_left, P);
            else if (!quads && k.stage_pairs && X.strides[3] == 1)
                k.stage_pairs(channel, X.strides[2], H, W, halves.data() + pad_top * P + pad_left, P);
            else
                for (std::size_t y = 0; y < H; ++y) {
                    const TIn* src = channel + y * X.strides[2];
                    const std::size_t at = (pad_top + y) * P + pad_left;
                    if (quads)
                        copy_row(src, X.strides[3], flip, bytes.data() + at, W);
                    else
                        for (std::size_t j = 0; j < W; ++j) halves[at + j] = src[j * X.strides[3]];
                }
            for (std::size_t j = 0; j < m; ++j) {
                const auto oc = static_cast<std::uint32_t>(ic * m + j);
                a.weights = weights + oc * a.taps;
                a.out = in_place ? &Out[{nn, oc, 0, 0}] : out_plane.data();
                plane(a, channels[oc]);
                if (!in_place && k.store_rows && Out.strides[3] == 1)
                    k.store_rows(reinterpret_cast<const std::uint8_t*>(out_plane.data()), P,
                                 reinterpret_cast<std::uint8_t*>(&Out[{nn, oc, 0, 0}]),
                                 Out.strides[2], oH, oW);
                else if (!in_place)
                    for (std::size_t oy = 0; oy < oH; ++oy)
                        store_row(out_plane.data() + oy * P, &Out[{nn, oc, static_cast<std::uint32_t>(oy), 0}],
                                  Out.strides[3], oW);
            }
        }
    }
}

}  // namespace detail

namespace detail {

/// Per output channel: the bias with the input zero point folded in
/// (`zp_form`: XZP in the word form), the multiplier and Q's bounds (the
/// DirectML profile: its three scales instead of the multiplier).
template <class TIn, class TFilter, class TOut>
std::vector<DepthwiseChannel> channel_constants(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op,
                                                const DepthwiseFilter& f, std::int32_t zp_form, bool directml) {
    const std::int32_t out_zp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[{0, 0, 0, 0}] : 0;
    std::vector<DepthwiseChannel> channels(f.cout);
    for (std::uint32_t oc = 0; oc < f.cout; ++oc) {
        DepthwiseChannel& c = channels[oc];
        const std::uint32_t bias = op.BiasTensor ? static_cast<std::uint32_t>((*op.BiasTensor)[{0, oc, 0, 0}]) : 0u;
        c.bias = bias - static_cast<std::uint32_t>(zp_form) * f.sum[oc];
        c.q = QuantizeParams::make<TOut>(out_zp);
        c.directml = directml;
        if (directml) {
            c.s1 = f.scale[oc];
            c.s2 = op.InputScaleTensor[{0, 0, 0, 0}];
            c.so = op.OutputScaleTensor[{0, 0, 0, 0}];
        } else {
            c.mult = requantize_multiplier(op.InputScaleTensor[{0, 0, 0, 0}], f.scale[oc], op.OutputScaleTensor[{0, 0, 0, 0}]);
        }
    }
    return channels;
}

/// The NhwcQuads form (select_depthwise_form: AVX-512 VNNI, weights in
/// int8, nhwc_geometry with C a multiple of 16). Channels across lanes: per pair of output rows the
/// quads of 4 vertically neighbouring input bytes (rows oy - padTop ..
/// oy - padTop + 3; rows outside the input and the padding columns hold
/// XZP) are built once (unpacks), and each output is one vpdpbusd per
/// filter column and row of the pair (weights (w'0, w'1, w'2, 0) for the
/// first, (0, w'0, w'1, w'2) for the second); no transposition, outputs in
/// order.
template <class TIn, class TFilter, class TOut>
void depthwise_nhwc_quads(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                          bool directml) {
#if QDML_X86
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    NhwcGeometry g;
    nhwc_geometry(op, 16, g);  // (true: select_depthwise_form checked it)
    const std::size_t N = g.N, C = g.C, H = g.H, W = g.W, oH = g.oH, oW = g.oW, kh = g.kh, kw = g.kw, dx = g.dx;
    const std::size_t pt = g.pt, pl = g.pl, Wp = g.Wp, Wi = g.Wi;
    const std::uint8_t flip = std::is_signed_v<TIn> ? 0x80 : 0;
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
    const std::uint8_t zp_byte = static_cast<std::uint8_t>(static_cast<std::uint8_t>(x_zp) ^ flip);
    const std::vector<DepthwiseChannel> channels = channel_constants(op, f, zp_byte, directml);
    // Weights [kx][c] as quads over the rows of each output row of the pair, bias and multiplier [c].
    std::vector<std::uint32_t> w0(kw * C, 0u), w1(kw * C, 0u), bias(C);
    std::vector<float> mult(C);
    const std::size_t words = (kw + 3) / 4;
    for (std::size_t c = 0; c < C; ++c) {
        bias[c] = channels[c].bias;
        mult[c] = directml ? channels[c].s1 : channels[c].mult;
        for (std::size_t kx = 0; kx < kw; ++kx)
            for (std::size_t ky = 0; ky < kh; ++ky) {
                const std::uint32_t w = f.quad_weights[(c * kh + ky) * words + kx / 4] >> (8 * (kx % 4)) & 0xffu;
                w0[kx * C + c] |= w << (8 * ky);
                w1[kx * C + c] |= w << (8 * (ky + 1));
            }
    }
    const std::uint32_t zq = zp_byte * 0x01010101u;
    std::vector<std::uint32_t> v((Wp + 3) * C + 64, zq);  // quads of padded pixel p at p * C (+3 pixels: the 4-pixel blocks; 64: the build's overrun)
    const std::vector<TIn> zp_row(W * C, x_zp);
    kernel::NhwcRows<TOut> a;
    a.v = v.data();
    a.ow = oW;
    a.tap_step = dx * C;
    a.taps = kw;
    a.cblocks = C / 16;
    a.w0 = w0.data();
    a.w1 = w1.data();
    a.bias = bias.data();
    a.mult = mult.data();
    a.hi = channels[0].q.hi;
    a.zp = channels[0].q.zp;
    a.directml = directml;
    a.in_scale = channels[0].s2;
    a.out_scale = channels[0].so;
    const auto right = static_cast<std::ptrdiff_t>(std::min((pl + Wi) * C, v.size()));
    const bool capped = !directml && !std::all_of(mult.begin(), mult.end(), requantize_fits_int32);
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t oy = 0; oy < oH; oy += 2) {
            const std::uint8_t* rows[4];
            for (std::size_t j = 0; j < 4; ++j) {
                const std::size_t r = oy + j;  // padded row
                rows[j] = r >= pt && r - pt < H
                              ? reinterpret_cast<const std::uint8_t*>(&X[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(r - pt), 0}])
                              : reinterpret_cast<const std::uint8_t*>(zp_row.data());
            }
            if (flip)
                kernel::vertical_quads_avx512<true>(rows, Wi * C, v.data() + pl * C);
            else
                kernel::vertical_quads_avx512<false>(rows, Wi * C, v.data() + pl * C);
            std::fill(v.begin() + right, v.end(), zq);  // the right padding (the build's tail wrote into it)
            a.out0 = &Out[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(oy), 0}];
            if (oy + 1 < oH) {
                a.out1 = &Out[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(oy + 1), 0}];
                (capped ? kernel::nhwc_rows_avx512<TOut, true, true> : kernel::nhwc_rows_avx512<TOut, true, false>)(a);
            } else {
                (capped ? kernel::nhwc_rows_avx512<TOut, false, true> : kernel::nhwc_rows_avx512<TOut, false, false>)(a);
            }
        }
#else
    (void)op;
    (void)f;
    (void)directml;
#endif
}

/// p rounded up to a multiple of 64 bytes (buffers allocated 64 bytes longer).
inline std::uint32_t* align64(std::uint32_t* p) noexcept {
    return reinterpret_cast<std::uint32_t*>((reinterpret_cast<std::uintptr_t>(p) + 63) & ~std::uintptr_t{63});
}

/// The NhwcPairs form (select_depthwise_form: int16 pairs on AVX2, and on
/// AVX-512 VNNI when the weights do not fit int8; nhwc_geometry with C a
/// multiple of 8). Per pair of output rows the vertical pairs of padded
/// input rows 0-1 and 2-3 (the first reused from the previous pair's
/// second); each output is two vpmaddwd per filter column, no
/// transposition, outputs in order. (Where AVX-512 VNNI has byte quads, C
/// not a multiple of 16 takes the quads plane form through transposed
/// planes instead: 3 vpdpbusd per 16 outputs against 6 vpmaddwd per 8.)
template <class TIn, class TFilter, class TOut>
void depthwise_nhwc_pairs(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                          bool directml) {
#if QDML_X86
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    NhwcGeometry g;
    nhwc_geometry(op, 8, g);  // (true: select_depthwise_form checked it)
    const std::size_t N = g.N, C = g.C, H = g.H, W = g.W, oH = g.oH, oW = g.oW, kh = g.kh, kw = g.kw, dx = g.dx;
    const std::size_t pt = g.pt, pl = g.pl, Wp = g.Wp, Wi = g.Wi;
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
    const std::vector<DepthwiseChannel> channels = channel_constants(op, f, x_zp, directml);
    // Weights [kx][c / 8][4][c % 8]: (w'0, w'1), (w'2, 0) for the first row of
    // the pair, (0, w'0), (w'1, w'2) for the second (w' = 0 for ky >= kH).
    const std::size_t pairs = (kw + 1) / 2;
    const auto wt = [&](std::size_t c, std::size_t ky, std::size_t kx) {
        return ky < kh ? kernel::half(f.pair_weights[(c * kh + ky) * pairs + kx / 2], kx % 2 != 0) : 0;
    };
    std::vector<std::uint32_t> w(kw * C * 4), bias(C);
    std::vector<float> mult(C);
    for (std::size_t c = 0; c < C; ++c) {
        bias[c] = channels[c].bias;
        mult[c] = directml ? channels[c].s1 : channels[c].mult;
        for (std::size_t kx = 0; kx < kw; ++kx) {
            std::uint32_t* e = w.data() + kx * C * 4 + c / 8 * 32 + c % 8;
            e[0] = kernel::pair_word(wt(c, 0, kx), wt(c, 1, kx));
            e[8] = kernel::pair_word(wt(c, 2, kx), 0);
            e[16] = kernel::pair_word(0, wt(c, 0, kx));
            e[24] = kernel::pair_word(wt(c, 1, kx), wt(c, 2, kx));
        }
    }
    // Vertical pairs of padded pixel p at p * C (+3 pixels: a 2-pixel block reads one past the last
    // output's; +16 words: align64); padding holds XZP pairs.
    const std::uint32_t zpair = kernel::pair_word(x_zp, x_zp);
    const std::size_t sx = g.sx, sy = g.sy;
    std::vector<std::uint32_t> va((Wp + sx + 3) * C + 16, zpair), vb(va);  // (+sx: an odd row's last block reads one output past)
    const std::vector<TIn> zp_row(W * C, x_zp);
    kernel::NhwcPairRows<TOut> a;
    a.ow = oW;
    a.pixel_step = sx * C;
    a.tap_step = dx * C;
    a.taps = kw;
    a.cblocks = C / 8;
    a.w = w.data();
    a.bias = bias.data();
    a.mult = mult.data();
    a.hi = channels[0].q.hi;
    a.zp = channels[0].q.zp;
    a.directml = directml;
    a.in_scale = channels[0].s2;
    a.out_scale = channels[0].so;
    const bool capped = !directml && !std::all_of(mult.begin(), mult.end(), requantize_fits_int32);
    for (std::size_t n = 0; n < N; ++n) {
        const auto row = [&](std::size_t r) {  // padded row r
            return r >= pt && r - pt < H ? &X[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(r - pt), 0}]
                                         : zp_row.data();
        };
        std::uint32_t* v01 = align64(va.data());
        std::uint32_t* v23 = align64(vb.data());
        if (sy > 1) {  // one output row per pass: padded rows oy sy .. oy sy + 3, the first row's weights
            a.v01 = v01;
            a.v23 = v23;
            a.out1 = nullptr;
            for (std::size_t oy = 0; oy < oH; ++oy) {
                kernel::vertical_pairs_avx2(row(oy * sy), row(oy * sy + 1), Wi * C, v01 + pl * C);
                kernel::vertical_pairs_avx2(row(oy * sy + 2), row(oy * sy + 3), Wi * C, v23 + pl * C);
                a.out0 = &Out[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(oy), 0}];
                (capped ? kernel::nhwc_pair_rows_avx2<TOut, false, true> : kernel::nhwc_pair_rows_avx2<TOut, false, false>)(a);
            }
            continue;
        }
        kernel::vertical_pairs_avx2(row(0), row(1), Wi * C, v01 + pl * C);
        for (std::size_t oy = 0; oy < oH; oy += 2) {
            if (oy > 0) std::swap(v01, v23);  // rows oy, oy + 1 were the last pair's 2-3
            kernel::vertical_pairs_avx2(row(oy + 2), row(oy + 3), Wi * C, v23 + pl * C);
            a.v01 = v01;
            a.v23 = v23;
            a.out0 = &Out[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(oy), 0}];
            if (oy + 1 < oH) {
                a.out1 = &Out[{static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(oy + 1), 0}];
                (capped    ? kernel::nhwc_pair_rows_avx2<TOut, true, true>
                 : kw == 3 ? kernel::nhwc_pair_rows_avx2<TOut, true, false, 3>  // the 3x3's columns unrolled
                           : kernel::nhwc_pair_rows_avx2<TOut, true, false>)(a);
            } else {
                (capped ? kernel::nhwc_pair_rows_avx2<TOut, false, true> : kernel::nhwc_pair_rows_avx2<TOut, false, false>)(a);
            }
        }
    }
#else
    (void)op;
    (void)f;
    (void)directml;
#endif
}

}  // namespace detail

namespace detail {
/// Channel planes of `t`'s sizes, packed, at `data`.
template <class T>
TensorView<T, 4> planes(const TensorView<T, 4>& t, T* data) noexcept {
    TensorView<T, 4> v;
    v.data = data;
    v.sizes = t.sizes;
    v.strides = {std::uint64_t{t.sizes[1]} * t.sizes[2] * t.sizes[3], std::uint64_t{t.sizes[2]} * t.sizes[3],
                 t.sizes[3], 1};
    return v;
}
}  // namespace detail

namespace detail {
template <class TIn, class TFilter, class TOut>
void depthwise_channels(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                        simd::Isa isa, DepthwiseForm form, bool directml);

/// transpose_bytes over N images: image n's rows x cols bytes at src + n *
/// src_image (rows src_stride apart) into dst + n * dst_image (cols rows,
/// dst_stride apart).
inline void transpose_images(std::size_t N, const std::uint8_t* src, std::uint64_t src_image, std::size_t src_stride,
                             std::uint8_t* dst, std::uint64_t dst_image, std::size_t dst_stride, std::size_t rows,
                             std::size_t cols, simd::Isa isa) noexcept {
    for (std::size_t n = 0; n < N; ++n)
        transpose_bytes(src + n * src_image, src_stride, dst + n * dst_image, dst_stride, rows, cols, 0, isa);
}

/// The Plane and Rows forms with NHWC by strides (depthwise_transposes): the
/// input transposed into channel planes and, for an NHWC output, the planes
/// computed transposed back (16x16 byte blocks, two at once on AVX2); the
/// channel forms then read and write contiguous rows instead of gathering
/// every element.
template <class TIn, class TFilter, class TOut>
void depthwise_transposed(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                          simd::Isa isa, DepthwiseForm form, DepthwiseTransposes t, bool directml) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const std::size_t N = X.sizes[0], C = X.sizes[1], HW = std::size_t{X.sizes[2]} * X.sizes[3];
    const std::size_t Cout = Out.sizes[1], oHW = std::size_t{Out.sizes[2]} * Out.sizes[3];
    thread_local std::vector<std::uint8_t> in_planes, out_planes;
    auto planar = op;
    if (t.input) {
        in_planes.resize(N * C * HW);
        planar.InputTensor = planes(X, reinterpret_cast<const TIn*>(in_planes.data()));
        transpose_images(N, reinterpret_cast<const std::uint8_t*>(X.data), X.strides[0], X.strides[3], in_planes.data(),
                         C * HW, HW, HW, C, isa);
    }
    if (t.output) {
        out_planes.resize(N * Cout * oHW);
        planar.OutputTensor = planes(Out, reinterpret_cast<TOut*>(out_planes.data()));
    }
    depthwise_channels(planar, f, isa, form, directml);
    if (t.output)
        transpose_images(N, out_planes.data(), Cout * oHW, oHW, reinterpret_cast<std::uint8_t*>(Out.data), Out.strides[0],
                         Out.strides[3], Cout, oHW, isa);
}

/// The PlanesPairs form (select_depthwise_form): each image's channel planes
/// transposed into packed NHWC pixels, the NhwcPairs form on them into
/// packed NHWC pixels, those transposed back into the output's planes
/// (16x16 byte blocks, two at once on AVX2, as depthwise_transposed does).
template <class TIn, class TFilter, class TOut>
void depthwise_planes_pairs(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                            simd::Isa isa, bool directml) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const std::size_t N = X.sizes[0], C = X.sizes[1], HW = std::size_t{X.sizes[2]} * X.sizes[3];
    const std::size_t oHW = std::size_t{Out.sizes[2]} * Out.sizes[3];
    thread_local std::vector<std::uint8_t> in_pixels, out_pixels;
    in_pixels.resize(N * HW * C);
    out_pixels.resize(N * oHW * C);
    // C planes of HW (X.strides[1] apart) -> HW pixels of C, and back for the output.
    transpose_images(N, reinterpret_cast<const std::uint8_t*>(X.data), X.strides[0], X.strides[1], in_pixels.data(),
                     HW * C, C, C, HW, isa);
    depthwise_nhwc_pairs(as_packed_pixels(op, reinterpret_cast<const TIn*>(in_pixels.data()),
                                          reinterpret_cast<TOut*>(out_pixels.data())),
                         f, directml);
    transpose_images(N, out_pixels.data(), oHW * C, C, reinterpret_cast<std::uint8_t*>(Out.data), Out.strides[0],
                     Out.strides[1], oHW, C, isa);
}
}  // namespace detail

/// Computes a validated depthwise `op` (is_depthwise) with the filter `f`
/// prepared from it (or from a filter with the same descs and data); same
/// bits as the reference in profile `fidelity`. `cap` caps the ISA path as
/// QDML_ISA does. The form is select_depthwise_form()'s (depthwise_form.hpp).
template <class TIn, class TFilter, class TOut>
void depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
               simd::Isa cap = simd::Isa::Best, Fidelity fidelity = kDefaultFidelity) {
    const simd::Isa isa = depthwise_isa(cap);
    const DepthwiseForm form = select_depthwise_form(op, f.quads, isa);
    const bool directml = fidelity == Fidelity::DirectML;
    switch (form) {
        case DepthwiseForm::NhwcQuads: return detail::depthwise_nhwc_quads(op, f, directml);
        case DepthwiseForm::NhwcPairs: return detail::depthwise_nhwc_pairs(op, f, directml);
        case DepthwiseForm::PlanesPairs: return detail::depthwise_planes_pairs(op, f, isa, directml);
        case DepthwiseForm::Reference: return reference::quantized_linear_convolution(op, fidelity);
        case DepthwiseForm::Plane:
        case DepthwiseForm::Rows: {
            const DepthwiseTransposes t = depthwise_transposes(op, form, f.quads, isa);
            if (t.input || t.output) return detail::depthwise_transposed(op, f, isa, form, t, directml);
            return detail::depthwise_channels(op, f, isa, form, directml);
        }
    }
}

/// The Plane and Rows forms (select_depthwise_form) on `op` as laid out (an
/// NHWC input or output only when depthwise_plane stages or stores it).
template <class TIn, class TFilter, class TOut>
void detail::depthwise_channels(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f,
                                simd::Isa isa, DepthwiseForm form, bool directml) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const auto k = detail::depthwise_kernels<TIn, TOut>(isa, f.quads);
    const std::size_t N = Out.sizes[0], Cout = Out.sizes[1], oH = Out.sizes[2], oW = Out.sizes[3];
    const std::size_t Cin = X.sizes[1], H = X.sizes[2], W = X.sizes[3];
    const std::size_t m = Cout / Cin, kh = f.kh, G = k.group;
    const std::size_t sy = op.Strides[0], sx = op.Strides[1], dy = op.Dilations[0], dx = op.Dilations[1];
    const std::size_t pad_top = op.StartPadding[0], pad_left = op.StartPadding[1];
    const std::uint32_t* const weights = G == 4 ? f.quad_weights.data() : f.pair_weights.data();

    // The word rows (word_rows): one shared row when sx == 1 (group t reads it
    // at +t*G*dx), else one row per group; every row readable to the width
    // rounded up to 16; row_len within kMaxRowElements (else the Reference form).
    const WordRows wr = word_rows(op, G);
    const std::size_t groups = wr.groups, width = wr.width, slot_len = wr.slot_len, row_len = wr.row_len;
    const bool shared = wr.shared;

    // The row buffer holds TIn bytes (pairs) or x + 128 for INT8 (quads); its
    // padding columns hold XZP in that form.
    const std::uint8_t flip = G == 4 && std::is_signed_v<TIn> ? 0x80 : 0;
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
    const std::uint8_t zp_byte = static_cast<std::uint8_t>(static_cast<std::uint8_t>(x_zp) ^ flip);
    const std::int32_t zp_form = G == 4 ? std::int32_t{zp_byte} : std::int32_t{x_zp};

    const std::vector<DepthwiseChannel> channels = detail::channel_constants(op, f, zp_form, directml);
    if (form == DepthwiseForm::Plane) return detail::depthwise_plane(op, f, k, channels, zp_byte, flip);

    std::vector<std::uint8_t> xrow(row_len + 64, zp_byte);
    const std::size_t copy_at = std::min(pad_left, row_len), copy_n = std::min(W, row_len - copy_at);
    // Ring slots: rows of one output row's window and the next one's (those
    // are built one output row ahead, so a row's stores are done when it is read).
    const std::size_t slots = std::min((kh - 1) * dy + 1 + sy, pad_top + H);
    std::vector<std::uint32_t> ring((slots + 1) * slot_len);
    std::uint32_t* const pad_row = ring.data() + slots * slot_len;
    std::fill(pad_row, pad_row + slot_len, k.word_at(xrow.data(), 0));  // words of XZP only
    std::vector<std::size_t> tag(slots);
    const bool direct = k.direct && shared && dx == 1 && X.strides[3] == 1;
    std::vector<const std::uint32_t*> taps(kh * groups);
    std::vector<TOut> out_row(Out.strides[3] == 1 ? 0 : width);

    // Word row(s) of input row y of channel (n, ic) into `slot`.
    const auto build = [&](std::uint32_t* slot, std::size_t n, std::size_t ic, std::size_t y) {
        const TIn* src = &X[{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(ic), static_cast<std::uint32_t>(y), 0}];
        const std::uint64_t xs = X.strides[3];
        if (direct) {
            k.direct(reinterpret_cast<const std::uint8_t*>(src), pad_left, W, static_cast<std::uint8_t>(x_zp), flip,
                     slot, slot_len);
            return;
        }
        detail::copy_row(src, xs, flip, xrow.data() + copy_at, copy_n);
        if (shared) {
            k.word_row(xrow.data(), dx, slot, slot_len);
            return;
        }
        for (std::size_t t = 0; t < groups; ++t)
            for (std::size_t o = 0; o < width; ++o) slot[t * width + o] = k.word_at(xrow.data() + o * sx + t * G * dx, dx);
    };

    // The slot of padded-input row yp is yp % slots; `first` walks it per ky.
    std::vector<std::size_t> first(kh);
    const std::size_t step = sy % slots;
    const auto ensure = [&](std::size_t yp, std::size_t s, std::size_t n, std::size_t ic) -> const std::uint32_t* {
        if (yp < pad_top || yp - pad_top >= H) return pad_row;
        std::uint32_t* slot = ring.data() + s * slot_len;
        if (tag[s] != yp) {
            build(slot, n, ic, yp - pad_top);
            tag[s] = yp;
        }
        return slot;
    };
    const auto advance = [&](std::size_t& s, std::size_t by) {
        s += by;
        if (s >= slots) s -= slots;
    };
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t ic = 0; ic < Cin; ++ic) {
            std::fill(tag.begin(), tag.end(), ~std::size_t{0});  // no row built
            for (std::size_t ky = 0; ky < kh; ++ky) first[ky] = (ky * dy) % slots;
            for (std::size_t oy = 0; oy < oH; ++oy) {
                for (std::size_t ky = 0; ky < kh; ++ky) {
                    const std::uint32_t* row = ensure(oy * sy + ky * dy, first[ky], n, ic);
                    for (std::size_t t = 0; t < groups; ++t)
                        taps[ky * groups + t] = row == pad_row ? row : shared ? row + t * G * dx : row + t * width;
                }
                if (oy + 1 < oH)  // the next output row's rows, ahead
                    for (std::size_t ky = 0; ky < kh; ++ky) {
                        std::size_t s = first[ky];
                        advance(s, step);
                        ensure((oy + 1) * sy + ky * dy, s, n, ic);
                    }
                for (std::size_t j = 0; j < m; ++j) {
                    const auto oc = static_cast<std::uint32_t>(ic * m + j);
                    const DepthwiseTaps t{taps.data(), weights + std::size_t{oc} * kh * groups, taps.size()};
                    TOut* dst = &Out[{static_cast<std::uint32_t>(n), oc, static_cast<std::uint32_t>(oy), 0}];
                    if (out_row.empty()) {
                        k.row(t, channels[oc], dst, oW);
                    } else {
                        k.row(t, channels[oc], out_row.data(), oW);
                        detail::store_row(out_row.data(), dst, Out.strides[3], oW);
                    }
                }
                for (std::size_t ky = 0; ky < kh; ++ky) advance(first[ky], step);
            }
        }
}

/// Computes a validated depthwise `op` (is_depthwise), preparing its filter on the way.
template <class TIn, class TFilter, class TOut>
void depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, simd::Isa cap = simd::Isa::Best,
               Fidelity fidelity = kDefaultFidelity) {
    depthwise(op, prepare_depthwise(op), cap, fidelity);
}

}  // namespace qdml::simd::conv
