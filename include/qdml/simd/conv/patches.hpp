// qdml/simd/conv/patches.hpp - packs the GEMM engine's right operand
// (gemm::PackedRight, the layout pack.hpp describes: panels of 16 columns x
// 4-deep k groups, b' = the signed form, column sums mod 2^32) from rows that
// a callback hands over, for convolution's implicit im2col: tap rows come
// straight from a padded copy of the input where they are contiguous, or
// from a gather into a buffer. The same bytes as gemm::pack_right of the
// matrix those rows form (the simd-conv test checks it through every path).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "qdml/simd/gemm/isa.hpp"
#include "qdml/simd/gemm/pack.hpp"

namespace qdml::simd::conv {

namespace detail {

/// One k group of a right operand into its panels: rows r0..r3 (`width`
/// bytes each, a multiple of 16, as in the tensor) become b' bytes (xor
/// `flip`), column j's four bytes one 32-bit word of its panel's group g,
/// and the column sums (mod 2^32) take the four b' values.
inline void interleave_group(const std::uint8_t* r0, const std::uint8_t* r1, const std::uint8_t* r2,
                             const std::uint8_t* r3, std::size_t width, std::uint8_t flip, std::int8_t* panels,
                             std::size_t groups, std::size_t g, std::uint32_t* sum) noexcept {
    for (std::size_t n0 = 0; n0 < width; n0 += gemm::kPanel) {
        std::uint32_t words[gemm::kPanel];
        for (std::size_t j = 0; j < gemm::kPanel; ++j) {
            const std::size_t n = n0 + j;
            const std::uint8_t b0 = r0[n] ^ flip, b1 = r1[n] ^ flip, b2 = r2[n] ^ flip, b3 = r3[n] ^ flip;
            words[j] = std::uint32_t{b0} | std::uint32_t{b1} << 8 | std::uint32_t{b2} << 16 | std::uint32_t{b3} << 24;
            sum[n] += static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(b0)} + static_cast<std::int8_t>(b1) +
                                                 static_cast<std::int8_t>(b2) + static_cast<std::int8_t>(b3));
        }
        std::memcpy(panels + (n0 / gemm::kPanel * groups + g) * 64, words, 64);
    }
}

#if QDML_GEMM_X86
/// interleave_group with AVX-512 (BW): 64 columns (4 panels) per step, the
/// bytes interleaved by unpacks, the 128-bit lanes transposed by shuffles,
/// column sums by vpmaddubsw(1, b') (pairs of int8: no saturation) + vpmaddwd.
QDML_TARGET_AVX512 inline void interleave_group_avx512(const std::uint8_t* r0, const std::uint8_t* r1,
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

/// The same with AVX2: 32 columns (2 panels) per step.
QDML_TARGET_AVX2 inline void interleave_group_avx2(const std::uint8_t* r0, const std::uint8_t* r1,
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
#endif

}  // namespace detail

/// gemm::pack_right for a K x N right operand whose rows come from a callback:
/// `row(k, buffer)` returns a pointer to row k's elements (type TB, as in
/// the tensor): either `buffer`, which it filled with the N elements
/// buffer[0..N), or any other memory holding the N elements and readable for
/// panels * 16 bytes (elements past N are ignored: they only reach columns
/// past N, which no store reads). The packer turns the rows into b' bytes,
/// sums the columns and interleaves each group of 4 rows into the panels.
/// This is the seam for operands that are not matrices in memory
/// (convolution's implicit im2col: one block of output pixels at a time,
/// rows straight from a padded copy of the input where they are contiguous).
/// Columns past N and rows past K pack as 0.
template <class TB, class RowFn>
void pack_rows(std::size_t K, std::size_t N, gemm::Isa isa, gemm::PackedRight& out, RowFn&& row_fn) {
    static_assert(sizeof(TB) == 1, "8-bit right operands only");
    const std::size_t panel_count = (N + gemm::kPanel - 1) / gemm::kPanel, groups = gemm::k_groups(K, isa);
    // Every group below (K + 3) / 4 is written below; the ones past it (AMX
    // pads to 16) must be 0: they are when `out` last held this shape (no
    // pack writes them), else the whole array is zeroed once.
    if (!(out.isa == isa && out.K == K && out.panels == panel_count && out.data.size() == panel_count * groups * 64))
        out.data.resize_zero(panel_count * groups * 64);
    out.isa = isa;
    out.K = K;
    out.N = N;
    out.panels = panel_count;
    out.groups = groups;
    out.col_sum.resize_zero(out.panels * gemm::kPanel);
    // Four rows of B (one k group) at a time, as in the tensor (in the
    // buffers, columns past N and rows past K hold the value whose b' is 0);
    // then per group the interleave into panel words, b' and the column sums.
    const std::size_t width = out.panels * gemm::kPanel;
    constexpr std::uint8_t flip = std::is_signed_v<TB> ? 0 : 0x80;  // as_right
    std::vector<std::uint8_t> rows(4 * width, flip);
    std::uint32_t* sum = out.col_sum.data();
    std::int8_t* panels = out.data.data();
    for (std::size_t k0 = 0; k0 < K; k0 += 4) {
        const std::uint8_t* r[4];
        for (std::size_t t = 0; t < 4; ++t) {
            std::uint8_t* row = rows.data() + t * width;
            if (k0 + t >= K) {
                std::fill(row, row + width, flip);
                r[t] = row;
            } else {
                r[t] = reinterpret_cast<const std::uint8_t*>(row_fn(k0 + t, reinterpret_cast<TB*>(row)));
            }
        }
        const std::uint8_t *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
        switch (isa) {
#if QDML_GEMM_X86
            case gemm::Isa::Amx:
            case gemm::Isa::Avx512Vnni:
                detail::interleave_group_avx512(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
                break;
            case gemm::Isa::AvxVnni:
            case gemm::Isa::Avx2:
                detail::interleave_group_avx2(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
                break;
#endif
            default: detail::interleave_group(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
        }
    }
}

}  // namespace qdml::simd::conv
