// qdml/operators/element_wise_quantize_linear.hpp - DML_ELEMENT_WISE_QUANTIZE_LINEAR:
// the runtime desc, its validation, and the typed operator struct.
//   Output = Q(x(Input) / Scale, ZeroPoint, OutputType)        (docs/semantics.md section 11)
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>

#include "qdml/core/bind.hpp"
#include "qdml/core/float16.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"  // the four members' shared rules

namespace qdml {

/// Mirrors DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC.
struct ElementWiseQuantizeLinearDesc {
    static constexpr std::string_view OperatorName = "ELEMENT_WISE_QUANTIZE_LINEAR";
    Tensor InputTensor;
    Tensor ScaleTensor;
    OptionalTensor ZeroPointTensor;  // _Maybenull_ from feature level 6.2
    Tensor OutputTensor;
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 11; throws qdml::Error.
inline void validate(const ElementWiseQuantizeLinearDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form: element types resolved at compile time (TIn float, float16 or
/// int32_t; TOut int8_t or uint8_t; the scale is float16 for a float16 input,
/// float otherwise); every view has rank 8 (the loop plan of the SIMD path
/// merges and drops dimensions at run time).
template <class TIn, class TOut>
struct ElementWiseQuantizeLinear {
    using TScale = std::conditional_t<std::is_same_v<TIn, float16>, float16, float>;
    TensorView<const TIn, kMaxDimensions> InputTensor;
    TensorView<const TScale, kMaxDimensions> ScaleTensor;
    std::optional<TensorView<const TOut, kMaxDimensions>> ZeroPointTensor;
    TensorView<TOut, kMaxDimensions> OutputTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's (the views have rank 8: a desc's sizes right-aligned,
    /// leading sizes 1).
    static ElementWiseQuantizeLinear bind(const ElementWiseQuantizeLinearDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only the types (and
    /// DimensionCount 1..8).
    static ElementWiseQuantizeLinear bind_validated(const ElementWiseQuantizeLinearDesc& d) {
        constexpr std::string_view n = ElementWiseQuantizeLinearDesc::OperatorName;
        ElementWiseQuantizeLinear op;
        op.InputTensor = detail::bind_view<const TIn, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.ScaleTensor = detail::bind_view<const TScale, kMaxDimensions>(n, "ScaleTensor", d.ScaleTensor);
        op.ZeroPointTensor = detail::bind_view<const TOut, kMaxDimensions>(n, "ZeroPointTensor", d.ZeroPointTensor);
        op.OutputTensor = detail::bind_view<TOut, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        return op;
    }
};

namespace detail {
/// DirectML's tensor support table for the target level (docs/feature-levels.md):
/// INT32 input and INT8 from 2.1, 1-8 dimensions from 3.0, FLOAT16 Input/Scale
/// from 6.0, optional ZeroPoint from 6.2.
inline ScaleZeroPointSupport quantize_support(FeatureLevel level) {
    using T = TensorDataType;
    const TypeSet q8{T::Int8, T::UInt8};
    const TypeSet in32{T::Float32, T::Int32};
    const TypeSet in16{T::Float32, T::Float16, T::Int32};
    const TypeSet f32{T::Float32};
    const TypeSet floats{T::Float32, T::Float16};
    if (level >= FeatureLevel::L6_2) return {{1, 8, in16}, {1, 8, floats}, {1, 8, q8}, {1, 8, q8}, true};
    if (level >= FeatureLevel::L6_0) return {{1, 8, in16}, {1, 8, floats}, {1, 8, q8}, {1, 8, q8}, false};
    if (level >= FeatureLevel::L3_0) return {{1, 8, in32}, {1, 8, f32}, {1, 8, q8}, {1, 8, q8}, false};
    if (level >= FeatureLevel::L2_1) return {{4, 4, in32}, {4, 4, f32}, {4, 4, q8}, {4, 4, q8}, false};
    return {{4, 4, f32}, {4, 4, f32}, {4, 4, {T::UInt8}}, {4, 4, {T::UInt8}}, false};
}
}  // namespace detail

inline void validate(const ElementWiseQuantizeLinearDesc& d, FeatureLevel level) {
    const Validator v(ElementWiseQuantizeLinearDesc::OperatorName, level);
    v.available_since(FeatureLevel::L1_0);
    detail::validate_scale_zero_point_members(v, d, detail::quantize_support(level), level);

    // "If InputTensor is INT32, then ScaleTensor must be FLOAT32. Otherwise,
    // ScaleTensor must have the same DataType as InputTensor."
    if (d.InputTensor.Desc.DataType == TensorDataType::Int32)
        v.require(d.ScaleTensor.Desc.DataType == TensorDataType::Float32, "ScaleTensor", [&] {
            return detail::cat("DataType ", name(d.ScaleTensor.Desc.DataType), " must be FLOAT32 for an INT32 InputTensor");
        });
    else
        v.same_type("ScaleTensor", d.ScaleTensor, "InputTensor", d.InputTensor);
    if (d.ZeroPointTensor) v.same_type("ZeroPointTensor", *d.ZeroPointTensor, "OutputTensor", d.OutputTensor);
    detail::validate_scale_zero_point_shapes(v, d);
}

}  // namespace qdml
