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

#include "qdml/simd/isa.hpp"
#include "qdml/simd/x86/avx2/transpose.hpp"
#include "qdml/simd/x86/sse2/transpose.hpp"

namespace qdml::simd::kernel {


/// dst[c * dst_stride + r] = src[r * src_stride + c] ^ flip for r < rows, c < cols.
/// Column blocks outer, row blocks inner (a block's destination rows are
/// then finished together). `isa` Avx2 or above (a path the CPU runs):
/// 32-column blocks on AVX2.
inline void transpose_bytes(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                            std::size_t dst_stride, std::size_t rows, std::size_t cols, std::uint8_t flip,
                            simd::Isa isa = simd::Isa::Generic) noexcept {
    const std::size_t R = rows / 16 * 16;  // rows in 16-row blocks
    std::size_t c0 = 0;
#if QDML_X86
    if (isa >= simd::Isa::Avx2 && isa != simd::Isa::Best)
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


/// Element (r, c) of a rows x cols matrix of E-byte elements to (c, r):
/// dst + c * dst_stride + r * E receives src + r * src_stride + c * E (strides
/// in bytes; any alignment). Bytes through transpose_bytes (16x16 blocks:
/// SSE2, AVX2 where `isa` allows), 4-byte elements in 8x8 AVX2 blocks where
/// `isa` allows, else 4x4 SSE2 blocks, other sizes and the edges element by element.
template <std::size_t E>
void transpose_elements(const void* src_v, std::size_t src_stride, void* dst_v, std::size_t dst_stride,
                        std::size_t rows, std::size_t cols, simd::Isa isa = simd::Isa::Generic) noexcept {
    const char* src = static_cast<const char*>(src_v);
    char* dst = static_cast<char*>(dst_v);
    if constexpr (E == 1) {
        transpose_bytes(reinterpret_cast<const std::uint8_t*>(src), src_stride, reinterpret_cast<std::uint8_t*>(dst),
                        dst_stride, rows, cols, 0, isa);
        return;
    }
    (void)isa;
    std::size_t R = 0, C = 0;  // the rows x cols corner done in blocks
#if QDML_X86
    if constexpr (E == 4) {
        const std::size_t b = isa >= simd::Isa::Avx2 && isa != simd::Isa::Best ? 8 : 4;
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

