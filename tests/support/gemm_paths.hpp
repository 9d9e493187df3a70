// tests/support/gemm_paths.hpp - what the GEMM engine's differential tests
// (simd-gemm, simd-conv, gemm-microkernels) share: the micro-kernel paths
// this CPU runs, and the comparison of a guarded output buffer
// (buffers.hpp) computed by the reference and then by every path, in both
// profiles, every other run on a thread pool.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "qdml/core/error.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/simd/isa.hpp"
#include "qdml/simd/options.hpp"
#include "support/buffers.hpp"
#include "support/executors.hpp"
#if defined(QDML_GEMM_TEST_AMX_EMULATION)
#include "qdml/simd/x86/amx/emulation.hpp"
#endif

namespace qtest::gemm_paths {

using qdml::simd::Isa;

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
                 "not AVX-VNNI: x86/avxvnni/gemm_kernel.hpp's testing aid)");
#endif
#if defined(QDML_GEMM_TEST_AMX_EMULATION) && QDML_X86
        if (qdml::simd::isa_available(Isa::Amx) && qdml::simd::gemm::amx::emulation::emulated())
            WARN("GEMM path amx runs emulated: its tile instructions in plain C++ (this CPU has no AMX-INT8: "
                 "x86/amx/emulation.hpp's testing aid); its epilogue "
                 << (qdml::simd::isa_available(Isa::Avx512Vnni)
                         ? "the AVX-512 stores (store_rows32, store_rows16), one-row products the AVX-512 VNNI row kernel"
                         : "the AVX2 store (store8), one-row products the portable kernel, "
                           "as this CPU has no AVX-512 VNNI"));
#endif
        warned = true;
    }
    return r;
}

/// Whether the `size`-byte floats at a and b are both NaN (binary32 or binary16).
inline bool both_nan(const std::uint8_t* a, const std::uint8_t* b, std::size_t size) {
    const auto nan = [size](const std::uint8_t* p) {
        if (size == 4) {
            std::uint32_t u;
            std::memcpy(&u, p, 4);
            return (u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0;
        }
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0;
    };
    return nan(a) && nan(b);
}

/// Resets `out` (the output's buffer and its guards) to the sentinel and
/// runs `reference()`, then for every path `run(isa)`; requires identical
/// buffers, guards included (no path may write outside the view). With
/// `float_bytes` (4 or 2: a float output), two NaNs of that size at the same
/// place count as equal (which NaN is not specified: docs/semantics.md section 0).
template <class Reference, class Run>
void require_same_on_every_path(GuardedBuffer& out, Reference&& reference, Run&& run, std::size_t float_bytes = 0) {
    out.reset();
    reference();
    const std::vector<std::uint8_t> expected = out.with_guards();
    REQUIRE(out.broken_guard() == GuardedBuffer::ok);
    for (Isa isa : runnable_isas()) {
        INFO("path " << qdml::simd::isa_name(isa));
        out.reset();
        run(isa);
        const std::vector<std::uint8_t> got = out.with_guards();
        std::size_t first = got.size();
        for (std::size_t i = 0; i < got.size() && first == got.size(); ++i)
            if (got[i] != expected[i]) {
                const std::size_t e = float_bytes ? i - i % float_bytes : i;
                if (float_bytes && e + float_bytes <= got.size() && both_nan(&got[e], &expected[e], float_bytes))
                    i = e + float_bytes - 1;
                else
                    first = i;
            }
        INFO("first differing byte " << first << " of " << got.size() << " (guard " << kGuardBytes << ")");
        REQUIRE(first == got.size());
        REQUIRE(out.broken_guard() == GuardedBuffer::ok);  // (the slack past the guards too)
    }
}

/// The executor of the k-th run: the calling thread alone for even k, else
/// one of the test pools in turn (support/executors.hpp).
inline const std::pair<std::string, qdml::Executor>& run_executor(std::size_t k) {
    static const std::pair<std::string, qdml::Executor> alone{"the calling thread", {}};
    return k % 2 == 0 ? alone : qtest::test_executors().at(k / 2);
}

/// require_same_on_every_path in both profiles (exact and directml:
/// docs/semantics.md section 10), every other run on a thread pool
/// (run_executor): `reference(fidelity)` computes the reference,
/// `run(options)` a path (options: the path, the profile, the executor).
template <class Reference, class Run>
void require_same_in_both_profiles(GuardedBuffer& out, Reference&& reference, Run&& run, std::size_t float_bytes = 0) {
    for (const qdml::Fidelity f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
        INFO("fidelity " << qdml::to_string(f));
        require_same_on_every_path(
            out, [&] { reference(f); },
            [&](Isa isa) {
                static std::size_t k = 0;
                const auto& ex = run_executor(k++);
                INFO("executor " << ex.first);
                run(qdml::simd::GemmOptions{isa, f, ex.second});
            },
            float_bytes);
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

}  // namespace qtest::gemm_paths
