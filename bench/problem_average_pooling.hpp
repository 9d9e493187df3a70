// bench/problem_average_pooling.hpp - the data of the average_pooling rows
// (issue 28), next to problems.hpp (which holds the other operators'): u8
// or i8 NHWC memory through DML strides, {1, C, H, W}, a KxK window of
// stride 1, padding (K-1)/2 on every side, IncludePadding false;
// InputScale = OutputScale = 1/64 and both zero points the middle of the
// type (128 for u8, 0 for i8), per tensor. With those parameters qdml's
// binary32 average (docs/semantics.md section 17) is the correctly rounded
// (ties to even) mean of the window's integers inside the input: the
// products (x - zp) / 64 and their sums are exact, the division by the
// count rounds once, the division by 1/64 is exact. That is what oneDNN's
// pooling_avg_exclude_padding computes on the integers (it has no scales
// or zero points), so the oneDNN row computes the same function
// (mismatches 0 expected).
#pragma once

#include <cstdint>
#include <string>

#include "problems.hpp"

namespace qdml_bench {

template <class T>
struct AveragePoolingProblem {
    std::uint32_t C, H, W, K;
    Buffer<T> input, output, expected, zero_point;
    Buffer<float> scale;
    qdml::QuantizedLinearAveragePoolingDesc desc;

    AveragePoolingProblem(std::uint32_t channels, std::uint32_t size, std::uint32_t window)
        : C(channels), H(size), W(size), K(window) {
        using qdml::TensorDesc;
        const auto t = qdml::data_type_of<T>;
        const TensorDesc nhwc = TensorDesc::make(t, {1, C, H, W}, {C * H * W, 1, W * C, C});
        const TensorDesc one_f = TensorDesc::make(qdml::TensorDataType::Float32, {1, 1, 1, 1});
        const TensorDesc one_q = TensorDesc::make(t, {1, 1, 1, 1});
        input = random_buffer<T>(std::size_t{C} * H * W, std::is_signed_v<T> ? -128 : 0, std::is_signed_v<T> ? 127 : 255, 11);
        output = Buffer<T>(input.size());
        scale = Buffer<float>{1.0f / 64.0f};
        zero_point = Buffer<T>(4, mid_zero_point<T>());  // (TotalTensorSizeInBytes: 4)
        desc.InputTensor = tensor_of(nhwc, input);
        desc.OutputTensor = tensor_of(nhwc, output);
        desc.InputScaleTensor = tensor_of(one_f, scale);
        desc.OutputScaleTensor = tensor_of(one_f, scale);
        desc.InputZeroPointTensor = tensor_of(one_q, zero_point);
        desc.OutputZeroPointTensor = tensor_of(one_q, zero_point);
        desc.DimensionCount = 2;
        desc.WindowSize = {K, K, 1};
        desc.StartPadding = desc.EndPadding = {(K - 1) / 2, (K - 1) / 2, 0};
        desc.IncludePadding = false;
        run_reference(desc);
        expected = output;
    }
    /// `KxK_C_H_nhwc`.
    std::string shape() const {
        return std::to_string(K) + "x" + std::to_string(K) + "_" + std::to_string(C) + "_" + std::to_string(H) + "_nhwc";
    }
    /// Elements: the outputs; bytes: the input read once and the output written once.
    void counters(benchmark::State& s) const {
        set_element_wise_counters(s, static_cast<double>(output.size()), span_bytes(desc.InputTensor) + span_bytes(desc.OutputTensor));
    }
};

}  // namespace qdml_bench
