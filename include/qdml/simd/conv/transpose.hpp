// qdml/simd/conv/transpose.hpp - byte matrix transposition (16x16 blocks of
// SSE2 unpacks on x86-64, a plain loop elsewhere and at the edges): how the
// convolution paths move between channel planes (NCHW) and channel-inner
// pixels (NHWC).
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/isa.hpp"

namespace qdml::simd::conv {

/// dst[c * dst_stride + r] = src[r * src_stride + c] ^ flip for r < rows, c < cols.
inline void transpose_bytes(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                            std::size_t dst_stride, std::size_t rows, std::size_t cols, std::uint8_t flip) noexcept {
    std::size_t r0 = 0;
#if QDML_GEMM_X86
    const __m128i x = _mm_set1_epi8(static_cast<char>(flip));
    for (; r0 + 16 <= rows; r0 += 16) {
        std::size_t c0 = 0;
        for (; c0 + 16 <= cols; c0 += 16) {
            __m128i a[16], b[16];
            for (int i = 0; i < 16; ++i)
                a[i] = _mm_xor_si128(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (r0 + i) * src_stride + c0)), x);
            for (int i = 0; i < 8; ++i) {  // byte pairs of rows (2i, 2i+1): columns 0-7, 8-15
                b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
                b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
            }
            for (int q = 0; q < 4; ++q)  // rows 4q..4q+3: columns 0-3, 4-7, 8-11, 12-15 in a[4q..4q+3]
                for (int h = 0; h < 2; ++h) {
                    a[4 * q + 2 * h] = _mm_unpacklo_epi16(b[4 * q + h], b[4 * q + 2 + h]);
                    a[4 * q + 2 * h + 1] = _mm_unpackhi_epi16(b[4 * q + h], b[4 * q + 2 + h]);
                }
            for (int o = 0; o < 2; ++o)  // rows 8o..8o+7: column pairs (0,1), (2,3), ... in b[8o..8o+7]
                for (int j = 0; j < 4; ++j) {
                    b[8 * o + 2 * j] = _mm_unpacklo_epi32(a[8 * o + j], a[8 * o + 4 + j]);
                    b[8 * o + 2 * j + 1] = _mm_unpackhi_epi32(a[8 * o + j], a[8 * o + 4 + j]);
                }
            for (int j = 0; j < 8; ++j) {  // columns 2j, 2j+1: rows 0-7 from b[j], 8-15 from b[8 + j]
                _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (c0 + 2 * j) * dst_stride + r0),
                                 _mm_unpacklo_epi64(b[j], b[8 + j]));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (c0 + 2 * j + 1) * dst_stride + r0),
                                 _mm_unpackhi_epi64(b[j], b[8 + j]));
            }
        }
        for (std::size_t c = c0; c < cols; ++c)
            for (std::size_t r = r0; r < r0 + 16; ++r) dst[c * dst_stride + r] = src[r * src_stride + c] ^ flip;
    }
#endif
    for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t r = r0; r < rows; ++r) dst[c * dst_stride + r] = src[r * src_stride + c] ^ flip;
}

}  // namespace qdml::simd::conv
