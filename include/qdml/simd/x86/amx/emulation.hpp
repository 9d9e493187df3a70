// qdml/simd/x86/amx/emulation.hpp - TESTING AID, not part of the library:
// the AMX tile instructions that x86/amx/gemm_kernel.hpp uses, in plain C++,
// so that the tests run the AMX path (its packing, 32x32 blocks of 2x2
// tiles, pipelined epilogue, the convolution's AMX NHWC form) on any x86-64
// CPU with AVX2, and under the sanitizers. Only a build that defines
// QDML_GEMM_TEST_AMX_EMULATION uses it (the simd-gemm, simd-conv and
// gemm-microkernels test programs: tests/meson.build's gemm_test_args);
// library users never define it, and without it the AMX kernel compiles to
// the tile instructions themselves.
//
// Under the macro (the precedent: QDML_GEMM_TEST_AVXVNNI_EVEX,
// x86/avxvnni/gemm_kernel.hpp):
// - isa.hpp counts the AMX path available on every CPU with AVX2;
// - the AMX kernel's region is AVX2 instead of AMX + AVX-512 (a region is
//   chosen at compile time, the CPU at run time: code compiled for AVX-512
//   would fault on an AVX2 CPU), and its tile instructions are calls to
//   the functions below: the real instructions (their own AMX region) when
//   the CPU has AMX-INT8, else the emulation;
// - where the CPU has no AVX-512 VNNI, the path's AVX-512 code takes what
//   the CPU runs instead: the block epilogue the AVX2 store (store8) rather
//   than store_rows32 / store_rows16, the one-row product (M = 1) the
//   portable kernel rather than the AVX-512 VNNI row kernel, the
//   convolution's patch interleave its AVX2 form, the depthwise kernels the
//   AVX2 ones (simd::below_emulated_amx). With AVX-512 VNNI the path runs
//   its own AVX-512 code, its epilogue included.
//
// What is emulated, after the Intel SDM's pseudocode (vol. 2, "LDTILECFG",
// "TILELOADD", "TDPBUSD", ...): a thread's tile state (palette 1: 8 tiles,
// each at most 16 rows of at most 64 bytes), ldtilecfg, tilerelease,
// tilezero, tileloadd and tileloaddt1 (the same: the hint only concerns
// caches), tilestored, and tdpbusd (u8 x s8 dot products of 4 bytes added to
// int32 lanes, wrapping, no saturation). Only what the kernel executes: the
// other dot products (tdpbsud, tdpbuud, tdpbssd, tdpbf16ps) and the palette's
// partial rows (start_row) are not emulated. A use the CPU would refuse
// (#UD / #GP: tiles not configured, a bad configuration, shapes that do not
// match, the same tile twice in a dot product) stops the program with a
// message. Loads and stores touch exactly the bytes the instruction does,
// so the sanitizers check the kernel's reads past its operands (the padded
// tiles, the NHWC form's slack).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "qdml/simd/isa.hpp"

