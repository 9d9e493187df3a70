// qdml/simd/x86/avxvnni/gemm_kernel.hpp - AVX-VNNI micro-kernel: 6 rows x one
// 16-column panel (kernel_ymm.hpp's skeleton: 12 ymm accumulators, 2 panel
// registers, 1 broadcast), 256-bit VEX vpdpbusd (u8 x s8, four products into
// int32 without saturation). Compiles to nothing off x86-64.
//
// Testing aid: a build that defines QDML_GEMM_TEST_AVXVNNI_EVEX (the test
// programs simd-gemm and simd-conv do) also has the same dot step with the
// instruction in its EVEX encoding (AVX-512 VNNI + VL: the same operation on
// the same ymm registers), and counts the path as available on a CPU with
// AVX-512 VNNI but no AVX-VNNI (isa.hpp), where it runs that twin: the
// path's packing, 6-row tiles, epilogue and the convolution's AVX-VNNI
// forms are then tested on such CPUs too; only the VEX encoding itself
// needs an AVX-VNNI CPU. Library users never define it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/x86/avx2/tile256.hpp"

#if QDML_X86
// With QDML_INLINE_ASM the dot step is the instruction written out, in the
// AVX2 region (it needs no AVX-512, and g++ 12 copies the intrinsic's
// accumulator twice per k group), and runs in the AVX2 skeleton (gemm::ymm).
// Without it, the intrinsic in the AVX-VNNI region; where regions are not
// empty (g++, clang) the skeleton is compiled again in that region
// (avxvnni::ymm), so that the dot step inlines into it; MSVC (no regions)
// runs gemm::ymm. (The testing aid's twin there: the EVEX intrinsic in an
// AVX-512 region, called out of line.)
#if !QDML_INLINE_ASM && defined(QDML_GEMM_TEST_AVXVNNI_EVEX)
QDML_REGION_AVX512VNNI
namespace qdml::simd::gemm::avxvnni::evex {
inline __m256i dpbusd(__m256i acc, __m256i a, __m256i b) noexcept { return _mm256_dpbusd_epi32(acc, a, b); }
}  // namespace qdml::simd::gemm::avxvnni::evex
QDML_REGION_END
#endif

#if QDML_INLINE_ASM
QDML_REGION_AVX2
#else
QDML_REGION_AVXVNNI
#endif
#if !QDML_INLINE_ASM && defined(QDML_HAS_REGIONS)
#define QDML_TILE256_NAMESPACE avxvnni::ymm
#include "qdml/simd/x86/avx2/tile256.hpp"
#undef QDML_TILE256_NAMESPACE
#endif
namespace qdml::simd::gemm::avxvnni {

inline constexpr int kRows = 6;  ///< rows per block (Groups4 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Groups4;

/// The dot step; Evex: the testing aid's twin (see the top of the file).
template <bool Evex>
struct DotT {
    static constexpr int kBlockRows = 0;
    static constexpr std::size_t kUnit = 4;
    static constexpr std::size_t kGroupBytes = 64;
    struct Panel {
        __m256i lo, hi;
    };
    static Panel load(const std::int8_t* group) noexcept {
        return {_mm256_load_si256(reinterpret_cast<const __m256i*>(group)),
                _mm256_load_si256(reinterpret_cast<const __m256i*>(group + 32))};
    }
    /// acc += a (u8) . b (s8), four products per lane: VEX vpdpbusd (the
    /// AVX-VNNI instruction needs no AVX-512); the twin's EVEX.
    static void dot(__m256i& acc, __m256i a, __m256i b) noexcept {
#if QDML_INLINE_ASM
        if constexpr (Evex)
            __asm__("%{evex%} vpdpbusd %[b], %[a], %[acc]" : [acc] "+x"(acc) : [a] "x"(a), [b] "x"(b));
        else
            __asm__("%{vex%} vpdpbusd %[b], %[a], %[acc]" : [acc] "+x"(acc) : [a] "x"(a), [b] "x"(b));
#else
        if constexpr (Evex) {
#if defined(QDML_GEMM_TEST_AVXVNNI_EVEX)
            acc = evex::dpbusd(acc, a, b);
#endif
        } else {
            acc = _mm256_dpbusd_avx_epi32(acc, a, b);
        }
#endif
    }
    static void step(__m256i (&acc)[2], const std::uint8_t* a, const Panel& b) noexcept {
        std::int32_t a4;
        std::memcpy(&a4, a, 4);
        const __m256i va = _mm256_set1_epi32(a4);
        dot(acc[0], va, b.lo);
        dot(acc[1], va, b.hi);
    }
};

using Dot = DotT<false>;

}  // namespace qdml::simd::gemm::avxvnni
// The tiles, compiled once in a program that says so (as avx512vnni's), in
// the skeleton's namespace that tiles() below calls.
#if QDML_INLINE_ASM || !defined(QDML_HAS_REGIONS)
#define QDML_DETAIL_AVXVNNI_TILE(EXT, MR) \
    EXT template void qdml::simd::gemm::ymm::tile<qdml::simd::gemm::avxvnni::Dot, MR>(QDML_DETAIL_GEMM_TILE_PARAMS);
#else
#define QDML_DETAIL_AVXVNNI_TILE(EXT, MR) \
    EXT template void qdml::simd::gemm::avxvnni::ymm::tile<qdml::simd::gemm::avxvnni::Dot, MR>(QDML_DETAIL_GEMM_TILE_PARAMS);
#endif
#define QDML_DETAIL_AVXVNNI_TILES(EXT)                                                                    \
    QDML_DETAIL_AVXVNNI_TILE(EXT, 1) QDML_DETAIL_AVXVNNI_TILE(EXT, 2) QDML_DETAIL_AVXVNNI_TILE(EXT, 3) \
    QDML_DETAIL_AVXVNNI_TILE(EXT, 4) QDML_DETAIL_AVXVNNI_TILE(EXT, 5) QDML_DETAIL_AVXVNNI_TILE(EXT, 6)
static_assert(qdml::simd::gemm::avxvnni::kRows == 6, "QDML_DETAIL_AVXVNNI_TILES lists the tiles of these sizes");
#if defined(QDML_EXTERN_GEMM_KERNELS)
QDML_DETAIL_AVXVNNI_TILES(extern)
#endif
namespace qdml::simd::gemm::avxvnni {

/// Rows m0..m0+mr-1 (mr <= kRows) times panel p.
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
#if QDML_INLINE_ASM || !defined(QDML_HAS_REGIONS)
    namespace skeleton = gemm::ymm;
#else
    namespace skeleton = avxvnni::ymm;
#endif
#if defined(QDML_GEMM_TEST_AVXVNNI_EVEX)
    if (!simd::detail::cpu_features().avxvnni) return skeleton::tiles<DotT<true>, kRows>(a, b, e, m0, mr, p);
#endif
    skeleton::tiles<Dot, kRows>(a, b, e, m0, mr, p);
}

}  // namespace qdml::simd::gemm::avxvnni
QDML_REGION_END
#endif  // QDML_X86
