// qdml/simd/gemm/kernel_amx.hpp - AMX-INT8 micro-kernel: up to 2x2 tiles of
// 16x16 int32 (tmm0-3), A tiles of 16 rows x 64 bytes from the Rows layout
// (tmm4-5), B tiles of 16 groups x 64 bytes straight from a panel (tmm6-7),
// tdpbusd (u8 x s8, int32 accumulation without saturation). The tiles are
// stored to a 4 KiB buffer and requantized with the AVX-512 epilogue.
// Compiles to nothing off x86-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_GEMM_X86
namespace qdml::simd::gemm::amx {

inline constexpr int kRows = 32;  ///< rows per block (Rows layout, padded to 16)
inline constexpr LeftLayout kLayout = LeftLayout::Rows;

/// Loads the tile configuration (palette 1, eight 16 x 64-byte tiles) for
/// this thread; release() gives the tile state back.
QDML_TARGET_AMX inline void configure() noexcept {
    alignas(64) std::uint8_t cfg[64] = {};
    cfg[0] = 1;  // palette
    for (int t = 0; t < 8; ++t) {
        const std::uint16_t colsb = 64;
        std::memcpy(cfg + 16 + 2 * t, &colsb, 2);
        cfg[48 + t] = 16;
    }
    // ldtilecfg written out: g++ 12's _tile_loadconfig tells the compiler it
    // reads 8 bytes only, so the stores above could be dropped.
    __asm__ volatile("ldtilecfg %0" : : "m"(*reinterpret_cast<const std::uint8_t(*)[64]>(cfg)));
}

QDML_TARGET_AMX inline void release() noexcept { _tile_release(); }

template <int TM, int TN>
QDML_TARGET_AMX void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                          std::size_t p) {
    const std::size_t stride = a.groups * 4;  // bytes per packed row
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb0 = b.panel(p);
    const std::int8_t* pb1 = TN == 2 ? b.panel(p + 1) : pb0;
    _tile_zero(0);
    if constexpr (TN == 2) _tile_zero(1);
    if constexpr (TM == 2) _tile_zero(2);
    if constexpr (TM == 2 && TN == 2) _tile_zero(3);
    for (std::size_t g = 0; g < a.groups; g += 16) {
        _tile_loadd(4, pa + 4 * g, stride);
        _tile_loadd(6, pb0 + 64 * g, 64);
        _tile_dpbusd(0, 4, 6);
        if constexpr (TN == 2) {
            _tile_loadd(7, pb1 + 64 * g, 64);
            _tile_dpbusd(1, 4, 7);
        }
        if constexpr (TM == 2) {
            _tile_loadd(5, pa + 16 * stride + 4 * g, stride);
            _tile_dpbusd(2, 5, 6);
            if constexpr (TN == 2) _tile_dpbusd(3, 5, 7);
        }
    }
    alignas(64) std::int32_t c[2][2][16][16];
    _tile_stored(0, c[0][0], 64);
    if constexpr (TN == 2) _tile_stored(1, c[0][1], 64);
    if constexpr (TM == 2) _tile_stored(2, c[1][0], 64);
    if constexpr (TM == 2 && TN == 2) _tile_stored(3, c[1][1], 64);
    for (int i = 0; i < 16 * TM; ++i) {
        const std::size_t m = m0 + static_cast<std::size_t>(i);
        if (m >= e.M) break;
        for (int j = 0; j < TN; ++j) store16(e, m, (p + j) * kPanel, _mm512_load_si512(c[i / 16][j][i % 16]));
    }
}

/// Rows m0..m0+mr-1 (mr <= 32) times panels p..p+np-1 (np <= 2).
QDML_TARGET_AMX inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                                  std::size_t mr, std::size_t p, std::size_t np) {
    if (mr > 16) {
        if (np == 2) return tile<2, 2>(a, b, e, m0, p);
        return tile<2, 1>(a, b, e, m0, p);
    }
    if (np == 2) return tile<1, 2>(a, b, e, m0, p);
    return tile<1, 1>(a, b, e, m0, p);
}

}  // namespace qdml::simd::gemm::amx
#endif
