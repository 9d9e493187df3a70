// qdml/simd/x86/avx512vnni/gemm_kernel.hpp - AVX-512 VNNI micro-kernel: MR rows x
// NP panels of 16 columns (up to 8 x 3: 24 zmm accumulators, 3 panel
// registers, 1 broadcast), vpdpbusd (u8 x s8, four products summed into
// int32 without saturation, wrapping like the reference's accumulator).
// Per k group the NP panel loads serve MR rows and each broadcast A dword
// serves NP panels. Whole blocks of 8 rows (all of a product but its last
// M % 8 rows) run their k loop as one asm statement (dot8), reading A packed
// or in place, and store through the saturating-pack epilogue
// (store_rows32, rows16). Compiles to nothing off x86-64.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qdml/simd/x86/avx512vnni/store.hpp"

#if QDML_X86
QDML_REGION_AVX512VNNI
namespace qdml::simd::gemm::avx512vnni {

inline constexpr int kRows = 8;    ///< rows per block (Groups4 layout)
inline constexpr int kPanels = 3;  ///< panels per call (16 columns each)
inline constexpr int kRowPanels = 4;  ///< panels per call for one row (GEMV: more streams in flight)
inline constexpr LeftLayout kLayout = LeftLayout::Groups4;
inline constexpr std::size_t kPrefetch = 1024;  ///< bytes ahead in each panel stream

/// acc[j] += broadcast(a's dword) . b[j] for the NP panels: with
/// QDML_INLINE_ASM in one asm statement with its own broadcast register
/// (g++ 12 keeps the intrinsic's accumulator apart from its result and
/// copies it), else the intrinsics.
template <int NP>
inline void row(__m512i (&acc)[NP], const std::uint8_t* a, const __m512i (&b)[NP]) noexcept {
#if QDML_INLINE_ASM
    __m512i t;
    const auto& a4 = *reinterpret_cast<const std::int32_t*>(a);
    if constexpr (NP == 1)
        __asm__("vpbroadcastd %[a], %[t]\n\tvpdpbusd %[b0], %[t], %[c0]"
                : [c0] "+v"(acc[0]), [t] "=&v"(t) : [a] "m"(a4), [b0] "v"(b[0]));
    else if constexpr (NP == 2)
        __asm__("vpbroadcastd %[a], %[t]\n\tvpdpbusd %[b0], %[t], %[c0]\n\tvpdpbusd %[b1], %[t], %[c1]"
                : [c0] "+v"(acc[0]), [c1] "+v"(acc[1]), [t] "=&v"(t) : [a] "m"(a4), [b0] "v"(b[0]), [b1] "v"(b[1]));
    else if constexpr (NP == 3)
        __asm__("vpbroadcastd %[a], %[t]\n\tvpdpbusd %[b0], %[t], %[c0]\n\tvpdpbusd %[b1], %[t], %[c1]\n\t"
                "vpdpbusd %[b2], %[t], %[c2]"
                : [c0] "+v"(acc[0]), [c1] "+v"(acc[1]), [c2] "+v"(acc[2]), [t] "=&v"(t)
                : [a] "m"(a4), [b0] "v"(b[0]), [b1] "v"(b[1]), [b2] "v"(b[2]));
    else
        __asm__("vpbroadcastd %[a], %[t]\n\tvpdpbusd %[b0], %[t], %[c0]\n\tvpdpbusd %[b1], %[t], %[c1]\n\t"
                "vpdpbusd %[b2], %[t], %[c2]\n\tvpdpbusd %[b3], %[t], %[c3]"
                : [c0] "+v"(acc[0]), [c1] "+v"(acc[1]), [c2] "+v"(acc[2]), [c3] "+v"(acc[3]), [t] "=&v"(t)
                : [a] "m"(a4), [b0] "v"(b[0]), [b1] "v"(b[1]), [b2] "v"(b[2]), [b3] "v"(b[3]));
#else
    std::int32_t a4;
    std::memcpy(&a4, a, 4);
    const __m512i t = _mm512_set1_epi32(a4);
    QDML_UNROLL
    for (int j = 0; j < NP; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], t, b[j]);
#endif
}

/// Where dot8 reads A's 8 rows: packed (Groups4: 32 bytes per group at
/// `data`), or in place (row r at data + r * lda, K = 4 * groups bytes).
struct Rows8 {
    const std::uint8_t* data = nullptr;
    std::size_t lda = 0;  ///< 0: packed
};

