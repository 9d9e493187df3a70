// qdml/simd/x86/sse2/transpose.hpp - transposition blocks in SSE2 (x86-64's
// baseline: no target region): 16x16 bytes and 4x4 dwords, and the byte
// network that the AVX2 form runs on two blocks at once
// (simd/kernel/transpose.hpp chooses).
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/isa.hpp"

#if QDML_X86
// The 16x16 byte-transposition network on rows a[0..15] (unpacks of the
// `P` family, _mm or _mm256: per 128-bit lane, one 16x16 block); afterwards
// columns 2j, 2j+1 of a lane are unpacklo/unpackhi_epi64(b[j], b[8 + j])
// (rows 0-7 from b[j], 8-15 from b[8 + j]). A macro: one text for the SSE2
// and the AVX2 forms (a lambda would not carry the AVX2 target attribute).
#define QDML_TRANSPOSE16_NETWORK(P, a, b)                                                 \
    for (int i = 0; i < 8; ++i) { /* byte pairs of rows (2i, 2i+1): columns 0-7, 8-15 */ \
        b[2 * i] = P##_unpacklo_epi8(a[2 * i], a[2 * i + 1]);                             \
        b[2 * i + 1] = P##_unpackhi_epi8(a[2 * i], a[2 * i + 1]);                         \
    }                                                                                     \
    for (int q = 0; q < 4; ++q) /* rows 4q..4q+3: columns 0-3, 4-7, 8-11, 12-15 */        \
        for (int h = 0; h < 2; ++h) {                                                     \
            a[4 * q + 2 * h] = P##_unpacklo_epi16(b[4 * q + h], b[4 * q + 2 + h]);        \
            a[4 * q + 2 * h + 1] = P##_unpackhi_epi16(b[4 * q + h], b[4 * q + 2 + h]);    \
        }                                                                                 \
    for (int o = 0; o < 2; ++o) /* rows 8o..8o+7: column pairs (0,1), (2,3), ... */       \
        for (int j = 0; j < 4; ++j) {                                                     \
            b[8 * o + 2 * j] = P##_unpacklo_epi32(a[8 * o + j], a[8 * o + 4 + j]);        \
            b[8 * o + 2 * j + 1] = P##_unpackhi_epi32(a[8 * o + j], a[8 * o + 4 + j]);    \
        }

namespace qdml::simd::kernel::detail {

/// One 16x16 block of transpose_bytes (SSE2).
inline void transpose16_sse2(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                             std::size_t dst_stride, std::uint8_t flip) noexcept {
    const __m128i x = _mm_set1_epi8(static_cast<char>(flip));
    __m128i a[16], b[16];
    for (int i = 0; i < 16; ++i)
        a[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride)), x);
    QDML_TRANSPOSE16_NETWORK(_mm, a, b)
    for (int j = 0; j < 8; ++j) {  // columns 2j, 2j+1: rows 0-7 from b[j], 8-15 from b[8 + j]
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * j * dst_stride), _mm_unpacklo_epi64(b[j], b[8 + j]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * j + 1) * dst_stride), _mm_unpackhi_epi64(b[j], b[8 + j]));
    }
}

/// One 4x4 block of 4-byte elements (SSE2; strides in bytes).
inline void transpose4x4_dwords(const char* src, std::size_t src_stride, char* dst, std::size_t dst_stride) noexcept {
    __m128i a[4];
    for (int i = 0; i < 4; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride));
    const __m128i t0 = _mm_unpacklo_epi32(a[0], a[1]), t1 = _mm_unpacklo_epi32(a[2], a[3]);  // 00 10 01 11, 20 30 21 31
    const __m128i t2 = _mm_unpackhi_epi32(a[0], a[1]), t3 = _mm_unpackhi_epi32(a[2], a[3]);  // 02 12 03 13, 22 32 23 33
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi64(t0, t1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + dst_stride), _mm_unpackhi_epi64(t0, t1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * dst_stride), _mm_unpacklo_epi64(t2, t3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 3 * dst_stride), _mm_unpackhi_epi64(t2, t3));
}

}  // namespace qdml::simd::kernel::detail
#endif  // QDML_X86
