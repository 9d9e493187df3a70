// stream-crossover: where non-temporal stores start to pay, measured on the
// machine at hand (README, "Non-temporal stores"). The SIMD dequantize
// (u8 -> f32, per-tensor parameters) and clip (f32) row loops over one
// contiguous row of n elements, with normal stores (`store/...`) and with
// non-temporal stores (`stream/...`), n from 2^14 to 2^24; compare the two
// rows of each size (bytes_per_second counts the output only). Not built by
// default:
//   meson compile -C build stream-crossover && build/bench/stream-crossover --benchmark_min_time=0.2
#include <cstdint>

#include "support.hpp"

namespace qdml_bench {
namespace {

template <bool Stream>
void dequantize_row(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const Buffer<std::uint8_t> in = random_buffer<std::uint8_t>(n, 0, 255, 1);
    Buffer<float> out(n);
    Buffer<float> scale(qdml::simd::kRepeat, 0.01f);
    Buffer<std::uint8_t> zp(qdml::simd::kRepeat, 100);
    const qdml::simd::detail::DequantizeRow<std::uint8_t, float> row{Stream};
    for (auto _ : state) {
        row(out.data(), {in.data(), 1}, {scale.data(), 0}, {zp.data(), 0}, n);
        if (Stream) qdml::simd::kernel::stream_fence();
        benchmark::ClobberMemory();
    }
    state.counters["bytes_per_second"] =
        benchmark::Counter(static_cast<double>(n * sizeof(float)), benchmark::Counter::kIsIterationInvariantRate);
}

template <bool Stream>
void clip_row(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const Buffer<float> in = random_buffer<float>(n, -4, 4, 2);
    Buffer<float> out(n);
    qdml::ClipParams<float> p;
    p.lo = -1.5f;
    p.hi = 2.0f;
    const qdml::simd::detail::ClipRow<float, false> row{p, Stream};
    for (auto _ : state) {
        row(out.data(), {in.data(), 1}, n);
        if (Stream) qdml::simd::kernel::stream_fence();
        benchmark::ClobberMemory();
    }
    state.counters["bytes_per_second"] =
        benchmark::Counter(static_cast<double>(n * sizeof(float)), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_TEMPLATE(dequantize_row, false)->Name("store/dequantize_u8_f32")->RangeMultiplier(2)->Range(1 << 14, 1 << 24);
BENCHMARK_TEMPLATE(dequantize_row, true)->Name("stream/dequantize_u8_f32")->RangeMultiplier(2)->Range(1 << 14, 1 << 24);
BENCHMARK_TEMPLATE(clip_row, false)->Name("store/clip_f32")->RangeMultiplier(2)->Range(1 << 14, 1 << 24);
BENCHMARK_TEMPLATE(clip_row, true)->Name("stream/clip_f32")->RangeMultiplier(2)->Range(1 << 14, 1 << 24);

}  // namespace
}  // namespace qdml_bench

BENCHMARK_MAIN();
