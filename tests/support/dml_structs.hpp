// tests/support/dml_structs.hpp - DirectML structs built from a qdml desc,
// member by member, the way DirectML code builds them (the inverse of
// qdml/directml/convert.hpp, written independently of it): so one case can go
// through qdml::run and through qdml::dml::execute.
#pragma once

#include <array>
#include <deque>
#include <optional>
#include <vector>

#include "qdml/directml.hpp"
#include "qdml/qdml.hpp"

namespace qtest {

/// Owns every struct and array an operator desc points to (stable
/// addresses: not copyable), and the bindings in member order.
class DmlOp {
public:
    DML_OPERATOR_DESC op{};
    std::vector<qdml::dml::Binding> bindings;

    explicit DmlOp(const qdml::ElementWiseDequantizeLinearDesc& d) {
        fill_scale_zero_point(dequantize_, d);
        op = {DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR, &dequantize_};
    }
    explicit DmlOp(const qdml::ElementWiseQuantizeLinearDesc& d) {
        fill_scale_zero_point(quantize_, d);
        op = {DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR, &quantize_};
    }
    explicit DmlOp(const qdml::ElementWiseQuantizedLinearAddDesc& d) {
        fill_binary(add_, d);
        op = {DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD, &add_};
    }
    explicit DmlOp(const qdml::QuantizedLinearMatrixMultiplyDesc& d) {
        fill_binary(matmul_, d);
        op = {DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY, &matmul_};
    }
    explicit DmlOp(const qdml::QuantizedLinearConvolutionDesc& d) {
        auto& s = conv_;
        s.InputTensor = add(d.InputTensor);
        s.InputScaleTensor = add(d.InputScaleTensor);
        s.InputZeroPointTensor = add(d.InputZeroPointTensor);
        s.FilterTensor = add(d.FilterTensor);
        s.FilterScaleTensor = add(d.FilterScaleTensor);
        s.FilterZeroPointTensor = add(d.FilterZeroPointTensor);
        s.BiasTensor = add(d.BiasTensor);
        s.OutputScaleTensor = add(d.OutputScaleTensor);
        s.OutputZeroPointTensor = add(d.OutputZeroPointTensor);
        s.OutputTensor = add(d.OutputTensor);
        s.DimensionCount = d.DimensionCount;
        s.Strides = array(d.Strides.begin(), 2);
        s.Dilations = array(d.Dilations.begin(), 2);
        s.StartPadding = array(d.StartPadding.begin(), 2);
        s.EndPadding = array(d.EndPadding.begin(), 2);
        s.GroupCount = d.GroupCount;
        op = {DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION, &s};
    }
    explicit DmlOp(const qdml::MatrixMultiplyIntegerDesc& d) {
        auto& s = matmul_integer_;
        s.ATensor = add(d.ATensor);
        s.AZeroPointTensor = add(d.AZeroPointTensor);
        s.BTensor = add(d.BTensor);
        s.BZeroPointTensor = add(d.BZeroPointTensor);
        s.OutputTensor = add(d.OutputTensor);
        op = {DML_OPERATOR_MATRIX_MULTIPLY_INTEGER, &s};
    }
    explicit DmlOp(const qdml::MatrixMultiplyIntegerToFloatDesc& d) {
        auto& s = matmul_integer_to_float_;
        s.ATensor = add(d.ATensor);
        s.AScaleTensor = add(d.AScaleTensor);
        s.AZeroPointTensor = add(d.AZeroPointTensor);
        s.BTensor = add(d.BTensor);
        s.BScaleTensor = add(d.BScaleTensor);
        s.BZeroPointTensor = add(d.BZeroPointTensor);
        s.BiasTensor = add(d.BiasTensor);
        s.OutputTensor = add(d.OutputTensor);
        op = {static_cast<DML_OPERATOR_TYPE>(170), &s};  // DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT
    }
    explicit DmlOp(const qdml::ConvolutionIntegerDesc& d) {
        auto& s = conv_integer_;
        s.InputTensor = add(d.InputTensor);
        s.InputZeroPointTensor = add(d.InputZeroPointTensor);
        s.FilterTensor = add(d.FilterTensor);
        s.FilterZeroPointTensor = add(d.FilterZeroPointTensor);
        s.OutputTensor = add(d.OutputTensor);
        s.DimensionCount = d.DimensionCount;
        s.Strides = array(d.Strides.begin(), 2);
        s.Dilations = array(d.Dilations.begin(), 2);
        s.StartPadding = array(d.StartPadding.begin(), 2);
        s.EndPadding = array(d.EndPadding.begin(), 2);
        s.GroupCount = d.GroupCount;
        op = {DML_OPERATOR_CONVOLUTION_INTEGER, &s};
    }
    explicit DmlOp(const qdml::DynamicQuantizeLinearDesc& d) {
        auto& s = dynamic_quantize_;
        s.InputTensor = add(d.InputTensor);
        s.OutputTensor = add(d.OutputTensor);
        s.OutputScaleTensor = add(d.OutputScaleTensor);
        s.OutputZeroPointTensor = add(d.OutputZeroPointTensor);
        op = {DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR, &s};
    }
    explicit DmlOp(const qdml::QuantizedLinearAveragePoolingDesc& d) {
        auto& s = average_pooling_;
        s.InputTensor = add(d.InputTensor);
        s.InputScaleTensor = add(d.InputScaleTensor);
        s.InputZeroPointTensor = add(d.InputZeroPointTensor);
        s.OutputScaleTensor = add(d.OutputScaleTensor);
        s.OutputZeroPointTensor = add(d.OutputZeroPointTensor);
        s.OutputTensor = add(d.OutputTensor);
        s.DimensionCount = d.DimensionCount;
        s.Strides = array(d.Strides.begin(), 3);
        s.WindowSize = array(d.WindowSize.begin(), 3);
        s.StartPadding = array(d.StartPadding.begin(), 3);
        s.EndPadding = array(d.EndPadding.begin(), 3);
        s.Dilations = array(d.Dilations.begin(), 3);
        s.IncludePadding = d.IncludePadding ? 1 : 0;
        op = {DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING, &s};
    }
    explicit DmlOp(const qdml::ElementWiseClipDesc& d) {
        auto& s = clip_;
        s.InputTensor = add(d.InputTensor);
        s.OutputTensor = add(d.OutputTensor);
        if (d.ScaleBias) {
            scale_bias_ = {d.ScaleBias->Scale, d.ScaleBias->Bias};
            s.ScaleBias = &scale_bias_;
        }
        s.Min = d.Min;
        s.Max = d.Max;
        op = {DML_OPERATOR_ELEMENT_WISE_CLIP, &s};
    }
    explicit DmlOp(const qdml::ElementWiseClip1Desc& d) {
        auto& s = clip1_;
        s.InputTensor = add(d.InputTensor);
        s.OutputTensor = add(d.OutputTensor);
        if (d.ScaleBias) {
            scale_bias_ = {d.ScaleBias->Scale, d.ScaleBias->Bias};
            s.ScaleBias = &scale_bias_;
        }
        s.MinMaxDataType = static_cast<DML_TENSOR_DATA_TYPE>(d.MinMaxDataType);
        std::memcpy(&s.Min, d.Min.Bytes, sizeof s.Min);
        std::memcpy(&s.Max, d.Max.Bytes, sizeof s.Max);
        op = {DML_OPERATOR_ELEMENT_WISE_CLIP1, &s};
    }
    explicit DmlOp(const qdml::QuantizeDesc& d) {
        fill_quantization(quantize_op_, d);
        op = {DML_OPERATOR_QUANTIZE, &quantize_op_};
    }
    explicit DmlOp(const qdml::DequantizeDesc& d) {
        fill_quantization(dequantize_op_, d);
        op = {DML_OPERATOR_DEQUANTIZE, &dequantize_op_};
    }
    DmlOp(const DmlOp&) = delete;
    DmlOp& operator=(const DmlOp&) = delete;

