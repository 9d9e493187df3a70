// qdml/simd/gemm/kernel_avx512vnni.hpp - AVX-512 VNNI micro-kernel: MR rows x
// NP panels of 16 columns, one zmm accumulator each, vpdpbusd (u8 x s8, four
// products summed into int32 without saturation, wrapping like the
// reference's accumulator). Compiles to nothing off x86-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::avx512vnni {

inline constexpr int kRows = 8;  ///< rows per block (Groups4 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Groups4;

template <int MR, int NP>
QDML_TARGET_AVX512 void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                             std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb[NP];
    QDML_UNROLL
    for (int j = 0; j < NP; ++j) pb[j] = b.panel(p + j);
    __m512i acc[MR][NP];
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_si512();
    for (std::size_t g = 0; g < b.groups; ++g, pa += 4 * MR) {
        __m512i vb[NP];
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) vb[j] = _mm512_load_si512(pb[j] + g * 64);
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) {
            std::int32_t a4;
            std::memcpy(&a4, pa + 4 * r, 4);
            const __m512i va = _mm512_set1_epi32(a4);
            QDML_UNROLL
            for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], va, vb[j]);
        }
    }
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) store16(e, m0 + r, (p + j) * kPanel, acc[r][j]);
}

/// Rows m0..m0+mr-1 (mr <= kRows) times panels p..p+np-1 (np <= 2; 4 for one row).
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p, std::size_t np) {
    if (np == 4) return tile<1, 4>(a, b, e, m0, p);
    with_count<kRows>(mr, [&](auto rows) {
        if (np == 2)
            tile<decltype(rows)::value, 2>(a, b, e, m0, p);
        else
            tile<decltype(rows)::value, 1>(a, b, e, m0, p);
    });
}

}  // namespace qdml::simd::gemm::avx512vnni
#endif
