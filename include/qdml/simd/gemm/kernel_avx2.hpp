// qdml/simd/gemm/kernel_avx2.hpp - AVX2 micro-kernel for CPUs without VNNI:
// 4 rows x one 16-column panel (kernel_ymm.hpp's skeleton). The s8 panel
// bytes are sign-extended to int16 by shifts once per k group (even bytes:
// k0, k2; odd bytes: k1, k3 of each column), the left operand comes
// pre-widened as (a0, a2), (a1, a3) int16 pairs (Pairs16 layout), and
// vpmaddwd forms a0*b0 + a2*b2 exactly in int32 (|sum| <= 2 * 255 * 128),
// added to the accumulator with a wrapping vpaddd. Never vpmaddubsw: its
// int16 pair sum saturates (255*127*2 > 32767). Compiles to nothing off x86-64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/gemm/kernel_ymm.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::avx2 {

inline constexpr int kRows = 4;  ///< rows per block (Pairs16 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Pairs16;

/// Narrow panels (64 bytes per group), widened here once per row block.
struct Dot {
    static constexpr std::size_t kUnit = 8;
    static constexpr std::size_t kGroupBytes = 64;
    struct Panel {
        __m256i even[2], odd[2];  ///< (b0, b2) and (b1, b3) of columns 0-7, 8-15
    };
    QDML_TARGET_AVX2 static Panel load(const std::int8_t* group) noexcept {
        Panel v;
        QDML_UNROLL
        for (int h = 0; h < 2; ++h) {
            const __m256i raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(group + 32 * h));
            v.even[h] = _mm256_srai_epi16(_mm256_slli_epi16(raw, 8), 8);
            v.odd[h] = _mm256_srai_epi16(raw, 8);
        }
        return v;
    }
    QDML_TARGET_AVX2 static void step(__m256i (&acc)[2], const std::uint8_t* a, const Panel& b) noexcept {
        std::int32_t a02, a13;
        std::memcpy(&a02, a, 4);
        std::memcpy(&a13, a + 4, 4);
        const __m256i va02 = _mm256_set1_epi32(a02), va13 = _mm256_set1_epi32(a13);
        QDML_UNROLL
        for (int h = 0; h < 2; ++h) {
            acc[h] = _mm256_add_epi32(acc[h], _mm256_madd_epi16(b.even[h], va02));
            acc[h] = _mm256_add_epi32(acc[h], _mm256_madd_epi16(b.odd[h], va13));
        }
    }
};

/// Wide panels (RightPacking::wide, 128 bytes per group): the four int16
/// registers loaded as they are, no shift in the k loop.
struct DotWide {
    static constexpr std::size_t kUnit = 8;
    static constexpr std::size_t kGroupBytes = 128;
    using Panel = Dot::Panel;
    QDML_TARGET_AVX2 static Panel load(const std::int8_t* group) noexcept {
        const auto* w = reinterpret_cast<const __m256i*>(group);
        Panel v;
        v.even[0] = _mm256_load_si256(w + 0);
        v.odd[0] = _mm256_load_si256(w + 1);
        v.even[1] = _mm256_load_si256(w + 2);
        v.odd[1] = _mm256_load_si256(w + 3);
        return v;
    }
    QDML_TARGET_AVX2 static void step(__m256i (&acc)[2], const std::uint8_t* a, const Panel& b) noexcept {
        Dot::step(acc, a, b);
    }
};

/// Rows m0..m0+mr-1 (mr <= kRows) times panel p.
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
    if (b.wide)
        ymm::tiles<DotWide, kRows>(a, b, e, m0, mr, p);
    else
        ymm::tiles<Dot, kRows>(a, b, e, m0, mr, p);
}

}  // namespace qdml::simd::gemm::avx2
#endif
