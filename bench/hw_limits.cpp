// The machine's limits (BENCH.md "Limits"), measured in the same run as the
// kernels they bound:
//   hw/stream/u8_f32/16777216  read 2^24 u8, write 2^24 f32 (widened and
//                              converted, nothing else), fastest stores;
//   hw/copy/u8/16777216        memcpy of 2^24 bytes;
//   hw/dot/<isa>/peak          int8 multiply-accumulate peak of one
//                              instruction, from 12 independent register-only
//                              chains (OPS: 2 per multiply-add);
//   .../threads:N              (the stream and dot rows; issue 26, BENCH.md
//                              "Threads") the same on N threads started
//                              together (a Team), each on its own share: a
//                              contiguous Nth of the stream, or the whole
//                              register-only loop (OPS counts every thread's);
//                              the row's time is the whole.
// The kernels are raw intrinsics in functions with target attributes, so the
// binary builds for baseline x86-64 and each row runs only where CPUID says
// the instruction exists (the row is skipped otherwise).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "cpu.hpp"
#include "support.hpp"

#if QDML_BENCH_X86
#include <immintrin.h>
// g++ 12's AVX-512 headers self-initialise their "undefined" vectors
// (`__m512 __Y = __Y;`), which -Wmaybe-uninitialized reports inside
// functions with target attributes.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace qdml_bench {
namespace {

constexpr std::size_t kStreamBytes = std::size_t{1} << 24;

// ---- N threads, each on its own share ---------------------------------------

/// The threads of a `/threads:N` limit row: the calling thread and N - 1
/// started here; run(task) calls task(t) on thread t for every t in [0, N),
/// all released at once, and returns when all have returned. A waiting
/// thread polls for 100 us (a row's next run comes at once), then sleeps on
/// a condition variable (a machine busy with other work preempts pollers).
/// Made for one row's measurement. Plain std::thread rather than the rows'
/// ThreadPool: a pool hands tasks to whichever thread is free, a limit row
/// wants one share per thread.
class Team {
public:
    explicit Team(unsigned threads) {
        for (unsigned t = 1; t < threads; ++t) threads_.emplace_back([this, t] { work(t); });
    }
    ~Team() {
        {
            const std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();
        for (auto& t : threads_) t.join();
    }
    Team(const Team&) = delete;
    Team& operator=(const Team&) = delete;

    template <class F>
    void run(F& task) {
        {
            const std::lock_guard<std::mutex> lock(m_);
            task_ = [](void* f, unsigned t) { (*static_cast<F*>(f))(t); };
            context_ = &task;
            pending_.store(threads_.size(), std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_release);
        }
        if (!threads_.empty()) wake_.notify_all();
        task(0u);
        wait(done_, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }

private:
    template <class Ready>
    void wait(std::condition_variable& cv, Ready ready) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
        for (unsigned i = 1;; ++i) {
            if (ready()) return;
#if QDML_BENCH_X86
            _mm_pause();
#endif
            if (i % 64 == 0 && std::chrono::steady_clock::now() > until) break;
        }
        std::unique_lock<std::mutex> lock(m_);
        cv.wait(lock, ready);
    }

    void work(unsigned t) {
        std::uint64_t seen = 0;
        for (;;) {
            wait(wake_, [&] { return generation_.load(std::memory_order_acquire) != seen; });
            void (*task)(void*, unsigned) = nullptr;
            void* context = nullptr;
            {
                const std::lock_guard<std::mutex> lock(m_);
                seen = generation_.load(std::memory_order_relaxed);
                if (stop_) return;
                task = task_;
                context = context_;
            }
            task(context, t);
            if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                const std::lock_guard<std::mutex> lock(m_);
                done_.notify_one();
            }
        }
    }

