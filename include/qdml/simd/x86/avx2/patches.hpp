// qdml/simd/x86/avx2/patches.hpp - one group of 4 implicit-GEMM rows
// interleaved into panels with AVX2: 32 columns a step (simd/conv/patches.hpp chooses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/conv/interleave.hpp"

#if QDML_X86
QDML_REGION_AVX2
namespace qdml::simd::conv::detail {

/// The same with AVX2: 32 columns (2 panels) per step.
inline void interleave_group_avx2(const std::uint8_t* r0, const std::uint8_t* r1,
                                                   const std::uint8_t* r2, const std::uint8_t* r3, std::size_t width,
                                                   std::uint8_t flip, std::int8_t* panels, std::size_t groups,
                                                   std::size_t g, std::uint32_t* sum) noexcept {
    const __m256i x = _mm256_set1_epi8(static_cast<char>(flip)), ones8 = _mm256_set1_epi8(1),
                  ones16 = _mm256_set1_epi16(1);
    std::size_t n0 = 0;
    for (; n0 + 32 <= width; n0 += 32) {
        const __m256i a0 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + n0)), x);
        const __m256i a1 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + n0)), x);
        const __m256i a2 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r2 + n0)), x);
        const __m256i a3 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r3 + n0)), x);
        const __m256i lo01 = _mm256_unpacklo_epi8(a0, a1), hi01 = _mm256_unpackhi_epi8(a0, a1);
        const __m256i lo23 = _mm256_unpacklo_epi8(a2, a3), hi23 = _mm256_unpackhi_epi8(a2, a3);
        const __m256i w0 = _mm256_unpacklo_epi16(lo01, lo23), w1 = _mm256_unpackhi_epi16(lo01, lo23);
        const __m256i w2 = _mm256_unpacklo_epi16(hi01, hi23), w3 = _mm256_unpackhi_epi16(hi01, hi23);
        // Panel q (lane q of w0..w3): its columns 0-7, then 8-15.
        const __m256i p[4] = {_mm256_permute2x128_si256(w0, w1, 0x20), _mm256_permute2x128_si256(w2, w3, 0x20),
                              _mm256_permute2x128_si256(w0, w1, 0x31), _mm256_permute2x128_si256(w2, w3, 0x31)};
        for (std::size_t h = 0; h < 4; ++h) {
            std::int8_t* dst_panel = panels + ((n0 / gemm::kPanel + h / 2) * groups + g) * 64 + (h % 2) * 32;
            _mm256_store_si256(reinterpret_cast<__m256i*>(dst_panel), p[h]);
            const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, p[h]), ones16);
            __m256i* dst = reinterpret_cast<__m256i*>(sum + n0 + h * 8);
            _mm256_storeu_si256(dst, _mm256_add_epi32(_mm256_loadu_si256(dst), s));
        }
    }
    if (n0 < width) interleave_group(r0 + n0, r1 + n0, r2 + n0, r3 + n0, width - n0, flip,
                                     panels + n0 / gemm::kPanel * groups * 64, groups, g, sum + n0);
}

}  // namespace qdml::simd::conv::detail
QDML_REGION_END
#endif  // QDML_X86
