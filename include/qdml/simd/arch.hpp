// qdml/simd/arch.hpp - the one ISA the element-wise loops are compiled for:
// xsimd's default_arch, chosen at compile time from the compiler's target
// flags (xsimd 8.1 picks its arch from the compiler's ISA macros), and
// whether this CPU can run it. The element-wise loops are the one exception
// to the run-time ISA choice of simd/isa.hpp (docs/design/elementwise.md).
#pragma once

#include <string>
#include <type_traits>

#if defined(__F16C__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif

#include <xsimd/xsimd.hpp>

namespace qdml::simd {

/// True when xsimd has a batch type for this target (every x86-64 and AArch64 build).
inline constexpr bool kAvailable = !std::is_same_v<xsimd::default_arch, xsimd::unavailable>;

/// The arch the kernels are instantiated for.
using Arch = std::conditional_t<kAvailable, xsimd::default_arch, xsimd::generic>;

/// Name of the compile-time path: "sse2", "fma3+avx2", "avx512bw", ... plus
/// "+f16c" where binary16 conversions use F16C below AVX-512.
inline const char* arch_name() noexcept {
    if constexpr (!kAvailable) return "scalar";
#if defined(__F16C__) && !defined(__AVX512F__)
    if constexpr (std::is_base_of_v<xsimd::avx, Arch>) {
        static const std::string n = std::string(Arch::name()) + "+f16c";
        return n.c_str();
    }
#endif
    return Arch::name();
}

/// Whether the CPU running this program has every instruction set the
/// SIMD path was compiled for.
inline bool cpu_supports_arch() noexcept {
    if constexpr (!kAvailable) return true;
#if defined(__F16C__) && (defined(__x86_64__) || defined(__i386__))
    // CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports knows no "f16c").
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 29))) return false;
#endif
    return xsimd::available_architectures().best >= Arch::version();
}

}  // namespace qdml::simd
