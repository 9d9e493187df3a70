// qdml/simd/kernel/add_pairs.hpp - the quantized add's integer decision
// (simd/element_wise_quantized_linear_add.hpp derives its constants and
// proves it): for 4W lanes of 8-bit A and B,
//   N = C + A * KA + B * KB        (int32, wrapping: exact modulo 2^32)
// with KA and KB split into a high part (KA >> 12) and the low 12 bits, so
// that each product is one vpmaddwd on A and B interleaved as word pairs;
// N = (hi << 12) + lo + C. A lane is uncertain when N & mask == 0; the result
// of a certain lane is N >> shift, stored with saturating packs. AVX-512BW
// (with vpdpwssd where AVX-512 VNNI is enabled), AVX2 and SSE2 forms; other
// archs have none (add_pairs_available() is false).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "qdml/simd/kernel/convert.hpp"

#if XSIMD_WITH_SSE2
#include <immintrin.h>
#endif

// GCC 12 reports its own _mm512_undefined_* placeholders inside AVX-512
// intrinsics as "(may be) used uninitialized" once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace qdml::simd::kernel {

/// The per-call constants of add_pairs_block (see the add's AddPairs).
struct AddPairsConstants {
    std::int32_t k_hi = 0;  ///< word pair (KA >> 12, KB >> 12): low word multiplies A, high word B
    std::int32_t k_lo = 0;  ///< word pair (KA & 4095, KB & 4095)
    std::int32_t c = 0;     ///< C
    std::int32_t mask = 0;  ///< a lane with N & mask == 0 is uncertain
    int shift = 0;          ///< a certain lane's result is N >> shift
};

/// Whether arch A has add_pairs_block.
template <class A>
constexpr bool add_pairs_available() noexcept {
#if XSIMD_WITH_AVX512BW
    if constexpr (std::is_base_of_v<xsimd::avx512bw, A>) return true;
#endif
    return isa_of<A>() == Isa::Avx2 || isa_of<A>() == Isa::Sse2;
}

/// Computes the 4W lanes at a and b (AConst / BConst: the element at a or
/// b repeated) and, unless a lane is uncertain, stores them at out as T
/// (normal or, with Stream, non-temporal stores at an address aligned to 4W
/// bytes) and returns true; returns false (nothing stored) otherwise.
template <class A, bool Stream, bool AConst, bool BConst, class TOut, class TA, class TB>
bool add_pairs_block(TOut* out, const TA* a, const TB* b, const AddPairsConstants& k) noexcept {
    static_assert(sizeof(TA) == 1 && sizeof(TB) == 1 && sizeof(TOut) == 1, "8-bit operands");
#if XSIMD_WITH_AVX512BW
    if constexpr (std::is_base_of_v<xsimd::avx512bw, A>) {
        const auto words = [](const auto* p, std::size_t off) {  // 32 elements as int16
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + off));
            return std::is_signed_v<T> ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
        };
        __m512i a0, a1, b0, b1;
        if constexpr (AConst) a0 = a1 = _mm512_set1_epi16(static_cast<short>(*a));
        else a0 = words(a, 0), a1 = words(a, 32);
        if constexpr (BConst) b0 = b1 = _mm512_set1_epi16(static_cast<short>(*b));
        else b0 = words(b, 0), b1 = words(b, 32);
        const __m512i k_hi = _mm512_set1_epi32(k.k_hi), k_lo = _mm512_set1_epi32(k.k_lo);
        const __m512i c = _mm512_set1_epi32(k.c), mask = _mm512_set1_epi32(k.mask);
        const auto n_of = [&](__m512i pairs) {  // N of 16 (A, B) word pairs
            const __m512i hi = _mm512_madd_epi16(pairs, k_hi);
#if defined(__AVX512VNNI__)
            const __m512i lo = _mm512_dpwssd_epi32(c, pairs, k_lo);
#else
            const __m512i lo = _mm512_add_epi32(_mm512_madd_epi16(pairs, k_lo), c);
#endif
            return _mm512_add_epi32(_mm512_slli_epi32(hi, 12), lo);
        };
        // In each 128-bit lane j, unpacklo pairs elements 8j..8j+3 and unpackhi 8j+4..8j+7.
        const __m512i n0 = n_of(_mm512_unpacklo_epi16(a0, b0)), n1 = n_of(_mm512_unpackhi_epi16(a0, b0));
        const __m512i n2 = n_of(_mm512_unpacklo_epi16(a1, b1)), n3 = n_of(_mm512_unpackhi_epi16(a1, b1));
        const __mmask16 uncertain = _mm512_testn_epi32_mask(n0, mask) | _mm512_testn_epi32_mask(n1, mask) |
                                    _mm512_testn_epi32_mask(n2, mask) | _mm512_testn_epi32_mask(n3, mask);
        if (uncertain != 0) return false;
        const __m128i s = _mm_cvtsi32_si128(k.shift);
        // packs_epi32 puts lane j's elements 8j..8j+7 in order; packs_epi16 then holds, per lane j,
        // the 8 bytes of elements 8j.. and of 32 + 8j..: qwords 0,2,4,6 then 1,3,5,7 restore the order.
        const __m512i w0 = _mm512_packs_epi32(_mm512_sra_epi32(n0, s), _mm512_sra_epi32(n1, s));
        const __m512i w1 = _mm512_packs_epi32(_mm512_sra_epi32(n2, s), _mm512_sra_epi32(n3, s));
        const __m512i bytes = std::is_signed_v<TOut> ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1);
        const __m512i r = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), bytes);
        if constexpr (Stream)
            _mm512_stream_si512(reinterpret_cast<__m512i*>(out), r);
        else
            _mm512_storeu_si512(out, r);
        return true;
    }
