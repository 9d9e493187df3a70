// qdml/simd/x86/amx/gemm_kernel.hpp - AMX-INT8 micro-kernel and its loops: blocks
// of up to 32 rows x 32 columns as 2x2 tiles of 16x16 int32 (tmm0-3), A tiles
// of 16 rows x 64 bytes from the Rows layout (tmm4-5), B tiles of 16 groups x
// 64 bytes straight from a panel (tmm6-7), tdpbusd (u8 x s8, int32
// accumulation without saturation). A block's tiles go to a 4 KiB buffer and
// through the AVX-512 epilogue while the tile unit computes the next block:
// the stores are spread over the next block's K steps (software pipelining;
// the epilogue's vector work and the tile unit's dot products overlap).
// Compiles to nothing off x86-64.
//
// Testing aid: a build that defines QDML_GEMM_TEST_AMX_EMULATION (the GEMM
// engine's test programs do: tests/meson.build) compiles this file in an AVX2 region,
// its tile instructions calls that run them emulated in plain C++ where the
// CPU has no AMX (x86/amx/emulation.hpp), and counts the path available on
// every CPU with AVX2 (isa.hpp); without AVX-512 VNNI its epilogue is then
// the AVX2 store. Library users never define it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "qdml/simd/x86/avx512vnni/store.hpp"
#if defined(QDML_GEMM_TEST_AMX_EMULATION)
#include "qdml/simd/x86/amx/emulation.hpp"
#include "qdml/simd/x86/avx2/store.hpp"
#endif

#if QDML_X86 && defined(_WIN32) && defined(__GNUC__) && !defined(__clang__) && defined(_tile_loadd_internal)
// MinGW-w64: GCC 12's <amxtileintrin.h> passes the tile load's and store's
// stride to its asm as a `long`, 32 bits on Windows (LLP64), so the
// assembler is given (%rcx,%edx,1), an invalid address, and nothing that
// includes the AMX kernel compiles (later GCCs cast to __PTRDIFF_TYPE__).
// The same three macros with the stride as a 64-bit `long long` (the
// instruction's index register). Not for clang: its tile intrinsics are
// builtins.
#undef _tile_loadd_internal
#undef _tile_stream_loadd_internal
#undef _tile_stored_internal
#define _tile_loadd_internal(dst, base, stride)                                                                \
    __asm__ volatile("{tileloadd\t(%0,%1,1), %%tmm" #dst "|tileloadd\t%%tmm" #dst ", [%0+%1*1]}"             \
                     : : "r"((const void*)(base)), "r"((long long)(stride)))
#define _tile_stream_loadd_internal(dst, base, stride)                                                         \
    __asm__ volatile("{tileloaddt1\t(%0,%1,1), %%tmm" #dst "|tileloaddt1\t%%tmm" #dst ", [%0+%1*1]}"         \
                     : : "r"((const void*)(base)), "r"((long long)(stride)))
#define _tile_stored_internal(src, base, stride)                                                               \
    __asm__ volatile("{tilestored\t%%tmm" #src ", (%0,%1,1)|tilestored\t[%0+%1*1], %%tmm" #src "}"           \
                     : : "r"((void*)(base)), "r"((long long)(stride)) : "memory")
#endif

