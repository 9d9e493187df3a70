// qdml/simd/isa.hpp - the library's one ISA seam: which instruction sets this
// CPU runs, detected once at run time from CPUID + XCR0 (+ the Linux AMX tile
// permission), capped by QDML_ISA or an API option; and the target regions
// that every file under simd/x86/<isa>/ opens. Everything with intrinsics
// lives under simd/x86/ (one folder per ISA, each file one target region);
// the drivers above choose among them with simd::select_isa, and compile to
// the portable code alone on other architectures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <cstdlib>
#include <string_view>

// The x86-64 engine: g++ and clang (Linux, MinGW-w64, macOS, clang-cl) and
// MSVC x64 (not ARM64EC, which defines _M_X64 too but runs no AVX).
#if (defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))) || \
    (defined(_M_X64) && !defined(_M_ARM64EC) && defined(_MSC_VER))
#define QDML_X86 1
#if defined(_MSC_VER)
#include <intrin.h>  // __cpuidex, _xgetbv
#else
#include <cpuid.h>
#endif
#include <immintrin.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#else
#define QDML_X86 0
#endif

/// QDML_INLINE_ASM: 1 (the default with g++ and clang) lets the x86 kernels
/// use GNU inline assembly where it measurably helps those compilers (the
/// GEMM micro-kernels' k loops, the VNNI dot steps: see each kernel); 0
/// compiles each kernel's intrinsics-only form instead, the form MSVC
/// compiles (x64 MSVC has no inline assembly: always 0 under _MSC_VER,
/// clang-cl included). Both forms give the same bits. (The empty asm
/// statements that keep a product from fusing with an add, qdml::no_fuse,
/// are no kernel and stay with g++ and clang: they emit no instruction.)
#if defined(_MSC_VER)
#if defined(QDML_INLINE_ASM) && QDML_INLINE_ASM
#error "qdml: QDML_INLINE_ASM=1 needs g++ or clang's GNU inline assembly; under _MSC_VER it is always 0"
#endif
#undef QDML_INLINE_ASM
#define QDML_INLINE_ASM 0
#elif !defined(QDML_INLINE_ASM)
#define QDML_INLINE_ASM 1
#elif QDML_INLINE_ASM != 0 && QDML_INLINE_ASM != 1
#error "qdml: QDML_INLINE_ASM must be 0 (intrinsics only) or 1 (g++ and clang's default)"
#endif

// Target regions. Each file under simd/x86/<isa>/ wraps its functions (and
// the lambdas inside them) in one region of its ISA's target, so a baseline
// x86-64 build still compiles them; they run only where select_isa() found
// the ISA. (simdjson's SIMDJSON_TARGET_REGION; a compiler without target
// attributes compiles intrinsics anywhere and gets empty regions.)
#define QDML_STRINGIFY(x) #x
#if defined(__clang__)
#define QDML_REGION(t) _Pragma(QDML_STRINGIFY(clang attribute push(__attribute__((target(t))), apply_to = function)))
#define QDML_REGION_END _Pragma("clang attribute pop")
#elif defined(__GNUC__)
#define QDML_REGION(t) _Pragma("GCC push_options") _Pragma(QDML_STRINGIFY(GCC target(t)))
#define QDML_REGION_END _Pragma("GCC pop_options")
#else
#define QDML_REGION(t)
#define QDML_REGION_END
#endif
#if defined(__clang__) || defined(__GNUC__)
#define QDML_HAS_REGIONS 1  ///< the regions are not empty: code outside them compiles for the build's baseline
#endif
/// AVX2 (also the AVX-VNNI folder's with QDML_INLINE_ASM: its one VNNI
/// instruction is written out, so its dot step inlines into the AVX2 tile
/// skeleton).
#define QDML_REGION_AVX2 QDML_REGION("avx2")
/// The AVX-VNNI folder's without QDML_INLINE_ASM (the intrinsic's target).
#define QDML_REGION_AVXVNNI QDML_REGION("avx2,avxvnni")
#define QDML_REGION_AVX512VNNI QDML_REGION("avx2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#define QDML_REGION_AMX QDML_REGION("avx2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,amx-tile,amx-int8")
/// The element-wise loops' regions (x86/avx2/elementwise.hpp, x86/avx512bw/elementwise.hpp):
/// binary16 conversions need F16C besides AVX2; AVX-512 without VNNI (Skylake-SP has BW, not VNNI).
#define QDML_REGION_AVX2_F16C QDML_REGION("avx2,f16c")
#define QDML_REGION_AVX512BW QDML_REGION("avx2,f16c,avx512f,avx512bw,avx512vl,avx512dq")

/// On a function of a target region that runs a generic template (the
/// element-wise row kernels): every call inside it is inlined, recursively,
/// so the generic code is compiled for the region's target and the
/// region's vector operations (not always_inline) inline into it.
#if defined(__GNUC__) || defined(__clang__)
#define QDML_FLATTEN __attribute__((flatten))
#else
#define QDML_FLATTEN
#endif