    /// The DML_BUFFER_TENSOR_DESC of binding i (null for an absent tensor).
    DML_BUFFER_TENSOR_DESC* buffer_desc(std::size_t i) { return buffer_of_binding_[i]; }
    /// The DML_TENSOR_DESC of binding i (null for an absent tensor).
    DML_TENSOR_DESC* tensor_desc(std::size_t i) { return tensor_of_binding_[i]; }

private:
    std::deque<std::vector<UINT>> arrays_;
    std::deque<DML_BUFFER_TENSOR_DESC> buffers_;
    std::deque<DML_TENSOR_DESC> tensors_;
    std::vector<DML_BUFFER_TENSOR_DESC*> buffer_of_binding_;
    std::vector<DML_TENSOR_DESC*> tensor_of_binding_;
    DML_SCALE_BIAS scale_bias_{};
    DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC dequantize_{};
    DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC quantize_{};
    DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC add_{};
    DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC matmul_{};
    DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC conv_{};
    DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC matmul_integer_{};
    DML_CONVOLUTION_INTEGER_OPERATOR_DESC conv_integer_{};
    DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC matmul_integer_to_float_{};
    DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC dynamic_quantize_{};
    DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC average_pooling_{};
    DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clip_{};
    DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC clip1_{};
    DML_QUANTIZE_OPERATOR_DESC quantize_op_{};
    DML_DEQUANTIZE_OPERATOR_DESC dequantize_op_{};
    std::array<DML_TENSOR_DESC, 2> quantization_tensors_{};  // QuantizationTensors: one array of descs