#if QDML_INLINE_ASM
// The k loop of the 8-row tiles of 1 to 3 panels as one asm statement:
// through the intrinsics g++ 12 keeps two induction variables and a counter
// (five scalar uops per group, some of them on the two vpdpbusd ports) and
// spills when asked to unroll; here one induction register i (B's group
// at each panel's end pointer + 2i, a scaled index; i counts 32 per group up
// to 0 from below), the groups % 4 one at a time, then four per iteration.
// A is read packed (the block's group at a + i) or in place (lda != 0: row r
// of the 8 at a0 + r * lda for r < 4, a4 + (r - 4) * lda after, as base +
// index * 1 or 2 with lda and 3 lda in registers; a0 and a4 advance 4 bytes
// per group). Row r of panel j accumulates in zmm(8j + r), from the panel's
// 16 initial values (64 bytes each, consecutive: the column bias, or
// zeros), stored to acc[j][r] at the end; the panels' group in zmm28-30,
// the broadcast A dword in zmm31.
#define QDML_VNNI_LOAD(u, j, z) "vmovdqa64 64*" #u "(%[b" #j "],%[i],2), %%zmm" #z "\n\t"
#define QDML_VNNI_AP0(u, r) "32*" #u "+4*" #r "(%[a],%[i])"  // packed: row r of group u
#define QDML_VNNI_AD0(u) "4*" #u "(%[a0])"                   // in place: rows 0-3, then 4-7 (a4)
#define QDML_VNNI_AD1(u) "4*" #u "(%[a0],%[ld],1)"
#define QDML_VNNI_AD2(u) "4*" #u "(%[a0],%[ld],2)"
#define QDML_VNNI_AD3(u) "4*" #u "(%[a0],%[ld3],1)"
#define QDML_VNNI_AD4(u) "4*" #u "(%[a4])"
#define QDML_VNNI_AD5(u) "4*" #u "(%[a4],%[ld],1)"
#define QDML_VNNI_AD6(u) "4*" #u "(%[a4],%[ld],2)"
#define QDML_VNNI_AD7(u) "4*" #u "(%[a4],%[ld3],1)"
#define QDML_VNNI_AP(u, r) QDML_VNNI_AP0(u, r)
#define QDML_VNNI_AD(u, r) QDML_VNNI_AD##r(u)
#define QDML_VNNI_DOT(z, c) "vpdpbusd %%zmm" #z ", %%zmm31, %%zmm" #c "\n\t"
/// Row r of group u: its A dword (address A(u, r)) broadcast, then the NP dot products.
#define QDML_VNNI_ROW1(A, u, r, c0, c1, c2) "vpbroadcastd " A(u, r) ", %%zmm31\n\t" QDML_VNNI_DOT(28, c0)
#define QDML_VNNI_ROW2(A, u, r, c0, c1, c2) QDML_VNNI_ROW1(A, u, r, c0, c1, c2) QDML_VNNI_DOT(29, c1)
#define QDML_VNNI_ROW3(A, u, r, c0, c1, c2) QDML_VNNI_ROW2(A, u, r, c0, c1, c2) QDML_VNNI_DOT(30, c2)
#define QDML_VNNI_ROWS(R, A, u)                                                                                \
    R(A, u, 0, 0, 8, 16) R(A, u, 1, 1, 9, 17) R(A, u, 2, 2, 10, 18) R(A, u, 3, 3, 11, 19)                      \
    R(A, u, 4, 4, 12, 20) R(A, u, 5, 5, 13, 21) R(A, u, 6, 6, 14, 22) R(A, u, 7, 7, 15, 23)
#define QDML_VNNI_LOADS1(u) QDML_VNNI_LOAD(u, 0, 28)
#define QDML_VNNI_LOADS2(u) QDML_VNNI_LOADS1(u) QDML_VNNI_LOAD(u, 1, 29)
#define QDML_VNNI_LOADS3(u) QDML_VNNI_LOADS2(u) QDML_VNNI_LOAD(u, 2, 30)
#define QDML_VNNI_GROUP(NP, A, u) QDML_VNNI_LOADS##NP(u) QDML_VNNI_ROWS(QDML_VNNI_ROW##NP, A, u)
#define QDML_VNNI_INIT(j, c) "vmovdqa64 64*" #j "(%[c]), %%zmm" #c "\n\t"
#define QDML_VNNI_INITC(j, c) "vmovdqa64 64*" #c "(%[acc]), %%zmm" #c "\n\t"  // from acc itself
#define QDML_VNNI_STORE(j, c) "vmovdqa64 %%zmm" #c ", 64*" #c "(%[acc])\n\t"
#define QDML_VNNI_EACH1(F) F(0, 0) F(0, 1) F(0, 2) F(0, 3) F(0, 4) F(0, 5) F(0, 6) F(0, 7)
#define QDML_VNNI_EACH2(F) QDML_VNNI_EACH1(F) F(1, 8) F(1, 9) F(1, 10) F(1, 11) F(1, 12) F(1, 13) F(1, 14) F(1, 15)
#define QDML_VNNI_EACH3(F) QDML_VNNI_EACH2(F) F(2, 16) F(2, 17) F(2, 18) F(2, 19) F(2, 20) F(2, 21) F(2, 22) F(2, 23)
/// The whole statement's text: NP panels, A's addresses A(u, r), and what
/// else advances per group (STEP1) and per four (STEP4) besides i.
#define QDML_VNNI_LOOP(NP, A, STEP1, STEP4, INIT)                                                              \
    QDML_VNNI_EACH##NP(INIT)                                                                                   \
    "test %[rem], %[rem]\n\t"                                                                                  \
    "jz 2f\n"                                                                                                  \
    "1:\n\t" QDML_VNNI_GROUP(NP, A, 0) STEP1 "add $32, %[i]\n\t"                                               \
    "dec %[rem]\n\t"                                                                                           \
    "jnz 1b\n"                                                                                                 \
    "2:\n\t"                                                                                                   \
    "test %[i], %[i]\n\t"                                                                                      \
    "jz 4f\n"                                                                                                  \
    "3:\n\t" QDML_VNNI_GROUP(NP, A, 0) QDML_VNNI_GROUP(NP, A, 1) QDML_VNNI_GROUP(NP, A, 2)                    \
    QDML_VNNI_GROUP(NP, A, 3) STEP4 "add $128, %[i]\n\t"                                                       \
    "jnz 3b\n"                                                                                                 \
    "4:\n\t" QDML_VNNI_EACH##NP(QDML_VNNI_STORE)
