// qdml/simd/gemm/kernel_ymm.hpp - the 256-bit micro-kernel skeleton of the
// AVX2 and AVX-VNNI kernels: MR rows x one 16-column panel, two ymm
// accumulators per row (columns 0-7, 8-15). Per k group the panel's 64 bytes
// (128 widened) are loaded (and prepared) once for all MR rows; the dot step of each row
// is the kernel's own (`Dot`). Compiles to nothing off x86-64.
//
// A Dot provides:
//   kUnit                    bytes of the left operand per row and k group
//   kGroupBytes              bytes of the panel per k group (64; AVX2's wide panels 128)
//   Panel                    one k group of the panel, as the step reads it
//   Panel load(const int8*)  from the group's packed bytes
//   step(acc, a, panel)      acc[0..1] += row a's group . panel
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::ymm {

template <class Dot, int MR>
QDML_TARGET_AVX2 void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                           std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    __m256i acc[MR][2];
    QDML_UNROLL
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    // Two groups per iteration: fewer loop uops on the vector ports (AVX2:
    // 1024^3 ~4% faster with 32 registers, ~15% with 16).
#if defined(__clang__)
    _Pragma("unroll 2")
#else
    _Pragma("GCC unroll 2")
#endif
    for (std::size_t g = 0; g < b.groups; ++g, pa += Dot::kUnit * MR, pb += Dot::kGroupBytes) {
        const typename Dot::Panel vb = Dot::load(pb);
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) Dot::step(acc[r], pa + Dot::kUnit * r, vb);
    }
    // Stored row by row from here (passing the accumulator array by reference
    // to a helper made g++ 12 keep it in memory and store it every k group).
    QDML_UNROLL
    for (int r = 0; r < MR; ++r) {
        store8(e, m0 + r, p * kPanel, acc[r][0]);
        if (p * kPanel + 8 < e.N) store8(e, m0 + r, p * kPanel + 8, acc[r][1]);
    }
}

/// Rows m0..m0+mr-1 (mr <= Rows) times panel p.
template <class Dot, int Rows>
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
    with_count<Rows>(mr, [&](auto rows) { tile<Dot, decltype(rows)::value>(a, b, e, m0, p); });
}

}  // namespace qdml::simd::gemm::ymm
#endif
