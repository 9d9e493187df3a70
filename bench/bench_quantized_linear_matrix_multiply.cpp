// Reference QUANTIZED_LINEAR_MATRIX_MULTIPLY throughput (OPS = 2*M*N*K per call).
// Later issues add the SIMD kernels and peers (oneDNN, XNNPACK) to this file.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "qdml/qdml.hpp"

namespace {

template <class TA, class TB>
void reference_matmul(benchmark::State& state) {
    using qdml::TensorDataType;
    using qdml::TensorDesc;
    const auto M = static_cast<std::uint32_t>(state.range(0));
    const auto N = static_cast<std::uint32_t>(state.range(1));
    const auto K = static_cast<std::uint32_t>(state.range(2));
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<TA> a(std::size_t{M} * K);
    std::vector<TB> b(std::size_t{K} * N);
    std::vector<std::uint8_t> out(std::size_t{M} * N);
    for (auto& v : a) v = static_cast<TA>(byte(rng));
    for (auto& v : b) v = static_cast<TB>(byte(rng));
    float a_scale = 0.02f, b_scale = 0.01f, out_scale = 3.0f;
    TA a_zp = static_cast<TA>(3);
    std::uint8_t out_zp = 128;

    qdml::QuantizedLinearMatrixMultiplyDesc d;
    d.ATensor = {TensorDesc::make(qdml::data_type_of<TA>, {M, K}), a.data()};
    d.AScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &a_scale};
    d.AZeroPointTensor = qdml::Tensor{TensorDesc::make(qdml::data_type_of<TA>, {1, 1}), &a_zp};
    d.BTensor = {TensorDesc::make(qdml::data_type_of<TB>, {K, N}), b.data()};
    d.BScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &b_scale};
    d.OutputScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &out_scale};
    d.OutputZeroPointTensor = qdml::Tensor{TensorDesc::make(TensorDataType::UInt8, {1, 1}), &out_zp};
    d.OutputTensor = {TensorDesc::make(TensorDataType::UInt8, {M, N}), out.data()};
    for (auto _ : state) {
        qdml::run(d);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.counters["OPS"] = benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel("reference");
}

}  // namespace

BENCHMARK_TEMPLATE(reference_matmul, std::uint8_t, std::uint8_t)
    ->Args({1024, 1024, 1024})
    ->Args({1, 4096, 1024})
    ->Args({128, 768, 768})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(reference_matmul, std::uint8_t, std::int8_t)->Args({256, 256, 256})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
