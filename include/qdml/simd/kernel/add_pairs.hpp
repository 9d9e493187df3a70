// qdml/simd/kernel/add_pairs.hpp - the quantized add's integer decision
// (simd/element_wise_quantized_linear_add.hpp derives its constants and
// proves it): for 4W lanes of 8-bit A and B,
//   N = C + A * KA + B * KB        (int32, wrapping: exact modulo 2^32)
// with KA and KB split into a high part (KA >> 12) and the low 12 bits, so
// that each product is one vpmaddwd on A and B interleaved as word pairs;
// N = (hi << 12) + lo + C. A lane is uncertain when N & mask == 0; the result
// of a certain lane is N >> shift, stored with saturating packs. The SSE2
// form is here; a region tag A (x86/<isa>/elementwise.hpp: AVX2, AVX-512BW)
// has its own; other archs have none (add_pairs_available() is false).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "qdml/simd/kernel/add_pairs_constants.hpp"
#include "qdml/simd/kernel/convert.hpp"

#if XSIMD_WITH_SSE2
#include <immintrin.h>
#endif

namespace qdml::simd::kernel {

/// Whether arch A has add_pairs_block.
template <class A>
constexpr bool add_pairs_available() noexcept {
    if constexpr (is_region_v<A>)
        return A::kAddPairs;
    else
        return isa_of<A>() == Isa::Sse2;
}

/// Computes the 4W lanes at a and b (AConst / BConst: the element at a or
/// b repeated) and, unless a lane is uncertain, stores them at out as T
/// (normal or, with Stream, non-temporal stores at an address aligned to 4W
/// bytes) and returns true; returns false (nothing stored) otherwise.
template <class A, bool Stream, bool AConst, bool BConst, class TOut, class TA, class TB>
QDML_ALWAYS_INLINE inline bool add_pairs_block(TOut* out, const TA* a, const TB* b, const AddPairsConstants& k) noexcept {
    static_assert(sizeof(TA) == 1 && sizeof(TB) == 1 && sizeof(TOut) == 1, "8-bit operands");
    if constexpr (is_region_v<A>) {
        return A::template add_pairs_block<Stream, AConst, BConst>(out, a, b, k);
    }
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

