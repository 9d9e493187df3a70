// qdml/operators/members.hpp - each operator's members written once: its
// tensor members in DirectML's binding order (members), its other members
// compared bit for bit (changed_param), and the members a constant-weight
// compile reads once (is_weight). qdml::Compiled checks execute's descs
// and bindings through them.
#pragma once

#include <array>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "qdml/core/tensor.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/operators/dynamic_quantize_linear.hpp"
#include "qdml/operators/element_wise_clip.hpp"
#include "qdml/operators/element_wise_clip1.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/operators/matrix_multiply_integer_to_float.hpp"
#include "qdml/operators/quantized_linear_average_pooling.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"
#include "qdml/operators/quantize.hpp"

namespace qdml::detail {

/// One tensor member of a desc as execute sees it: null when absent.
struct BoundMember {
    std::string_view name;
    const Tensor* tensor;
};
inline const Tensor* bound(const Tensor& t) noexcept { return &t; }
inline const Tensor* bound(const OptionalTensor& t) noexcept { return t ? &*t : nullptr; }

// members(d): the tensor members in DirectML's binding order (inputs, then
// the outputs, always last: output_count<Desc> of them): the one list of each
// operator's tensor members.
inline std::array<BoundMember, 4> members(const ElementWiseDequantizeLinearDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"ScaleTensor", bound(d.ScaleTensor)},
             {"ZeroPointTensor", bound(d.ZeroPointTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 4> members(const ElementWiseQuantizeLinearDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"ScaleTensor", bound(d.ScaleTensor)},
             {"ZeroPointTensor", bound(d.ZeroPointTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
template <class D>  // ELEMENT_WISE_QUANTIZED_LINEAR_ADD and QUANTIZED_LINEAR_MATRIX_MULTIPLY: the same members
std::array<BoundMember, 9> quantized_binary_members(const D& d) noexcept {
    return {{{"ATensor", bound(d.ATensor)}, {"AScaleTensor", bound(d.AScaleTensor)},
             {"AZeroPointTensor", bound(d.AZeroPointTensor)}, {"BTensor", bound(d.BTensor)},
             {"BScaleTensor", bound(d.BScaleTensor)}, {"BZeroPointTensor", bound(d.BZeroPointTensor)},
             {"OutputScaleTensor", bound(d.OutputScaleTensor)}, {"OutputZeroPointTensor", bound(d.OutputZeroPointTensor)},
             {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 9> members(const ElementWiseQuantizedLinearAddDesc& d) noexcept {
    return quantized_binary_members(d);
}
inline std::array<BoundMember, 9> members(const QuantizedLinearMatrixMultiplyDesc& d) noexcept {
    return quantized_binary_members(d);
}
inline std::array<BoundMember, 10> members(const QuantizedLinearConvolutionDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"InputScaleTensor", bound(d.InputScaleTensor)},
             {"InputZeroPointTensor", bound(d.InputZeroPointTensor)}, {"FilterTensor", bound(d.FilterTensor)},
             {"FilterScaleTensor", bound(d.FilterScaleTensor)}, {"FilterZeroPointTensor", bound(d.FilterZeroPointTensor)},
             {"BiasTensor", bound(d.BiasTensor)}, {"OutputScaleTensor", bound(d.OutputScaleTensor)},
             {"OutputZeroPointTensor", bound(d.OutputZeroPointTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 5> members(const MatrixMultiplyIntegerDesc& d) noexcept {
    return {{{"ATensor", bound(d.ATensor)}, {"AZeroPointTensor", bound(d.AZeroPointTensor)},
             {"BTensor", bound(d.BTensor)}, {"BZeroPointTensor", bound(d.BZeroPointTensor)},
             {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 8> members(const MatrixMultiplyIntegerToFloatDesc& d) noexcept {
    return {{{"ATensor", bound(d.ATensor)}, {"AScaleTensor", bound(d.AScaleTensor)},
             {"AZeroPointTensor", bound(d.AZeroPointTensor)}, {"BTensor", bound(d.BTensor)},
             {"BScaleTensor", bound(d.BScaleTensor)}, {"BZeroPointTensor", bound(d.BZeroPointTensor)},
             {"BiasTensor", bound(d.BiasTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 6> members(const QuantizedLinearAveragePoolingDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"InputScaleTensor", bound(d.InputScaleTensor)},
             {"InputZeroPointTensor", bound(d.InputZeroPointTensor)}, {"OutputScaleTensor", bound(d.OutputScaleTensor)},
             {"OutputZeroPointTensor", bound(d.OutputZeroPointTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 5> members(const ConvolutionIntegerDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"InputZeroPointTensor", bound(d.InputZeroPointTensor)},
             {"FilterTensor", bound(d.FilterTensor)}, {"FilterZeroPointTensor", bound(d.FilterZeroPointTensor)},
             {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 4> members(const DynamicQuantizeLinearDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"OutputTensor", bound(d.OutputTensor)},
             {"OutputScaleTensor", bound(d.OutputScaleTensor)},
             {"OutputZeroPointTensor", bound(d.OutputZeroPointTensor)}}};
}
/// QUANTIZE and DEQUANTIZE: the scale and zero point are DirectML's
/// QuantizationTensors array (bound after InputTensor, QuantizationTensorCount of them).
inline std::array<BoundMember, 4> members(const QuantizationDescBase& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)},
             {"QuantizationTensors[0]", bound(d.QuantizationTensors[0])},
             {"QuantizationTensors[1]", bound(d.QuantizationTensors[1])},
             {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 2> members(const ElementWiseClipDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 2> members(const ElementWiseClip1Desc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}

/// How many of members(d)'s last entries are outputs: DYNAMIC_QUANTIZE_LINEAR's
/// three (the quantized tensor, its scale, its zero point), one elsewhere.
template <class Desc>
inline constexpr std::size_t output_count = std::is_same_v<Desc, DynamicQuantizeLinearDesc> ? 3 : 1;

// changed_param(a, b): the first non-tensor member that differs (bit for bit), or
// null: the one list of each operator's other members.
template <class T>
bool same_bits(const T& a, const T& b) noexcept {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}
inline const char* changed_param(const ElementWiseDequantizeLinearDesc&, const ElementWiseDequantizeLinearDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const ElementWiseQuantizeLinearDesc&, const ElementWiseQuantizeLinearDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const ElementWiseQuantizedLinearAddDesc&, const ElementWiseQuantizedLinearAddDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const QuantizedLinearMatrixMultiplyDesc&, const QuantizedLinearMatrixMultiplyDesc&) noexcept {
    return nullptr;
}
/// The convolution parameters (QUANTIZED_LINEAR_CONVOLUTION, CONVOLUTION_INTEGER).
template <class Conv>
const char* changed_convolution_param(const Conv& a, const Conv& b) noexcept {
    if (a.DimensionCount != b.DimensionCount) return "DimensionCount";
    if (a.Strides != b.Strides) return "Strides";
    if (a.Dilations != b.Dilations) return "Dilations";
    if (a.StartPadding != b.StartPadding) return "StartPadding";
    if (a.EndPadding != b.EndPadding) return "EndPadding";
    if (a.GroupCount != b.GroupCount) return "GroupCount";
    return nullptr;
}
inline const char* changed_param(const QuantizedLinearConvolutionDesc& a, const QuantizedLinearConvolutionDesc& b) noexcept {
    return changed_convolution_param(a, b);
}
inline const char* changed_param(const ConvolutionIntegerDesc& a, const ConvolutionIntegerDesc& b) noexcept {
    return changed_convolution_param(a, b);
}
inline const char* changed_param(const QuantizedLinearAveragePoolingDesc& a,
                                 const QuantizedLinearAveragePoolingDesc& b) noexcept {
    if (a.DimensionCount != b.DimensionCount) return "DimensionCount";
    if (a.Strides != b.Strides) return "Strides";
    if (a.WindowSize != b.WindowSize) return "WindowSize";
    if (a.StartPadding != b.StartPadding) return "StartPadding";
    if (a.EndPadding != b.EndPadding) return "EndPadding";
    if (a.Dilations != b.Dilations) return "Dilations";
    if (a.IncludePadding != b.IncludePadding) return "IncludePadding";
    return nullptr;
}
inline const char* changed_param(const MatrixMultiplyIntegerDesc&, const MatrixMultiplyIntegerDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const MatrixMultiplyIntegerToFloatDesc&, const MatrixMultiplyIntegerToFloatDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const DynamicQuantizeLinearDesc&, const DynamicQuantizeLinearDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const QuantizationDescBase& a, const QuantizationDescBase& b) noexcept {
    return a.QuantizationType != b.QuantizationType ? "QuantizationType" : nullptr;
}
inline bool same_scale_bias(const std::optional<ScaleBiasDesc>& a, const std::optional<ScaleBiasDesc>& b) noexcept {
    return a.has_value() == b.has_value() &&
           (!a || (same_bits(a->Scale, b->Scale) && same_bits(a->Bias, b->Bias)));
}
inline const char* changed_param(const ElementWiseClipDesc& a, const ElementWiseClipDesc& b) noexcept {
    if (!same_scale_bias(a.ScaleBias, b.ScaleBias)) return "ScaleBias";
    if (!same_bits(a.Min, b.Min)) return "Min";
    if (!same_bits(a.Max, b.Max)) return "Max";
    return nullptr;
}
inline const char* changed_param(const ElementWiseClip1Desc& a, const ElementWiseClip1Desc& b) noexcept {
    if (!same_scale_bias(a.ScaleBias, b.ScaleBias)) return "ScaleBias";
    if (a.MinMaxDataType != b.MinMaxDataType) return "MinMaxDataType";
    if (!same_bits(a.Min, b.Min)) return "Min";
    if (!same_bits(a.Max, b.Max)) return "Max";
    return nullptr;
}

/// The members of `Desc` that hold its weights (read once by a compile with
/// constant weights): the matmuls' B side, convolution's filter side and bias.
template <class Desc>
bool is_weight(std::string_view member) noexcept {
    if constexpr (std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc> ||
                  std::is_same_v<Desc, MatrixMultiplyIntegerToFloatDesc>)
        return member == "BTensor" || member == "BScaleTensor" || member == "BZeroPointTensor";
    if constexpr (std::is_same_v<Desc, MatrixMultiplyIntegerDesc>)
        return member == "BTensor" || member == "BZeroPointTensor";
    if constexpr (std::is_same_v<Desc, QuantizedLinearConvolutionDesc>)
        return member == "FilterTensor" || member == "FilterScaleTensor" || member == "FilterZeroPointTensor" ||
               member == "BiasTensor";
    if constexpr (std::is_same_v<Desc, ConvolutionIntegerDesc>)
        return member == "FilterTensor" || member == "FilterZeroPointTensor";
    return false;
}

/// The descs whose weights a compile with constant weights reads once
/// (a prepared form, simd/*_prepared.hpp).
template <class Desc>
inline constexpr bool has_prepared_form =
    std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc> || std::is_same_v<Desc, QuantizedLinearConvolutionDesc> ||
    std::is_same_v<Desc, MatrixMultiplyIntegerDesc> || std::is_same_v<Desc, MatrixMultiplyIntegerToFloatDesc> ||
    std::is_same_v<Desc, ConvolutionIntegerDesc>;

/// Whether `d` flags its weights constant (DML_TENSOR_FLAG_OWNED_BY_DML on
/// a matmul's BTensor or convolution's FilterTensor): the descs with a
/// prepared form (has_prepared_form).
template <class Desc>
bool weights_owned_by_dml(const Desc& d) noexcept {
    if constexpr (std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc> ||
                  std::is_same_v<Desc, MatrixMultiplyIntegerDesc> ||
                  std::is_same_v<Desc, MatrixMultiplyIntegerToFloatDesc>)
        return (d.BTensor.Desc.Flags & kTensorFlagOwnedByDml) != 0;
    if constexpr (std::is_same_v<Desc, QuantizedLinearConvolutionDesc> || std::is_same_v<Desc, ConvolutionIntegerDesc>)
        return (d.FilterTensor.Desc.Flags & kTensorFlagOwnedByDml) != 0;
    return false;
}

/// The weight members of `from` copied into `to` (the bindings read at initialize).
inline void copy_weights(const QuantizedLinearMatrixMultiplyDesc& from, QuantizedLinearMatrixMultiplyDesc& to) noexcept {
    to.BTensor = from.BTensor;
    to.BScaleTensor = from.BScaleTensor;
    to.BZeroPointTensor = from.BZeroPointTensor;
}
inline void copy_weights(const MatrixMultiplyIntegerDesc& from, MatrixMultiplyIntegerDesc& to) noexcept {
    to.BTensor = from.BTensor;
    to.BZeroPointTensor = from.BZeroPointTensor;
}
inline void copy_weights(const MatrixMultiplyIntegerToFloatDesc& from, MatrixMultiplyIntegerToFloatDesc& to) noexcept {
    to.BTensor = from.BTensor;
    to.BScaleTensor = from.BScaleTensor;
    to.BZeroPointTensor = from.BZeroPointTensor;
}
inline void copy_weights(const QuantizedLinearConvolutionDesc& from, QuantizedLinearConvolutionDesc& to) noexcept {
    to.FilterTensor = from.FilterTensor;
    to.FilterScaleTensor = from.FilterScaleTensor;
    to.FilterZeroPointTensor = from.FilterZeroPointTensor;
    to.BiasTensor = from.BiasTensor;
}
inline void copy_weights(const ConvolutionIntegerDesc& from, ConvolutionIntegerDesc& to) noexcept {
    to.FilterTensor = from.FilterTensor;
    to.FilterZeroPointTensor = from.FilterZeroPointTensor;
}

}  // namespace qdml::detail
