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

/// acc[j] += broadcast(a's dword) . b[j] for the NP panels, in one asm
/// statement with its own broadcast register.
template <int NP>
QDML_TARGET_AVX512 inline void row(__m512i (&acc)[NP], const std::uint8_t* a, const __m512i (&b)[NP]) noexcept {
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
        for (int r = 0; r < MR; ++r) row<NP>(acc[r], pa + 4 * r, vb);
    }
    if (e.var_a || e.var_b || e.mode != MultMode::PerColumn || e.out_cs != 1) {
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
#endif
