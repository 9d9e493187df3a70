// bench/quantize_problems.hpp - the data of the quantize-side rows of
// issue 28 (bench_quantize.cpp and its peers): ELEMENT_WISE_QUANTIZE_LINEAR
// per tensor, and QUANTIZE / DEQUANTIZE of 4-bit tensors in blocks (as
// problems.hpp's problems: buffers, the DML desc, qdml's reference output).
#pragma once

#include <type_traits>

#include "problems.hpp"

namespace qdml_bench {

/// ELEMENT_WISE_QUANTIZE_LINEAR (issue 28): a packed FLOAT32 input of n
/// random values in [-4, 4), a per-tensor scale (1/40: about 3% of the
/// outputs saturate) and zero point (3 for INT8, 128 for UINT8), TOut output.
template <class TOut>
struct QuantizeLinearProblem {
    Buffer<float> input, scale;
    Buffer<TOut> zero_point, output, expected;
    qdml::ElementWiseQuantizeLinearDesc desc;
    std::uint32_t n;

    QuantizeLinearProblem(std::uint32_t count, Layout l) : n(count) {
        using qdml::data_type_of;
        const auto in_desc = element_wise_desc(qdml::TensorDataType::Float32, n, l, false);
        const auto param = [&](qdml::TensorDataType t) { return element_wise_desc(t, n, l, false, 0b1111u); };
        input = buffer_for<float>(in_desc, -4.0, 4.0, 8);
        scale = buffer_for<float>(param(qdml::TensorDataType::Float32));
        zero_point = buffer_for<TOut>(param(data_type_of<TOut>));
        scale[0] = 0.025f;
        zero_point[0] = static_cast<TOut>(std::is_signed_v<TOut> ? 3 : 128);
        const auto out_desc = element_wise_desc(data_type_of<TOut>, n, l, false);
        output = buffer_for<TOut>(out_desc);
        desc.InputTensor = tensor_of(in_desc, input);
        desc.ScaleTensor = tensor_of(param(qdml::TensorDataType::Float32), scale);
        desc.ZeroPointTensor = tensor_of(param(data_type_of<TOut>), zero_point);
        desc.OutputTensor = tensor_of(out_desc, output);
        run_reference(desc);
        expected = output;
    }
    double bytes() const {
        return span_bytes(desc.InputTensor) + span_bytes(desc.ScaleTensor) + span_bytes(*desc.ZeroPointTensor) +
               span_bytes(desc.OutputTensor);
    }
    void counters(benchmark::State& s) const { set_element_wise_counters(s, n, bytes()); }
};

/// QUANTIZE (Quantize true: FLOAT32 to TQ) or DEQUANTIZE (TQ to FLOAT32)
/// of a packed {n / 4096, 4096} tensor, SCALE_ZERO_POINT in blocks of
/// kBlock along the last dimension (ONNX Runtime MatMulNBits' default block
/// of 32), TQ a quantized type (qdml::uint4, qdml::int4: two values a byte).
/// Scales in [0.01, 0.02), zero points any; the float input in [-0.2, 0.2)
/// (a few saturate).
template <bool Quantize, class TQ>
struct BlockQuantizeProblem {
    static constexpr std::uint32_t kBlock = 32, kRow = 4096;
    using Real = float;
    Buffer<float> real, scale;
    Buffer<std::uint8_t> quantized, zero_point;  // (4-bit: two values a byte)
    Buffer<std::conditional_t<Quantize, std::uint8_t, float>> output, expected;
    std::conditional_t<Quantize, qdml::QuantizeDesc, qdml::DequantizeDesc> desc;
    std::uint32_t n;

    BlockQuantizeProblem(std::uint32_t count, Layout) : n(count) {
        using qdml::data_type_of;
        const std::uint32_t rows = n / kRow;
        const auto real_desc = qdml::TensorDesc::make(qdml::TensorDataType::Float32, {rows, kRow});
        const auto q_desc = qdml::TensorDesc::make(data_type_of<TQ>, {rows, kRow});
        const auto s_desc = qdml::TensorDesc::make(qdml::TensorDataType::Float32, {rows, kRow / kBlock});
        const auto z_desc = qdml::TensorDesc::make(data_type_of<TQ>, {rows, kRow / kBlock});
        real = buffer_for<float>(real_desc, -0.2, 0.2, 9);
        quantized = buffer_for<std::uint8_t>(q_desc, 0, 255, 10);
        scale = buffer_for<float>(s_desc, 0.01, 0.02, 11);
        zero_point = buffer_for<std::uint8_t>(z_desc, 0, 255, 12);
        desc.QuantizationType = qdml::QuantizationType::ScaleZeroPoint;
        desc.QuantizationTensors[0] = tensor_of(s_desc, scale);
        desc.QuantizationTensors[1] = tensor_of(z_desc, zero_point);
        if constexpr (Quantize) {
            desc.InputTensor = tensor_of(real_desc, real);
            desc.OutputTensor = tensor_of(q_desc, quantized);
        } else {
            desc.InputTensor = tensor_of(q_desc, quantized);
            desc.OutputTensor = tensor_of(real_desc, real);
        }
        run_reference(desc);
        if constexpr (Quantize) output.swap(quantized);
        else output.swap(real);
        desc.OutputTensor.Data = output.data();
        expected = output;
    }
    /// Every byte read and written once: a 4-bit tensor's bytes are its buffer's.
    double bytes() const {
        const auto b = [](const qdml::Tensor& t) {
            return qdml::is_4bit(t.Desc.DataType) ? static_cast<double>(qdml::byte_count(t.Desc.DataType, t.Desc.Sizes[0] * std::uint64_t{t.Desc.Sizes[1]}))
                                                  : span_bytes(t);
        };
        return b(desc.InputTensor) + b(*desc.QuantizationTensors[0]) + b(*desc.QuantizationTensors[1]) +
               b(desc.OutputTensor);
    }
    void counters(benchmark::State& s) const { set_element_wise_counters(s, n, bytes()); }
};

}  // namespace qdml_bench
