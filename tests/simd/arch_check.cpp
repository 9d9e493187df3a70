// tests/simd/arch_check.cpp - linked into every SIMD test executable: before
// any test runs, prints the build's xsimd arch and the element-wise paths
// the tests run here, and exits with Meson's "skipped" status (77) when the
// CPU lacks the instruction sets of the build's flags.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "qdml/simd/arch.hpp"

namespace {
const bool kArchChecked = [] {
    if (!qdml::simd::cpu_supports_arch()) {
        std::printf("SKIP: this CPU lacks the instruction set of this build's flags ('%s')\n", xsimd::default_arch::name());
        std::fflush(stdout);
        std::_Exit(77);
    }
    // The element-wise paths this CPU runs: the tests run each (run-time choice).
    std::string paths;
    qdml::simd::for_each_elementwise_arch([&](auto tag) {
        using A = typename decltype(tag)::type;
        if constexpr (qdml::simd::kernel::is_region_v<A>)
            paths += std::string(" ") + A::kName;
        else
            paths += std::string(" ") + qdml::simd::Arch::name();
    });
    std::printf("SIMD build: %s; element-wise paths under test:%s\n", xsimd::default_arch::name(), paths.c_str());
    return true;
}();
}  // namespace
