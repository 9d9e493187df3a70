// The machine's limits (BENCH.md "Limits"), measured in the same run as the
// kernels they bound:
//   hw/stream/u8_f32/16777216  read 2^24 u8, write 2^24 f32 (widened and
//                              converted, nothing else), fastest stores;
//   hw/stream/f32_u8/16777216  read 2^24 f32, write 2^24 u8 (rounded and
//                              narrowed, nothing else), fastest stores;
//   hw/stream3/i8/16777216     read two 2^24-byte streams, write their byte
//                              sum (the quantized add's traffic), fastest stores;
//   hw/copy/u8/16777216        memcpy of 2^24 bytes;
//   hw/dot/<isa>/peak          int8 multiply-accumulate peak of one
//                              instruction, from 12 independent register-only
//                              chains (OPS: 2 per multiply-add);
//   .../threads:N              (the stream, stream3 and dot rows; issue 26, BENCH.md
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

/// A limit row of a streaming kernel (`kernels`: the fastest ISA's, with
/// normal and with non-temporal stores): the faster of them, chosen once per
/// row call from the best of five passes each, then timed; on `threads`
/// threads (a Team) when given, thread t on the t-th contiguous share of the
/// n elements (a multiple of 64: every kernel's step, aligned; the last takes
/// the rest). `pass(fn, begin, count)` streams elements [begin, begin + count).
template <class Fn, class Pass>
void stream_row(benchmark::State& state, const std::vector<std::pair<const char*, Fn>>& kernels, std::size_t n,
                unsigned threads, double bytes, Pass pass) {
    const unsigned team_size = std::max(threads, 1u);
    const std::size_t share = (n / team_size) & ~std::size_t{63};
    Fn fn = kernels.front().second;
    auto task = [&](unsigned t) {
        const std::size_t begin = t * share;
        pass(fn, begin, t + 1 == team_size ? n - begin : share);
    };
    Team team(team_size);
    const char* best = kernels.front().first;
    double best_seconds = 1e30;
    for (const auto& [name, candidate] : kernels) {
        fn = candidate;
        const double t = best_of_five([&] { team.run(task); });
        if (t < best_seconds) best_seconds = t, best = name;
    }
    for (const auto& k : kernels)
        if (k.first == best) fn = k.second;
    for (auto _ : state) {
        team.run(task);
        benchmark::ClobberMemory();
    }
    state.SetLabel(best);
    set_element_wise_counters(state, static_cast<double>(n), bytes);
}

/// hw/stream/u8_f32/16777216 (and /threads:N).
void hw_stream(benchmark::State& state, unsigned threads) {
    const std::size_t n = kStreamBytes;
    Buffer<std::uint8_t> in = random_buffer<std::uint8_t>(n, 0, 255, 12);
    Buffer<float> out(n);
    std::vector<std::pair<const char*, StreamFn>> kernels;
    for (const auto& c : stream_candidates()) kernels.emplace_back(c.name, c.fn);
    stream_row(state, kernels, n, threads, static_cast<double>(n * (1 + sizeof(float))),
               [&](StreamFn fn, std::size_t begin, std::size_t count) {
                   fn(in.data() + begin, out.data() + begin, count);
               });
}

// ---- stream: f32 -> u8 -------------------------------------------------------

using StreamDownFn = void (*)(const float*, std::uint8_t*, std::size_t);

#if !QDML_BENCH_X86
void stream_down_scalar(const float* in, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(static_cast<int>(in[i]));
}
#else
template <bool NonTemporal>
__attribute__((target("sse2"))) void stream_down_sse2(const float* in, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 16) {
        __m128i v[4];
        for (int j = 0; j < 4; ++j) v[j] = _mm_cvtps_epi32(_mm_load_ps(in + i + 4 * j));
        const __m128i b = _mm_packus_epi16(_mm_packs_epi32(v[0], v[1]), _mm_packs_epi32(v[2], v[3]));
        if constexpr (NonTemporal) _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), b);
        else _mm_store_si128(reinterpret_cast<__m128i*>(out + i), b);
    }
    _mm_sfence();
}

template <bool NonTemporal>
__attribute__((target("avx2"))) void stream_down_avx2(const float* in, std::uint8_t* out, std::size_t n) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (std::size_t i = 0; i < n; i += 32) {
        __m256i v[4];
        for (int j = 0; j < 4; ++j) v[j] = _mm256_cvtps_epi32(_mm256_load_ps(in + i + 8 * j));
        const __m256i b = _mm256_permutevar8x32_epi32(
            _mm256_packus_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3])), order);
        if constexpr (NonTemporal) _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), b);
        else _mm256_store_si256(reinterpret_cast<__m256i*>(out + i), b);
    }
    _mm_sfence();
}

template <bool NonTemporal>
__attribute__((target("avx512f,avx512bw"))) void stream_down_avx512(const float* in, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) {
        __m512i b = _mm512_setzero_si512();
        b = _mm512_inserti32x4(b, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(_mm512_load_ps(in + i))), 0);
        b = _mm512_inserti32x4(b, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(_mm512_load_ps(in + i + 16))), 1);
        b = _mm512_inserti32x4(b, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(_mm512_load_ps(in + i + 32))), 2);
        b = _mm512_inserti32x4(b, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(_mm512_load_ps(in + i + 48))), 3);
        if constexpr (NonTemporal) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), b);
        else _mm512_store_si512(out + i, b);
    }
    _mm_sfence();
}
#endif

