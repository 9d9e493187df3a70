// qdml/simd/gemm/kernel_avx2.hpp - AVX2 micro-kernel for CPUs without VNNI:
// MR rows x one 16-column panel. The s8 panel bytes are sign-extended to
// int16 by shifts (even bytes: k0, k2; odd bytes: k1, k3 of each column),
// the left operand comes pre-widened as (a0, a2), (a1, a3) int16 pairs
// (Pairs16 layout), and vpmaddwd forms a0*b0 + a2*b2 exactly in int32
// (|sum| <= 2 * 255 * 128), added to the accumulator with a wrapping vpaddd.
// Never vpmaddubsw: its int16 pair sum saturates (255*127*2 > 32767).
// Compiles to nothing off x86-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::avx2 {

inline constexpr int kRows = 4;  ///< rows per block (Pairs16 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Pairs16;

template <int MR>
QDML_TARGET_AVX2 void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                           std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    __m256i acc[MR][2];
    QDML_UNROLL
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (std::size_t g = 0; g < b.groups; ++g, pa += 8 * MR, pb += 64) {
        __m256i even[2], odd[2];
        QDML_UNROLL
        for (int h = 0; h < 2; ++h) {
            const __m256i raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(pb + 32 * h));
            even[h] = _mm256_srai_epi16(_mm256_slli_epi16(raw, 8), 8);  // (b0, b2) of each column
            odd[h] = _mm256_srai_epi16(raw, 8);                         // (b1, b3)
        }
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) {
            std::int32_t a02, a13;
            std::memcpy(&a02, pa + 8 * r, 4);
            std::memcpy(&a13, pa + 8 * r + 4, 4);
            const __m256i va02 = _mm256_set1_epi32(a02), va13 = _mm256_set1_epi32(a13);
            QDML_UNROLL
            for (int h = 0; h < 2; ++h) {
                acc[r][h] = _mm256_add_epi32(acc[r][h], _mm256_madd_epi16(even[h], va02));
                acc[r][h] = _mm256_add_epi32(acc[r][h], _mm256_madd_epi16(odd[h], va13));
            }
        }
    }
    store_panel8<MR>(e, m0, p, acc);
}

/// Rows m0..m0+mr-1 (mr <= kRows) times panel p.
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
    with_count<kRows>(mr, [&](auto rows) { tile<decltype(rows)::value>(a, b, e, m0, p); });
}

}  // namespace qdml::simd::gemm::avx2
#endif
