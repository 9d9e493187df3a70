// qdml/simd/x86/avx2/gemm_kernel.hpp - AVX2 micro-kernel for CPUs without VNNI:
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

#include "qdml/simd/x86/avx2/tile256.hpp"

#if QDML_X86
QDML_REGION_AVX2
namespace qdml::simd::gemm::avx2 {

inline constexpr int kRows = 4;  ///< rows per block (Pairs16 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Pairs16;

/// Narrow panels (64 bytes per group), widened here once per row block.
struct Dot {
    static constexpr int kBlockRows = 0;
    static constexpr std::size_t kUnit = 8;
    static constexpr std::size_t kGroupBytes = 64;
    struct Panel {
        __m256i even[2], odd[2];  ///< (b0, b2) and (b1, b3) of columns 0-7, 8-15
    };
    static Panel load(const std::int8_t* group) noexcept {
        Panel v;
        QDML_UNROLL
        for (int h = 0; h < 2; ++h) {
            const __m256i raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(group + 32 * h));
            v.even[h] = _mm256_srai_epi16(_mm256_slli_epi16(raw, 8), 8);
            v.odd[h] = _mm256_srai_epi16(raw, 8);
        }
        return v;
    }
    static void step(__m256i (&acc)[2], const std::uint8_t* a, const Panel& b) noexcept {
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

// The k loop of a whole 4-row block on a wide panel (dot4), in two forms
// that give the same sums. With QDML_INLINE_ASM (g++, clang) one asm
// statement: through the intrinsics g++ 12 copied the eight accumulators
// between registers every k group (vmovdqa, on the three vector ports that
// the 16 vpmaddwd and 16 vpaddd of a group already fill). One induction
// register i (A's bytes up to 0 from below; the panel's group at its end
// pointer + 4i), the groups % 4 one at a time, then four per iteration; 16
// ymm registers (any AVX2 CPU): the accumulators of row r in ymm(2r),
// ymm(2r + 1) (columns 0-7, 8-15), the panel's group in ymm8-11, A's two
// broadcast pairs in ymm12-13, the vpmaddwd results in ymm14-15; stored to
// acc at the end. Without it (MSVC) the same loop in intrinsics.
#if QDML_INLINE_ASM
#define QDML_AVX2_MADD(u, r, w, x, t, c) "vpmaddwd %%ymm" #w ", %%ymm" #x ", %%ymm" #t "\n\tvpaddd %%ymm" #t ", %%ymm" #c ", %%ymm" #c "\n\t"
#define QDML_AVX2_ROW(u, r, c0, c1)                                                                            \
    "vpbroadcastd 32*" #u "+8*" #r "(%[a],%[i]), %%ymm12\n\t"                                               \
    "vpbroadcastd 32*" #u "+8*" #r "+4(%[a],%[i]), %%ymm13\n\t"                                             \
    QDML_AVX2_MADD(u, r, 8, 12, 14, c0) QDML_AVX2_MADD(u, r, 9, 13, 15, c0)                                    \
    QDML_AVX2_MADD(u, r, 10, 12, 14, c1) QDML_AVX2_MADD(u, r, 11, 13, 15, c1)
#define QDML_AVX2_GROUP(u)                                                                                     \
    "vmovdqa 128*" #u "(%[b],%[i],4), %%ymm8\n\t"                                                           \
    "vmovdqa 128*" #u "+32(%[b],%[i],4), %%ymm9\n\t"                                                        \
    "vmovdqa 128*" #u "+64(%[b],%[i],4), %%ymm10\n\t"                                                       \
    "vmovdqa 128*" #u "+96(%[b],%[i],4), %%ymm11\n\t"                                                       \
    QDML_AVX2_ROW(u, 0, 0, 1) QDML_AVX2_ROW(u, 1, 2, 3) QDML_AVX2_ROW(u, 2, 4, 5) QDML_AVX2_ROW(u, 3, 6, 7)
#define QDML_AVX2_EACH(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
#define QDML_AVX2_ZERO(c) "vpxor %%xmm" #c ", %%xmm" #c ", %%xmm" #c "\n\t"
#define QDML_AVX2_STORE(c) "vmovdqa %%ymm" #c ", 32*" #c "(%[acc])\n\t"

/// acc[r][h] = row r of A's 4-row block (pa: 32 bytes per group) . columns
/// 8h..8h+7 of the wide panel pb (128 bytes per group), over `groups` groups.
inline void dot4(std::int32_t (&acc)[4][2][8], const std::uint8_t* pa, const std::int8_t* pb,
                                  std::size_t groups) noexcept {
    // (The panel and acc are 32-byte aligned: vmovdqa.)
    std::ptrdiff_t i = -static_cast<std::ptrdiff_t>(groups * 32);
    std::size_t rem = groups % 4;
    const std::uint8_t* a = pa + groups * 32;
    const std::int8_t* b = pb + groups * 128;
    __asm__(QDML_AVX2_EACH(QDML_AVX2_ZERO)
            "test %[rem], %[rem]\n\t"
            "jz 2f\n"
            "1:\n\t" QDML_AVX2_GROUP(0) "add $32, %[i]\n\t"
            "dec %[rem]\n\t"
            "jnz 1b\n"
            "2:\n\t"
            "test %[i], %[i]\n\t"
            "jz 4f\n"
            "3:\n\t" QDML_AVX2_GROUP(0) QDML_AVX2_GROUP(1) QDML_AVX2_GROUP(2) QDML_AVX2_GROUP(3)
            "add $128, %[i]\n\t"
            "jnz 3b\n"
            "4:\n\t" QDML_AVX2_EACH(QDML_AVX2_STORE)
            : "=m"(acc), [i] "+r"(i), [rem] "+r"(rem)
            : [acc] "r"(&acc[0][0][0]), [a] "r"(a), [b] "r"(b)
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
              "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
}
#undef QDML_AVX2_MADD
#undef QDML_AVX2_ROW
#undef QDML_AVX2_GROUP
#undef QDML_AVX2_EACH
#undef QDML_AVX2_ZERO
#undef QDML_AVX2_STORE
#else
/// (The same, intrinsics only; out of line: inlined into ymm::tile, g++ 12
/// spilled two accumulators and copied the others every k group.)
QDML_NOINLINE inline void dot4(std::int32_t (&acc)[4][2][8], const std::uint8_t* pa, const std::int8_t* pb,
                 std::size_t groups) noexcept {
    __m256i c[4][2];
    QDML_UNROLL
    for (int r = 0; r < 4; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
    for (std::size_t g = 0; g < groups; ++g, pa += 32, pb += 128) {
        const auto* w = reinterpret_cast<const __m256i*>(pb);  // (b0, b2), (b1, b3) of columns 0-7, then 8-15
        const __m256i even0 = _mm256_load_si256(w), odd0 = _mm256_load_si256(w + 1);
        const __m256i even1 = _mm256_load_si256(w + 2), odd1 = _mm256_load_si256(w + 3);
        QDML_UNROLL
        for (int r = 0; r < 4; ++r) {
            std::int32_t a02, a13;
            std::memcpy(&a02, pa + 8 * r, 4);
            std::memcpy(&a13, pa + 8 * r + 4, 4);
            const __m256i va02 = _mm256_set1_epi32(a02), va13 = _mm256_set1_epi32(a13);
            c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(even0, va02));
            c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(odd0, va13));
            c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(even1, va02));
            c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(odd1, va13));
        }
    }
    QDML_UNROLL
    for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h) _mm256_store_si256(reinterpret_cast<__m256i*>(acc[r][h]), c[r][h]);
}
#endif