#define QDML_VNNI_PACKED(NP) QDML_VNNI_LOOP(NP, QDML_VNNI_AP, "", "", QDML_VNNI_INIT)
#define QDML_VNNI_DIRECT_WITH(NP, INIT)                                                                        \
    QDML_VNNI_LOOP(NP, QDML_VNNI_AD, "add $4, %[a0]\n\tadd $4, %[a4]\n\t", "add $16, %[a0]\n\tadd $16, %[a4]\n\t", INIT)
#define QDML_VNNI_DIRECT(NP) QDML_VNNI_DIRECT_WITH(NP, QDML_VNNI_INIT)
#define QDML_VNNI_CHAIN(NP) QDML_VNNI_DIRECT_WITH(NP, QDML_VNNI_INITC)
#define QDML_VNNI_CLOBBER8 "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm28", "xmm31", "cc", "memory"
#define QDML_VNNI_CLOBBER16 QDML_VNNI_CLOBBER8, "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm29"
#define QDML_VNNI_CLOBBER24                                                                                    \
    QDML_VNNI_CLOBBER16, "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm30"

/// acc[j][r] = init[16 j..16 j + 15] + row r of A's 8 rows . panel j (b[j]:
/// 64 bytes per group), over `groups` groups.
template <int NP>
inline void dot8(std::int32_t (&acc)[NP][8][16], Rows8 a, const std::int8_t* const (&b)[NP],
                                    const std::int32_t* init, std::size_t groups) noexcept {
    // (B's panels, init and acc are 64-byte aligned: vmovdqa64.)
    std::ptrdiff_t i = -static_cast<std::ptrdiff_t>(groups * 32);
    std::size_t rem = groups % 4;
    const std::int8_t *b0 = b[0] + groups * 64, *b1 = b[NP > 1 ? 1 : 0] + groups * 64, *b2 = b[NP - 1] + groups * 64;
    if (a.lda == 0) {
        const std::uint8_t* pa = a.data + groups * 32;
#define QDML_VNNI_OPERANDS(NP)                                                                                 \
    : "=m"(acc), [i] "+r"(i), [rem] "+r"(rem)                                                                  \
    : [acc] "r"(&acc[0][0][0]), [a] "r"(pa), [b0] "r"(b0), [b1] "r"(b1), [b2] "r"(b2), [c] "r"(init)
        if constexpr (NP == 1) __asm__(QDML_VNNI_PACKED(1) QDML_VNNI_OPERANDS(1) : QDML_VNNI_CLOBBER8);
        if constexpr (NP == 2) __asm__(QDML_VNNI_PACKED(2) QDML_VNNI_OPERANDS(2) : QDML_VNNI_CLOBBER16);
        if constexpr (NP == 3) __asm__(QDML_VNNI_PACKED(3) QDML_VNNI_OPERANDS(3) : QDML_VNNI_CLOBBER24);
#undef QDML_VNNI_OPERANDS
    } else {
        const std::uint8_t *a0 = a.data, *a4 = a.data + 4 * a.lda;
        const std::size_t ld = a.lda, ld3 = 3 * a.lda;
#define QDML_VNNI_OPERANDS(NP)                                                                                 \
    : "=m"(acc), [i] "+r"(i), [rem] "+r"(rem), [a0] "+r"(a0), [a4] "+r"(a4)                                    \
    : [acc] "r"(&acc[0][0][0]), [ld] "r"(ld), [ld3] "r"(ld3), [b0] "r"(b0), [b1] "r"(b1), [b2] "r"(b2), [c] "r"(init)
        if constexpr (NP == 1) __asm__(QDML_VNNI_DIRECT(1) QDML_VNNI_OPERANDS(1) : QDML_VNNI_CLOBBER8);
        if constexpr (NP == 2) __asm__(QDML_VNNI_DIRECT(2) QDML_VNNI_OPERANDS(2) : QDML_VNNI_CLOBBER16);
        if constexpr (NP == 3) __asm__(QDML_VNNI_DIRECT(3) QDML_VNNI_OPERANDS(3) : QDML_VNNI_CLOBBER24);
#undef QDML_VNNI_OPERANDS
    }
}

