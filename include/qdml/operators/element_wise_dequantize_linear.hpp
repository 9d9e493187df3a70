// qdml/operators/element_wise_dequantize_linear.hpp - DML_ELEMENT_WISE_DEQUANTIZE_LINEAR:
// the runtime desc, its validation, and the typed operator struct.
//   Output = fp32(Input - ZeroPoint) * Scale                    (docs/semantics.md section 3)
#pragma once

#include <cstddef>
#include <optional>

#include "qdml/core/bind.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC.
struct ElementWiseDequantizeLinearDesc {
    static constexpr std::string_view OperatorName = "ELEMENT_WISE_DEQUANTIZE_LINEAR";
    Tensor InputTensor;
    Tensor ScaleTensor;
    OptionalTensor ZeroPointTensor;  // _Maybenull_ from feature level 6.2
    Tensor OutputTensor;
};

/// Checks `d` against docs/semantics.md sections 1, 3 and 8; throws qdml::Error.
inline void validate(const ElementWiseDequantizeLinearDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form: element types resolved at compile time; every view has rank 8
/// (the loop plan of the SIMD path merges and drops dimensions at run time).
template <class TIn, class TOut>
struct ElementWiseDequantizeLinear {
    TensorView<const TIn, kMaxDimensions> InputTensor;
    TensorView<const TOut, kMaxDimensions> ScaleTensor;
    std::optional<TensorView<const TIn, kMaxDimensions>> ZeroPointTensor;
    TensorView<TOut, kMaxDimensions> OutputTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's (the views have rank 8: a desc's sizes right-aligned,
    /// leading sizes 1).
    static ElementWiseDequantizeLinear bind(const ElementWiseDequantizeLinearDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only the types (and
    /// DimensionCount 1..8).
    static ElementWiseDequantizeLinear bind_validated(const ElementWiseDequantizeLinearDesc& d) {
        constexpr std::string_view n = ElementWiseDequantizeLinearDesc::OperatorName;
        ElementWiseDequantizeLinear op;
        op.InputTensor = detail::bind_view<const TIn, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.ScaleTensor = detail::bind_view<const TOut, kMaxDimensions>(n, "ScaleTensor", d.ScaleTensor);
        op.ZeroPointTensor = detail::bind_view<const TIn, kMaxDimensions>(n, "ZeroPointTensor", d.ZeroPointTensor);
        op.OutputTensor = detail::bind_view<TOut, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        return op;
    }
};

namespace detail {
/// The tensor support of an operator with DEQUANTIZE_LINEAR's four members
/// (QUANTIZE_LINEAR has the same).
struct ScaleZeroPointSupport {
    MemberSupport input, scale, zero_point, output;
    bool zero_point_optional;
};

/// The rules DEQUANTIZE_LINEAR and QUANTIZE_LINEAR share: each member's
/// support at the level (ZeroPointTensor required before 6.2), Scale,
/// ZeroPoint and Output of Input's Sizes, and the output rules. The type
/// pairings differ and are the operators' own.
template <class Desc>
void validate_scale_zero_point_members(const Validator& v, const Desc& d, const ScaleZeroPointSupport& s,
                                       FeatureLevel level) {
    v.tensor("InputTensor", d.InputTensor, s.input);
    v.tensor("ScaleTensor", d.ScaleTensor, s.scale);
    v.require(d.ZeroPointTensor.has_value() || s.zero_point_optional, "ZeroPointTensor",
              [&] { return "is required before DML_FEATURE_LEVEL 6.2 (target is " + to_string(level) + ")"; });
    if (d.ZeroPointTensor) v.tensor("ZeroPointTensor", *d.ZeroPointTensor, s.zero_point);
    v.tensor("OutputTensor", d.OutputTensor, s.output);
}

template <class Desc>
void validate_scale_zero_point_shapes(const Validator& v, const Desc& d) {
    v.same_sizes("ScaleTensor", d.ScaleTensor, "InputTensor", d.InputTensor);
    if (d.ZeroPointTensor) v.same_sizes("ZeroPointTensor", *d.ZeroPointTensor, "InputTensor", d.InputTensor);
    v.same_sizes("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    v.output("OutputTensor", d.OutputTensor,
             {{"InputTensor", &d.InputTensor},
              {"ScaleTensor", &d.ScaleTensor},
              {"ZeroPointTensor", d.ZeroPointTensor ? &*d.ZeroPointTensor : nullptr}});
}

/// DirectML's tensor support table for the target level (docs/feature-levels.md):
/// FLOAT16 Scale/Output from 6.0, optional ZeroPoint from 6.2.
inline ScaleZeroPointSupport dequantize_support(FeatureLevel level) {
    using T = TensorDataType;
    const TypeSet ints{T::Int32, T::Int16, T::Int8, T::UInt32, T::UInt16, T::UInt8};
    const TypeSet floats{T::Float32, T::Float16};
    const TypeSet f32{T::Float32};
    if (level >= FeatureLevel::L6_2) return {{1, 8, ints}, {1, 8, floats}, {1, 8, ints}, {1, 8, floats}, true};
    if (level >= FeatureLevel::L6_0) return {{1, 8, ints}, {1, 8, floats}, {1, 8, ints}, {1, 8, floats}, false};
    if (level >= FeatureLevel::L3_0) return {{1, 8, ints}, {1, 8, f32}, {1, 8, ints}, {1, 8, f32}, false};
    if (level >= FeatureLevel::L2_1) return {{4, 4, ints}, {4, 4, f32}, {4, 4, ints}, {4, 4, f32}, false};
    return {{4, 4, {T::UInt8}}, {4, 4, f32}, {4, 4, {T::UInt8}}, {4, 4, f32}, false};
}
}  // namespace detail

inline void validate(const ElementWiseDequantizeLinearDesc& d, FeatureLevel level) {
    const Validator v(ElementWiseDequantizeLinearDesc::OperatorName, level);
    v.available_since(FeatureLevel::L1_0);
    detail::validate_scale_zero_point_members(v, d, detail::dequantize_support(level), level);
    if (d.ZeroPointTensor) v.same_type("ZeroPointTensor", *d.ZeroPointTensor, "InputTensor", d.InputTensor);
    v.same_type("OutputTensor", d.OutputTensor, "ScaleTensor", d.ScaleTensor);
    detail::validate_scale_zero_point_shapes(v, d);
}

}  // namespace qdml
