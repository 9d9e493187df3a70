// qdml/simd/x86/avx2/gemm_kernel.hpp - AVX2 micro-kernel for CPUs without VNNI:
// 4 rows x one 16-column panel (kernel_ymm.hpp's skeleton). The s8 panel
// bytes are sign-extended to int16 by shifts once per k group (even bytes:
// k0, k2; odd bytes: k1, k3 of each column), the left operand comes
// pre-widened as (a0, a2), (a1, a3) int16 pairs (Pairs16 layout), and
// vpmaddwd forms a0*b0 + a2*b2 exactly in int32 (|sum| <= 2 * 255 * 128),
// added to the accumulator with a wrapping vpaddd. Never vpmaddubsw: its
// int16 pair sum saturates (255*127*2 > 32767). Compiles to nothing off x86-64.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

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
// The fused form (fused_panels, fused_rows): tiles of whole 4-row blocks
// and whole panels one after another in one asm statement, along the
// panels of a row block or (few panels) along the row blocks of a panel,
// each tile's k loop (dot4's) followed by its requantization while the sums
// are still in registers: no call, no store and reload of the sums, no
// test per tile.
// With K small (MobileNetV2's 1x1 layers, K = 16-32) these costs were as
// large as the products. The store is the one of ymm::tile's fast paths,
// for the epilogues where it needs no test per row: DirectML's requantize
// under Epilogue::dml_small, or the exact profile's per-column multiplier
// under cols_small, with one output zero point (same_zp), 8-bit output:
//   sum  = acc (+ row.bias) + col_bias[n]                     (vpaddd: mod 2^32)
//   v    = ((fp32(sum) * s1) * s2) / OutputScale[m]           (DirectML; s1, s2 by col_first)
//          fp32(sum) * col_mult[n]                            (exact)
//   q    = packs(rne(v)) +sat zp, packed to 8 bits with saturation
enum class FusedKind { DmlColFirst, DmlRowFirst, Exact };

/// What the fused asm reads from memory (one pointer): the k loop's start
/// values, the tile count (counted down), each pointer's step from one
/// tile to the next (along the panels of a row block, or along the row
/// blocks of a panel), the zero point vector and the dword order of the
/// 8-bit pack.
struct alignas(32) FusedParams {
    std::int64_t i0 = 0, rem0 = 0, b_step = 0, count = 0;        // offsets 0, 8, 16, 24
    std::int64_t a_step = 0, out_step = 0, col_step = 0, rows_step = 0;  // 32, 40, 48, 56
    std::int16_t zp16[16] = {};                                  // offset 64
    std::int32_t order[8] = {0, 4, 1, 5, 2, 6, 3, 7};            // offset 96
};
static_assert(offsetof(FusedParams, a_step) == 32 && offsetof(FusedParams, zp16) == 64 &&
                  offsetof(FusedParams, order) == 96,
              "the fused asm's offsets");
static_assert(offsetof(RowParams, bias) == 0 && offsetof(RowParams, a_scale) == 28 &&
                  offsetof(RowParams, out_scale) == 32 && sizeof(RowParams) == 36,
              "the fused asm's row offsets (36*r + ...)");

// Registers in the store: row r's sums in ymm(2r), ymm(2r + 1) (the k
// loop's), ymm10 AScale[m], ymm11 OutputScale[m], ymm12 the row bias,
// ymm13 the pack's dword order. Without a row bias (all four 0) its adds
// are left out.
#define QDML_AVX2_F_BIAS(r, c0, c1)                                                                 \
    "vpbroadcastd 36*" #r "(%[rows]), %%ymm12\n\t"                                                  \
    "vpaddd %%ymm12, %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                \
    "vpaddd %%ymm12, %%ymm" #c1 ", %%ymm" #c1 "\n\t"
#define QDML_AVX2_F_NOBIAS(r, c0, c1)
#define QDML_AVX2_F_SUM(r, c0, c1, BIAS)                                                            \
    BIAS(r, c0, c1)                                                                                 \
    "vpaddd (%[cb]), %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                \
    "vpaddd 32(%[cb]), %%ymm" #c1 ", %%ymm" #c1 "\n\t"                                              \
    "vcvtdq2ps %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                      \
    "vcvtdq2ps %%ymm" #c1 ", %%ymm" #c1 "\n\t"
#define QDML_AVX2_F_COLS(c0, c1)                                                                    \
    "vmulps (%[cs]), %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                \
    "vmulps 32(%[cs]), %%ymm" #c1 ", %%ymm" #c1 "\n\t"
#define QDML_AVX2_F_ROWS(c0, c1)                                                                    \
    "vmulps %%ymm10, %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                \
    "vmulps %%ymm10, %%ymm" #c1 ", %%ymm" #c1 "\n\t"
