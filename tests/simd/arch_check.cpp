// tests/simd/arch_check.cpp - linked into every SIMD test executable: before
// any test runs, prints which compile-time path this executable exercises and
// exits with Meson's "skipped" status (77) when the CPU cannot run it.
#include <cstdio>
#include <cstdlib>

#include "qdml/simd/arch.hpp"

namespace {
const bool kArchChecked = [] {
    if (!qdml::simd::cpu_supports_arch()) {
        std::printf("SKIP: this CPU lacks the instruction set of the '%s' SIMD path\n", qdml::simd::arch_name());
        std::fflush(stdout);
        std::_Exit(77);
    }
    std::printf("SIMD path under test: %s\n", qdml::simd::arch_name());
    return true;
}();
}  // namespace
