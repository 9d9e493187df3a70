// qdml/simd/conv/depthwise_kernels.hpp - the kernels of the depthwise
// convolution (simd/conv/depthwise.hpp), one family per ISA path: generic
// (portable C++, every CPU), AVX2 (vpmaddwd + vpaddd, 8 lanes) and AVX-512
// VNNI (16 lanes: vpdpbusd on byte quads, vpdpwssd on int16 pairs). Raw
// intrinsics live in functions with GCC/Clang target attributes
// (simd/gemm/isa.hpp), chosen at run time.
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
//   out = Q(fp32(acc) * mult, OutputZP).
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
#include "qdml/simd/gemm/isa.hpp"

namespace qdml::simd::conv {

/// The requantize constants of one output channel.
struct DepthwiseChannel {
    std::uint32_t bias = 0;  ///< Bias[oc] - XZP * sum(w') (mod 2^32)
    float mult = 0;          ///< fp32(InputScale * FilterScale[oc]) / OutputScale
    QuantizeParams q;        ///< Q's bounds and OutputZP
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
        out[o] = requantize<TOut>(wrap_int32(acc), c.mult, c.q.zp);
    }
}

#if QDML_GEMM_X86

// --- AVX2: 8 lanes, vpmaddwd + vpaddd ----------------------------------------

template <class TIn>
QDML_TARGET_AVX2 inline __m256i widen8_avx2(const std::uint8_t* x) noexcept {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_signed_v<TIn>)
        return _mm256_cvtepi8_epi32(b);
    else
        return _mm256_cvtepu8_epi32(b);
}

/// P[j] for j < n (n a multiple of 8; x readable to n + dx + 7).
template <class TIn>
QDML_TARGET_AVX2 void pair_row_avx2(const std::uint8_t* x, std::size_t dx, std::uint32_t* p, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; j += 8) {
        const __m256i a = widen8_avx2<TIn>(x + j), b = _mm256_slli_epi32(widen8_avx2<TIn>(x + j + dx), 16);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + j), _mm256_blend_epi16(a, b, 0xAA));
    }
}

/// Q of 8 accumulators, as bytes in the low 8 bytes of the result.
QDML_TARGET_AVX2 inline std::uint64_t requantize8_avx2(__m256i acc, const DepthwiseChannel& c) noexcept {
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(c.mult));
    v = _mm256_max_ps(v, _mm256_set1_ps(c.q.lo));  // max(NaN, lo) is lo: Q maps NaN to lo - zp
    v = _mm256_min_ps(v, _mm256_set1_ps(c.q.hi));
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(c.q.zp));  // rne (MXCSR)
    q = _mm256_and_si256(q, _mm256_set1_epi32(0xff));  // the output byte (values are in range)
    q = _mm256_packus_epi16(_mm256_packus_epi32(q, q), q);
    return static_cast<std::uint32_t>(_mm256_cvtsi256_si32(q)) |
           std::uint64_t{static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(q, 1)))} << 32;
}

template <int U>
QDML_TARGET_AVX2 inline void accumulate_avx2(const DepthwiseTaps& t, std::size_t o, std::uint32_t bias,
                                             __m256i (&acc)[U]) noexcept {
    for (int u = 0; u < U; ++u) acc[u] = _mm256_set1_epi32(static_cast<int>(bias));
    for (std::size_t i = 0; i < t.count; ++i) {
        const __m256i w = _mm256_set1_epi32(static_cast<int>(t.weights[i]));
        const std::uint32_t* p = t.rows[i] + o;
        QDML_UNROLL for (int u = 0; u < U; ++u) acc[u] = _mm256_add_epi32(
            acc[u], _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8 * u)), w));
    }
}

template <class TOut>
QDML_TARGET_AVX2 void row_avx2(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                               std::size_t width) noexcept {
    constexpr int U = 4;
    std::size_t o = 0;
    for (; o + 8 * U <= width; o += 8 * U) {
        __m256i acc[U];
        accumulate_avx2<U>(t, o, c.bias, acc);
        for (int u = 0; u < U; ++u) {
            const std::uint64_t q = requantize8_avx2(acc[u], c);
            std::memcpy(out + o + 8 * u, &q, 8);
        }
    }
    for (; o < width; o += 8) {
        __m256i acc[1];
        accumulate_avx2<1>(t, o, c.bias, acc);
        const std::uint64_t q = requantize8_avx2(acc[0], c);
        std::memcpy(out + o, &q, width - o < 8 ? width - o : 8);
    }
}

