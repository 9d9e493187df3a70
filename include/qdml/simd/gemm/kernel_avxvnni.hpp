// qdml/simd/gemm/kernel_avxvnni.hpp - AVX-VNNI micro-kernel: MR rows x one
// 16-column panel as two ymm accumulators per row, 256-bit vpdpbusd (VEX
// encoding; u8 x s8, four products into int32 without saturation).
// Compiles to nothing off x86-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::avxvnni {

inline constexpr int kRows = 6;  ///< rows per block (Groups4 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Groups4;

template <int MR>
QDML_TARGET_AVXVNNI void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                              std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    __m256i acc[MR][2];
    QDML_UNROLL
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (std::size_t g = 0; g < b.groups; ++g, pa += 4 * MR, pb += 64) {
        const __m256i vb0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(pb));
        const __m256i vb1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(pb + 32));
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) {
            std::int32_t a4;
            std::memcpy(&a4, pa + 4 * r, 4);
            const __m256i va = _mm256_set1_epi32(a4);
            acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], va, vb0);
            acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], va, vb1);
        }
    }
    store_panel8<MR>(e, m0, p, acc);
}

/// Rows m0..m0+mr-1 (mr <= kRows) times panel p.
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
    with_count<kRows>(mr, [&](auto rows) { tile<decltype(rows)::value>(a, b, e, m0, p); });
}

}  // namespace qdml::simd::gemm::avxvnni
#endif