/// dot8 in place that starts from acc itself rather than from a per-panel
/// init (acc[j][r] += row r . panel j over `groups` groups): a k loop cut
/// into runs of A (the patch segments of the NHWC convolution) chains its calls.
template <int NP>
inline void dot8_chain(std::int32_t (&acc)[NP][8][16], const std::uint8_t* a, std::size_t lda,
                                          const std::int8_t* const (&b)[NP], std::size_t groups) noexcept {
    std::ptrdiff_t i = -static_cast<std::ptrdiff_t>(groups * 32);
    std::size_t rem = groups % 4;
    const std::int8_t *b0 = b[0] + groups * 64, *b1 = b[NP > 1 ? 1 : 0] + groups * 64, *b2 = b[NP - 1] + groups * 64;
    const std::uint8_t *a0 = a, *a4 = a + 4 * lda;
    const std::size_t ld = lda, ld3 = 3 * lda;
#define QDML_VNNI_OPERANDS(NP)                                                                                 \
    : "+m"(acc), [i] "+r"(i), [rem] "+r"(rem), [a0] "+r"(a0), [a4] "+r"(a4)                                    \
    : [acc] "r"(&acc[0][0][0]), [ld] "r"(ld), [ld3] "r"(ld3), [b0] "r"(b0), [b1] "r"(b1), [b2] "r"(b2)
    if constexpr (NP == 1) __asm__(QDML_VNNI_CHAIN(1) QDML_VNNI_OPERANDS(1) : QDML_VNNI_CLOBBER8);
    if constexpr (NP == 2) __asm__(QDML_VNNI_CHAIN(2) QDML_VNNI_OPERANDS(2) : QDML_VNNI_CLOBBER16);
    if constexpr (NP == 3) __asm__(QDML_VNNI_CHAIN(3) QDML_VNNI_OPERANDS(3) : QDML_VNNI_CLOBBER24);
#undef QDML_VNNI_OPERANDS
}

#undef QDML_VNNI_LOAD
#undef QDML_VNNI_AP0
#undef QDML_VNNI_AD0
#undef QDML_VNNI_AD1
#undef QDML_VNNI_AD2
#undef QDML_VNNI_AD3
#undef QDML_VNNI_AD4
#undef QDML_VNNI_AD5
#undef QDML_VNNI_AD6
#undef QDML_VNNI_AD7
#undef QDML_VNNI_AP
#undef QDML_VNNI_AD
#undef QDML_VNNI_DOT
#undef QDML_VNNI_ROW1
#undef QDML_VNNI_ROW2
#undef QDML_VNNI_ROW3
#undef QDML_VNNI_ROWS
#undef QDML_VNNI_LOADS1
#undef QDML_VNNI_LOADS2
#undef QDML_VNNI_LOADS3
#undef QDML_VNNI_GROUP
#undef QDML_VNNI_INIT
#undef QDML_VNNI_STORE
#undef QDML_VNNI_EACH1
#undef QDML_VNNI_EACH2
#undef QDML_VNNI_EACH3
#undef QDML_VNNI_LOOP
#undef QDML_VNNI_PACKED
#undef QDML_VNNI_DIRECT
#undef QDML_VNNI_DIRECT_WITH
#undef QDML_VNNI_CHAIN
#undef QDML_VNNI_INITC
#undef QDML_VNNI_CLOBBER8
#undef QDML_VNNI_CLOBBER16
#undef QDML_VNNI_CLOBBER24
#else
// (dot8 and dot8_chain with intrinsics only: the same sums. Out of line:
// inlined into tile8, g++ 12 spilled accumulators and kept the row
// addresses on the stack.)
namespace detail {
/// acc[j][r] = (Chain ? acc[j][r] : init[16 j..16 j + 15]) + row r of A's 8
/// rows . panel j over `groups` groups; A packed (lda 0: group g of row r at
/// a + 32 g + 4 r) or in place (a + r lda + 4 g).
template <int NP, bool Chain>
QDML_NOINLINE void dot8_k(std::int32_t (&acc)[NP][8][16], const std::uint8_t* a, std::size_t lda,
                   const std::int8_t* const (&b)[NP], const std::int32_t* init, std::size_t groups) noexcept {
    __m512i c[NP][8];
    QDML_UNROLL
    for (int j = 0; j < NP; ++j)
        QDML_UNROLL
        for (int r = 0; r < 8; ++r) c[j][r] = _mm512_load_si512(Chain ? acc[j][r] : init + 16 * j);
    const std::size_t row_step = lda == 0 ? 4 : lda, group_step = lda == 0 ? 32 : 4;
    for (std::size_t g = 0; g < groups; ++g, a += group_step) {
        __m512i vb[NP];
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) vb[j] = _mm512_load_si512(b[j] + 64 * g);
        QDML_UNROLL
        for (int r = 0; r < 8; ++r) {
            std::int32_t a4;
            std::memcpy(&a4, a + r * row_step, 4);
            const __m512i t = _mm512_set1_epi32(a4);
            QDML_UNROLL
            for (int j = 0; j < NP; ++j) c[j][r] = _mm512_dpbusd_epi32(c[j][r], t, vb[j]);
        }
    }
    QDML_UNROLL
    for (int j = 0; j < NP; ++j)
        QDML_UNROLL
        for (int r = 0; r < 8; ++r) _mm512_store_si512(acc[j][r], c[j][r]);
}
}  // namespace detail

