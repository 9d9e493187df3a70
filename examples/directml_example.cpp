// DirectML code, unchanged, computed by qdml: the desc structs below are built
// exactly as DirectML's samples (HelloDirectML) and the operator reference
// pages build them; where a DirectML program would create, compile, bind and
// dispatch the operator, this one hands the same DML_OPERATOR_DESC and CPU
// copies of its buffers to qdml::dml::execute. The expected outputs are
// derived by hand in the comments. Builds with -Wall -Wextra -Werror; on
// Windows the SDK's DirectML.h supplies the structs.
#include <qdml/directml.hpp>

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok" : "MISMATCH", what);
    if (!ok) ++failures;
}

/// QUANTIZED_LINEAR_MATRIX_MULTIPLY: UINT8 A {1,1,2,3} x INT8 B {1,1,3,2}.
void matrix_multiply() {
    UINT aSizes[4] = {1, 1, 2, 3};
    UINT bSizes[4] = {1, 1, 3, 2};
    UINT outputSizes[4] = {1, 1, 2, 2};
    UINT scalarSizes[4] = {1, 1, 1, 1};

    DML_BUFFER_TENSOR_DESC aBufferDesc = {};
    aBufferDesc.DataType = DML_TENSOR_DATA_TYPE_UINT8;
    aBufferDesc.Flags = DML_TENSOR_FLAG_NONE;
    aBufferDesc.DimensionCount = static_cast<UINT>(std::size(aSizes));
    aBufferDesc.Sizes = aSizes;
    aBufferDesc.Strides = nullptr;
    aBufferDesc.TotalTensorSizeInBytes = qdml::dml::calc_buffer_tensor_size(
        aBufferDesc.DataType, aBufferDesc.DimensionCount, aBufferDesc.Sizes, aBufferDesc.Strides);
    DML_TENSOR_DESC aTensorDesc = {DML_TENSOR_TYPE_BUFFER, &aBufferDesc};

    DML_BUFFER_TENSOR_DESC bBufferDesc = aBufferDesc;
    bBufferDesc.DataType = DML_TENSOR_DATA_TYPE_INT8;
    bBufferDesc.Sizes = bSizes;
    bBufferDesc.TotalTensorSizeInBytes = qdml::dml::calc_buffer_tensor_size(bBufferDesc);
    DML_TENSOR_DESC bTensorDesc = {DML_TENSOR_TYPE_BUFFER, &bBufferDesc};

    DML_BUFFER_TENSOR_DESC scaleBufferDesc = aBufferDesc;
    scaleBufferDesc.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
    scaleBufferDesc.Sizes = scalarSizes;
    scaleBufferDesc.TotalTensorSizeInBytes = qdml::dml::calc_buffer_tensor_size(scaleBufferDesc);
    DML_TENSOR_DESC scaleTensorDesc = {DML_TENSOR_TYPE_BUFFER, &scaleBufferDesc};

    DML_BUFFER_TENSOR_DESC zeroPointBufferDesc = scaleBufferDesc;
    zeroPointBufferDesc.DataType = DML_TENSOR_DATA_TYPE_UINT8;
    zeroPointBufferDesc.TotalTensorSizeInBytes = qdml::dml::calc_buffer_tensor_size(zeroPointBufferDesc);
    DML_TENSOR_DESC zeroPointTensorDesc = {DML_TENSOR_TYPE_BUFFER, &zeroPointBufferDesc};

    DML_BUFFER_TENSOR_DESC outputBufferDesc = aBufferDesc;
    outputBufferDesc.Sizes = outputSizes;
    outputBufferDesc.TotalTensorSizeInBytes = qdml::dml::calc_buffer_tensor_size(outputBufferDesc);
    DML_TENSOR_DESC outputTensorDesc = {DML_TENSOR_TYPE_BUFFER, &outputBufferDesc};

    DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC matmulDesc = {};
    matmulDesc.ATensor = &aTensorDesc;
    matmulDesc.AScaleTensor = &scaleTensorDesc;
    matmulDesc.AZeroPointTensor = &zeroPointTensorDesc;
    matmulDesc.BTensor = &bTensorDesc;
    matmulDesc.BScaleTensor = &scaleTensorDesc;
    matmulDesc.BZeroPointTensor = nullptr;  // _Maybenull_
    matmulDesc.OutputScaleTensor = &scaleTensorDesc;
    matmulDesc.OutputZeroPointTensor = &zeroPointTensorDesc;
    matmulDesc.OutputTensor = &outputTensorDesc;

    DML_OPERATOR_DESC opDesc = {DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY, &matmulDesc};

    // Buffers padded to TotalTensorSizeInBytes (8 bytes for A and B, 4 for each scalar).
    std::vector<std::uint8_t> a = {130, 131, 132, 127, 126, 125, 0, 0};
    std::vector<std::int8_t> b = {1, -1, 2, -2, 3, -3, 0, 0};
    std::vector<float> scale = {0.5f};  // A, B and Output share one scale tensor
    std::vector<std::uint8_t> zeroPoint = {128, 0, 0, 0};
    std::vector<std::uint8_t> output(outputBufferDesc.TotalTensorSizeInBytes, 0);

    // Binding order: the desc's tensor members in order; empty for BZeroPointTensor.
    qdml::dml::execute(opDesc, {qdml::dml::buffer(a), qdml::dml::buffer(scale), qdml::dml::buffer(zeroPoint),
                                qdml::dml::buffer(b), qdml::dml::buffer(scale), qdml::dml::Binding{},
                                qdml::dml::buffer(scale), qdml::dml::buffer(zeroPoint), qdml::dml::buffer(output)});

    // A - 128 = [2 3 4; -1 -2 -3], B = [1 -1; 2 -2; 3 -3]
    // acc = [2+6+12, -(2+6+12); -1-4-9, 1+4+9] = [20 -20; -14 14]
    // multiplier = (0.5 * 0.5) / 0.5 = 0.5: [10 -10; -7 7] + 128 = [138 118; 121 135]
    expect(output[0] == 138 && output[1] == 118 && output[2] == 121 && output[3] == 135,
           "QUANTIZED_LINEAR_MATRIX_MULTIPLY u8 x i8 -> u8");
}