    const UINT* array(const std::uint32_t* p, std::size_t n) { return arrays_.emplace_back(p, p + n).data(); }

    const DML_TENSOR_DESC* add(const qdml::Tensor& t) {
        const auto& d = t.Desc;
        DML_BUFFER_TENSOR_DESC& b = buffers_.emplace_back();
        b.DataType = static_cast<DML_TENSOR_DATA_TYPE>(d.DataType);
        b.Flags = static_cast<DML_TENSOR_FLAGS>(d.Flags);
        b.DimensionCount = d.DimensionCount;
        b.Sizes = array(d.Sizes.data(), d.Sizes.size());
        b.Strides = d.Strides ? array(d.Strides->data(), d.Strides->size()) : nullptr;
        b.TotalTensorSizeInBytes = d.TotalTensorSizeInBytes;
        b.GuaranteedBaseOffsetAlignment = d.GuaranteedBaseOffsetAlignment;
        DML_TENSOR_DESC& td = tensors_.emplace_back(DML_TENSOR_DESC{DML_TENSOR_TYPE_BUFFER, &b});
        bindings.push_back({t.Data, t.DataSizeInBytes != 0 ? t.DataSizeInBytes : d.TotalTensorSizeInBytes});
        buffer_of_binding_.push_back(&b);
        tensor_of_binding_.push_back(&td);
        return &td;
    }
    const DML_TENSOR_DESC* add(const std::optional<qdml::Tensor>& t) {
        if (t) return add(*t);
        bindings.push_back({});
        buffer_of_binding_.push_back(nullptr);
        tensor_of_binding_.push_back(nullptr);
        return nullptr;
    }
    template <class S, class D>  // DEQUANTIZE_LINEAR and QUANTIZE_LINEAR: the same four members
    void fill_scale_zero_point(S& s, const D& d) {
        s.InputTensor = add(d.InputTensor);
        s.ScaleTensor = add(d.ScaleTensor);
        s.ZeroPointTensor = add(d.ZeroPointTensor);
        s.OutputTensor = add(d.OutputTensor);
    }
    /// QUANTIZE and DEQUANTIZE: the present QuantizationTensors, in order, as one array.
    template <class S>
    void fill_quantization(S& s, const qdml::QuantizationDescBase& d) {
        s.InputTensor = add(d.InputTensor);
        s.QuantizationType = static_cast<DML_QUANTIZATION_TYPE>(d.QuantizationType);
        UINT n = 0;
        for (const auto& t : d.QuantizationTensors)
            if (t) quantization_tensors_[n++] = *add(*t);
        s.QuantizationTensorCount = n;
        s.QuantizationTensors = n != 0 ? quantization_tensors_.data() : nullptr;
        s.OutputTensor = add(d.OutputTensor);
    }
    template <class S, class D>
    void fill_binary(S& s, const D& d) {
        s.ATensor = add(d.ATensor);
        s.AScaleTensor = add(d.AScaleTensor);
        s.AZeroPointTensor = add(d.AZeroPointTensor);
        s.BTensor = add(d.BTensor);
        s.BScaleTensor = add(d.BScaleTensor);
        s.BZeroPointTensor = add(d.BZeroPointTensor);
        s.OutputScaleTensor = add(d.OutputScaleTensor);
        s.OutputZeroPointTensor = add(d.OutputZeroPointTensor);
        s.OutputTensor = add(d.OutputTensor);
    }
};

}  // namespace qtest
