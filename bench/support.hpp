// bench/support.hpp - what every qdml-bench file shares: aligned buffers,
// deterministic data, BENCH.md counters, row registration, the check of
// a peer's output against qdml's reference, and the worker threads of the
// `/threads:N` rows.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../tools/thread_pool.hpp"
#include "qdml/qdml.hpp"

namespace qdml_bench {

/// 64-byte aligned storage (a cache line; what non-temporal stores want).
template <class T>
struct AlignedAllocator {
    using value_type = T;
    AlignedAllocator() = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        const std::size_t bytes = (n * sizeof(T) + 63) & ~std::size_t{63};
        void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t) noexcept { std::free(p); }
    template <class U>
    bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
    template <class U>
    bool operator!=(const AlignedAllocator<U>&) const noexcept { return false; }
};
template <class T>
using Buffer = std::vector<T, AlignedAllocator<T>>;

/// n values uniformly drawn from [lo, hi] (integers) or [lo, hi) (floats),
/// from a fixed seed: every run and every peer sees the same data.
template <class T>
Buffer<T> random_buffer(std::size_t n, double lo, double hi, unsigned seed) {
    Buffer<T> v(n);
    std::mt19937 rng(seed);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, qdml::float16>) {
        std::uniform_real_distribution<float> d(static_cast<float>(lo), static_cast<float>(hi));
        for (auto& x : v) x = T(d(rng));
    } else {
        std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
        for (auto& x : v) x = static_cast<T>(d(rng));
    }
    return v;
}

/// A qdml::Tensor over a buffer.
template <class T>
qdml::Tensor tensor_of(const qdml::TensorDesc& desc, Buffer<T>& b) {
    return {desc, b.data(), b.size() * sizeof(T)};
}

/// Bytes a tensor's buffer spans (each element read or written once).
inline double span_bytes(const qdml::Tensor& t) {
    return static_cast<double>(qdml::min_buffer_elements(t.Desc).value_or(0) * qdml::element_size(t.Desc.DataType));
}

