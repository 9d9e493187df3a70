// qdml/simd/conv/depthwise_kernels.hpp - the kernels of the depthwise
// convolution (simd/conv/depthwise.hpp), one family per ISA path: generic
// (portable C++, every CPU), AVX2 (vpmaddwd + vpaddd, 8 lanes) and AVX-512
// VNNI (16 lanes: vpdpbusd on byte quads, vpdpwssd on int16 pairs). Raw
// intrinsics live in functions with GCC/Clang target attributes
// (simd/isa.hpp), chosen at run time.
//
// A word holds `G` input elements of one output's taps, x[j], x[j + dx], ...:
//   - pairs (G = 2): int16(x[j]) | int16(x[j + dx]) << 16, TIn sign-extended,
//     against the weight pair w'[2t] | w'[2t+1] << 16 (int16), w' = F - FZP;
//   - quads (G = 4, AVX-512 VNNI, when every w' fits int8): the bytes x'[j..],
//     x' = x (UINT8) or x + 128 (INT8, so vpdpbusd's unsigned operand), against
//     the int8 weights w'[4t..4t+3];
// a missing tap's weight is 0. The input row's padding columns hold the
// input zero point in the same form (XZP' = XZP, or XZP + 128 for INT8 quads).
// One output is then
//   acc = bias' + sum over words of the element products   (mod 2^32)
// with bias' = Bias - XZP' * sum(w') folding the zero point, and
//   out = Q(fp32(acc) * mult, OutputZP),
// or, in the DirectML profile (docs/semantics.md section 10),
//   out = quantize_directml(((fp32(acc) * FilterScale[oc]) * InputScale) / OutputScale, OutputZP).
//
// Ranges (why nothing saturates): pairs: |x| <= 255 and |w'| <= 255 fit
// int16, each product |x * w'| <= 65025, a pair sum <= 130050 in int32
// (vpmaddwd saturates only for two products of -32768 * -32768); quads:
// 0 <= x' <= 255, -128 <= w' <= 127, vpdpbusd adds the four products in
// int32 without saturation (vpdpbusds would saturate). The sums and bias'
// wrap modulo 2^32 in vpaddd / vpdpwssd / vpdpbusd, the spec's int32
// accumulator: sum x'*w' - XZP'*sum w' = sum (x - XZP) * w' exactly in the
// integers, and padding (x' = XZP') contributes XZP'*w' - XZP'*w' = 0.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/simd/isa.hpp"

namespace qdml::simd::conv {

/// The requantize constants of one output channel.
struct DepthwiseChannel {
    std::uint32_t bias = 0;  ///< Bias[oc] - XZP * sum(w') (mod 2^32)
    float mult = 0;          ///< fp32(InputScale * FilterScale[oc]) / OutputScale (DirectML: 0)
    QuantizeParams q;        ///< Q's bounds and OutputZP
    /// The DirectML profile: requantize_directml(acc, s1, s2, so, OutputZP)
    /// with s1 = FilterScale[oc], s2 = InputScale, so = OutputScale.
    bool directml = false;
    float s1 = 0, s2 = 0, so = 0;
};

/// One output row's inputs: `taps` pair-row pointers (each readable for the
/// row length rounded up to 16) and their weight pairs.
struct DepthwiseTaps {
    const std::uint32_t* const* rows = nullptr;
    const std::uint32_t* weights = nullptr;
    std::size_t count = 0;
};

namespace kernel {

/// One channel plane for the plane kernels (plane_quads_avx512, plane_pairs_avx2).
template <class TOut>
struct PlaneArgs {
    const void* in = nullptr;               ///< padded input plane, row pitch `pitch`: UINT8 form (quads) or int16 (pairs)
    const std::size_t* offsets = nullptr;   ///< element offset of tap i (ky, word t): ky*dy*pitch + G*t
    const std::uint32_t* weights = nullptr; ///< weight word of tap i
    std::size_t taps = 0, pitch = 0, ow = 0, oh = 0;
    TOut* out = nullptr;                    ///< output row 0 (element stride 1; pairs: a flat plane of pitch `pitch`)
    std::uint64_t out_row_stride = 0;       ///< elements between output rows
};


/// The int16 in the low (hi = false) or high half of a pair word.
inline std::int32_t half(std::uint32_t p, bool hi) noexcept {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(hi ? p >> 16 : p));
}

/// The pair word of two int16 values (lo in the low half).
inline std::uint32_t pair_word(std::int32_t lo, std::int32_t hi) noexcept {
    return static_cast<std::uint16_t>(lo) | std::uint32_t{static_cast<std::uint16_t>(hi)} << 16;
}

// --- generic ---------------------------------------------------------------

/// The pair word of x[0] and x[dx] (the row holds TIn elements).
template <class TIn>
inline std::uint32_t pair_at(const std::uint8_t* x, std::size_t dx) noexcept {
    const TIn* e = reinterpret_cast<const TIn*>(x);
    return pair_word(e[0], e[dx]);
}

/// The quad word of bytes x[0], x[dx], x[2dx], x[3dx] (the row holds u8).
inline std::uint32_t quad_at(const std::uint8_t* x, std::size_t dx) noexcept {
    return x[0] | std::uint32_t{x[dx]} << 8 | std::uint32_t{x[2 * dx]} << 16 | std::uint32_t{x[3 * dx]} << 24;
}

/// P[j] = pair(x[j], x[j + dx]) for j < n.
template <class TIn>
void pair_row_generic(const std::uint8_t* x, std::size_t dx, std::uint32_t* p, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; ++j) p[j] = pair_at<TIn>(x + j, dx);
}