/// Q of 4 x 8 accumulators as 32 bytes, lane k of acc[u] at byte 16 * (k / 4)
/// + 4 * u + k % 4 (the packs work within 128-bit lanes); the saturating
/// form of requantize64_avx512 (min(hi, v) keeps NaN, vcvtps2dq, int16 and
/// int8 saturation; Capped false leaves the min out where
/// requantize_fits_int32 says it cannot matter).
template <class TOut, bool Capped>
QDML_TARGET_AVX2 inline __m256i requantize32_packed_avx2(__m256i a0, __m256i a1, __m256i a2, __m256i a3, __m256 mult,
                                                         __m256 hi, __m256i zp) noexcept {
    const __m256i acc[4] = {a0, a1, a2, a3};
    __m256i q[4];
    QDML_UNROLL for (int u = 0; u < 4; ++u) {
        const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[u]), mult);
        q[u] = _mm256_cvtps_epi32(Capped ? _mm256_min_ps(hi, v) : v);  // min(hi, NaN) is NaN
    }
    (void)hi;
    const __m256i w0 = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), zp);
    const __m256i w1 = _mm256_adds_epi16(_mm256_packs_epi32(q[2], q[3]), zp);
    return std::is_signed_v<TOut> ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1);
}

/// Q of 32 outputs from two phases of 8 accumulators each (lane i of e0:
/// output 2i, of o0: 2i + 1; e1, o1: outputs 16 + the same), as 32 bytes in order.
template <class TOut, bool Capped>
QDML_TARGET_AVX2 inline __m256i requantize32_phased_avx2(__m256i e0, __m256i o0, __m256i e1, __m256i o1, __m256 mult,
                                                         __m256 hi, __m256i zp) noexcept {
    // Per 128-bit lane k: outputs 8k + 0, 2, 4, 6, 1, 3, 5, 7, then 16 + the same.
    const __m256i b = requantize32_packed_avx2<TOut, Capped>(e0, o0, e1, o1, mult, hi, zp);
    return _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(b, _mm256_setr_epi8(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0, 4, 1, 5, 2, 6,
                                                3, 7, 8, 12, 9, 13, 10, 14, 11, 15)),
        0xD8);  // qwords 0, 2, 1, 3: outputs 0-7, 8-15, 16-23, 24-31
}

/// 16 int16 elements from p (unaligned): 8 pair words.
QDML_TARGET_AVX2 inline __m256i load16_avx2(const std::int16_t* p) noexcept {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// One tap of plane_pairs_avx2: the phases of 32 outputs from p.
QDML_TARGET_AVX2 inline void pair_tap_avx2(__m256i (&acc)[4], const std::int16_t* p, __m256i w) noexcept {
    acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(load16_avx2(p), w));
    acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(load16_avx2(p + 1), w));
    acc[2] = _mm256_add_epi32(acc[2], _mm256_madd_epi16(load16_avx2(p + 16), w));
    acc[3] = _mm256_add_epi32(acc[3], _mm256_madd_epi16(load16_avx2(p + 17), w));
}

/// A whole channel plane of int16 pairs (dx = sx = sy = 1): output f reads
/// the pair word at in + f + offsets[i] (int16 elements); outputs f, f + 2,
/// ... (phase 0) and f + 1, f + 3, ... (phase 1) are one unaligned 32-byte
/// load each, four loads give 32. Writes oh * pitch outputs rounded up to 32
/// to a.out, flat (a.out holds rows of `pitch`); `in` readable to that plus
/// the largest offset + 33 elements. `Taps` > 0: a.taps == Taps, the tap loop
/// unrolled (offsets and weights in registers); 0: any a.taps.
template <class TOut, int Taps, bool Capped>
QDML_TARGET_AVX2 void plane_pairs_body_avx2(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    constexpr int kMaxTaps = Taps > 0 ? Taps : 1;
    const auto* in = static_cast<const std::int16_t*>(a.in);
    std::size_t off[kMaxTaps];
    __m256i wt[kMaxTaps];
    if constexpr (Taps > 0)
        for (int i = 0; i < Taps; ++i) {
            off[i] = a.offsets[i];
            wt[i] = _mm256_set1_epi32(static_cast<int>(a.weights[i]));
        }
    // (Locals: the stores could alias c, and the compiler would reload them per block.)
    const __m256 mult = _mm256_set1_ps(c.mult), hi = _mm256_set1_ps(c.q.hi);
    const __m256i zp = _mm256_set1_epi16(static_cast<short>(c.q.zp)), bias = _mm256_set1_epi32(static_cast<int>(c.bias));
    TOut* const out = a.out;
    const std::size_t count = a.oh * a.pitch;
    for (std::size_t f = 0; f < count; f += 32) {
        __m256i acc[4] = {bias, bias, bias, bias};
        if constexpr (Taps > 0) {
            QDML_UNROLL for (int i = 0; i < Taps; ++i) pair_tap_avx2(acc, in + f + off[i], wt[i]);
        } else {
            for (std::size_t i = 0; i < a.taps; ++i)
                pair_tap_avx2(acc, in + f + a.offsets[i], _mm256_set1_epi32(static_cast<int>(a.weights[i])));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + f),
                            requantize32_phased_avx2<TOut, Capped>(acc[0], acc[1], acc[2], acc[3], mult, hi, zp));
    }
}

template <class TOut, int Taps = 0>
QDML_TARGET_AVX2 void plane_pairs_avx2(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    if (!requantize_fits_int32(c.mult))
        plane_pairs_body_avx2<TOut, Taps, true>(a, c);
    else
        plane_pairs_body_avx2<TOut, Taps, false>(a, c);
}

