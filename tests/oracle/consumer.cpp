// A consumer of the golden oracle alone: includes qdml/reference.hpp only,
// built by check_oracle_only.py against a copy of include/qdml without
// simd/ and runtime/, with an xsimd that fails to compile when reached.
// Expected values derived by hand.
#include <cstdint>
#include <cstdio>

#include "qdml/reference.hpp"

int main() {
    using qdml::TensorDataType;
    using qdml::TensorDesc;
    int failures = 0;

    // Matmul: A {1, 2} = [10, 20] (UINT8), B {2, 1} = [1, 2] (INT8), every
    // scale 1, no zero points: 10 * 1 + 20 * 2 = 50.
    const std::uint8_t a[2] = {10, 20};
    const std::int8_t b[2] = {1, 2};
    const float one = 1.0f;
    std::uint8_t out[1] = {0};
    qdml::QuantizedLinearMatrixMultiplyDesc mm;
    mm.ATensor = {TensorDesc::make(TensorDataType::UInt8, {1, 2}), a};
    mm.AScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &one};
    mm.BTensor = {TensorDesc::make(TensorDataType::Int8, {2, 1}), b};
    mm.BScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &one};
    mm.OutputScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &one};
    mm.OutputTensor = {TensorDesc::make(TensorDataType::UInt8, {1, 1}), out};
    qdml::reference::run(mm);
    if (out[0] != 50) {
        std::printf("matmul: %d, want 50\n", out[0]);
        ++failures;
    }

    // Dequantize: INT8 [3, -1], Scale 0.5, ZeroPoint 1: (3 - 1) * 0.5 = 1, (-1 - 1) * 0.5 = -1.
    const std::int8_t x[2] = {3, -1}, zp = 1;
    const float scale = 0.5f;
    float y[2] = {0, 0};
    qdml::ElementWiseDequantizeLinearDesc dq;
    dq.InputTensor = {TensorDesc::make(TensorDataType::Int8, {2}), x};
    dq.ScaleTensor = {TensorDesc::make(TensorDataType::Float32, {2}, {0}), &scale};  // broadcast: stride 0
    dq.ZeroPointTensor = {TensorDesc::make(TensorDataType::Int8, {2}, {0}), &zp};
    dq.OutputTensor = {TensorDesc::make(TensorDataType::Float32, {2}), y};
    qdml::reference::run(dq);
    if (y[0] != 1.0f || y[1] != -1.0f) {
        std::printf("dequantize: %g %g, want 1 -1\n", y[0], y[1]);
        ++failures;
    }

    // Validation: an output of the wrong type is refused before any data is touched.
    mm.OutputTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), y};
    bool threw = false;
    try {
        qdml::reference::run(mm);
    } catch (const qdml::Error&) {
        threw = true;
    }
    if (!threw) {
        std::printf("a Float32 matmul output was accepted\n");
        ++failures;
    }
    std::printf("oracle-only consumer: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