template <int NP>
inline void dot8(std::int32_t (&acc)[NP][8][16], Rows8 a, const std::int8_t* const (&b)[NP],
                 const std::int32_t* init, std::size_t groups) noexcept {
    detail::dot8_k<NP, false>(acc, a.data, a.lda, b, init, groups);
}

template <int NP>
inline void dot8_chain(std::int32_t (&acc)[NP][8][16], const std::uint8_t* a, std::size_t lda,
                       const std::int8_t* const (&b)[NP], std::size_t groups) noexcept {
    detail::dot8_k<NP, true>(acc, a, lda, b, nullptr, groups);
}
#endif  // QDML_INLINE_ASM

namespace detail {
/// 8 rows x columns n0..n0+15 from acc (row r at c + 16 r, the column bias
/// included): store_rows32's arithmetic (gemm::detail::q32, the saturating
/// packs that give Q's clamps), four rows per byte register (the int32 rows
/// packed in pairs to int16, the zero point added with saturation, the pairs
/// packed to bytes, the dwords put in row order), one 16-byte store per row.
template <bool PerColumn, bool Clamp, bool SameZp>
void rows16(const Epilogue& e, std::size_t m0, std::size_t n0, const std::int32_t* c) noexcept {
    const bool is_signed = e.out_lo < 0;
    const std::size_t count = std::min<std::size_t>(16, e.N - n0);
    const auto mask = static_cast<__mmask16>((1u << count) - 1u);
    const __m512 cm = _mm512_load_ps(e.col_mult.data() + n0);
    const RowParams* rp = e.rows.data() + m0;
    const std::uint64_t rs = e.out_rs;
    const __m512i zp = _mm512_set1_epi16(static_cast<short>(rp[0].zp));  // (SameZp: every row's)
    // Rows r, r + 1 as int16 with their zero points: per 128-bit lane l, (r, 4l..4l+3) then (r + 1, 4l..).
    const auto words = [&](int r) {
        const __m512i w = _mm512_packs_epi32(gemm::detail::q32<PerColumn, Clamp>(rp[r], c + 16 * r, cm),
                                             gemm::detail::q32<PerColumn, Clamp>(rp[r + 1], c + 16 * r + 16, cm));
        return _mm512_adds_epi16(w, SameZp ? zp
                                           : _mm512_maskz_unpacklo_epi64(0xff, _mm512_set1_epi16(static_cast<short>(rp[r].zp)),
                                                                   _mm512_set1_epi16(static_cast<short>(rp[r + 1].zp))));
    };
    // dword order after the byte pack: per lane l, rows r..r+3 of columns 4l..4l+3; into row order.
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    std::uint8_t* out = e.out + m0 * rs + n0;
    for (int r = 0; r < 8; r += 4, out += 4 * rs) {
        const __m512i w0 = words(r), w1 = words(r + 2);
        const __m512i bytes =
            _mm512_maskz_permutexvar_epi32(0xffff, order, is_signed ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1));
        // (The all-lanes maskz extracts: g++ 12 warns -Wmaybe-uninitialized inside the plain ones.)
        const __m128i row0 = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 0), row1 = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 1);
        const __m128i row2 = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 2), row3 = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 3);
        if (count == 16) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out), row0);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + rs), row1);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * rs), row2);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * rs), row3);
        } else {
            _mm_mask_storeu_epi8(out, mask, row0);
            _mm_mask_storeu_epi8(out + rs, mask, row1);
            _mm_mask_storeu_epi8(out + 2 * rs, mask, row2);
            _mm_mask_storeu_epi8(out + 3 * rs, mask, row3);
        }
    }
}
}  // namespace detail