#define QDML_AVX2_F_DML(r, c0, c1, FIRST, SECOND)                                                   \
    "vbroadcastss 36*" #r "+28(%[rows]), %%ymm10\n\t"                                               \
    "vbroadcastss 36*" #r "+32(%[rows]), %%ymm11\n\t"                                               \
    FIRST(c0, c1) SECOND(c0, c1)                                                                    \
    "vdivps %%ymm11, %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                \
    "vdivps %%ymm11, %%ymm" #c1 ", %%ymm" #c1 "\n\t"
// rne (MXCSR), the saturating packs to int16, +zp with saturation, to 8
// bits (PACKB: vpackuswb or vpacksswb), the dwords in column order.
#define QDML_AVX2_F_PACK(c0, c1, PACKB)                                                             \
    "vcvtps2dq %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                                      \
    "vcvtps2dq %%ymm" #c1 ", %%ymm" #c1 "\n\t"                                                      \
    "vpackssdw %%ymm" #c1 ", %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                        \
    "vpaddsw 64(%[p]), %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                              \
    PACKB " %%ymm" #c0 ", %%ymm" #c0 ", %%ymm" #c0 "\n\t"                                           \
    "vpermd %%ymm" #c0 ", %%ymm13, %%ymm" #c0 "\n\t"
#define QDML_AVX2_F_COLFIRST(r, c0, c1, BIAS, PACKB) \
    QDML_AVX2_F_SUM(r, c0, c1, BIAS) QDML_AVX2_F_DML(r, c0, c1, QDML_AVX2_F_COLS, QDML_AVX2_F_ROWS) QDML_AVX2_F_PACK(c0, c1, PACKB)
#define QDML_AVX2_F_ROWFIRST(r, c0, c1, BIAS, PACKB) \
    QDML_AVX2_F_SUM(r, c0, c1, BIAS) QDML_AVX2_F_DML(r, c0, c1, QDML_AVX2_F_ROWS, QDML_AVX2_F_COLS) QDML_AVX2_F_PACK(c0, c1, PACKB)
#define QDML_AVX2_F_EXACT(r, c0, c1, BIAS, PACKB) \
    QDML_AVX2_F_SUM(r, c0, c1, BIAS) QDML_AVX2_F_COLS(c0, c1) QDML_AVX2_F_PACK(c0, c1, PACKB)
// One tile after another: the k loop of dot4 (labels 1-4), the four rows'
// stores, then the next tile (label 5, each pointer moved by its step)
// while the count at 24(p) lasts.
#define QDML_AVX2_F_LOOP(ROW, BIAS, PACKB)                                                          \
    "5:\n\t"                                                                                        \
    "mov (%[p]), %[i]\n\t"                                                                          \
    "mov 8(%[p]), %[rem]\n\t" QDML_AVX2_EACH(QDML_AVX2_ZERO)                                        \
    "test %[rem], %[rem]\n\t"                                                                       \
    "jz 2f\n"                                                                                       \
    "1:\n\t" QDML_AVX2_GROUP(0) "add $32, %[i]\n\t"                                                 \
    "dec %[rem]\n\t"                                                                                \
    "jnz 1b\n"                                                                                      \
    "2:\n\t"                                                                                        \
    "test %[i], %[i]\n\t"                                                                           \
    "jz 4f\n"                                                                                       \
    "3:\n\t" QDML_AVX2_GROUP(0) QDML_AVX2_GROUP(1) QDML_AVX2_GROUP(2) QDML_AVX2_GROUP(3)            \
    "add $128, %[i]\n\t"                                                                            \
    "jnz 3b\n"                                                                                      \
    "4:\n\t"                                                                                        \
    "vmovdqa 96(%[p]), %%ymm13\n\t"                                                                 \
    ROW(0, 0, 1, BIAS, PACKB) ROW(1, 2, 3, BIAS, PACKB) ROW(2, 4, 5, BIAS, PACKB) ROW(3, 6, 7, BIAS, PACKB) \
    "vmovdqu %%xmm0, (%[out])\n\t"                                                                  \
    "vmovdqu %%xmm2, (%[out],%[rs])\n\t"                                                            \
    "vmovdqu %%xmm4, (%[out],%[rs],2)\n\t"                                                          \
    "lea (%[out],%[rs],2), %[t]\n\t"                                                                \
    "vmovdqu %%xmm6, (%[t],%[rs])\n\t"                                                              \
    "add 16(%[p]), %[b]\n\t"                                                                        \
    "add 32(%[p]), %[a]\n\t"                                                                        \
    "add 40(%[p]), %[out]\n\t"                                                                      \
    "add 48(%[p]), %[cb]\n\t"                                                                       \
    "add 48(%[p]), %[cs]\n\t"                                                                       \
    "add 56(%[p]), %[rows]\n\t"                                                                     \
    "decq 24(%[p])\n\t"                                                                             \
    "jnz 5b\n\t"

