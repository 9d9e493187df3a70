// The README's API example: one matmul through the runtime-typed entry
// (qdml::run on a DirectML-shaped desc) and the same call through the typed
// template (qdml::reference on a QuantizedLinearMatrixMultiply<...>).
#include <cstdint>
#include <cstdio>

#include "qdml/qdml.hpp"

int main() {
    using qdml::TensorDataType;
    using qdml::TensorDesc;

    // A {2, 4} uint8, B {4, 3} int8, Output {2, 3} uint8, per-tensor quantization.
    const std::uint8_t a[8] = {120, 130, 140, 150, 100, 110, 90, 80};  // inputs may be const
    const std::int8_t b[12] = {1, -2, 3, 4, -5, 6, -7, 8, 9, 10, 11, -12};
    const float a_scale = 0.05f, b_scale = 0.25f, out_scale = 0.5f;
    const std::uint8_t a_zp = 128, out_zp = 100;
    std::uint8_t out[6] = {};

    // Runtime-typed entry: DML member names, validation, then one dispatch.
    qdml::QuantizedLinearMatrixMultiplyDesc desc;
    desc.ATensor = {TensorDesc::make(TensorDataType::UInt8, {2, 4}), a};
    desc.AScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &a_scale};
    desc.AZeroPointTensor = {TensorDesc::make(TensorDataType::UInt8, {1, 1}), &a_zp};  // optional member
    desc.BTensor = {TensorDesc::make(TensorDataType::Int8, {4, 3}), b};
    desc.BScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &b_scale};
    desc.OutputScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &out_scale};
    desc.OutputZeroPointTensor = {TensorDesc::make(TensorDataType::UInt8, {1, 1}), &out_zp};
    desc.OutputTensor = {TensorDesc::make(TensorDataType::UInt8, {2, 3}), out};
    try {
        qdml::run(desc);  // throws qdml::Error naming operator, member and rule
    } catch (const qdml::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }

    // Typed entry: types resolved at compile time, views of the same buffers.
    std::uint8_t out2[6] = {};
    desc.OutputTensor.Data = out2;
    using Op = qdml::QuantizedLinearMatrixMultiply<std::uint8_t, std::int8_t, std::uint8_t>;
    qdml::reference::quantized_linear_matrix_multiply(Op::bind(desc));  // bind validates desc

    for (int i = 0; i < 6; ++i) std::printf("%d%s", out[i], i == 5 ? "\n" : " ");
    for (int i = 0; i < 6; ++i)
        if (out[i] != out2[i]) return 1;
    return 0;
}