/// Q[j] = quad(x + j, dx) for j < n.
inline void quad_row_generic(const std::uint8_t* x, std::size_t dx, std::uint32_t* q, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; ++j) q[j] = quad_at(x + j, dx);
}

template <class TOut>
void row_generic(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out, std::size_t width) noexcept {
    for (std::size_t o = 0; o < width; ++o) {
        std::uint32_t acc = c.bias;
        for (std::size_t i = 0; i < t.count; ++i) {
            const std::uint32_t p = t.rows[i][o], w = t.weights[i];
            acc += static_cast<std::uint32_t>(half(p, false) * half(w, false));
            acc += static_cast<std::uint32_t>(half(p, true) * half(w, true));
        }
        out[o] = c.directml ? requantize_directml<TOut>(wrap_int32(acc), c.s1, c.s2, c.so, c.q.zp)
                            : requantize<TOut>(wrap_int32(acc), c.mult, c.q.zp);
    }
}


/// One or two output rows of the NHWC direct form from the vertical quads
/// `v` (flat index pixel * C + channel of the padded row; C a multiple of
/// 16): output (pixel x, channel c) of a row is bias[c] + sum over kx of
/// v[x * C + c + kx * tap_step] . w[kx][c], with the quad weights
/// (w'[0][kx], w'[1][kx], w'[2][kx], 0) for the first row (quads rows 0-2)
/// and (0, w'[0][kx], w'[1][kx], w'[2][kx]) for the second (rows 1-3).
template <class TOut>
struct NhwcRows {
    const std::uint32_t* v = nullptr;     ///< readable to (ow + 3 + (taps - 1) * dx) * C: 4-pixel blocks
    std::size_t ow = 0;                   ///< pixels per output row
    std::size_t tap_step = 0, taps = 0, cblocks = 0;
    const std::uint32_t* w0 = nullptr;    ///< [kx][cb][16] quad weights of the first row
    const std::uint32_t* w1 = nullptr;    ///< [kx][cb][16] of the second
    const std::uint32_t* bias = nullptr;  ///< [cb][16]
    const float* mult = nullptr;          ///< [cb][16] (DirectML: FilterScale)
    float hi = 0;
    std::int32_t zp = 0;
    bool directml = false;                ///< DirectML: ((acc * mult[c]) * in_scale) / out_scale, quantize_directml
    float in_scale = 0, out_scale = 0;
    TOut* out0 = nullptr;
    TOut* out1 = nullptr;                 ///< null: one row
};

/// One or two output rows of the pairs NHWC direct form (C a multiple of
/// 8): output (pixel x, channel c) of the first row is bias[c] + sum over kx
/// of v01[i] . (w'[0][kx], w'[1][kx]) + v23[i] . (w'[2][kx], 0), and of the
/// second v01[i] . (0, w'[0][kx]) + v23[i] . (w'[1][kx], w'[2][kx]), with
/// i = x * pixel_step + c + kx * tap_step (pixel_step = sx * C), v01 / v23
/// the vertical pairs of padded input rows 0-1 / 2-3 of the pair.
template <class TOut>
struct NhwcPairRows {
    const std::uint32_t* v01 = nullptr;   ///< each readable to (ow * sx + 1 + (taps - 1) * dx) * C: 2-pixel blocks
    const std::uint32_t* v23 = nullptr;
    std::size_t ow = 0;                   ///< pixels per output row
    std::size_t pixel_step = 0;           ///< words between the inputs of neighbouring outputs: sx * C
    std::size_t tap_step = 0, taps = 0, cblocks = 0;
    const std::uint32_t* w = nullptr;     ///< [kx][cb][4][8]: the first row's two weight pairs, then the second's
    const std::uint32_t* bias = nullptr;  ///< [cb][8]
    const float* mult = nullptr;          ///< [cb][8] (DirectML: FilterScale)
    float hi = 0;
    std::int32_t zp = 0;
    bool directml = false;                ///< DirectML: ((acc * mult[c]) * in_scale) / out_scale, quantize_directml
    float in_scale = 0, out_scale = 0;
    TOut* out0 = nullptr;
    TOut* out1 = nullptr;                 ///< null: one row
};

}  // namespace kernel
}  // namespace qdml::simd::conv