#if QDML_X86
namespace qdml::simd::gemm::amx::emulation {

inline constexpr int kTiles = 8, kMaxRows = 16, kMaxColsb = 64;

/// One thread's tile state (the architectural state ldtilecfg and
/// tilerelease set, and the tiles' rows).
struct State {
    bool configured = false;
    std::uint16_t colsb[kTiles] = {};  ///< bytes per row
    std::uint8_t rows[kTiles] = {};
    alignas(64) std::uint8_t tile[kTiles][kMaxRows][kMaxColsb] = {};
};

inline State& state() noexcept {
    static thread_local State s;
    return s;
}

/// Whether this thread's tiles run emulated: the CPU has no AMX-INT8 (or
/// the OS does not grant the tile state).
inline bool emulated() noexcept { return !simd::detail::cpu_features().amx; }

/// What the CPU would do with an invalid use: stop.
[[noreturn]] inline void fault(const char* instruction, const char* why, int t = -1) noexcept {
    std::fprintf(stderr, "qdml AMX emulation: %s%s%d: %s (the CPU raises #UD or #GP)\n", instruction,
                 t >= 0 ? " tile " : "", t, why);
    std::abort();
}

/// The tile `t` of a configured state, for `instruction`.
inline State& valid(const char* instruction, int t) noexcept {
    State& s = state();
    if (!s.configured) fault(instruction, "tiles not configured (no ldtilecfg, or after tilerelease)");
    if (t < 0 || t >= kTiles) fault(instruction, "no such tile", t);
    if (s.rows[t] == 0 || s.colsb[t] == 0) fault(instruction, "tile not configured", t);
    return s;
}

/// ldtilecfg: palette 0 (the init state, as tilerelease) or palette 1 with
/// bytes 1-15 and the entries past the 8 tiles 0, each tile 0 or 1-16 rows
/// of 1-64 bytes; the tiles are zeroed.
inline void load_config(const std::uint8_t (&cfg)[64]) noexcept {
    State& s = state();
    s = State{};
    if (cfg[0] == 0) return;
    if (cfg[0] != 1) fault("ldtilecfg", "palette not 1");
    for (int i = 1; i < 16; ++i)
        if (cfg[i] != 0) fault("ldtilecfg", "start_row or reserved bytes not 0");
    for (int t = 0; t < 16; ++t) {
        std::uint16_t colsb;
        std::memcpy(&colsb, cfg + 16 + 2 * t, 2);
        const std::uint8_t rows = cfg[48 + t];
        if (t >= kTiles) {
            if (colsb != 0 || rows != 0) fault("ldtilecfg", "a tile past the palette's 8 configured", t);
            continue;
        }
        if ((colsb == 0) != (rows == 0) || colsb > kMaxColsb || rows > kMaxRows)
            fault("ldtilecfg", "rows or bytes per row out of range", t);
        s.colsb[t] = colsb;
        s.rows[t] = rows;
    }
    s.configured = true;
}

/// tilerelease: back to the init state.
inline void release() noexcept { state() = State{}; }

/// tilezero.
inline void zero(int t) noexcept {
    std::memset(valid("tilezero", t).tile[t], 0, sizeof(State::tile[0]));
}

/// tileloadd / tileloaddt1: row r of tile t from base + r * stride (its
/// bytes per row, the rest of the tile 0).
inline void load(int t, const void* base, std::size_t stride) noexcept {
    State& s = valid("tileloadd", t);
    std::memset(s.tile[t], 0, sizeof(State::tile[0]));
    for (int r = 0; r < s.rows[t]; ++r)
        std::memcpy(s.tile[t][r], static_cast<const std::uint8_t*>(base) + r * stride, s.colsb[t]);
}

/// tilestored: row r of tile t to base + r * stride.
inline void store(int t, void* base, std::size_t stride) noexcept {
    const State& s = valid("tilestored", t);
    for (int r = 0; r < s.rows[t]; ++r)
        std::memcpy(static_cast<std::uint8_t*>(base) + r * stride, s.tile[t][r], s.colsb[t]);
}

/// tdpbusd c, a, b: c[m][n] += sum of a[m][4k + i] (u8) * b[k][4n + i] (s8)
/// over k < a's bytes per row / 4 and i < 4, in int32 lanes that wrap
/// (M = c's rows = a's rows, K = b's rows, N = c's bytes per row / 4 = b's).
inline void dpbusd(int c, int a, int b) noexcept {
    State& s = valid("tdpbusd", c);
    valid("tdpbusd", a);
    valid("tdpbusd", b);
    if (c == a || c == b || a == b) fault("tdpbusd", "the three tiles are not distinct");
    if (s.colsb[c] % 4 || s.colsb[a] % 4 || s.colsb[b] % 4) fault("tdpbusd", "bytes per row not a multiple of 4");
    if (s.rows[c] != s.rows[a] || s.colsb[a] / 4 != s.rows[b] || s.colsb[c] != s.colsb[b])
        fault("tdpbusd", "the shapes do not match (M, K or N)");
    const int M = s.rows[c], K = s.rows[b], N = s.colsb[c] / 4;
    for (int m = 0; m < M; ++m) {
        std::uint32_t acc[kMaxColsb / 4];
        std::memcpy(acc, s.tile[c][m], sizeof(acc));
        for (int k = 0; k < K; ++k)
            for (int n = 0; n < N; ++n)
                for (int i = 0; i < 4; ++i)
                    acc[n] += static_cast<std::uint32_t>(std::int32_t{s.tile[a][m][4 * k + i]} *
                                                         std::int32_t{static_cast<std::int8_t>(s.tile[b][k][4 * n + i])});
        std::memcpy(s.tile[c][m], acc, sizeof(acc));
        std::memset(s.tile[c][m] + s.colsb[c], 0, kMaxColsb - s.colsb[c]);
    }
}

}  // namespace qdml::simd::gemm::amx::emulation

