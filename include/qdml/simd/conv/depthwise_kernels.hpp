// qdml/simd/conv/depthwise_kernels.hpp - the row kernels of the depthwise
// convolution (simd/conv/depthwise.hpp), one family per ISA path: generic
// (portable C++, every CPU), AVX2 (vpmaddwd + vpaddd, 8 lanes) and AVX-512
// VNNI (vpdpwssd, 16 lanes). Raw intrinsics live in functions with GCC/Clang
// target attributes (simd/gemm/isa.hpp), chosen at run time.
//
// The data they read (built by the driver):
//   - a pair row P of one input row: P[j] = int16(x[j]) | int16(x[j + dx]) << 16,
//     x the input row with its padding columns holding the input zero point;
//   - a tap list: for each (ky, pair t) a pointer into a pair row (or the
//     padding row) and the weight pair w'[ky][2t] | w'[ky][2t+1] << 16 as
//     int16, w' = F - FZP (the odd tap's partner weight is 0).
// One output row of one channel is then
//   acc[o] = bias' + sum_i lo(P_i[o]) * lo(w_i) + hi(P_i[o]) * hi(w_i)   (mod 2^32)
// with bias' = Bias - XZP * sum(w') folding the input zero point, and
//   out[o] = Q(fp32(acc[o]) * mult, OutputZP).
//
// Ranges (why no 16-bit saturation can occur): x is int8 or uint8, so
// |x| <= 255 fits int16; |w'| = |F - FZP| <= 255 fits int16; each product
// |x * w'| <= 65025, a pair sum <= 130050 in int32 (vpmaddwd saturates only
// for two products of -32768 * -32768). The sum over taps and bias' wraps
// modulo 2^32 in vpaddd / vpdpwssd, which is the spec's int32 accumulator:
// sum x*w' - XZP*sum w' = sum (x - XZP) * w' exactly in the integers, and
// padding columns (x = XZP) contribute XZP*w' - XZP*w' = 0.
#pragma once

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

/// The int16 in the low (hi = false) or high half of a pair word.
inline std::int32_t half(std::uint32_t p, bool hi) noexcept {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(hi ? p >> 16 : p));
}

/// The pair word of two int16 values (lo in the low half).
inline std::uint32_t pair_word(std::int32_t lo, std::int32_t hi) noexcept {
    return static_cast<std::uint16_t>(lo) | std::uint32_t{static_cast<std::uint16_t>(hi)} << 16;
}

// --- generic ---------------------------------------------------------------

/// P[j] = pair(x[j], x[j + dx]) for j < n.
template <class TIn>
void pair_row_generic(const TIn* x, std::size_t dx, std::uint32_t* p, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; ++j) p[j] = pair_word(x[j], x[j + dx]);
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
QDML_TARGET_AVX2 inline __m256i widen8_avx2(const TIn* x) noexcept {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_signed_v<TIn>)
        return _mm256_cvtepi8_epi32(b);
    else
        return _mm256_cvtepu8_epi32(b);
}

/// P[j] for j < n (n a multiple of 8; x readable to n + dx + 7).
template <class TIn>
QDML_TARGET_AVX2 void pair_row_avx2(const TIn* x, std::size_t dx, std::uint32_t* p, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; j += 8) {
        const __m256i a = widen8_avx2(x + j), b = _mm256_slli_epi32(widen8_avx2(x + j + dx), 16);
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

// --- AVX-512 VNNI: 16 lanes, vpdpwssd ----------------------------------------

template <class TIn>
QDML_TARGET_AVX512 inline __m512i widen16_avx512(const TIn* x) noexcept {
    // (The all-lanes maskz forms: g++ 12's unmasked ones warn -Wuninitialized inside its own header.)
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_signed_v<TIn>)
        return _mm512_maskz_cvtepi8_epi32(0xffff, b);
    else
        return _mm512_maskz_cvtepu8_epi32(0xffff, b);
}

/// P[j] for j < n (n a multiple of 16; x readable to n + dx + 15).
template <class TIn>
QDML_TARGET_AVX512 void pair_row_avx512(const TIn* x, std::size_t dx, std::uint32_t* p, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; j += 16) {
        const __m512i a = widen16_avx512(x + j), b = _mm512_maskz_slli_epi32(0xffff, widen16_avx512(x + j + dx), 16);
        _mm512_storeu_si512(p + j, _mm512_mask_blend_epi16(0xAAAAAAAAu, a, b));
    }
}

/// Q of 16 accumulators, stored as the first `count` bytes at `out`.
template <class TOut>
QDML_TARGET_AVX512 inline void store16_avx512(__m512i acc, const DepthwiseChannel& c, TOut* out,
                                              __mmask16 mask) noexcept {
    constexpr __mmask16 all = 0xffff;
    __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), _mm512_set1_ps(c.mult));
    v = _mm512_maskz_max_ps(all, v, _mm512_set1_ps(c.q.lo));  // max(NaN, lo) is lo
    v = _mm512_maskz_min_ps(all, v, _mm512_set1_ps(c.q.hi));
    const __m512i q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), _mm512_set1_epi32(c.q.zp));  // rne
    _mm512_mask_cvtepi32_storeu_epi8(out, mask, q);
}

template <int U>
QDML_TARGET_AVX512 inline void accumulate_avx512(const DepthwiseTaps& t, std::size_t o, std::uint32_t bias,
                                                 __m512i (&acc)[U]) noexcept {
    for (int u = 0; u < U; ++u) acc[u] = _mm512_set1_epi32(static_cast<int>(bias));
    for (std::size_t i = 0; i < t.count; ++i) {
        const __m512i w = _mm512_set1_epi32(static_cast<int>(t.weights[i]));
        const std::uint32_t* p = t.rows[i] + o;
        QDML_UNROLL for (int u = 0; u < U; ++u) acc[u] =
            _mm512_dpwssd_epi32(acc[u], _mm512_loadu_si512(p + 16 * u), w);
    }
}

template <class TOut>
QDML_TARGET_AVX512 void row_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                   std::size_t width) noexcept {
    constexpr int U = 4;
    std::size_t o = 0;
    for (; o + 16 * U <= width; o += 16 * U) {
        __m512i acc[U];
        accumulate_avx512<U>(t, o, c.bias, acc);
        for (int u = 0; u < U; ++u) store16_avx512(acc[u], c, out + o + 16 * u, 0xffff);
    }
    for (; o < width; o += 16) {
        __m512i acc[1];
        accumulate_avx512<1>(t, o, c.bias, acc);
        const std::size_t n = width - o < 16 ? width - o : 16;
        store16_avx512(acc[0], c, out + o, static_cast<__mmask16>((1u << n) - 1u));
    }
}

#endif  // QDML_GEMM_X86

}  // namespace kernel
}  // namespace qdml::simd::conv