/// BENCH.md element-wise counters: elements, and every byte read plus every
/// byte written, once, as rates.
inline void set_element_wise_counters(benchmark::State& state, double items, double bytes) {
    state.counters["items_per_second"] = benchmark::Counter(items, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_second"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}

/// BENCH.md matmul/conv counter: OPS per call (2 per multiply-add), as a rate.
inline void set_ops_counter(benchmark::State& state, double ops) {
    state.counters["OPS"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
}

/// Elements whose bits differ (a peer's output against qdml's reference).
template <class T, class U>
std::size_t count_mismatches(const T* got, const U* expected, std::size_t n) {
    static_assert(sizeof(T) == sizeof(U));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += std::memcmp(got + i, expected + i, sizeof(T)) != 0;
    return bad;
}

/// The label of a peer row: its implementation and how many of its output
/// elements differ from qdml's reference (checked once, outside the timed loop).
inline std::string peer_label(const std::string& impl, std::size_t mismatches, std::size_t n) {
    return impl + " mismatches=" + std::to_string(mismatches) + "/" + std::to_string(n);
}

/// A peer set up for one row: `call` computes once (empty: the row is
/// skipped and `info` says why); `mismatches` counts, after a call, the
/// output elements that differ from qdml's reference; `info` names the
/// implementation the peer chose; `keep` holds the peer's objects.
struct Peer {
    std::function<void()> call;
    std::function<std::size_t()> mismatches;
    std::string info;
    std::shared_ptr<void> keep;
};

/// Times a peer; its mismatch count (checked once, before timing) goes into
/// the label and the `mismatches` counter.
inline void time_peer(benchmark::State& state, const Peer& peer, std::size_t outputs) {
    if (!peer.call) {
        state.SkipWithError(peer.info.c_str());
        return;
    }
    peer.call();
    const std::size_t bad = peer.mismatches ? peer.mismatches() : 0;
    for (auto _ : state) {
        peer.call();
        benchmark::ClobberMemory();
    }
    state.SetLabel(peer_label(peer.info, bad, outputs));
    state.counters["mismatches"] = static_cast<double>(bad);
}

/// The one registration helper: a row named per BENCH.md, in the unit the
/// figures read best in.
inline benchmark::internal::Benchmark* add_row(const std::string& name, std::function<void(benchmark::State&)> body,
                                               benchmark::TimeUnit unit = benchmark::kMicrosecond) {
    return benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& s) { body(s); })
        ->Unit(unit)
        ->UseRealTime();
}

/// The worker counts of the `/threads:N` rows (BENCH.md "Threads"): 1, 2,
/// and the machine's hardware threads when there are more than 2.
inline std::vector<unsigned> thread_counts() {
    std::vector<unsigned> counts{1, 2};
    const unsigned hardware = std::thread::hardware_concurrency();
    if (hardware > 2) counts.push_back(hardware);
    return counts;
}

/// The end of the name of a row computed on `threads` worker threads.
inline std::string threads_suffix(unsigned threads) { return "/threads:" + std::to_string(threads); }

/// What the qdml `/threads:N` rows compute on: for 1 the default
/// qdml::Executor (the calling thread alone, the plain sequential path: a
/// `/threads:1` row is its unsuffixed row), else an Executor over a
/// qdml::tools::ThreadPool(N), one pool per N, made on first use and kept
/// for the run (its workers wait on a condition variable between calls).
/// Rows run one at a time, on the main thread.
inline qdml::Executor executor_of(unsigned threads) {
    if (threads <= 1) return {};
    static std::map<unsigned, std::unique_ptr<qdml::tools::ThreadPool>> pools;
    auto& pool = pools[threads];
    if (!pool) pool = std::make_unique<qdml::tools::ThreadPool>(threads);
    return pool->executor();
}

/// A prepared row's peer: `desc` (a copy the peer keeps, its constant
/// operand flagged by the caller) compiled once outside the timed loop, each
/// call executing it on `threads` worker threads (executor_of).
template <class Desc>
Peer compiled_peer(std::shared_ptr<Desc> desc, unsigned threads) {
    auto compiled = std::make_shared<const qdml::Compiled<Desc>>(*desc);
    Peer peer;
    peer.info = compiled->path();
    const qdml::Executor executor = executor_of(threads);
    peer.call = [desc, compiled, executor] { compiled->execute(*desc, executor); };
    return peer;
}

/// A problem built on first use and kept while rows of the same shape run
/// (Google Benchmark calls a row several times; building 2^24 random
/// elements or a 1024^3 reference output each time would dominate the run).
/// One problem per type P is alive at a time; it is built in place (descs
/// point into it).
template <class P, class... Args>
P& cached(const Args&... args) {
    static std::unique_ptr<P> problem;
    static std::tuple<Args...> problem_key;
    if (!problem || !(problem_key == std::tie(args...))) {
        problem.reset();
        problem = std::make_unique<P>(args...);
        problem_key = std::tie(args...);
    }
    return *problem;
}

/// One qdml implementation as a row sees it: computes a desc, every call
/// stateless (validation included).
template <class Desc>
using Runner = std::function<void(const Desc&)>;

/// True when qdml::Implementation has a `Simd` member (the SIMD paths have
/// landed): the simd rows appear then, with no other change here.
template <class E, class = void>
struct has_simd : std::false_type {};
template <class E>
struct has_simd<E, std::void_t<decltype(E::Simd)>> : std::true_type {};

/// qdml::run with one Implementation, in profile `fidelity` (default: RunOptions').
template <class Desc>
Runner<Desc> run_with(qdml::Implementation implementation, qdml::Fidelity fidelity = qdml::RunOptions{}.fidelity) {
    qdml::RunOptions options;
    options.implementation = implementation;
    options.fidelity = fidelity;
    return [options](const Desc& d) { qdml::run(d, options); };
}

/// qdml::run with one Implementation on `threads` worker threads
/// (executor_of), in RunOptions' default profile: the qdml `/threads:N` rows.
template <class Desc>
Runner<Desc> run_on_threads(qdml::Implementation implementation, unsigned threads) {
    return [implementation, threads](const Desc& d) {
        qdml::RunOptions options;
        options.implementation = implementation;
        options.executor = executor_of(threads);
        qdml::run(d, options);
    };
}

/// The simd_prepared rows of a matmul through register_qdml_rows: `d` with
/// BTensor flagged constant (DML_TENSOR_FLAG_OWNED_BY_DML), compiled in
/// profile `fidelity` on the first call (the row's mismatch check, before
/// timing: B packed there) and again only when the problem's buffers or
/// shapes change; every call executes the Compiled (A streamed), on
/// `threads` worker threads when given (executor_of).
template <class Desc>
Runner<Desc> prepared_runner(qdml::Fidelity fidelity = qdml::RunOptions{}.fidelity, unsigned threads = 0) {
    struct State {
        Desc desc;
        std::shared_ptr<const qdml::Compiled<Desc>> compiled;
    };
    auto state = std::make_shared<State>();
    const qdml::Executor executor = executor_of(threads);
    return [fidelity, state, executor](const Desc& d) {
        Desc c = d;
        c.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
        const auto same = [](const qdml::Tensor& a, const qdml::Tensor& b) {
            return a.Data == b.Data && a.Desc.Sizes == b.Desc.Sizes && a.Desc.Strides == b.Desc.Strides;
        };
        if (!state->compiled || !same(state->desc.BTensor, c.BTensor) || !same(state->desc.ATensor, c.ATensor) ||
            !same(state->desc.OutputTensor, c.OutputTensor)) {
            qdml::RunOptions options;
            options.fidelity = fidelity;
            state->compiled = std::make_shared<const qdml::Compiled<Desc>>(c, options);
            state->desc = c;
        }
        state->compiled->execute(c, executor);
    };
}

/// The profile other than RunOptions' default: the one `<impl>_<profile>` rows
/// compute (the issue 32 rows: both profiles of the same call in one run).
inline qdml::Fidelity other_profile() {
    return qdml::RunOptions{}.fidelity == qdml::Fidelity::Exact ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
}

/// The row-name suffix of a profile's rows: "_directml" or "_exact".
inline std::string profile_suffix(qdml::Fidelity f) { return "_" + std::string(qdml::to_string(f)); }

/// The profile that row implementation `impl` computes: the one its suffix
/// names (profile_suffix), else RunOptions' default.
inline qdml::Fidelity profile_of(const std::string& impl) {
    for (const qdml::Fidelity f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
        const std::string s = profile_suffix(f);
        if (impl.size() > s.size() && impl.compare(impl.size() - s.size(), s.size(), s) == 0) return f;
    }
    return qdml::RunOptions{}.fidelity;
}

/// qdml's implementations through qdml::run, with their row names
/// (`with_simd` false: the reference only, for an operator whose row
/// registers its SIMD path itself or has none yet); `both_profiles`: also
/// `simd_<profile>`, the SIMD path in the profile other than the default.
template <class Desc, class E = qdml::Implementation>
std::vector<std::pair<std::string, Runner<Desc>>> qdml_runners(bool with_simd = true, bool both_profiles = false) {
    std::vector<std::pair<std::string, Runner<Desc>>> runners;
    runners.emplace_back("reference", run_with<Desc>(E::Reference));
    if constexpr (has_simd<E>::value) {
        if (with_simd) runners.emplace_back("simd", run_with<Desc>(E::Simd));
        if (with_simd && both_profiles)
            runners.emplace_back("simd" + profile_suffix(other_profile()), run_with<Desc>(E::Simd, other_profile()));
    }
    return runners;
}

}  // namespace qdml_bench