#endif
#if XSIMD_WITH_AVX2
    if constexpr (isa_of<A>() == Isa::Avx2) {
        const auto words = [](const auto* p, std::size_t off) {  // 16 elements as int16
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + off));
            return std::is_signed_v<T> ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
        };
        __m256i a0, a1, b0, b1;
        if constexpr (AConst) a0 = a1 = _mm256_set1_epi16(static_cast<short>(*a));
        else a0 = words(a, 0), a1 = words(a, 16);
        if constexpr (BConst) b0 = b1 = _mm256_set1_epi16(static_cast<short>(*b));
        else b0 = words(b, 0), b1 = words(b, 16);
        const __m256i k_hi = _mm256_set1_epi32(k.k_hi), k_lo = _mm256_set1_epi32(k.k_lo);
        const __m256i c = _mm256_set1_epi32(k.c), mask = _mm256_set1_epi32(k.mask);
        const auto n_of = [&](__m256i pairs) {
            const __m256i hi = _mm256_madd_epi16(pairs, k_hi);
            const __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(pairs, k_lo), c);
            return _mm256_add_epi32(_mm256_slli_epi32(hi, 12), lo);
        };
        const __m256i n0 = n_of(_mm256_unpacklo_epi16(a0, b0)), n1 = n_of(_mm256_unpackhi_epi16(a0, b0));
        const __m256i n2 = n_of(_mm256_unpacklo_epi16(a1, b1)), n3 = n_of(_mm256_unpackhi_epi16(a1, b1));
        const __m256i low_bits = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(_mm256_and_si256(n0, mask), _mm256_setzero_si256()),
                                                                 _mm256_cmpeq_epi32(_mm256_and_si256(n1, mask), _mm256_setzero_si256())),
                                                 _mm256_or_si256(_mm256_cmpeq_epi32(_mm256_and_si256(n2, mask), _mm256_setzero_si256()),
                                                                 _mm256_cmpeq_epi32(_mm256_and_si256(n3, mask), _mm256_setzero_si256())));
        if (!_mm256_testz_si256(low_bits, low_bits)) return false;
        const __m128i s = _mm_cvtsi32_si128(k.shift);
        // Per 128-bit lane as above: bytes of elements 0-7, 16-23 | 8-15, 24-31; qwords 0,2,1,3.
        const __m256i w0 = _mm256_packs_epi32(_mm256_sra_epi32(n0, s), _mm256_sra_epi32(n1, s));
        const __m256i w1 = _mm256_packs_epi32(_mm256_sra_epi32(n2, s), _mm256_sra_epi32(n3, s));
        const __m256i bytes = std::is_signed_v<TOut> ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1);
        const __m256i r = _mm256_permute4x64_epi64(bytes, 0xD8);
        if constexpr (Stream)
            _mm256_stream_si256(reinterpret_cast<__m256i*>(out), r);
        else
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), r);
        return true;
    }
#endif
#if XSIMD_WITH_SSE2
    if constexpr (isa_of<A>() == Isa::Sse2) {
        const auto words = [](const auto* p, std::size_t off) {  // 8 elements as int16
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
            const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + off));
            return std::is_signed_v<T> ? _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8)
                                       : _mm_unpacklo_epi8(v, _mm_setzero_si128());
        };
        __m128i a0, a1, b0, b1;
        if constexpr (AConst) a0 = a1 = _mm_set1_epi16(static_cast<short>(*a));
        else a0 = words(a, 0), a1 = words(a, 8);
        if constexpr (BConst) b0 = b1 = _mm_set1_epi16(static_cast<short>(*b));
        else b0 = words(b, 0), b1 = words(b, 8);
        const __m128i k_hi = _mm_set1_epi32(k.k_hi), k_lo = _mm_set1_epi32(k.k_lo);
        const __m128i c = _mm_set1_epi32(k.c), mask = _mm_set1_epi32(k.mask), zero = _mm_setzero_si128();
        const auto n_of = [&](__m128i pairs) {
            const __m128i hi = _mm_madd_epi16(pairs, k_hi);
            const __m128i lo = _mm_add_epi32(_mm_madd_epi16(pairs, k_lo), c);
            return _mm_add_epi32(_mm_slli_epi32(hi, 12), lo);
        };
        // Elements 0-3, 4-7, 8-11, 12-15: one 128-bit lane, already in order.
        const __m128i n0 = n_of(_mm_unpacklo_epi16(a0, b0)), n1 = n_of(_mm_unpackhi_epi16(a0, b0));
        const __m128i n2 = n_of(_mm_unpacklo_epi16(a1, b1)), n3 = n_of(_mm_unpackhi_epi16(a1, b1));
        const __m128i low_bits =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(_mm_and_si128(n0, mask), zero),
                                      _mm_cmpeq_epi32(_mm_and_si128(n1, mask), zero)),
                         _mm_or_si128(_mm_cmpeq_epi32(_mm_and_si128(n2, mask), zero),
                                      _mm_cmpeq_epi32(_mm_and_si128(n3, mask), zero)));
        if (_mm_movemask_epi8(low_bits) != 0) return false;
        const __m128i s = _mm_cvtsi32_si128(k.shift);
        const __m128i w0 = _mm_packs_epi32(_mm_sra_epi32(n0, s), _mm_sra_epi32(n1, s));
        const __m128i w1 = _mm_packs_epi32(_mm_sra_epi32(n2, s), _mm_sra_epi32(n3, s));
        const __m128i r = std::is_signed_v<TOut> ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
        if constexpr (Stream)
            _mm_stream_si128(reinterpret_cast<__m128i*>(out), r);
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out), r);
        return true;
    }
#endif
    (void)out, (void)a, (void)b, (void)k;
    return false;
}

}  // namespace qdml::simd::kernel

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