// The real instructions, for the build with the emulation on a CPU that
// has AMX: out of line, in their own region (the tile registers keep their
// values across the calls, as across any code that does not use them).
// With QDML_INLINE_ASM written out; else the intrinsics, whose tile numbers
// must be literals (g++ pastes them into the instruction's text): one case
// per tile the kernel uses.
QDML_REGION_AMX
namespace qdml::simd::gemm::amx::emulation::hardware {
#if QDML_INLINE_ASM
inline void load_config(const std::uint8_t (&cfg)[64]) noexcept { __asm__ volatile("ldtilecfg %0" : : "m"(cfg)); }
inline void release() noexcept { __asm__ volatile("tilerelease"); }
template <int T>
void zero() noexcept {
    __asm__ volatile("tilezero %%tmm%c0" : : "i"(T));
}
template <int T>
void load(const void* base, std::size_t stride) noexcept {
    __asm__ volatile("tileloadd (%0,%1,1), %%tmm%c2" : : "r"(base), "r"(stride), "i"(T) : "memory");
}
template <int T>
void stream_load(const void* base, std::size_t stride) noexcept {
    __asm__ volatile("tileloaddt1 (%0,%1,1), %%tmm%c2" : : "r"(base), "r"(stride), "i"(T) : "memory");
}
template <int T>
void store(void* base, std::size_t stride) noexcept {
    __asm__ volatile("tilestored %%tmm%c2, (%0,%1,1)" : : "r"(base), "r"(stride), "i"(T) : "memory");
}
template <int C, int A, int B>
void dpbusd() noexcept {
    __asm__ volatile("tdpbusd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
}
#else
/// F(t) for the literal t == T (tiles 0-7).
#define QDML_AMX_LITERAL(T, F)                                                                                 \
    if constexpr (T == 0) F(0);                                                                                \
    else if constexpr (T == 1) F(1);                                                                           \
    else if constexpr (T == 2) F(2);                                                                           \
    else if constexpr (T == 3) F(3);                                                                           \
    else if constexpr (T == 4) F(4);                                                                           \
    else if constexpr (T == 5) F(5);                                                                           \
    else if constexpr (T == 6) F(6);                                                                           \
    else if constexpr (T == 7) F(7)
inline void load_config(const std::uint8_t (&cfg)[64]) noexcept { _tile_loadconfig(cfg); }
inline void release() noexcept { _tile_release(); }
template <int T>
void zero() noexcept {
#define QDML_AMX_ZERO(t) _tile_zero(t)
    QDML_AMX_LITERAL(T, QDML_AMX_ZERO);
#undef QDML_AMX_ZERO
}
template <int T>
void load(const void* base, std::size_t stride) noexcept {
#define QDML_AMX_LOAD(t) _tile_loadd(t, base, stride)
    QDML_AMX_LITERAL(T, QDML_AMX_LOAD);
#undef QDML_AMX_LOAD
}
template <int T>
void stream_load(const void* base, std::size_t stride) noexcept {
#define QDML_AMX_STREAM_LOAD(t) _tile_stream_loadd(t, base, stride)
    QDML_AMX_LITERAL(T, QDML_AMX_STREAM_LOAD);
#undef QDML_AMX_STREAM_LOAD
}
template <int T>
void store(void* base, std::size_t stride) noexcept {
#define QDML_AMX_STORE(t) _tile_stored(t, base, stride)
    QDML_AMX_LITERAL(T, QDML_AMX_STORE);
#undef QDML_AMX_STORE
}
/// tdpbusd C, A, B for the kernel's four (C, A, B).
template <int C, int A, int B>
void dpbusd() noexcept {
    static_assert((C == 0 && A == 4 && B == 6) || (C == 1 && A == 4 && B == 7) || (C == 2 && A == 5 && B == 6) ||
                      (C == 3 && A == 5 && B == 7),
                  "the AMX kernel's tiles (x86/amx/gemm_kernel.hpp)");
    if constexpr (C == 0) _tile_dpbusd(0, 4, 6);
    else if constexpr (C == 1) _tile_dpbusd(1, 4, 7);
    else if constexpr (C == 2) _tile_dpbusd(2, 5, 6);
    else _tile_dpbusd(3, 5, 7);
}
#undef QDML_AMX_LITERAL
#endif
}  // namespace qdml::simd::gemm::amx::emulation::hardware
QDML_REGION_END

// What the AMX kernel calls under the macro: the real instruction on a CPU
// with AMX, else the emulation.
namespace qdml::simd::gemm::amx::emulation {
inline void tile_load_config(const std::uint8_t (&cfg)[64]) noexcept {
    emulated() ? load_config(cfg) : hardware::load_config(cfg);
}
inline void tile_release() noexcept { emulated() ? release() : hardware::release(); }
template <int T>
void tile_zero() noexcept { emulated() ? zero(T) : hardware::zero<T>(); }
template <int T>
void tile_load(const void* base, std::size_t stride) noexcept {
    emulated() ? load(T, base, stride) : hardware::load<T>(base, stride);
}
template <int T>
void tile_stream_load(const void* base, std::size_t stride) noexcept {
    emulated() ? load(T, base, stride) : hardware::stream_load<T>(base, stride);
}
template <int T>
void tile_store(void* base, std::size_t stride) noexcept {
    emulated() ? store(T, base, stride) : hardware::store<T>(base, stride);
}
template <int C, int A, int B>
void tile_dpbusd() noexcept { emulated() ? dpbusd(C, A, B) : hardware::dpbusd<C, A, B>(); }
}  // namespace qdml::simd::gemm::amx::emulation
#endif  // QDML_X86