    std::vector<std::thread> threads_;
    std::mutex m_;
    std::condition_variable wake_, done_;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<std::size_t> pending_{0};
    bool stop_ = false;
    void (*task_)(void*, unsigned) = nullptr;
    void* context_ = nullptr;
};

/// The shortest of five runs of f(), in seconds.
template <class F>
double best_of_five(F&& f) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        benchmark::ClobberMemory();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// ---- stream: u8 -> f32 -------------------------------------------------------

using StreamFn = void (*)(const std::uint8_t*, float*, std::size_t);

#if !QDML_BENCH_X86
void stream_scalar(const std::uint8_t* in, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}
#else
template <bool NonTemporal>
__attribute__((target("sse2"))) void stream_sse2(const std::uint8_t* in, float* out, std::size_t n) {
    const __m128i zero = _mm_setzero_si128();
    for (std::size_t i = 0; i < n; i += 16) {
        const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(in + i));
        const __m128i lo = _mm_unpacklo_epi8(v, zero), hi = _mm_unpackhi_epi8(v, zero);
        const __m128 f[4] = {_mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)), _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)),
                             _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)), _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero))};
        for (int j = 0; j < 4; ++j) {
            if constexpr (NonTemporal) _mm_stream_ps(out + i + 4 * j, f[j]);
            else _mm_store_ps(out + i + 4 * j, f[j]);
        }
    }
    _mm_sfence();
}

template <bool NonTemporal>
__attribute__((target("avx2"))) void stream_avx2(const std::uint8_t* in, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 32) {
        for (int j = 0; j < 4; ++j) {
            const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i + 8 * j));
            const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
            if constexpr (NonTemporal) _mm256_stream_ps(out + i + 8 * j, f);
            else _mm256_store_ps(out + i + 8 * j, f);
        }
    }
    _mm_sfence();
}

template <bool NonTemporal>
__attribute__((target("avx512f,avx512bw"))) void stream_avx512(const std::uint8_t* in, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) {
        for (int j = 0; j < 4; ++j) {
            const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(in + i + 16 * j));
            const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
            if constexpr (NonTemporal) _mm512_stream_ps(out + i + 16 * j, f);
            else _mm512_store_ps(out + i + 16 * j, f);
        }
    }
    _mm_sfence();
}
#endif

struct StreamCandidate {
    const char* name;
    StreamFn fn;
};

/// The widest vector ISA this CPU runs, with normal and non-temporal stores.
std::vector<StreamCandidate> stream_candidates() {
    std::vector<StreamCandidate> c;
#if QDML_BENCH_X86
    if (cpu().avx512bw) {
        c.push_back({"avx512 stores", stream_avx512<false>});
        c.push_back({"avx512 non-temporal stores", stream_avx512<true>});
    } else if (cpu().avx2) {
        c.push_back({"avx2 stores", stream_avx2<false>});
        c.push_back({"avx2 non-temporal stores", stream_avx2<true>});
    } else {
        c.push_back({"sse2 stores", stream_sse2<false>});
        c.push_back({"sse2 non-temporal stores", stream_sse2<true>});
    }
#else
    c.push_back({"scalar stores", stream_scalar});
#endif
    return c;
}

double seconds_of(StreamFn fn, const std::uint8_t* in, float* out, std::size_t n) {
    return best_of_five([&] { fn(in, out, n); });
}

void hw_stream(benchmark::State& state) {
    const std::size_t n = kStreamBytes;
    Buffer<std::uint8_t> in = random_buffer<std::uint8_t>(n, 0, 255, 12);
    Buffer<float> out(n);
    // The fastest of the candidates (normal or non-temporal stores), chosen
    // once per row call from the best of five passes each.
    const auto candidates = stream_candidates();
    StreamCandidate best = candidates.front();
    double best_seconds = 1e30;
    for (const auto& c : candidates) {
        const double t = seconds_of(c.fn, in.data(), out.data(), n);
        if (t < best_seconds) best_seconds = t, best = c;
    }
    for (auto _ : state) {
        best.fn(in.data(), out.data(), n);
        benchmark::ClobberMemory();
    }
    state.SetLabel(best.name);
    set_element_wise_counters(state, static_cast<double>(n), static_cast<double>(n * (1 + sizeof(float))));
}

