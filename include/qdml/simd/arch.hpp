// qdml/simd/arch.hpp - the element-wise loops' ISA, chosen at run time as
// the GEMM's is (simd::select_elementwise_isa: the CPU, capped by QDML_ISA
// or the call's options): AVX-512 or AVX2 + F16C through the region tags of
// x86/avx512bw/elementwise.hpp and x86/avx2/elementwise.hpp, else the
// portable path, xsimd's batches for Arch: SSE2 on x86-64 (whatever the
// build's flags: it is what every x86-64 CPU runs), the build's own arch
// elsewhere (NEON on AArch64), scalar where xsimd has none. run_rows_on()
// runs a row kernel on the chosen one (docs/design/elementwise.md).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "qdml/simd/isa.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/x86/avx2/elementwise.hpp"
#include "qdml/simd/x86/avx512bw/elementwise.hpp"

namespace qdml::simd {

/// True when xsimd has a batch type for this target (every x86-64 and AArch64 build).
inline constexpr bool kAvailable = !std::is_same_v<xsimd::default_arch, xsimd::unavailable>;

/// The arch of the portable path.
#if XSIMD_WITH_SSE2
using Arch = xsimd::sse2;
#else
using Arch = std::conditional_t<kAvailable, xsimd::default_arch, xsimd::generic>;
#endif

/// The name of an element-wise path, as describe() prints it: "sse2",
/// "arm64+neon", ... for the portable one, "avx2+f16c", "avx512bw".
inline const char* elementwise_isa_name(ElementWiseIsa isa) noexcept {
#if QDML_X86
    if (isa == ElementWiseIsa::Avx512) return x86::avx512bw::ElementWise::kName;
    if (isa == ElementWiseIsa::Avx2) return x86::avx2::ElementWise::kName;
#endif
    (void)isa;
    if constexpr (!kAvailable) return "scalar";
    return Arch::name();
}

/// The name of the path the element-wise loops take under `cap` on this CPU.
inline const char* arch_name(Isa cap = Isa::Best) noexcept { return elementwise_isa_name(select_elementwise_isa(cap)); }

/// Whether the CPU running this program has every instruction set the
/// build's flags assume (a -march=native binary moved to an older CPU
/// would stop on an illegal instruction; the tests skip instead).
inline bool cpu_supports_arch() noexcept {
    if constexpr (!kAvailable) return true;
    return xsimd::available_architectures().best >= xsimd::default_arch::version();
}

/// An ISA tag as a value (run_rows_on's `make` receives one).
template <class A>
struct ArchTag {
    using type = A;
};

/// `kernel` as it runs on tag A: a region tag's Rows, which compile it for
/// the region (its call operator takes only pointers, sizes and RowIn
/// views: no vector crosses into code outside the region), or `kernel`
/// itself for Arch.
template <class A, class Kernel>
auto on_arch(Kernel kernel) {
    if constexpr (kernel::is_region_v<A>)
        return typename A::template Rows<Kernel>{kernel};
    else
        return kernel;
}

/// Runs every row of `plan` (operand 0 the output) through the row kernel
/// make(ArchTag<A>{}) for the element-wise path `isa`, A the path's tag
/// (on_arch), transposing interleaved operands with AVX2 where the path has it.
template <class TOut, class... TIn, class Make>
void run_rows_on(ElementWiseIsa isa, const LoopPlan<1 + sizeof...(TIn)>& plan,
                 const std::array<char*, 1 + sizeof...(TIn)>& base, Make&& make, const Executor& executor = {}) {
#if QDML_X86
    if (isa == ElementWiseIsa::Avx512) {
        using A = x86::avx512bw::ElementWise;
        run_rows<TOut, TIn...>(plan, base, on_arch<A>(make(ArchTag<A>{})), Isa::Avx2, executor);
        return;
    }
    if (isa == ElementWiseIsa::Avx2) {
        using A = x86::avx2::ElementWise;
        run_rows<TOut, TIn...>(plan, base, on_arch<A>(make(ArchTag<A>{})), Isa::Avx2, executor);
        return;
    }
#endif
    (void)isa;
    run_rows<TOut, TIn...>(plan, base, make(ArchTag<Arch>{}), Isa::Generic, executor);
}

/// Calls f(ArchTag<A>{}) for the tag of every element-wise path this CPU
/// runs, weakest first (the tests run each).
template <class F>
void for_each_elementwise_arch(F&& f) {
    f(ArchTag<Arch>{});
#if QDML_X86
    if (select_elementwise_isa(Isa::Avx2) == ElementWiseIsa::Avx2) f(ArchTag<x86::avx2::ElementWise>{});
    if (select_elementwise_isa(Isa::Avx512Vnni) == ElementWiseIsa::Avx512) f(ArchTag<x86::avx512bw::ElementWise>{});
#endif
}

}  // namespace qdml::simd
