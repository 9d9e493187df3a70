// tests/support/gemm_paths.hpp - what the GEMM engine's differential tests
// (simd-gemm, simd-conv) share: the micro-kernel paths this CPU runs, and the
// comparison of a sentinel-filled, guard-padded output buffer computed by
// the reference and then by every path.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "qdml/core/error.hpp"
#include "qdml/simd/isa.hpp"

namespace qtest::gemm_paths {

using qdml::simd::Isa;

inline constexpr std::uint8_t kSentinel = 0xA5;
inline constexpr std::size_t kGuard = 64;  ///< sentinel bytes on each side of an output

/// The paths of this CPU; warns once about the others.
inline std::vector<Isa> runnable_isas() {
    std::vector<Isa> r;
    std::string missing;
    for (Isa i : qdml::simd::kAllIsas) {
        if (qdml::simd::isa_available(i))
            r.push_back(i);
        else
            missing += std::string(" ") + std::string(qdml::simd::isa_name(i));
    }
    static bool warned = false;
    if (!warned) {
        if (!missing.empty()) WARN("GEMM paths this CPU cannot run (not tested here):" << missing);
#if defined(QDML_GEMM_TEST_AVXVNNI_EVEX) && QDML_X86
        if (qdml::simd::isa_available(Isa::AvxVnni) && !qdml::simd::detail::cpu_features().avxvnni)
            WARN("GEMM path avxvnni runs with its vpdpbusd in the EVEX encoding (this CPU has AVX-512 VNNI, "
                 "not AVX-VNNI: kernel_avxvnni.hpp's testing aid)");
#endif
        warned = true;
    }
    return r;
}

/// Fills `out` (the output view with kGuard bytes on each side) with the
/// sentinel and runs `reference()`, then for every path `run(isa)`; requires
/// identical buffers (guards and unaddressed bytes included: no path may
/// write outside the view).
template <class Reference, class Run>
void require_same_on_every_path(std::vector<std::uint8_t>& out, Reference&& reference, Run&& run) {
    std::fill(out.begin(), out.end(), kSentinel);
    reference();
    const std::vector<std::uint8_t> expected = out;
    for (std::size_t i = 0; i < kGuard; ++i) {
        REQUIRE(expected[i] == kSentinel);
        REQUIRE(expected[expected.size() - 1 - i] == kSentinel);
    }
    for (Isa isa : runnable_isas()) {
        INFO("path " << qdml::simd::isa_name(isa));
        std::fill(out.begin(), out.end(), kSentinel);
        run(isa);
        std::size_t first = out.size();
        for (std::size_t i = 0; i < out.size() && first == out.size(); ++i)
            if (out[i] != expected[i]) first = i;
        INFO("first differing byte " << first << " of " << out.size() << " (guard " << kGuard << ")");
        REQUIRE(first == out.size());
    }
}

/// The message of the qdml::Error that f() throws, or "no error".
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "no error";
}

/// FNV-1a, to check that prepared panels stay unchanged.
struct Fnv {
    std::uint64_t h = 1469598103934665603ull;
    void mix(const void* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const std::uint8_t*>(p)[i]) * 1099511628211ull;
    }
};

/// Random sizes and bytes, seeded from Catch's --rng-seed.
struct Rng {
    std::mt19937 gen;
    explicit Rng(std::uint32_t salt) : gen(Catch::rngSeed() + salt) {}
    std::uint32_t uniform(std::uint32_t lo, std::uint32_t hi) {
        return std::uniform_int_distribution<std::uint32_t>(lo, hi)(gen);
    }
    bool coin(std::uint32_t one_in) { return uniform(1, one_in) == 1; }
    /// Bytes: mostly uniform, sometimes the extremes 0, 127, 128, 255.
    std::uint8_t byte() {
        static constexpr std::uint8_t extremes[] = {0, 127, 128, 255};
        return coin(8) ? extremes[uniform(0, 3)] : static_cast<std::uint8_t>(uniform(0, 255));
    }
    /// Sizes around the tile sizes (1, 4, 6, 8, 16, 32, 64) and odd ones, at most max.
    std::uint32_t size(std::uint32_t max) {
        static constexpr std::uint32_t around[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129};
        const std::uint32_t v = coin(2) ? around[uniform(0, 19)] : uniform(1, max);
        return v > max ? max : v;
    }
};

}  // namespace qtest::gemm_paths