/// 16 bytes of TIn as int16 (sign- or zero-extended).
template <class TIn>
QDML_TARGET_AVX2 inline __m256i widen_epi16_avx2(__m128i b) noexcept {
    if constexpr (std::is_signed_v<TIn>)
        return _mm256_cvtepi8_epi16(b);
    else
        return _mm256_cvtepu8_epi16(b);
}

/// 16 TIn elements from s as int16.
template <class TIn>
QDML_TARGET_AVX2 inline __m256i widen16_avx2(const TIn* s) noexcept {
    return widen_epi16_avx2<TIn>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
}

/// Stages `rows` input rows of `w` TIn elements (element stride 1, rows
/// `src_stride` elements apart) as int16 at dst + r * pitch: 16 elements a
/// load, a row's last 16 overlapping the previous ones (rows shorter than 16
/// element by element); nothing outside the rows read or written.
template <class TIn>
QDML_TARGET_AVX2 void stage_pairs_avx2(const TIn* src, std::size_t src_stride, std::size_t rows, std::size_t w,
                                       std::int16_t* dst, std::size_t pitch) noexcept {
    for (std::size_t r = 0; r < rows; ++r, src += src_stride, dst += pitch) {
        if (w < 16) {
            for (std::size_t j = 0; j < w; ++j) dst[j] = src[j];
            continue;
        }
        std::size_t j = 0;
        for (; j + 16 <= w; j += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), widen16_avx2<TIn>(src + j));
        if (j < w) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + w - 16), widen16_avx2<TIn>(src + w - 16));
    }
}

/// Copies `rows` rows of `w` bytes from src (rows `src_pitch` apart) to dst
/// (rows `dst_stride` apart, element stride 1): 32 bytes a load, a row's
/// last 32 overlapping (16 for rows of 16-31, shorter ones byte by byte).
QDML_TARGET_AVX2 inline void copy_rows_avx2(const std::uint8_t* src, std::size_t src_pitch, std::uint8_t* dst,
                                            std::uint64_t dst_stride, std::size_t rows, std::size_t w) noexcept {
    for (std::size_t r = 0; r < rows; ++r, src += src_pitch, dst += dst_stride) {
        if (w >= 32) {
            std::size_t j = 0;
            for (; j + 32 <= w; j += 32)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j),
                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j)));
            if (j < w)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + w - 32),
                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + w - 32)));
        } else if (w >= 16) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + w - 16),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + w - 16)));
        } else {
            std::memcpy(dst, src, w);
        }
    }
}

// --- AVX-512 VNNI: 16 lanes; vpdpbusd on byte quads, vpdpwssd on int16 pairs ---

template <class TIn>
QDML_TARGET_AVX512 inline __m512i widen16_avx512(const std::uint8_t* x) noexcept {
    // (The all-lanes maskz forms: g++ 12's unmasked ones warn -Wuninitialized inside its own header.)
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_signed_v<TIn>)
        return _mm512_maskz_cvtepi8_epi32(0xffff, b);
    else
        return _mm512_maskz_cvtepu8_epi32(0xffff, b);
}

/// P[j] for j < n (n a multiple of 16; x readable to n + dx + 15).
template <class TIn>
QDML_TARGET_AVX512 void pair_row_avx512(const std::uint8_t* x, std::size_t dx, std::uint32_t* p,
                                        std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; j += 16) {
        const __m512i a = widen16_avx512<TIn>(x + j);
        const __m512i b = _mm512_maskz_slli_epi32(0xffff, widen16_avx512<TIn>(x + j + dx), 16);
        _mm512_storeu_si512(p + j, _mm512_mask_blend_epi16(0xAAAAAAAAu, a, b));
    }
}

/// Stages `rows` input rows of `w` bytes (element stride 1, `src_stride`
/// bytes apart), each xor `flip`, at dst + r * pitch: 64 bytes a load, the
/// last chunk of a row masked (nothing outside the rows read or written).
/// One call per plane: a generic copy per row cost a fifth of the 3x3
/// 32-channel 112^2 depthwise row (calls, spills and 32-byte chunks).
QDML_TARGET_AVX512 inline void stage_rows_avx512(const std::uint8_t* src, std::size_t src_stride, std::size_t rows,
                                                 std::size_t w, std::uint8_t flip, std::uint8_t* dst,
                                                 std::size_t pitch) noexcept {
    const __m512i x = _mm512_set1_epi8(static_cast<char>(flip));
    const std::size_t full = w / 64 * 64;
    const __mmask64 tail = (std::uint64_t{1} << (w - full)) - 1;  // w - full < 64
    for (std::size_t r = 0; r < rows; ++r, src += src_stride, dst += pitch) {
        for (std::size_t j = 0; j < full; j += 64)
            _mm512_storeu_si512(dst + j, _mm512_xor_si512(_mm512_loadu_si512(src + j), x));
        if (tail) _mm512_mask_storeu_epi8(dst + full, tail, _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, src + full), x));
    }
}