#if QDML_X86
#if defined(QDML_GEMM_TEST_AMX_EMULATION)  // (testing aid: the tile instructions through emulation.hpp)
QDML_REGION_AVX2
#define QDML_AMX_TILE_ZERO(t) emulation::tile_zero<t>()
#define QDML_AMX_TILE_LOADD(t, base, stride) emulation::tile_load<t>(base, stride)
#define QDML_AMX_TILE_STREAM_LOADD(t, base, stride) emulation::tile_stream_load<t>(base, stride)
#define QDML_AMX_TILE_STORED(t, base, stride) emulation::tile_store<t>(base, stride)
#define QDML_AMX_TILE_DPBUSD(c, a, b) emulation::tile_dpbusd<c, a, b>()
#else
QDML_REGION_AMX
#define QDML_AMX_TILE_ZERO(t) _tile_zero(t)
#define QDML_AMX_TILE_LOADD(t, base, stride) _tile_loadd(t, base, stride)
#define QDML_AMX_TILE_STREAM_LOADD(t, base, stride) _tile_stream_loadd(t, base, stride)
#define QDML_AMX_TILE_STORED(t, base, stride) _tile_stored(t, base, stride)
#define QDML_AMX_TILE_DPBUSD(c, a, b) _tile_dpbusd(c, a, b)
#endif
namespace qdml::simd::gemm::amx {

inline constexpr int kRows = 32;  ///< rows per block (Rows layout, padded to 16)
inline constexpr LeftLayout kLayout = LeftLayout::Rows;

/// Whether this thread's tile configuration is loaded (by a Session, gemm.hpp).
inline bool& configured() noexcept {
    static thread_local bool c = false;
    return c;
}

/// The tile configuration: palette 1, eight tiles of 16 rows x 64 bytes
/// (bytes 16 + 2t: tile t's bytes per row, little-endian; 48 + t: its rows).
alignas(64) inline constexpr std::uint8_t kTileConfig[64] = {
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    16, 16, 16, 16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};

/// Loads the tile configuration for this thread; release() gives the tile
/// state back. (A constant: g++ 12's _tile_loadconfig tells the compiler
/// it reads 8 bytes only, so stores that built it could be dropped.)
inline void configure() noexcept {
#if defined(QDML_GEMM_TEST_AMX_EMULATION)
    emulation::tile_load_config(kTileConfig);
#else
    _tile_loadconfig(kTileConfig);
#endif
}

#if defined(QDML_GEMM_TEST_AMX_EMULATION)
inline void release() noexcept { emulation::tile_release(); }
#else
inline void release() noexcept { _tile_release(); }
#endif

/// The last block's dot products, waiting for the epilogue `e`: in one of
/// two buffers, the next block's tiles going to the other (its stores then
/// never wait for the loads of the epilogue still reading this one).
struct Pending {
    alignas(64) std::int32_t buffers[2][2][2][16][16];  ///< [buffer][row tile][column tile][row][column]
    std::int32_t (*c)[2][16][16] = buffers[0];          ///< the pending block's
    const Epilogue* e = nullptr;
    std::size_t m0 = 0, rows = 0, n0 = 0, tn = 0;
    std::size_t done = 0;  ///< rows already stored (done == rows: nothing pending)
};

#if defined(QDML_GEMM_TEST_AMX_EMULATION)
/// store_rows16 (dot products without the column bias) by the AVX2 store:
/// the epilogue of the testing aid on a CPU without AVX-512 VNNI.
inline void store_rows16_avx2(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                              const std::int32_t* c) noexcept {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t h = 0; h < 16 && n0 + h < e.N; h += 8)
            store8(e, m0 + r, n0 + h, _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 16 * r + h)));
}
#endif

/// Stores the pending block's rows up to `to` (exclusive) through its epilogue.
inline void drain(Pending& pd, std::size_t to) noexcept {
    to = std::min(to, pd.rows);
    const Epilogue& e = *pd.e;
    while (pd.done < to) {
        const std::size_t t = pd.done / 16, r = pd.done % 16, n = std::min(to - pd.done, 16 - r);
#if defined(QDML_GEMM_TEST_AMX_EMULATION)
        if (!isa_available(Isa::Avx512Vnni)) {
            for (std::size_t j = 0; j < pd.tn; ++j) store_rows16_avx2(e, pd.m0 + pd.done, n, pd.n0 + 16 * j, pd.c[t][j][r]);
            pd.done += n;
            continue;
        }
#endif
        if (pd.tn < 2 || !store_rows32(e, pd.m0 + pd.done, n, pd.n0, pd.c[t][0][r], pd.c[t][1][r], false))
            for (std::size_t j = 0; j < pd.tn; ++j)
                store_rows16(e, pd.m0 + pd.done, n, pd.n0 + 16 * j, pd.c[t][j][r], false);
        pd.done += n;
    }
}