/// ELEMENT_WISE_CLIP on FLOAT32, through the exception-free entry.
void clip() {
    UINT sizes[4] = {1, 1, 1, 4};
    DML_BUFFER_TENSOR_DESC bufferDesc = {};
    bufferDesc.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
    bufferDesc.Flags = DML_TENSOR_FLAG_NONE;
    bufferDesc.DimensionCount = static_cast<UINT>(std::size(sizes));
    bufferDesc.Sizes = sizes;
    bufferDesc.TotalTensorSizeInBytes = qdml::dml::calc_buffer_tensor_size(bufferDesc);
    DML_TENSOR_DESC tensorDesc = {DML_TENSOR_TYPE_BUFFER, &bufferDesc};

    DML_SCALE_BIAS scaleBias = {0.5f, 1.0f};
    DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clipDesc = {};
    clipDesc.InputTensor = &tensorDesc;
    clipDesc.OutputTensor = &tensorDesc;
    clipDesc.ScaleBias = &scaleBias;
    clipDesc.Min = 0.0f;
    clipDesc.Max = 2.0f;
    DML_OPERATOR_DESC opDesc = {DML_OPERATOR_ELEMENT_WISE_CLIP, &clipDesc};

    std::vector<float> input = {-4.0f, -1.0f, 1.5f, 3.0f}, output(4, 0.0f);
    const auto result = qdml::dml::try_execute(opDesc, {qdml::dml::buffer(input), qdml::dml::buffer(output)});
    // x * 0.5 + 1 = -1, 0.5, 1.75, 2.5; clipped to [0, 2]
    expect(result.hr == qdml::dml::kOk && output == std::vector<float>{0.0f, 0.5f, 1.75f, 2.0f},
           "ELEMENT_WISE_CLIP FLOAT32 with ScaleBias");

    // A binding smaller than TotalTensorSizeInBytes: E_INVALIDARG with the reason, output untouched.
    output.assign(4, 9.0f);
    const auto bad = qdml::dml::try_execute(opDesc, {qdml::dml::buffer(input), qdml::dml::Binding{output.data(), 8}});
    std::printf("  rejected: %s\n", bad.message.c_str());
    expect(bad.hr == qdml::dml::kInvalidArg && output == std::vector<float>(4, 9.0f), "a too-small output binding is rejected");
}

}  // namespace

int main() {
    matrix_multiply();
    clip();
    return failures == 0 ? 0 : 1;
}