/// The quad row of one input row read in place: Q[j] = bytes xp[j..j+3] for
/// j < n (n a multiple of 16), xp the row padded on the left by `pad` and on
/// the right by any amount, padding bytes `zp` (in TIn's bits); UINT8 out
/// (INT8 inputs offset by +128 with `flip` 0x80). `src` is the row (stride 1,
/// `w` elements); the loads are masked to it, so nothing outside is read.
QDML_TARGET_AVX512 inline void quad_row_direct_avx512(const std::uint8_t* src, std::size_t pad, std::size_t w,
                                                      std::uint8_t zp, std::uint8_t flip, std::uint32_t* q,
                                                      std::size_t n) noexcept {
    // Lane k of 16 words takes source dwords k and k+1 (bytes 4k..4k+7), then
    // bytes (i, i+1, i+2, i+3) for word i of the lane.
    const __m512i dwords = _mm512_setr_epi32(0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4);
    const __m512i bytes = _mm512_set4_epi32(0x06050403, 0x05040302, 0x04030201, 0x03020100);
    const __m512i fill = _mm512_set1_epi8(static_cast<char>(zp)), flips = _mm512_set1_epi8(static_cast<char>(flip));
    const auto base = reinterpret_cast<std::uintptr_t>(src);
    for (std::size_t j = 0; j < n; j += 16) {
        // Bytes b < 20 of the chunk are xp[j + b] = src[j + b - pad] where 0 <= j + b - pad < w.
        const std::size_t lo = j < pad ? std::min<std::size_t>(pad - j, 20) : 0;
        const std::size_t hi = j + 20 <= pad ? 0 : std::min<std::size_t>(pad + w > j ? pad + w - j : 0, 20);
        const __mmask64 mask = hi > lo ? ((std::uint64_t{1} << hi) - 1) & ~((std::uint64_t{1} << lo) - 1) : 0;
        // Masked-off bytes are never accessed (AVX-512 fault suppression), so the
        // address may lie outside the row where the mask excludes those bytes.
        const auto at = reinterpret_cast<const void*>(base + j - pad);
        const __m512i x = _mm512_xor_si512(_mm512_mask_loadu_epi8(fill, mask, at), flips);
        const __m512i v = _mm512_maskz_permutexvar_epi32(0xffff, dwords, x);
        _mm512_storeu_si512(q + j, _mm512_shuffle_epi8(v, bytes));
    }
}

/// Q of 4 x 16 accumulators as 64 output bytes. Per lane:
/// v = min(hi - zp, fp32(acc) * mult) keeps NaN; rne by vcvtps2dq (NaN and
/// v < -2^31 give INT_MIN); then int16 saturation, + zp with int16
/// saturation, and 8-bit saturation: Q's clamp from below (NaN to the low
/// bound) done by the saturations, equal to Q because the bounds are integers.
/// Byte order: acc[0] then acc[1], ... (Phased false), or output 4i + p from
/// lane i of acc[p] (Phased: the four phases of plane_quads_avx512).
/// Capped false leaves the min out, for multipliers where it cannot change
/// the result (requantize_fits_int32: a seventh of the depthwise kernels'
/// vector work; requantize multipliers are << 1).
template <class TOut, bool Phased = false, bool Capped = true>
QDML_TARGET_AVX512 inline __m512i requantize64_lanes_avx512(__m512i a0, __m512i a1, __m512i a2, __m512i a3,
                                                            __m512 mult, __m512 hi, std::int32_t out_zp) noexcept {
    constexpr __mmask16 all = 0xffff;
    const __m512i acc[4] = {a0, a1, a2, a3};  // (by value: a pointer would keep the caller's accumulators in memory)
    __m512i q[4];
    QDML_UNROLL for (int u = 0; u < 4; ++u) {
        const __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc[u]), mult);
        if constexpr (Capped)
            q[u] = _mm512_maskz_cvtps_epi32(all, _mm512_maskz_min_ps(all, hi, v));  // min(hi, NaN) is NaN
        else
            q[u] = _mm512_maskz_cvtps_epi32(all, v);
    }
    (void)hi;
    const __m512i zp = _mm512_set1_epi16(static_cast<short>(out_zp));
    const __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), zp);
    const __m512i w23 = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), zp);
    // Per 128-bit lane k, dwords: acc[0] lanes 4k..4k+3, acc[1] .., acc[2] .., acc[3] ...
    const __m512i b = std::is_signed_v<TOut> ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
    if constexpr (Phased)  // byte 4p + i of each lane to 4i + p
        return _mm512_shuffle_epi8(b, _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400));
    else
        return _mm512_maskz_permutexvar_epi32(all, _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
}

/// requantize64_lanes_avx512 with one channel's multiplier in every lane.
template <class TOut, bool Phased = false, bool Capped = true>
QDML_TARGET_AVX512 inline __m512i requantize64_avx512(__m512i a0, __m512i a1, __m512i a2, __m512i a3,
                                                      const DepthwiseChannel& c) noexcept {
    const __m512 m = _mm512_set1_ps(c.mult);
    return requantize64_lanes_avx512<TOut, Phased, Capped>(a0, a1, a2, a3, m, _mm512_set1_ps(c.q.hi), c.q.zp);
}