/// Rows m0..m0+7 times panels p..p+NP-1: dot8 (A packed, or in place
/// where pack_left left it: PackedLeft::borrowed), then in the common case
/// (packed_store) the accumulators start from the column bias and go
/// through store_rows32 (panels 0-1) and rows16 (a third or a lone panel):
/// half the vector operations of store16 per 16 outputs; else store16.
template <int NP>
void store8(const Epilogue& e, std::size_t m0, std::size_t p, bool packed,
                               const std::int32_t* init, const std::int32_t (&acc)[NP][8][16]);

/// Whether store8 stores int32 sums directly (int32_out with uniform zero
/// points and contiguous output rows): the accumulators, started from the
/// column bias, plus each row's bias, by one masked store per 16 outputs.
inline bool int32_store(const Epilogue& e) noexcept {
    return e.int32_out && !(e.var_a || e.var_b || e.out_cs != 1);
}

/// The accumulators' initial values per panel: in the common case
/// (packed_store), the DirectML store's and the direct int32 store's the
/// column bias, else zeros.
inline const std::int32_t* tile8_init(const Epilogue& e, std::size_t p, bool packed) noexcept {
    alignas(64) static constexpr std::int32_t kZero[3 * kPanel] = {};
    return packed || directml_store(e) || int32_store(e)
               ? reinterpret_cast<const std::int32_t*>(e.col_bias.data()) + p * kPanel
               : kZero;
}

template <int NP>
void tile8(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                              std::size_t p) {
    alignas(64) std::int32_t acc[NP][8][16];
    const bool packed = packed_store(e);
    const std::int8_t* panel[NP];
    for (int j = 0; j < NP; ++j) panel[j] = b.panel(p + j);
    const std::int32_t* init = tile8_init(e, p, packed);
    dot8<NP>(acc, {a.rows(m0), m0 < a.borrowed_rows ? a.borrowed_stride : 0}, panel, init, b.groups);
    store8<NP>(e, m0, p, packed, init, acc);
}

/// A run of the left operand's K read in place: `groups` k groups (4 bytes
/// each) from `offset` bytes after each row's start, against the right
/// operand's groups from `group` on.
struct KRun {
    std::size_t offset = 0, group = 0, groups = 0;
};

/// tile8 for 8 rows read in place (row r at a + r * lda) whose K is cut
/// into runs (the NHWC convolution's patch segments): one dot8 from the
/// initial values, then dot8_chain per further run, then store8.
template <int NP>
void tile8_runs(const std::uint8_t* a, std::size_t lda, const KRun* runs, std::size_t count,
                                   const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t p) {
    alignas(64) std::int32_t acc[NP][8][16];
    const bool packed = packed_store(e);
    const std::int32_t* init = tile8_init(e, p, packed);
    for (std::size_t r = 0; r < count; ++r) {
        const std::int8_t* panel[NP];
        for (int j = 0; j < NP; ++j) panel[j] = b.panel(p + j) + runs[r].group * 64;
        if (r == 0)
            dot8<NP>(acc, {a + runs[r].offset, lda}, panel, init, runs[r].groups);
        else
            dot8_chain<NP>(acc, a + runs[r].offset, lda, panel, runs[r].groups);
    }
    store8<NP>(e, m0, p, packed, init, acc);
}

/// Stores tile8's accumulators (which started from `init`).
template <int NP>
void store8(const Epilogue& e, std::size_t m0, std::size_t p, bool packed,
                               const std::int32_t* init, const std::int32_t (&acc)[NP][8][16]) {
    const std::size_t n0 = p * kPanel;
    if (!packed && directml_store(e)) {  // (the accumulators started from the column bias: tile8_init)
        for (int j = 0; j < NP; ++j) store_rows16_directml(e, m0, 8, n0 + j * kPanel, acc[j][0]);
        return;
    }
    if (int32_store(e)) {  // acc = dot + col_bias (tile8_init) + the row's bias, wrapped: the int32 store
        __mmask16 mask[NP];
        for (int j = 0; j < NP; ++j) {
            const std::size_t n = n0 + j * kPanel, count = n < e.N ? std::min<std::size_t>(16, e.N - n) : 0;
            mask[j] = static_cast<__mmask16>((1u << count) - 1u);
        }
        for (int r = 0; r < 8; ++r) {
            const __m512i bias = _mm512_set1_epi32(static_cast<int>(e.row(m0 + r).bias));
            for (int j = 0; j < NP; ++j)
                _mm512_mask_storeu_epi32(e.element(m0 + r, n0 + j * kPanel), mask[j],
                                         _mm512_add_epi32(_mm512_load_si512(acc[j][r]), bias));
        }
        return;
    }
    if (packed && (NP == 1 || store_rows32(e, m0, 8, n0, acc[0][0], acc[1 % NP][0]))) {
        if constexpr (NP != 2) {
            const std::int32_t* last = acc[NP - 1][0];
            const std::size_t nl = n0 + (NP - 1) * kPanel;
            const auto run = [&](auto same_zp) {
                constexpr bool Z = decltype(same_zp)::value;
                if (e.mode == MultMode::PerColumn)
                    e.cols_small ? detail::rows16<true, false, Z>(e, m0, nl, last) : detail::rows16<true, true, Z>(e, m0, nl, last);
                else
                    e.rows_small ? detail::rows16<false, false, Z>(e, m0, nl, last) : detail::rows16<false, true, Z>(e, m0, nl, last);
            };
            e.same_zp ? run(std::true_type{}) : run(std::false_type{});
        }
        return;
    }
    for (int r = 0; r < 8; ++r)  // (store16 adds the column bias itself)
        for (int j = 0; j < NP; ++j)
            store16(e, m0 + r, n0 + j * kPanel,
                    _mm512_sub_epi32(_mm512_load_si512(acc[j][r]), _mm512_load_si512(init + j * kPanel)));
}