/// hw/stream/u8_f32/16777216/threads:N: thread t streams the t-th contiguous
/// share (a multiple of 64 elements: every kernel's step, aligned; the last
/// takes the rest), all started together; the stores chosen as hw_stream
/// does, on N threads.
void hw_stream_threads(benchmark::State& state, unsigned threads) {
    const std::size_t n = kStreamBytes;
    Buffer<std::uint8_t> in = random_buffer<std::uint8_t>(n, 0, 255, 12);
    Buffer<float> out(n);
    const std::size_t share = (n / threads) & ~std::size_t{63};
    StreamFn fn = nullptr;
    auto task = [&](unsigned t) {
        const std::size_t begin = t * share;
        fn(in.data() + begin, out.data() + begin, t + 1 == threads ? n - begin : share);
    };
    Team team(threads);
    const auto candidates = stream_candidates();
    StreamCandidate best = candidates.front();
    double best_seconds = 1e30;
    for (const auto& c : candidates) {
        fn = c.fn;
        const double t = best_of_five([&] { team.run(task); });
        if (t < best_seconds) best_seconds = t, best = c;
    }
    fn = best.fn;
    for (auto _ : state) {
        team.run(task);
        benchmark::ClobberMemory();
    }
    state.SetLabel(best.name);
    set_element_wise_counters(state, static_cast<double>(n), static_cast<double>(n * (1 + sizeof(float))));
}

void hw_copy(benchmark::State& state) {
    const std::size_t n = kStreamBytes;
    Buffer<std::uint8_t> in = random_buffer<std::uint8_t>(n, 0, 255, 13);
    Buffer<std::uint8_t> out(n);
    for (auto _ : state) {
        std::memcpy(out.data(), in.data(), n);
        benchmark::ClobberMemory();
    }
    state.SetLabel("memcpy");
    set_element_wise_counters(state, static_cast<double>(n), 2.0 * static_cast<double>(n));
}

// ---- dot-product peaks ---------------------------------------------------------
// Each kernel runs `iterations` rounds of 12 independent chains (enough to
// cover a 5-cycle latency at 2 per cycle) and returns the multiply-adds done.

constexpr int kChains = 12;
constexpr std::int64_t kDotIterations = 1 << 16;

#if QDML_BENCH_X86
__attribute__((target("avx2"))) double dot_avx2_vpmaddwd(std::int64_t iterations) {
    __m256i x[kChains];
    const __m256i c = _mm256_set1_epi16(static_cast<short>(iterations | 1));
    for (int j = 0; j < kChains; ++j) x[j] = _mm256_set1_epi16(static_cast<short>(j + iterations));
    for (std::int64_t i = 0; i < iterations; ++i)
        for (int j = 0; j < kChains; ++j) x[j] = _mm256_madd_epi16(x[j], c);
    for (int j = 0; j < kChains; ++j) benchmark::DoNotOptimize(x[j]);
    return 16.0 * kChains * static_cast<double>(iterations);
}

__attribute__((target("avx512f,avx512bw"))) double dot_avx512_vpmaddwd(std::int64_t iterations) {
    __m512i x[kChains];
    const __m512i c = _mm512_set1_epi16(static_cast<short>(iterations | 1));
    for (int j = 0; j < kChains; ++j) x[j] = _mm512_set1_epi16(static_cast<short>(j + iterations));
    for (std::int64_t i = 0; i < iterations; ++i)
        for (int j = 0; j < kChains; ++j) x[j] = _mm512_madd_epi16(x[j], c);
    for (int j = 0; j < kChains; ++j) benchmark::DoNotOptimize(x[j]);
    return 32.0 * kChains * static_cast<double>(iterations);
}

__attribute__((target("avx2,avxvnni"))) double dot_avxvnni_vpdpbusd(std::int64_t iterations) {
    __m256i acc[kChains];
    const __m256i a = _mm256_set1_epi8(static_cast<char>(iterations | 1)), b = _mm256_set1_epi8(3);
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_epi32(j);
    for (std::int64_t i = 0; i < iterations; ++i)
        for (int j = 0; j < kChains; ++j) acc[j] = _mm256_dpbusd_avx_epi32(acc[j], a, b);
    for (int j = 0; j < kChains; ++j) benchmark::DoNotOptimize(acc[j]);
    return 32.0 * kChains * static_cast<double>(iterations);
}