/// On a k loop kept out of line (the intrinsics-only forms of the kernels
/// whose asm form is one statement): inlined into its caller's epilogue,
/// g++ 12 spills and copies its accumulators every k group.
#if defined(__GNUC__) || defined(__clang__)
#define QDML_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define QDML_NOINLINE __declspec(noinline)
#else
#define QDML_NOINLINE
#endif

#if defined(__clang__)
#define QDML_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define QDML_UNROLL _Pragma("GCC unroll 16")
#else
#define QDML_UNROLL
#endif

namespace qdml::simd {

/// Instruction-set paths (named by their GEMM micro-kernel), weakest first (a cap keeps every path at or below it).
enum class Isa : std::uint8_t {
    Generic,     ///< portable C++ (every CPU)
    Avx2,        ///< AVX2 without VNNI: int8 widened to int16, vpmaddwd + vpaddd
    AvxVnni,     ///< AVX-VNNI: 256-bit vpdpbusd
    Avx512Vnni,  ///< AVX-512 VNNI: 512-bit vpdpbusd
    Amx,         ///< AMX-INT8: tdpbusd on 16x64-byte tiles (AVX-512 epilogue)
    Best,        ///< no cap: the best path the CPU runs
};

inline constexpr Isa kAllIsas[] = {Isa::Generic, Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni, Isa::Amx};

/// The QDML_ISA spelling of `isa`.
constexpr std::string_view isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::Generic: return "generic";
        case Isa::Avx2: return "avx2";
        case Isa::AvxVnni: return "avxvnni";
        case Isa::Avx512Vnni: return "avx512vnni";
        case Isa::Amx: return "amx";
        case Isa::Best: break;
    }
    return "best";
}

/// Parses a QDML_ISA value; false if it names no path.
inline bool parse_isa(std::string_view s, Isa& out) noexcept {
    for (Isa i : kAllIsas)
        if (s == isa_name(i)) {
            out = i;
            return true;
        }
    if (s == "best" || s.empty()) {
        out = Isa::Best;
        return true;
    }
    return false;
}

namespace detail {

#if QDML_X86
struct CpuFeatures {
    bool avx2 = false, avxvnni = false, avx512vnni = false, amx = false;
    bool f16c = false;      ///< with avx2: the element-wise AVX2 path
    bool avx512bw = false;  ///< AVX-512 F, DQ, BW, VL and the OS's zmm state: the element-wise AVX-512 path
};

/// CPUID leaf `leaf`, subleaf `sub`, into r (eax, ebx, ecx, edx); false (r
/// zeros) when the CPU's highest basic leaf is below `leaf`.
inline bool cpuid(unsigned leaf, unsigned sub, unsigned (&r)[4]) noexcept {
    r[0] = r[1] = r[2] = r[3] = 0;
#if defined(_MSC_VER)
    int regs[4];
    __cpuidex(regs, 0, 0);
    if (static_cast<unsigned>(regs[0]) < leaf) return false;
    __cpuidex(regs, static_cast<int>(leaf), static_cast<int>(sub));
    for (int i = 0; i < 4; ++i) r[i] = static_cast<unsigned>(regs[i]);
    return true;
#else
    return __get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]) != 0;
#endif
}

}  // namespace detail
}  // namespace qdml::simd

// XCR0 (the state components the OS saves: ymm, zmm, tiles). Only called
// once CPUID says OSXSAVE. (Its own region: g++ and clang give _xgetbv
// only to XSAVE code.)
QDML_REGION("xsave")
namespace qdml::simd::detail {
inline std::uint64_t xgetbv0() noexcept { return static_cast<std::uint64_t>(_xgetbv(0)); }
}  // namespace qdml::simd::detail
QDML_REGION_END