namespace detail {
/// acc[r][j] = rows r of A's MR (Groups4, 4 MR bytes per group from pa) .
/// panels j of NP (64 bytes per group from pb, `stride` bytes apart), over
/// `groups` groups.
template <int MR, int NP>
QDML_ALWAYS_INLINE inline void tile_k(__m512i (&acc)[MR][NP], const std::uint8_t* pa, const std::int8_t* pb,
                                      std::size_t stride, std::size_t groups) noexcept {
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_si512();
    for (std::size_t g = 0; g < groups; ++g, pa += 4 * MR, pb += 64) {
        __m512i vb[NP];
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) {
            vb[j] = _mm512_load_si512(pb + j * stride);
            _mm_prefetch(reinterpret_cast<const char*>(pb + j * stride + kPrefetch), _MM_HINT_T0);
        }
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) row<NP>(acc[r], pa + 4 * r, vb);
    }
}

#if !QDML_INLINE_ASM
/// tile_k out of line, its sums stored to `out`: inlined into tile's
/// epilogue, g++ 12 copied every accumulator twice per vpdpbusd of the
/// intrinsic (2 MR NP vmovdqa64 per group: objdump of the noasm build).
template <int MR, int NP>
QDML_NOINLINE void tile_k_out(std::int32_t (&out)[MR][NP][16], const std::uint8_t* pa, const std::int8_t* pb,
                              std::size_t stride, std::size_t groups) noexcept {
    __m512i acc[MR][NP];
    tile_k<MR, NP>(acc, pa, pb, stride, groups);
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) _mm512_store_si512(out[r][j], acc[r][j]);
}
#endif
}  // namespace detail

template <int MR, int NP>
void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                             std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    const std::size_t stride = b.groups * 64;  // bytes between panels
    __m512i acc[MR][NP];
#if QDML_INLINE_ASM
    detail::tile_k<MR, NP>(acc, pa, pb, stride, b.groups);
#else
    alignas(64) std::int32_t sums[MR][NP][16];
    detail::tile_k_out<MR, NP>(sums, pa, pb, stride, b.groups);
    QDML_UNROLL
    for (int r = 0; r < MR; ++r)
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_load_si512(sums[r][j]);
#endif
    if (!e.common_store()) {
        QDML_UNROLL
        for (int r = 0; r < MR; ++r)
            QDML_UNROLL
            for (int j = 0; j < NP; ++j) store16(e, m0 + r, (p + j) * kPanel, acc[r][j]);
        return;
    }
    // The common case (uniform zero points, per-column multiplier, contiguous
    // output rows) without store16's tests per 16 outputs: each row's
    // constants broadcast once for its NP panels; the same arithmetic.
    // (The epilogue's fields read into locals first: the byte stores may alias them.)
    const std::uint32_t* col_bias = e.col_bias.data() + p * kPanel;
    const float* col_mult = e.col_mult.data() + p * kPanel;
    const RowParams* rows = e.rows.data() + m0;
    const std::uint64_t out_rs = e.out_rs;
    std::uint8_t* out = e.out + m0 * out_rs + p * kPanel;
    __mmask16 mask[NP];
    QDML_UNROLL
    for (int j = 0; j < NP; ++j) {
        const std::size_t n0 = (p + j) * kPanel, count = e.N - n0 < kPanel ? e.N - n0 : kPanel;
        mask[j] = static_cast<__mmask16>((1u << count) - 1u);
    }
    QDML_UNROLL
    for (int r = 0; r < MR; ++r, out += out_rs) {
        const RowParams& rp = rows[r];
        const __m512i bias = _mm512_set1_epi32(static_cast<int>(rp.bias)), zp = _mm512_set1_epi32(rp.zp);
        const __m512 lo = _mm512_set1_ps(rp.lo), hi = _mm512_set1_ps(rp.hi);
        QDML_UNROLL
        for (int j = 0; j < NP; ++j) {
            const __m512i v = _mm512_add_epi32(_mm512_add_epi32(acc[r][j], bias), _mm512_load_si512(col_bias + j * kPanel));
            const __m512i q = requantize16(v, _mm512_load_ps(col_mult + j * kPanel), lo, hi, zp);
            _mm512_mask_cvtepi32_storeu_epi8(out + j * kPanel, mask[j], q);
        }
    }
}

}  // namespace qdml::simd::gemm::avx512vnni
// The tiles, compiled once in a program that says so (QDML_EXTERN_GEMM_KERNELS
// and QDML_INSTANTIATE_GEMM_KERNELS: runtime/dispatch.hpp): every GEMM
// operator's dispatch calls the same ones.
#define QDML_DETAIL_AVX512VNNI_TILE(EXT, MR, NP) \
    EXT template void qdml::simd::gemm::avx512vnni::tile<MR, NP>(QDML_DETAIL_GEMM_TILE_PARAMS);