/// Rows m0..m0+rows-1 (16 * TM rows of A, the last ones maybe padding) times
/// panels p..p+TN-1 over `steps` K steps of 16 groups: at step i, row tile t
/// (0, 1) starts at a_of(t, i), its rows stride[t] bytes apart, and the B
/// tiles at group 16 i of each panel. The previous block's epilogue runs
/// between the K steps, this block's is left pending. (tile() reads A
/// packed or in place; the convolution's NHWC form reads the input's
/// padded NHWC copy in place, conv/nhwc.hpp.) The accumulators start from
/// tilezero and the epilogue adds the column bias (store_rows32 /
/// store_rows16 with has_col_bias false): starting them from the bias by
/// four stride-0 tile loads per block cost 1024^3 about 8% (A/B, 00:30 UTC
/// 2026-11-24) and gained nothing measurable at 64^3 or 256^3.
template <int TM, int TN, class AOf>
void tile_steps(AOf a_of, const std::size_t (&stride)[2], std::size_t steps, const PackedRight& b,
                                const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t p, Pending& pd) {
    const std::int8_t* pb0 = b.panel(p);
    const std::int8_t* pb1 = TN == 2 ? b.panel(p + 1) : pb0;
    const std::size_t per_step = (pd.rows - pd.done + steps - 1) / steps;  // pending rows per K step
    QDML_AMX_TILE_ZERO(0);
    if constexpr (TN == 2) QDML_AMX_TILE_ZERO(1);
    if constexpr (TM == 2) QDML_AMX_TILE_ZERO(2);
    if constexpr (TM == 2 && TN == 2) QDML_AMX_TILE_ZERO(3);
    for (std::size_t i = 0; i < steps; ++i) {
        QDML_AMX_TILE_LOADD(4, a_of(0, i), stride[0]);
        QDML_AMX_TILE_STREAM_LOADD(6, pb0 + 1024 * i, 64);  // tileloaddt1: B streams past A (main 280b30e)
        QDML_AMX_TILE_DPBUSD(0, 4, 6);
        if constexpr (TN == 2) {
            QDML_AMX_TILE_STREAM_LOADD(7, pb1 + 1024 * i, 64);
            QDML_AMX_TILE_DPBUSD(1, 4, 7);
        }
        if constexpr (TM == 2) {
            QDML_AMX_TILE_LOADD(5, a_of(1, i), stride[1]);
            QDML_AMX_TILE_DPBUSD(2, 5, 6);
            if constexpr (TN == 2) QDML_AMX_TILE_DPBUSD(3, 5, 7);
        }
        if (pd.done < pd.rows) drain(pd, pd.done + per_step);
    }
    auto c = pd.c == pd.buffers[0] ? pd.buffers[1] : pd.buffers[0];
    QDML_AMX_TILE_STORED(0, c[0][0], 64);
    if constexpr (TN == 2) QDML_AMX_TILE_STORED(1, c[0][1], 64);
    if constexpr (TM == 2) QDML_AMX_TILE_STORED(2, c[1][0], 64);
    if constexpr (TM == 2 && TN == 2) QDML_AMX_TILE_STORED(3, c[1][1], 64);
    pd.c = c;
    pd.e = &e;
    pd.m0 = m0;
    pd.rows = rows;
    pd.n0 = p * kPanel;
    pd.tn = TN;
    pd.done = 0;
}

/// tile_steps over the left operand (a tile row per 64 bytes of K).
template <int TM, int TN>
void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                          std::size_t rows, std::size_t p, Pending& pd) {
    const std::uint8_t* pa[2] = {a.rows(m0), TM == 2 ? a.rows(m0 + 16) : a.rows(m0)};  // the two row tiles
    const std::size_t stride[2] = {a.row_bytes(m0), TM == 2 ? a.row_bytes(m0 + 16) : a.row_bytes(m0)};
    tile_steps<TM, TN>([&pa](int t, std::size_t i) { return pa[t] + 64 * i; }, stride, a.groups / 16, b, e, m0, rows,
                       p, pd);
}

/// Every row block of `a` times panels p0..p1-1 (the column block stays in
/// L2, a row block of A in L1); the last block's epilogue is left in `pd`
/// (drain(pd, pd.rows) finishes it).
inline void block(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t p0,
                                  std::size_t p1, Pending& pd, std::size_t m_begin, std::size_t m_end) {
    for (std::size_t m0 = m_begin; m0 < m_end; m0 += kRows) {
        const std::size_t mr = std::min<std::size_t>(kRows, m_end - m0);
        for (std::size_t p = p0; p < p1; p += 2) {
            const bool two = p1 - p >= 2;
            if (mr > 16)
                two ? tile<2, 2>(a, b, e, m0, mr, p, pd) : tile<2, 1>(a, b, e, m0, mr, p, pd);
            else
                two ? tile<1, 2>(a, b, e, m0, mr, p, pd) : tile<1, 1>(a, b, e, m0, mr, p, pd);
        }
    }
}

}  // namespace qdml::simd::gemm::amx
#undef QDML_AMX_TILE_ZERO
#undef QDML_AMX_TILE_LOADD
#undef QDML_AMX_TILE_STREAM_LOADD
#undef QDML_AMX_TILE_STORED
#undef QDML_AMX_TILE_DPBUSD
QDML_REGION_END
#endif  // QDML_X86