namespace qdml::simd {
namespace detail {

/// Whether the OS lets this process use the AMX tile data state, which XCR0
/// already says it saves: Linux grants it on request (once per process:
/// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); Windows enables it for every
/// process whose XCR0 has it (as oneDNN and llama.cpp's ggml take it);
/// elsewhere false.
inline bool request_amx_permission() noexcept {
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#elif defined(_WIN32)
    return true;
#else
    return false;
#endif
}

inline CpuFeatures detect_features() noexcept {
    CpuFeatures f;
    unsigned r[4];
    if (!cpuid(1, 0, r)) return f;
    const unsigned c1_leaf1 = r[2];
    const bool osxsave = (r[2] >> 27) & 1, avx = (r[2] >> 28) & 1;
    if (!osxsave || !avx) return f;
    const std::uint64_t xcr0 = xgetbv0();
    const bool ymm_os = (xcr0 & 0x6) == 0x6, zmm_os = (xcr0 & 0xe6) == 0xe6;
    const bool tile_os = (xcr0 & (3u << 17)) == (3u << 17);
    if (!cpuid(7, 0, r)) return f;
    const unsigned b = r[1], c = r[2], d = r[3];
    const bool avx2 = (b >> 5) & 1;
    const bool avx512 = ((b >> 16) & 1) && ((b >> 17) & 1) && ((b >> 30) & 1) && ((b >> 31) & 1);  // F, DQ, BW, VL
    const bool vnni512 = (c >> 11) & 1;
    const bool amx = ((d >> 24) & 1) && ((d >> 25) & 1);  // AMX-TILE, AMX-INT8
    cpuid(7, 1, r);
    const unsigned a1 = r[0];
    f.avx2 = ymm_os && avx2;
    f.f16c = f.avx2 && ((c1_leaf1 >> 29) & 1);
    f.avx512bw = f.avx2 && zmm_os && avx512;
    f.avxvnni = f.avx2 && ((a1 >> 4) & 1);
    f.avx512vnni = f.avx2 && zmm_os && avx512 && vnni512;
    f.amx = f.avx512vnni && tile_os && amx && request_amx_permission();
    return f;
}

inline const CpuFeatures& cpu_features() noexcept {
    static const CpuFeatures f = detect_features();  // once per process
    return f;
}
#endif

inline Isa env_cap() noexcept {
    static const Isa cap = [] {
        Isa i = Isa::Best;
        if (const char* s = std::getenv("QDML_ISA")) parse_isa(s, i);  // an unknown value caps nothing
        return i;
    }();
    return cap;
}

}  // namespace detail

/// Whether this CPU (and OS) runs the `isa` micro-kernels.
inline bool isa_available(Isa isa) noexcept {
#if QDML_X86
    const auto& f = detail::cpu_features();
    switch (isa) {
        case Isa::Generic: return true;
        case Isa::Avx2: return f.avx2;
#if defined(QDML_GEMM_TEST_AVXVNNI_EVEX)  // (testing aid: x86/avxvnni/gemm_kernel.hpp)
        case Isa::AvxVnni: return f.avxvnni || f.avx512vnni;
#else
        case Isa::AvxVnni: return f.avxvnni;
#endif
        case Isa::Avx512Vnni: return f.avx512vnni;
#if defined(QDML_GEMM_TEST_AMX_EMULATION)  // (testing aid: x86/amx/emulation.hpp)
        case Isa::Amx: return f.amx || f.avx2;
#else
        case Isa::Amx: return f.amx;
#endif
        case Isa::Best: return true;
    }
    return false;
#else
    return isa == Isa::Generic || isa == Isa::Best;
#endif
}

/// The best available path at or below `cap`; `cap` Best means the QDML_ISA
/// environment variable's cap (absent: no cap).
inline Isa select_isa(Isa cap = Isa::Best) noexcept {
    if (cap == Isa::Best) cap = detail::env_cap();
    for (int i = static_cast<int>(Isa::Amx); i > 0; --i) {
        const auto isa = static_cast<Isa>(i);
        if (static_cast<int>(isa) <= static_cast<int>(cap) && isa_available(isa)) return isa;
    }
    return Isa::Generic;
}

/// The element-wise loops' paths, weakest first: `portable` is xsimd's
/// (SSE2 on x86-64, NEON on AArch64, scalar elsewhere), the others raw
/// intrinsics in target regions chosen at run time as the GEMM's are.
enum class ElementWiseIsa : std::uint8_t {
    Portable,  ///< simd/arch.hpp's xsimd arch (every CPU of the build's target)
    Avx2,      ///< AVX2 + F16C (x86/avx2/elementwise.hpp)
    Avx512,    ///< AVX-512 F/BW/DQ/VL (x86/avx512bw/elementwise.hpp)
};

/// The element-wise path for the GEMM cap `cap` (Best: QDML_ISA, else no
/// cap): AVX-512 where the cap allows avx512vnni or amx and the CPU has
/// AVX-512 BW (VNNI not needed), AVX2 where it allows avx2 or avxvnni and
/// the CPU has AVX2 and F16C, else portable.
inline ElementWiseIsa select_elementwise_isa(Isa cap = Isa::Best) noexcept {
#if QDML_X86
    if (cap == Isa::Best) cap = detail::env_cap();
    const auto& f = detail::cpu_features();
    if (static_cast<int>(cap) >= static_cast<int>(Isa::Avx512Vnni) && f.avx512bw && f.f16c) return ElementWiseIsa::Avx512;
    if (static_cast<int>(cap) >= static_cast<int>(Isa::Avx2) && f.avx2 && f.f16c) return ElementWiseIsa::Avx2;
#else
    (void)cap;
#endif
    return ElementWiseIsa::Portable;
}

#if defined(QDML_GEMM_TEST_AMX_EMULATION)
/// Testing aid (x86/amx/emulation.hpp): `cap` for code that has no AMX form
/// and runs its AVX-512 VNNI code when select_isa(cap) gives Amx (the
/// depthwise kernels). Where the AMX path is available only by emulation,
/// on a CPU without AVX-512 VNNI, a cap at or above Amx becomes AvxVnni (the
/// best path the CPU runs below AVX-512 VNNI); otherwise `cap`.
inline Isa below_emulated_amx(Isa cap) noexcept {
    if (isa_available(Isa::Avx512Vnni)) return cap;
    if (cap == Isa::Best) cap = detail::env_cap();
    return static_cast<int>(cap) >= static_cast<int>(Isa::Amx) ? Isa::AvxVnni : cap;
}
#endif

}  // namespace qdml::simd