/// hw/stream/f32_u8/16777216: read 2^24 floats, write 2^24 bytes (each
/// rounded and narrowed, nothing else: QUANTIZE_LINEAR's traffic), the
/// widest vectors, normal or non-temporal stores.
void hw_stream_down(benchmark::State& state) {
    const std::size_t n = kStreamBytes;
    Buffer<float> in = random_buffer<float>(n, 0.0, 255.0, 16);
    Buffer<std::uint8_t> out(n);
    std::vector<std::pair<const char*, StreamDownFn>> kernels;
#if QDML_BENCH_X86
    if (cpu().avx512bw)
        kernels = {{"avx512 stores", stream_down_avx512<false>}, {"avx512 non-temporal stores", stream_down_avx512<true>}};
    else if (cpu().avx2)
        kernels = {{"avx2 stores", stream_down_avx2<false>}, {"avx2 non-temporal stores", stream_down_avx2<true>}};
    else
        kernels = {{"sse2 stores", stream_down_sse2<false>}, {"sse2 non-temporal stores", stream_down_sse2<true>}};
#else
    kernels = {{"scalar stores", stream_down_scalar}};
#endif
    stream_row(state, kernels, n, 0, static_cast<double>(n * (sizeof(float) + 1)),
               [&](StreamDownFn fn, std::size_t begin, std::size_t count) {
                   fn(in.data() + begin, out.data() + begin, count);
               });
}

// ---- stream3: two byte streams in, one out -------------------------------------

using Stream3Fn = void (*)(const std::uint8_t*, const std::uint8_t*, std::uint8_t*, std::size_t);

#if !QDML_BENCH_X86
void stream3_scalar(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(a[i] + b[i]);
}
#else
template <bool NonTemporal>
__attribute__((target("sse2"))) void stream3_sse2(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                                                  std::size_t n) {
    for (std::size_t i = 0; i < n; i += 16) {
        const __m128i v = _mm_add_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(a + i)),
                                       _mm_load_si128(reinterpret_cast<const __m128i*>(b + i)));
        if constexpr (NonTemporal) _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), v);
        else _mm_store_si128(reinterpret_cast<__m128i*>(out + i), v);
    }
    _mm_sfence();
}
template <bool NonTemporal>
__attribute__((target("avx2"))) void stream3_avx2(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                                                  std::size_t n) {
    for (std::size_t i = 0; i < n; i += 32) {
        const __m256i v = _mm256_add_epi8(_mm256_load_si256(reinterpret_cast<const __m256i*>(a + i)),
                                          _mm256_load_si256(reinterpret_cast<const __m256i*>(b + i)));
        if constexpr (NonTemporal) _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), v);
        else _mm256_store_si256(reinterpret_cast<__m256i*>(out + i), v);
    }
    _mm_sfence();
}
template <bool NonTemporal>
__attribute__((target("avx512f,avx512bw"))) void stream3_avx512(const std::uint8_t* a, const std::uint8_t* b,
                                                                std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) {
        const __m512i v = _mm512_add_epi8(_mm512_load_si512(a + i), _mm512_load_si512(b + i));
        if constexpr (NonTemporal) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), v);
        else _mm512_store_si512(out + i, v);
    }
    _mm_sfence();
}
#endif

/// hw/stream3/i8/16777216 (and /threads:N): read two 2^24-byte streams,
/// write their byte sum (the quantized add's traffic: two inputs, one
/// output), the widest vectors, normal or non-temporal stores.
void hw_stream3(benchmark::State& state, unsigned threads) {
    const std::size_t n = kStreamBytes;
    Buffer<std::uint8_t> a = random_buffer<std::uint8_t>(n, 0, 255, 14), b = random_buffer<std::uint8_t>(n, 0, 255, 15);
    Buffer<std::uint8_t> out(n);
    std::vector<std::pair<const char*, Stream3Fn>> kernels;
#if QDML_BENCH_X86
    if (cpu().avx512bw)
        kernels = {{"avx512 stores", stream3_avx512<false>}, {"avx512 non-temporal stores", stream3_avx512<true>}};
    else if (cpu().avx2)
        kernels = {{"avx2 stores", stream3_avx2<false>}, {"avx2 non-temporal stores", stream3_avx2<true>}};
    else
        kernels = {{"sse2 stores", stream3_sse2<false>}, {"sse2 non-temporal stores", stream3_sse2<true>}};
#else
    kernels = {{"scalar stores", stream3_scalar}};
#endif
    stream_row(state, kernels, n, threads, 3.0 * static_cast<double>(n),
               [&](Stream3Fn fn, std::size_t begin, std::size_t count) {
                   fn(a.data() + begin, b.data() + begin, out.data() + begin, count);
               });
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
    add_row("hw/stream/u8_f32/16777216", [](benchmark::State& s) { hw_stream(s, 0); });
    add_row("hw/stream3/i8/16777216", [](benchmark::State& s) { hw_stream3(s, 0); });
    add_row("hw/stream/f32_u8/16777216", hw_stream_down);
    for (const unsigned threads : thread_counts()) {
        add_row("hw/stream/u8_f32/16777216" + threads_suffix(threads),
                [threads](benchmark::State& s) { hw_stream(s, threads); });
        add_row("hw/stream3/i8/16777216" + threads_suffix(threads),
                [threads](benchmark::State& s) { hw_stream3(s, threads); });
    }
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