/// acc += x (u8) . w (s8), four products per lane. Written out: g++ 12 keeps
/// the intrinsic's accumulator apart from its result and copies every
/// accumulator twice per tap (as in gemm/kernel_avx512vnni.hpp).
QDML_TARGET_AVX512 inline void dot_quads(__m512i& acc, __m512i x, __m512i w) noexcept {
    __asm__("vpdpbusd %[w], %[x], %[acc]" : [acc] "+v"(acc) : [x] "v"(x), [w] "v"(w));
}

/// One tap of plane_quads_avx512: phases 0-3 of 64 outputs from p.
QDML_TARGET_AVX512 inline void plane_tap(__m512i (&acc)[4], const std::uint8_t* p, __m512i w) noexcept {
    QDML_UNROLL for (int u = 0; u < 4; ++u) dot_quads(acc[u], _mm512_loadu_si512(p + u), w);
}

/// A whole channel plane (dx = sx = sy = 1, weights in int8), row by row:
/// output (r, o) reads the quad at in + r*pitch + o + offsets[i]; in blocks of
/// 64 outputs, 16 outputs o + p, o + p + 4, ... (phase p) are one unaligned
/// load of 64 bytes, so no quad row is built; a row's last block is stored
/// masked to its `ow` outputs (its other lanes read the padding and the
/// next row: computed, never stored). `in` readable to (oh - 1) * pitch +
/// ow rounded up to 64, plus the largest offset + 3. `Taps` > 0: a.taps ==
/// Taps, the tap loop unrolled (offsets and weights in registers); 0: any a.taps.
/// (Measured against one flat pass over the plane with per-row masked
/// stores: the flat form computes 2% fewer outputs but its stores cost more.)
template <class TOut, int Taps, bool Capped>
QDML_TARGET_AVX512 void plane_quads_body_avx512(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    constexpr int kMaxTaps = Taps > 0 ? Taps : 1;
    const auto* in = static_cast<const std::uint8_t*>(a.in);
    std::size_t off[kMaxTaps];
    __m512i wt[kMaxTaps];
    if constexpr (Taps > 0)
        for (int i = 0; i < Taps; ++i) {
            off[i] = a.offsets[i];
            wt[i] = _mm512_set1_epi32(static_cast<int>(a.weights[i]));
        }
    const std::size_t last = (a.ow - 1) / 64 * 64;  // the last block's first output
    const __mmask64 tail = ~std::uint64_t{0} >> (63 - (a.ow - 1 - last));
    for (std::size_t r = 0; r < a.oh; ++r) {
        const std::uint8_t* row = in + r * a.pitch;
        TOut* out = a.out + r * a.out_row_stride;
        for (std::size_t o = 0; o < a.ow; o += 64) {
            __m512i acc[4];
            for (int u = 0; u < 4; ++u) acc[u] = _mm512_set1_epi32(static_cast<int>(c.bias));
            if constexpr (Taps > 0) {
                QDML_UNROLL for (int i = 0; i < Taps; ++i) plane_tap(acc, row + o + off[i], wt[i]);
            } else {
                for (std::size_t i = 0; i < a.taps; ++i)
                    plane_tap(acc, row + o + a.offsets[i], _mm512_set1_epi32(static_cast<int>(a.weights[i])));
            }
            const __m512i q = requantize64_avx512<TOut, true, Capped>(acc[0], acc[1], acc[2], acc[3], c);
            if (o < last)
                _mm512_storeu_si512(out + o, q);
            else
                _mm512_mask_storeu_epi8(out + o, tail, q);
        }
    }
}

template <class TOut, int Taps = 0>
QDML_TARGET_AVX512 void plane_quads_avx512(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    if (!requantize_fits_int32(c.mult))
        plane_quads_body_avx512<TOut, Taps, true>(a, c);
    else
        plane_quads_body_avx512<TOut, Taps, false>(a, c);
}

/// acc[0..U) = bias + the taps' dot products at outputs o.. (the rest 0).
template <bool Quads, int U>
QDML_TARGET_AVX512 inline void accumulate_avx512(const DepthwiseTaps& t, std::size_t o, std::uint32_t bias,
                                                 __m512i (&acc)[8]) noexcept {
    for (int u = 0; u < 8; ++u) acc[u] = u < U ? _mm512_set1_epi32(static_cast<int>(bias)) : _mm512_setzero_si512();
    for (std::size_t i = 0; i < t.count; ++i) {
        const __m512i w = _mm512_set1_epi32(static_cast<int>(t.weights[i]));
        const std::uint32_t* p = t.rows[i] + o;
        QDML_UNROLL for (int u = 0; u < U; ++u) {
            const __m512i x = _mm512_loadu_si512(p + 16 * u);
            if constexpr (Quads)
                acc[u] = _mm512_dpbusd_epi32(acc[u], x, w);
            else
                acc[u] = _mm512_dpwssd_epi32(acc[u], x, w);
        }
    }
}