/// `count` >= 1 tiles from the one of row block pa and panel pb, each next
/// one prm's steps further: out (the tile's first byte) gets the stores; cb
/// and cs are its column bias and column factor (DirectML: BScale; exact:
/// the multiplier); rows = &e.rows[m0]. prm's steps and pack constants are
/// set; the k loop's values and the count are set here.
template <FusedKind kKind, bool kBias, bool kSigned>
inline void fused_run(const std::uint8_t* pa, const std::int8_t* pb, std::size_t groups, std::size_t count,
                      std::uint8_t* out, std::size_t rs, const std::uint32_t* cb, const float* cs,
                      const RowParams* rows, FusedParams& prm) noexcept {
    prm.i0 = -static_cast<std::int64_t>(groups * 32);
    prm.rem0 = static_cast<std::int64_t>(groups % 4);
    prm.count = static_cast<std::int64_t>(count);
    const std::uint8_t* a = pa + groups * 32;
    const std::int8_t* b = pb + groups * 128;
    std::ptrdiff_t i, rem;
    std::uint8_t* t;
#define QDML_AVX2_F_ASM(ROW, BIAS, PACKB)                                                           \
    __asm__ volatile(QDML_AVX2_F_LOOP(ROW, BIAS, PACKB)                                             \
                     : [i] "=&r"(i), [rem] "=&r"(rem), [t] "=&r"(t), [b] "+r"(b), [out] "+r"(out),  \
                       [cb] "+r"(cb), [cs] "+r"(cs), [a] "+r"(a), [rows] "+r"(rows)                 \
                     : [rs] "r"(rs), [p] "r"(&prm)                                                  \
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
                       "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory")
#define QDML_AVX2_F_PACKS(ROW, BIAS)                                                                \
    if constexpr (kSigned)                                                                          \
        QDML_AVX2_F_ASM(ROW, BIAS, "vpacksswb");                                                    \
    else                                                                                            \
        QDML_AVX2_F_ASM(ROW, BIAS, "vpackuswb");
#define QDML_AVX2_F_BIASES(ROW)                                                                     \
    if constexpr (kBias) {                                                                          \
        QDML_AVX2_F_PACKS(ROW, QDML_AVX2_F_BIAS)                                                    \
    } else {                                                                                        \
        QDML_AVX2_F_PACKS(ROW, QDML_AVX2_F_NOBIAS)                                                  \
    }
    if constexpr (kKind == FusedKind::DmlColFirst) {
        QDML_AVX2_F_BIASES(QDML_AVX2_F_COLFIRST)
    } else if constexpr (kKind == FusedKind::DmlRowFirst) {
        QDML_AVX2_F_BIASES(QDML_AVX2_F_ROWFIRST)
    } else {
        QDML_AVX2_F_BIASES(QDML_AVX2_F_EXACT)
    }
#undef QDML_AVX2_F_BIASES
#undef QDML_AVX2_F_PACKS
#undef QDML_AVX2_F_ASM
}
#undef QDML_AVX2_F_BIAS
#undef QDML_AVX2_F_NOBIAS
#undef QDML_AVX2_F_SUM
#undef QDML_AVX2_F_COLS
#undef QDML_AVX2_F_ROWS
#undef QDML_AVX2_F_DML
#undef QDML_AVX2_F_PACK
#undef QDML_AVX2_F_COLFIRST
#undef QDML_AVX2_F_ROWFIRST
#undef QDML_AVX2_F_EXACT
#undef QDML_AVX2_F_LOOP

/// Whether and how a product takes the fused form (above): what does not
/// depend on the tile, found once per call of the driver.
struct FusedPlan {
    bool ok = false, is_signed = false;
    FusedKind kind = FusedKind::Exact;
    std::size_t full = 0;  ///< whole panels
    FusedParams prm;       ///< the pack constants (the steps set per run)
};

inline FusedPlan fused_plan(const PackedRight& b, const Epilogue& e) noexcept {
    FusedPlan f;
    f.full = e.N / kPanel;
    if (f.full == 0 || !b.wide || e.int32_out || e.var_a || e.var_b || e.out_cs != 1 || !e.same_zp || e.rows.empty())
        return f;
    f.is_signed = e.out_lo == -128 && e.out_hi == 127;
    if (!f.is_signed && !(e.out_lo == 0 && e.out_hi == 255)) return f;
    if (e.directml && e.dml_small)
        f.kind = e.col_first ? FusedKind::DmlColFirst : FusedKind::DmlRowFirst;
    else if (!e.directml && e.mode == MultMode::PerColumn && e.cols_small)
        f.kind = FusedKind::Exact;
    else
        return f;
    const auto zp = static_cast<std::int16_t>(e.rows[0].zp);
    for (auto& z : f.prm.zp16) z = zp;
    f.ok = true;
    return f;
}

