// qdml/simd/kernel/transpose.hpp - matrix transposition: bytes in 16x16 blocks
// of SSE2 unpacks on x86-64 (two at once on AVX2), 4-byte elements in 8x8
// AVX2 or 4x4 SSE2 blocks of unpacks, a plain loop elsewhere and at the edges. How the
// convolution paths move between channel planes (NCHW) and channel-inner
// pixels (NHWC), and how the element-wise loop plan (loops.hpp) reads and
// writes operands whose rows are interleaved (an NHWC tensor viewed as NCHW).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/gemm/isa.hpp"

namespace qdml::simd::kernel {

#if QDML_GEMM_X86
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

namespace detail {
/// One 16-row x 32-column block of transpose_bytes on AVX2 (two 16x16 blocks
/// per instruction, one per 128-bit lane).
QDML_TARGET_AVX2 inline void transpose32_avx2(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
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
}  // namespace detail
#endif

/// dst[c * dst_stride + r] = src[r * src_stride + c] ^ flip for r < rows, c < cols.
/// Column blocks outer, row blocks inner (a block's destination rows are
/// then finished together). `isa` Avx2 or above (a path the CPU runs):
/// 32-column blocks on AVX2.
inline void transpose_bytes(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                            std::size_t dst_stride, std::size_t rows, std::size_t cols, std::uint8_t flip,
                            gemm::Isa isa = gemm::Isa::Generic) noexcept {
    const std::size_t R = rows / 16 * 16;  // rows in 16-row blocks
    std::size_t c0 = 0;
#if QDML_GEMM_X86
    if (isa >= gemm::Isa::Avx2 && isa != gemm::Isa::Best)
        for (; c0 + 32 <= cols; c0 += 32)
            for (std::size_t r0 = 0; r0 < R; r0 += 16)
                detail::transpose32_avx2(src + r0 * src_stride + c0, src_stride, dst + c0 * dst_stride + r0,
                                         dst_stride, flip);
    for (; c0 + 16 <= cols; c0 += 16)
        for (std::size_t r0 = 0; r0 < R; r0 += 16)
            detail::transpose16_sse2(src + r0 * src_stride + c0, src_stride, dst + c0 * dst_stride + r0, dst_stride,
                                     flip);
#else
    (void)isa;
#endif
    for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t r = c < c0 ? R : 0; r < rows; ++r) dst[c * dst_stride + r] = src[r * src_stride + c] ^ flip;
}

#if QDML_GEMM_X86
namespace detail {
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

/// One 8x8 block of 4-byte elements (AVX2; strides in bytes): 4x4 blocks per
/// 128-bit lane by unpacks, then the lanes' halves exchanged.
QDML_TARGET_AVX2 inline void transpose8x8_dwords_avx2(const char* src, std::size_t src_stride, char* dst,
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
}  // namespace detail
#endif

/// Element (r, c) of a rows x cols matrix of E-byte elements to (c, r):
/// dst + c * dst_stride + r * E receives src + r * src_stride + c * E (strides
/// in bytes; any alignment). Bytes through transpose_bytes (16x16 blocks:
/// SSE2, AVX2 where `isa` allows), 4-byte elements in 8x8 AVX2 blocks where
/// `isa` allows, else 4x4 SSE2 blocks, other sizes and the edges element by element.
template <std::size_t E>
void transpose_elements(const void* src_v, std::size_t src_stride, void* dst_v, std::size_t dst_stride,
                        std::size_t rows, std::size_t cols, gemm::Isa isa = gemm::Isa::Generic) noexcept {
    const char* src = static_cast<const char*>(src_v);
    char* dst = static_cast<char*>(dst_v);
    if constexpr (E == 1) {
        transpose_bytes(reinterpret_cast<const std::uint8_t*>(src), src_stride, reinterpret_cast<std::uint8_t*>(dst),
                        dst_stride, rows, cols, 0, isa);
        return;
    }
    (void)isa;
    std::size_t R = 0, C = 0;  // the rows x cols corner done in blocks
#if QDML_GEMM_X86
    if constexpr (E == 4) {
        const std::size_t b = isa >= gemm::Isa::Avx2 && isa != gemm::Isa::Best ? 8 : 4;
        R = rows / b * b;
        C = cols / b * b;
        for (std::size_t c0 = 0; c0 < C; c0 += b)
            for (std::size_t r0 = 0; r0 < R; r0 += b) {
                const char* s0 = src + r0 * src_stride + c0 * E;
                char* d0 = dst + c0 * dst_stride + r0 * E;
                if (b == 8)
                    detail::transpose8x8_dwords_avx2(s0, src_stride, d0, dst_stride);
                else
                    detail::transpose4x4_dwords(s0, src_stride, d0, dst_stride);
            }
    }
#endif
    for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t r = c < C ? R : 0; r < rows; ++r)
            std::memcpy(dst + c * dst_stride + r * E, src + r * src_stride + c * E, E);
}

}  // namespace qdml::simd::kernel

#if QDML_GEMM_X86
#undef QDML_TRANSPOSE16_NETWORK
#endif
