// qdml/simd/x86/avx2/transpose.hpp - transposition blocks in AVX2: two 16x16
// byte blocks at once (x86/sse2/transpose.hpp's network) and 8x8 dwords
// (simd/kernel/transpose.hpp chooses).
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/x86/sse2/transpose.hpp"

#if QDML_X86
QDML_REGION_AVX2
namespace qdml::simd::kernel::detail {

/// One 16-row x 32-column block of transpose_bytes on AVX2 (two 16x16 blocks
/// per instruction, one per 128-bit lane).
inline void transpose32_avx2(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                                              std::size_t dst_stride, std::uint8_t flip) noexcept {
    const __m256i x = _mm256_set1_epi8(static_cast<char>(flip));
    __m256i a[16], b[16];
    for (int i = 0; i < 16; ++i)
        a[i] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * src_stride)), x);
    QDML_TRANSPOSE16_NETWORK(_mm256, a, b)
    for (int j = 0; j < 8; ++j) {  // lane 0: columns 2j, 2j+1; lane 1: 16 + 2j, 16 + 2j + 1
        const __m256i lo = _mm256_unpacklo_epi64(b[j], b[8 + j]), hi = _mm256_unpackhi_epi64(b[j], b[8 + j]);
        std::uint8_t* d = dst + 2 * j * dst_stride;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(lo));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + dst_stride), _mm256_castsi256_si128(hi));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16 * dst_stride), _mm256_extracti128_si256(lo, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 17 * dst_stride), _mm256_extracti128_si256(hi, 1));
    }
}

/// One 8x8 block of 4-byte elements (AVX2; strides in bytes): 4x4 blocks per
/// 128-bit lane by unpacks, then the lanes' halves exchanged.
inline void transpose8x8_dwords_avx2(const char* src, std::size_t src_stride, char* dst,
                                                      std::size_t dst_stride) noexcept {
    __m256i a[8], b[8];
    for (int i = 0; i < 8; ++i) a[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * src_stride));
    for (int i = 0; i < 4; ++i) {  // rows 2i, 2i+1 interleaved: columns (0,1 | 4,5), (2,3 | 6,7)
        b[2 * i] = _mm256_unpacklo_epi32(a[2 * i], a[2 * i + 1]);
        b[2 * i + 1] = _mm256_unpackhi_epi32(a[2 * i], a[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h)  // rows 4h..4h+3: a[4h + c] = column c (lane 0), c + 4 (lane 1)
        for (int j = 0; j < 2; ++j) {
            a[4 * h + 2 * j] = _mm256_unpacklo_epi64(b[4 * h + j], b[4 * h + 2 + j]);
            a[4 * h + 2 * j + 1] = _mm256_unpackhi_epi64(b[4 * h + j], b[4 * h + 2 + j]);
        }
    for (int c = 0; c < 4; ++c) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c * dst_stride), _mm256_permute2x128_si256(a[c], a[4 + c], 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (c + 4) * dst_stride),
                            _mm256_permute2x128_si256(a[c], a[4 + c], 0x31));
    }
}

}  // namespace qdml::simd::kernel::detail
QDML_REGION_END
#undef QDML_TRANSPOSE16_NETWORK
#endif  // QDML_X86