/// `count` outputs from o (1 <= count <= 128), U = ceil(count / 16) vectors.
template <class TOut, bool Quads, bool Capped, int U>
QDML_TARGET_AVX512 inline void block_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                            std::size_t o, std::size_t count) noexcept {
    __m512i acc[8];
    accumulate_avx512<Quads, U>(t, o, c.bias, acc);
    for (int h = 0; h < (U + 3) / 4; ++h) {
        const __m512i q = requantize64_avx512<TOut, false, Capped>(acc[4 * h], acc[4 * h + 1], acc[4 * h + 2], acc[4 * h + 3], c);
        const std::size_t n = count - 64 * h;
        if (n >= 64)
            _mm512_storeu_si512(out + o + 64 * h, q);
        else
            _mm512_mask_storeu_epi8(out + o + 64 * h, (std::uint64_t{1} << n) - 1u, q);
    }
}

/// One output row of `width` outputs (exactly `width` bytes stored), in
/// blocks of up to 128.
template <class TOut, bool Quads, bool Capped>
QDML_TARGET_AVX512 void row_body_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                   std::size_t width) noexcept {
    std::size_t o = 0;
    for (; o + 128 <= width; o += 128) block_avx512<TOut, Quads, Capped, 8>(t, c, out, o, 128);
    const std::size_t rest = width - o;
    switch ((rest + 15) / 16) {
        case 0: break;
        case 1: block_avx512<TOut, Quads, Capped, 1>(t, c, out, o, rest); break;
        case 2: block_avx512<TOut, Quads, Capped, 2>(t, c, out, o, rest); break;
        case 3: block_avx512<TOut, Quads, Capped, 3>(t, c, out, o, rest); break;
        case 4: block_avx512<TOut, Quads, Capped, 4>(t, c, out, o, rest); break;
        case 5: block_avx512<TOut, Quads, Capped, 5>(t, c, out, o, rest); break;
        case 6: block_avx512<TOut, Quads, Capped, 6>(t, c, out, o, rest); break;
        case 7: block_avx512<TOut, Quads, Capped, 7>(t, c, out, o, rest); break;
        default: block_avx512<TOut, Quads, Capped, 8>(t, c, out, o, rest); break;
    }
}

template <class TOut, bool Quads>
QDML_TARGET_AVX512 void row_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                   std::size_t width) noexcept {
    if (!requantize_fits_int32(c.mult))
        row_body_avx512<TOut, Quads, true>(t, c, out, width);
    else
        row_body_avx512<TOut, Quads, false>(t, c, out, width);
}

// --- NHWC direct (AVX-512 VNNI quads): channels across lanes --------------

/// Quads of vertical neighbours: v[b] = bytes (r0[b], r1[b], r2[b], r3[b]) ^ flip
/// for b < round_up(bytes, 64) (the rows read to `bytes`, masked; the quads
/// past it are garbage for the caller to overwrite). Each 64-byte row chunk
/// is first permuted (dword 4L + k from dword 4k + L) so that the unpacks,
/// which work within 128-bit lanes, give the quads in order.
template <bool Flip>
QDML_TARGET_AVX512 void vertical_quads_avx512(const std::uint8_t* const* rows, std::size_t bytes,
                                              std::uint32_t* v) noexcept {
    const __m512i fl = _mm512_set1_epi8(static_cast<char>(0x80));
    const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (std::size_t b = 0; b < bytes; b += 64) {
        const __mmask64 m = bytes - b >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (bytes - b)) - 1;
        __m512i r[4];
        for (int j = 0; j < 4; ++j) {
            r[j] = _mm512_maskz_loadu_epi8(m, rows[j] + b);
            if constexpr (Flip) r[j] = _mm512_xor_si512(r[j], fl);
            r[j] = _mm512_maskz_permutexvar_epi32(0xffff, perm, r[j]);
        }
        const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]), hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
        const __m512i lo23 = _mm512_unpacklo_epi8(r[2], r[3]), hi23 = _mm512_unpackhi_epi8(r[2], r[3]);
        _mm512_storeu_si512(v + b, _mm512_unpacklo_epi16(lo01, lo23));  // bytes b .. b + 15
        _mm512_storeu_si512(v + b + 16, _mm512_unpackhi_epi16(lo01, lo23));
        _mm512_storeu_si512(v + b + 32, _mm512_unpacklo_epi16(hi01, hi23));
        _mm512_storeu_si512(v + b + 48, _mm512_unpackhi_epi16(hi01, hi23));
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
    const float* mult = nullptr;          ///< [cb][16]
    float hi = 0;
    std::int32_t zp = 0;
    TOut* out0 = nullptr;
    TOut* out1 = nullptr;                 ///< null: one row
};

/// The 16-byte lanes j < count of q to out + j * pitch (the all-lanes
/// maskz extracts: g++ 12 warns -Wmaybe-uninitialized inside the plain ones
/// and inside _mm512_castsi512_si128).
template <class TOut>
QDML_TARGET_AVX512 inline void store_lanes_avx512(TOut* out, std::size_t pitch, __m512i q, std::size_t count) noexcept {
    constexpr __mmask8 all = 0xf;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_maskz_extracti32x4_epi32(all, q, 0));
    if (count > 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pitch), _mm512_maskz_extracti32x4_epi32(all, q, 1));
    if (count > 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * pitch), _mm512_maskz_extracti32x4_epi32(all, q, 2));
    if (count > 3) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * pitch), _mm512_maskz_extracti32x4_epi32(all, q, 3));
}