#define QDML_DETAIL_AVX512VNNI_TILE8(EXT, NP)                                                   \
    EXT template void qdml::simd::gemm::avx512vnni::tile8<NP>(QDML_DETAIL_GEMM_TILE_PARAMS);    \
    EXT template void qdml::simd::gemm::avx512vnni::tile8_runs<NP>(                             \
        const std::uint8_t*, std::size_t, const qdml::simd::gemm::avx512vnni::KRun*, std::size_t, \
        const qdml::simd::gemm::PackedRight&, const qdml::simd::gemm::Epilogue&, std::size_t, std::size_t);
#define QDML_DETAIL_AVX512VNNI_ROWS(EXT, MR) \
    QDML_DETAIL_AVX512VNNI_TILE(EXT, MR, 1) QDML_DETAIL_AVX512VNNI_TILE(EXT, MR, 2) QDML_DETAIL_AVX512VNNI_TILE(EXT, MR, 3)
#define QDML_DETAIL_AVX512VNNI_TILES(EXT)                                                                          \
    QDML_DETAIL_AVX512VNNI_ROWS(EXT, 1) QDML_DETAIL_AVX512VNNI_ROWS(EXT, 2) QDML_DETAIL_AVX512VNNI_ROWS(EXT, 3)      \
    QDML_DETAIL_AVX512VNNI_ROWS(EXT, 4) QDML_DETAIL_AVX512VNNI_ROWS(EXT, 5) QDML_DETAIL_AVX512VNNI_ROWS(EXT, 6)      \
    QDML_DETAIL_AVX512VNNI_ROWS(EXT, 7) QDML_DETAIL_AVX512VNNI_ROWS(EXT, 8) QDML_DETAIL_AVX512VNNI_TILE(EXT, 1, 4)   \
    QDML_DETAIL_AVX512VNNI_TILE8(EXT, 1) QDML_DETAIL_AVX512VNNI_TILE8(EXT, 2) QDML_DETAIL_AVX512VNNI_TILE8(EXT, 3)
static_assert(qdml::simd::gemm::avx512vnni::kRows == 8 && qdml::simd::gemm::avx512vnni::kPanels == 3 &&
                  qdml::simd::gemm::avx512vnni::kRowPanels == 4,
              "QDML_DETAIL_AVX512VNNI_TILES lists the tiles of these sizes");
#if defined(QDML_EXTERN_GEMM_KERNELS)
QDML_DETAIL_AVX512VNNI_TILES(extern)
#endif
namespace qdml::simd::gemm::avx512vnni {

/// Rows m0..m0+mr-1 (mr <= kRows) times panels p..p+np-1 (np <= kPanels;
/// kRowPanels for one row).
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p, std::size_t np) {
    if (mr == 1 && np == kRowPanels) return tile<1, kRowPanels>(a, b, e, m0, p);
    if (mr == 8 && np == 3) return tile8<3>(a, b, e, m0, p);
    if (mr == 8 && np == 2) return tile8<2>(a, b, e, m0, p);
    if (mr == 8 && np == 1) return tile8<1>(a, b, e, m0, p);  // (whole blocks may be read in place: dot8 only)
    with_count<kRows>(mr, [&](auto rows) {
        constexpr int R = decltype(rows)::value;
        with_count<kPanels>(np, [&](auto panels) { tile<R, decltype(panels)::value>(a, b, e, m0, p); });
    });
}

/// Rows m0..m0+mr-1 (1 < mr <= kRows) times panels p0..p1-1, kPanels per
/// call; four left are split 2 + 2 rather than 3 + 1 (one panel alone has
/// 8 accumulators: the vpdpbusd latency, not its throughput, bounds it).
inline void panels(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                   std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1;) {
        const std::size_t left = p1 - p, np = left == 4 ? 2 : std::min<std::size_t>(kPanels, left);
        tiles(a, b, e, m0, mr, p, np);
        p += np;
    }
}

}  // namespace qdml::simd::gemm::avx512vnni
QDML_REGION_END
#endif  // QDML_X86