__attribute__((target("avx512f,avx512vnni"))) double dot_avx512vnni_vpdpbusd(std::int64_t iterations) {
    __m512i acc[kChains];
    const __m512i a = _mm512_set1_epi8(static_cast<char>(iterations | 1)), b = _mm512_set1_epi8(3);
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_epi32(j);
    for (std::int64_t i = 0; i < iterations; ++i)
        for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
    for (int j = 0; j < kChains; ++j) benchmark::DoNotOptimize(acc[j]);
    return 64.0 * kChains * static_cast<double>(iterations);
}

/// AMX: 4 accumulator tiles (16x16 int32) from 2 A tiles (16x64 u8) and 2 B
/// tiles (16x64 s8 in groups of 4), 2x2 blocked: each tdpbusd is
/// 16*16*64 multiply-adds.
struct alignas(64) TileConfig {
    std::uint8_t palette = 1, start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
};

__attribute__((target("amx-tile,amx-int8"))) double dot_amx_tdpbusd(std::int64_t iterations) {
    TileConfig cfg;
    for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
    alignas(64) static std::uint8_t data[16 * 64] = {1};
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, data, 64);
    _tile_loadd(5, data, 64);
    _tile_loadd(6, data, 64);
    _tile_loadd(7, data, 64);
    for (std::int64_t i = 0; i < iterations; ++i) {
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    alignas(64) std::int32_t sink[16 * 16];  // (each thread its own: the /threads:N rows)
    _tile_stored(0, sink, 64);
    benchmark::DoNotOptimize(sink);
    _tile_release();
    return 4.0 * 16 * 16 * 64 * static_cast<double>(iterations);
}
#endif

void hw_dot(benchmark::State& state, double (*kernel)(std::int64_t), bool available, const char* why) {
    if (!available) {
        state.SkipWithError(why);
        return;
    }
    double macs = 0;
    for (auto _ : state) macs = kernel(kDotIterations);
    set_ops_counter(state, 2.0 * macs);
}

/// hw/dot/<isa>/peak/threads:N: each of N threads, started together, runs
/// the register-only loop of hw_dot; OPS counts every thread's.
void hw_dot_threads(benchmark::State& state, double (*kernel)(std::int64_t), bool available, const char* why,
                    unsigned threads) {
    if (!available) {
        state.SkipWithError(why);
        return;
    }
    std::vector<double> macs(threads, 0.0);
    auto task = [&](unsigned t) { macs[t] = kernel(kDotIterations); };
    Team team(threads);
    for (auto _ : state) team.run(task);
    set_ops_counter(state, 2.0 * std::accumulate(macs.begin(), macs.end(), 0.0));
}

[[maybe_unused]] const bool registered = [] {
    add_row("hw/stream/u8_f32/16777216", hw_stream);
    for (const unsigned threads : thread_counts())
        add_row("hw/stream/u8_f32/16777216" + threads_suffix(threads),
                [threads](benchmark::State& s) { hw_stream_threads(s, threads); });
    add_row("hw/copy/u8/16777216", hw_copy);
#if QDML_BENCH_X86
    const auto dot = [](const std::string& isa, double (*kernel)(std::int64_t), auto available) {
        add_row("hw/dot/" + isa + "/peak", [=](benchmark::State& s) {
            hw_dot(s, kernel, available(), ("this CPU lacks " + isa).c_str());
        });
        for (const unsigned threads : thread_counts())
            add_row("hw/dot/" + isa + "/peak" + threads_suffix(threads), [=](benchmark::State& s) {
                hw_dot_threads(s, kernel, available(), ("this CPU lacks " + isa).c_str(), threads);
            });
    };
    dot("avx2_vpmaddwd", dot_avx2_vpmaddwd, [] { return cpu().avx2; });
    dot("avx512_vpmaddwd", dot_avx512_vpmaddwd, [] { return cpu().avx512bw; });
    dot("avxvnni_vpdpbusd", dot_avxvnni_vpdpbusd, [] { return cpu().avxvnni; });
    dot("avx512vnni_vpdpbusd", dot_avx512vnni_vpdpbusd, [] { return cpu().avx512vnni; });
    dot("amx_tdpbusd", dot_amx_tdpbusd, [] { return request_amx(); });
#endif
    return true;
}();

}  // namespace
}  // namespace qdml_bench