/// Per channel block (its weights, bias and multiplier loaded once), blocks
/// of 4 pixels x 16 channels: each input vector feeds both rows, and the
/// weights are shared by the 4 pixels (against 64 consecutive outputs per
/// block, whose channel blocks vary: 3x3 32ch 112^2 NHWC, Zen 4, 90 -> 66 us).
template <class TOut, bool Two, bool Capped = true>
QDML_TARGET_AVX512 void nhwc_rows_avx512(const NhwcRows<TOut>& a) noexcept {
    const __m512 hi = _mm512_set1_ps(a.hi);
    const std::size_t C = a.cblocks * 16;
    for (std::size_t cb = 0; cb < a.cblocks; ++cb) {
        const __m512i bias = _mm512_loadu_si512(a.bias + cb * 16);
        const __m512 m = _mm512_loadu_ps(a.mult + cb * 16);
        const std::uint32_t* const w0 = a.w0 + cb * 16;
        const std::uint32_t* const w1 = a.w1 + cb * 16;
        for (std::size_t x = 0; x < a.ow; x += 4) {
            __m512i x0[4], x1[4];
            for (int u = 0; u < 4; ++u) x0[u] = x1[u] = bias;
            const std::uint32_t* p = a.v + x * C + cb * 16;
            for (std::size_t kx = 0; kx < a.taps; ++kx, p += a.tap_step) {
                const __m512i wa = _mm512_loadu_si512(w0 + kx * C);
                const __m512i wb = Two ? _mm512_loadu_si512(w1 + kx * C) : wa;
                QDML_UNROLL for (int u = 0; u < 4; ++u) {
                    const __m512i in = _mm512_loadu_si512(p + u * C);
                    dot_quads(x0[u], in, wa);
                    if constexpr (Two) dot_quads(x1[u], in, wb);
                }
            }
            const std::size_t count = std::min<std::size_t>(4, a.ow - x), at = x * C + cb * 16;
            store_lanes_avx512(a.out0 + at, C, requantize64_lanes_avx512<TOut, false, Capped>(x0[0], x0[1], x0[2], x0[3], m, hi, a.zp), count);
            if constexpr (Two)
                store_lanes_avx512(a.out1 + at, C, requantize64_lanes_avx512<TOut, false, Capped>(x1[0], x1[1], x1[2], x1[3], m, hi, a.zp), count);
        }
    }
}

// --- NHWC direct (AVX2 int16 pairs): channels across lanes ----------------

/// 8 bytes as int16 (TIn sign- or zero-extended).
template <class TIn>
QDML_TARGET_AVX2 inline __m128i widen8_epi16(__m128i b) noexcept {
    if constexpr (std::is_signed_v<TIn>)
        return _mm_cvtepi8_epi16(b);
    else
        return _mm_cvtepu8_epi16(b);
}

/// Pairs of vertical neighbours: v[e] = pair(r0[e], r1[e]) (int16 of TIn)
/// for e < n, n a multiple of 8 (nothing past n read or written): the bytes
/// interleaved, then widened (byte pairs become word pairs in order).
template <class TIn>
QDML_TARGET_AVX2 void vertical_pairs_avx2(const TIn* r0, const TIn* r1, std::size_t n, std::uint32_t* v) noexcept {
    std::size_t e = 0;
    for (; e + 16 <= n; e += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + e));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + e));
        const __m128i lo = _mm_unpacklo_epi8(a, b), hi = _mm_unpackhi_epi8(a, b);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + e), widen_epi16_avx2<TIn>(lo));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + e + 8), widen_epi16_avx2<TIn>(hi));
    }
    if (e < n) {  // the last 8
        const __m128i ab = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0 + e)),
                                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r1 + e)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(v + e), widen8_epi16<TIn>(ab));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(v + e + 4), widen8_epi16<TIn>(_mm_unpackhi_epi64(ab, ab)));
    }
}

/// One or two output rows of the pairs NHWC direct form (C a multiple of
/// 8): output (pixel x, channel c) of the first row is bias[c] + sum over kx
/// of v01[i] . (w'[0][kx], w'[1][kx]) + v23[i] . (w'[2][kx], 0), and of the
/// second v01[i] . (0, w'[0][kx]) + v23[i] . (w'[1][kx], w'[2][kx]), with
/// i = x * C + c + kx * tap_step, v01 / v23 the vertical pairs of padded
/// input rows 0-1 / 2-3 of the pair.
template <class TOut>
struct NhwcPairRows {
    const std::uint32_t* v01 = nullptr;   ///< each readable to (ow + 1 + (taps - 1) * dx) * C: 2-pixel blocks
    const std::uint32_t* v23 = nullptr;
    std::size_t ow = 0;                   ///< pixels per output row
    std::size_t tap_step = 0, taps = 0, cblocks = 0;
    const std::uint32_t* w = nullptr;     ///< [kx][cb][4][8]: the first row's two weight pairs, then the second's
    const std::uint32_t* bias = nullptr;  ///< [cb][8]
    const float* mult = nullptr;          ///< [cb][8]
    float hi = 0;
    std::int32_t zp = 0;
    TOut* out0 = nullptr;
    TOut* out1 = nullptr;                 ///< null: one row
};