/// `count` tiles from row block m0 and panel p, along the panels (`along_rows`
/// false) or along the row blocks; `no_bias`: every row's bias 0 there.
inline void fused_tiles(FusedPlan& f, const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                        std::size_t p, std::size_t count, bool along_rows, bool no_bias) noexcept {
    FusedParams& prm = f.prm;
    prm.b_step = along_rows ? 0 : static_cast<std::int64_t>(b.groups * 128);
    prm.a_step = along_rows ? static_cast<std::int64_t>(b.groups * 32) : 0;  // (Pairs16: 4-row blocks back to back)
    prm.out_step = along_rows ? static_cast<std::int64_t>(kRows * e.out_rs) : static_cast<std::int64_t>(kPanel);
    prm.col_step = along_rows ? 0 : static_cast<std::int64_t>(kPanel * 4);
    prm.rows_step = along_rows ? static_cast<std::int64_t>(kRows * sizeof(RowParams)) : 0;
    const std::size_t n0 = p * kPanel;
    const auto run = [&](auto k, auto bias, auto sign) {
        fused_run<decltype(k)::value, decltype(bias)::value, decltype(sign)::value>(
            a.rows(m0), b.panel(p), b.groups, count, e.out + m0 * e.out_rs + n0, e.out_rs, e.col_bias.data() + n0,
            (k.value == FusedKind::Exact ? e.col_mult.data() : e.col_scale.data()) + n0, e.rows.data() + m0, prm);
    };
    const auto signs = [&](auto k, auto bias) {
        if (f.is_signed)
            run(k, bias, std::true_type{});
        else
            run(k, bias, std::false_type{});
    };
    const auto biases = [&](auto k) {
        if (no_bias)
            signs(k, std::false_type{});
        else
            signs(k, std::true_type{});
    };
    switch (f.kind) {
        case FusedKind::DmlColFirst: biases(std::integral_constant<FusedKind, FusedKind::DmlColFirst>{}); break;
        case FusedKind::DmlRowFirst: biases(std::integral_constant<FusedKind, FusedKind::DmlRowFirst>{}); break;
        case FusedKind::Exact: biases(std::integral_constant<FusedKind, FusedKind::Exact>{}); break;
    }
}

/// Whether rows m0..m1-1 all have bias 0. (Read here, not kept as a flag:
/// a caller may add to the bias after prepare_rows, as the NCHW convolution
/// adds its Bias.)
inline bool rows_bias_zero(const Epilogue& e, std::size_t m0, std::size_t m1) noexcept {
    std::uint32_t any = 0;
    for (std::size_t m = m0; m < m1; ++m) any |= e.rows[m].bias;
    return any == 0;
}

/// The fused form for rows m0..m0+3 (a whole block) from panel p0 on, up
/// to p1 and the last whole panel; returns the first panel it left to the
/// tiles (p0 when the plan says no).
inline std::size_t fused_panels(FusedPlan& f, const PackedLeft& a, const PackedRight& b, const Epilogue& e,
                                std::size_t m0, std::size_t p0, std::size_t p1) noexcept {
    const std::size_t full = std::min(p1, f.full);
    if (!f.ok || p0 >= full) return p0;
    fused_tiles(f, a, b, e, m0, p0, full - p0, false, rows_bias_zero(e, m0, m0 + kRows));
    return full;
}

/// The fused form for panel p (whole) and the whole row blocks of
/// m0..m1-1 (m0 a block's first row), one block after another (few panels:
/// one call for all the rows, the panel's constants kept); returns the
/// first row it left to the tiles (m0 when the plan says no).
inline std::size_t fused_rows(FusedPlan& f, const PackedLeft& a, const PackedRight& b, const Epilogue& e,
                              std::size_t m0, std::size_t m1, std::size_t p) noexcept {
    const std::size_t blocks = (m1 - m0) / kRows;
    if (!f.ok || p >= f.full || blocks == 0) return m0;
    fused_tiles(f, a, b, e, m0, p, blocks, true, rows_bias_zero(e, m0, m0 + blocks * kRows));
    return m0 + blocks * kRows;
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

/// (No fused form without GNU asm: the tiles do every tile.)
struct FusedPlan {
    bool ok = false;
    std::size_t full = 0;
};
inline FusedPlan fused_plan(const PackedRight&, const Epilogue&) noexcept { return {}; }
inline std::size_t fused_panels(FusedPlan&, const PackedLeft&, const PackedRight&, const Epilogue&, std::size_t,
                                std::size_t p0, std::size_t) noexcept {
    return p0;
}
inline std::size_t fused_rows(FusedPlan&, const PackedLeft&, const PackedRight&, const Epilogue&, std::size_t m0,
                              std::size_t, std::size_t) noexcept {
    return m0;
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