/// Wide panels (RightPacking::wide, 128 bytes per group): the four int16
/// registers loaded as they are, no shift in the k loop; a whole block of
/// kRows rows runs dot4.
struct DotWide {
    static constexpr int kBlockRows = kRows;
    static void block(std::int32_t (&acc)[kRows][2][8], const std::uint8_t* pa, const std::int8_t* pb,
                                       std::size_t groups) noexcept {
        dot4(acc, pa, pb, groups);
    }
    static constexpr std::size_t kUnit = 8;
    static constexpr std::size_t kGroupBytes = 128;
    using Panel = Dot::Panel;
    static Panel load(const std::int8_t* group) noexcept {
        const auto* w = reinterpret_cast<const __m256i*>(group);
        Panel v;
        v.even[0] = _mm256_load_si256(w + 0);
        v.odd[0] = _mm256_load_si256(w + 1);
        v.even[1] = _mm256_load_si256(w + 2);
        v.odd[1] = _mm256_load_si256(w + 3);
        return v;
    }
    static void step(__m256i (&acc)[2], const std::uint8_t* a, const Panel& b) noexcept {
        Dot::step(acc, a, b);
    }
};

}  // namespace qdml::simd::gemm::avx2
// The tiles, compiled once in a program that says so (as avx512vnni's).
#define QDML_DETAIL_AVX2_TILE(EXT, DOT, MR) \
    EXT template void qdml::simd::gemm::ymm::tile<qdml::simd::gemm::avx2::DOT, MR>(QDML_DETAIL_GEMM_TILE_PARAMS);
#define QDML_DETAIL_AVX2_TILES(EXT)                                                                           \
    QDML_DETAIL_AVX2_TILE(EXT, Dot, 1) QDML_DETAIL_AVX2_TILE(EXT, Dot, 2) QDML_DETAIL_AVX2_TILE(EXT, Dot, 3)             \
    QDML_DETAIL_AVX2_TILE(EXT, Dot, 4) QDML_DETAIL_AVX2_TILE(EXT, DotWide, 1) QDML_DETAIL_AVX2_TILE(EXT, DotWide, 2) \
    QDML_DETAIL_AVX2_TILE(EXT, DotWide, 3) QDML_DETAIL_AVX2_TILE(EXT, DotWide, 4)
static_assert(qdml::simd::gemm::avx2::kRows == 4, "QDML_DETAIL_AVX2_TILES lists the tiles of these sizes");
#if defined(QDML_EXTERN_GEMM_KERNELS)
QDML_DETAIL_AVX2_TILES(extern)
#endif
namespace qdml::simd::gemm::avx2 {

/// Rows m0..m0+mr-1 (mr <= kRows) times panel p.
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
    if (b.wide)
        ymm::tiles<DotWide, kRows>(a, b, e, m0, mr, p);
    else
        ymm::tiles<Dot, kRows>(a, b, e, m0, mr, p);
}

}  // namespace qdml::simd::gemm::avx2
QDML_REGION_END
#endif  // QDML_X86
