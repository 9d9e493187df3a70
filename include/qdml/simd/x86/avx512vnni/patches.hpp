// qdml/simd/x86/avx512vnni/patches.hpp - one group of 4 implicit-GEMM rows
// interleaved into panels with AVX-512 (BW): 64 columns a step (simd/conv/patches.hpp chooses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/conv/interleave.hpp"

#if QDML_X86
QDML_REGION_AVX512VNNI
namespace qdml::simd::conv::detail {

/// interleave_group with AVX-512 (BW): 64 columns (4 panels) per step, the
/// bytes interleaved by unpacks, the 128-bit lanes transposed by shuffles,
/// column sums by vpmaddubsw(1, b') (pairs of int8: no saturation) + vpmaddwd.
inline void interleave_group_avx512(const std::uint8_t* r0, const std::uint8_t* r1,
                                                       const std::uint8_t* r2, const std::uint8_t* r3,
                                                       std::size_t width, std::uint8_t flip, std::int8_t* panels,
                                                       std::size_t groups, std::size_t g, std::uint32_t* sum) noexcept {
    const __m512i x = _mm512_set1_epi8(static_cast<char>(flip)), ones8 = _mm512_set1_epi8(1),
                  ones16 = _mm512_set1_epi16(1);
    constexpr __mmask8 all = 0xff;  // the all-lanes maskz form: g++ 12's unmasked one warns -Wmaybe-uninitialized
    std::size_t n0 = 0;
    for (; n0 + 64 <= width; n0 += 64) {
        const __m512i a0 = _mm512_xor_si512(_mm512_loadu_si512(r0 + n0), x);
        const __m512i a1 = _mm512_xor_si512(_mm512_loadu_si512(r1 + n0), x);
        const __m512i a2 = _mm512_xor_si512(_mm512_loadu_si512(r2 + n0), x);
        const __m512i a3 = _mm512_xor_si512(_mm512_loadu_si512(r3 + n0), x);
        const __m512i lo01 = _mm512_unpacklo_epi8(a0, a1), hi01 = _mm512_unpackhi_epi8(a0, a1);
        const __m512i lo23 = _mm512_unpacklo_epi8(a2, a3), hi23 = _mm512_unpackhi_epi8(a2, a3);
        // Lane L of w0..w3: columns 16L+0..3, 4..7, 8..11, 12..15 as words.
        const __m512i w0 = _mm512_unpacklo_epi16(lo01, lo23), w1 = _mm512_unpackhi_epi16(lo01, lo23);
        const __m512i w2 = _mm512_unpacklo_epi16(hi01, hi23), w3 = _mm512_unpackhi_epi16(hi01, hi23);
        const __m512i t0 = _mm512_maskz_shuffle_i64x2(all, w0, w1, 0x44), t1 = _mm512_maskz_shuffle_i64x2(all, w2, w3, 0x44);
        const __m512i t2 = _mm512_maskz_shuffle_i64x2(all, w0, w1, 0xee), t3 = _mm512_maskz_shuffle_i64x2(all, w2, w3, 0xee);
        const __m512i p[4] = {_mm512_maskz_shuffle_i64x2(all, t0, t1, 0x88), _mm512_maskz_shuffle_i64x2(all, t0, t1, 0xdd),
                              _mm512_maskz_shuffle_i64x2(all, t2, t3, 0x88), _mm512_maskz_shuffle_i64x2(all, t2, t3, 0xdd)};
        for (std::size_t q = 0; q < 4; ++q) {
            _mm512_store_si512(panels + ((n0 / gemm::kPanel + q) * groups + g) * 64, p[q]);
            const __m512i s = _mm512_madd_epi16(_mm512_maddubs_epi16(ones8, p[q]), ones16);
            std::uint32_t* dst = sum + n0 + q * gemm::kPanel;
            _mm512_storeu_si512(dst, _mm512_add_epi32(_mm512_loadu_si512(dst), s));
        }
    }
    if (n0 < width) interleave_group(r0 + n0, r1 + n0, r2 + n0, r3 + n0, width - n0, flip,
                                     panels + n0 / gemm::kPanel * groups * 64, groups, g, sum + n0);
}

}  // namespace qdml::simd::conv::detail
QDML_REGION_END
#endif  // QDML_X86
