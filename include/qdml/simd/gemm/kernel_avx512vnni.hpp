// qdml/simd/gemm/kernel_avx512vnni.hpp - AVX-512 VNNI micro-kernel: MR rows x
// NP panels of 16 columns (up to 8 x 3: 24 zmm accumulators, 3 panel
// registers, 1 broadcast), vpdpbusd (u8 x s8, four products summed into
// int32 without saturation, wrapping like the reference's accumulator).
// Per k group the NP panel loads serve MR rows and each broadcast A dword
// serves NP panels. Compiles to nothing off x86-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::avx512vnni {

inline constexpr int kRows = 8;    ///< rows per block (Groups4 layout)
inline constexpr int kPanels = 3;  ///< panels per call (16 columns each)
inline constexpr int kRowPanels = 4;  ///< panels per call for one row (GEMV: more streams in flight)
inline constexpr LeftLayout kLayout = LeftLayout::Groups4;
inline constexpr std::size_t kPrefetch = 1024;  ///< bytes ahead in each panel stream

/// acc += a (u8) . b (s8), four products per lane. Written out: g++ 12 keeps
/// the intrinsic's accumulator apart from its result and copies every
/// accumulator twice per k group (half the kernel's issue slots).
QDML_TARGET_AVX512 inline void dot(__m512i& acc, __m512i a, __m512i b) noexcept {
    __asm__("vpdpbusd %[b], %[a], %[acc]" : [acc] "+v"(acc) : [a] "v"(a), [b] "v"(b));
}

template <int MR, int NP>
QDML_TARGET_AVX512 void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                             std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    const std::size_t stride = b.groups * 64;  // bytes between panels
    __m512i acc[MR][NP];
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_si512();
    for (std::size_t g = 0; g < b.groups; ++g, pa += 4 * MR, pb += 64) {
        __m512i vb[NP];
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) {
            vb[j] = _mm512_load_si512(pb + j * stride);
            _mm_prefetch(reinterpret_cast<const char*>(pb + j * stride + kPrefetch), _MM_HINT_T0);
        }
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) {
            std::int32_t a4;
            std::memcpy(&a4, pa + 4 * r, 4);
            const __m512i va = _mm512_set1_epi32(a4);
            QDML_UNROLL
            for (int j = 0; j < NP; ++j) dot(acc[r][j], va, vb[j]);
        }
    }
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) store16(e, m0 + r, (p + j) * kPanel, acc[r][j]);
}

/// Rows m0..m0+mr-1 (mr <= kRows) times panels p..p+np-1 (np <= kPanels;
/// kRowPanels for one row).
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p, std::size_t np) {
    if (mr == 1 && np == kRowPanels) return tile<1, kRowPanels>(a, b, e, m0, p);
    with_count<kRows>(mr, [&](auto rows) {
        constexpr int R = decltype(rows)::value;
        with_count<kPanels>(np, [&](auto panels) { tile<R, decltype(panels)::value>(a, b, e, m0, p); });
    });
}

}  // namespace qdml::simd::gemm::avx512vnni
#endif