/// 8 words from p (unaligned).
QDML_TARGET_AVX2 inline __m256i load8_avx2(const std::uint32_t* p) noexcept {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// One filter column of nhwc_pair_rows_avx2's block: r[u] (row 0) and
/// r[2 + u] (row 1) of pixel u += the column's products.
template <bool Two>
QDML_TARGET_AVX2 inline void nhwc_pair_column_avx2(__m256i (&r)[4], const std::uint32_t* p, const std::uint32_t* q,
                                                   const std::uint32_t* w, std::size_t C) noexcept {
    const __m256i a01 = load8_avx2(w), a23 = load8_avx2(w + 8);
    const __m256i b01 = load8_avx2(w + 16), b23 = load8_avx2(w + 24);
    QDML_UNROLL for (int u = 0; u < 2; ++u) {
        const __m256i i01 = load8_avx2(p + u * C), i23 = load8_avx2(q + u * C);
        r[u] = _mm256_add_epi32(r[u], _mm256_add_epi32(_mm256_madd_epi16(i01, a01), _mm256_madd_epi16(i23, a23)));
        if constexpr (Two)
            r[2 + u] = _mm256_add_epi32(r[2 + u], _mm256_add_epi32(_mm256_madd_epi16(i01, b01), _mm256_madd_epi16(i23, b23)));
    }
    (void)b01;
    (void)b23;
}

/// Blocks of 2 pixels x 8 channels x both rows, each input vector feeding
/// both rows: 4 accumulators and 4 inputs in registers, the weights memory
/// operands (an AVX2 core has 16 vector registers). Pixel pairs outer and
/// channel blocks inner, so a pixel's stores are consecutive. `Taps` > 0:
/// a.taps == Taps, the filter-column loop unrolled. (Zen 4, 3x3 32ch 112^2
/// NHWC under QDML_ISA=avx2: blocks of 4 pixels, channel blocks outer, 140
/// us (the compiler loaded every input twice); 2 pixels with a rolled column
/// loop 146; unrolled 127-137; pixel pairs outer 125.)
template <class TOut, bool Two, bool Capped, int Taps = 0>
QDML_TARGET_AVX2 void nhwc_pair_rows_avx2(const NhwcPairRows<TOut>& a) noexcept {
    const __m256 hi = _mm256_set1_ps(a.hi);
    const __m256i zp = _mm256_set1_epi16(static_cast<short>(a.zp));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // dword 4 * (k / 4) + u to qword u
    const std::size_t C = a.cblocks * 8, wstep = a.cblocks * 32, ow = a.ow, step = a.tap_step;
    TOut* const out0 = a.out0;
    TOut* const out1 = a.out1;
    const std::uint32_t* const v01 = a.v01;
    const std::uint32_t* const v23 = a.v23;
    for (std::size_t x = 0; x < ow; x += 2)
        for (std::size_t cb = 0; cb < a.cblocks; ++cb) {
            const __m256i bias = load8_avx2(a.bias + cb * 8);
            const __m256 m = _mm256_loadu_ps(a.mult + cb * 8);
            __m256i r[4] = {bias, bias, bias, bias};  // row 0 pixels 0, 1; row 1 pixels 0, 1
            const std::size_t at = x * C + cb * 8;
            const std::uint32_t* p = v01 + at;
            const std::uint32_t* q = v23 + at;
            const std::uint32_t* w = a.w + cb * 32;
            if constexpr (Taps > 0) {
                QDML_UNROLL for (int kx = 0; kx < Taps; ++kx) nhwc_pair_column_avx2<Two>(r, p + kx * step, q + kx * step, w + kx * wstep, C);
            } else {
                for (std::size_t kx = 0; kx < a.taps; ++kx) nhwc_pair_column_avx2<Two>(r, p + kx * step, q + kx * step, w + kx * wstep, C);
            }
            const __m256i b = _mm256_permutevar8x32_epi32(requantize32_packed_avx2<TOut, Capped>(r[0], r[1], r[2], r[3], m, hi, zp), order);
            const __m128i lo = _mm256_castsi256_si128(b), up = _mm256_extracti128_si256(b, 1);
            const bool both = ow - x > 1;
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out0 + at), lo);
            if (both) _mm_storeh_pd(reinterpret_cast<double*>(out0 + at + C), _mm_castsi128_pd(lo));
            if constexpr (Two) {
                _mm_storel_epi64(reinterpret_cast<__m128i*>(out1 + at), up);
                if (both) _mm_storeh_pd(reinterpret_cast<double*>(out1 + at + C), _mm_castsi128_pd(up));
            }
        }
}

#endif  // QDML_GEMM_X86

}  // namespace kernel
}  // namespace qdml::simd::conv
