// qdml/operators/dynamic_quantize_linear.hpp - DML_DYNAMIC_QUANTIZE_LINEAR: the
// runtime desc, its validation, and the typed operator struct.
//   m = min(0, min x), M = max(0, max x); OutputScale = s from M - m,
//   OutputZeroPoint = Z(lo - m / s), Output = Q(x / s, OutputZeroPoint)   (docs/semantics.md section 15)
#pragma once

#include <cstdint>

#include "qdml/core/bind.hpp"
#include "qdml/core/float16.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC (the last three members are outputs).
struct DynamicQuantizeLinearDesc {
    static constexpr std::string_view OperatorName = "DYNAMIC_QUANTIZE_LINEAR";
    Tensor InputTensor;
    Tensor OutputTensor;
    Tensor OutputScaleTensor;
    Tensor OutputZeroPointTensor;
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 14; throws qdml::Error.
inline void validate(const DynamicQuantizeLinearDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form (TIn float or float16; TOut int8_t or uint8_t); every view has
/// rank 8 (a desc's sizes right-aligned, leading sizes 1).
template <class TIn, class TOut>
struct DynamicQuantizeLinear {
    TensorView<const TIn, kMaxDimensions> InputTensor;
    TensorView<TOut, kMaxDimensions> OutputTensor;
    TensorView<float, kMaxDimensions> OutputScaleTensor;
    TensorView<TOut, kMaxDimensions> OutputZeroPointTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's.
    static DynamicQuantizeLinear bind(const DynamicQuantizeLinearDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only the types (and
    /// DimensionCount 1..8).
    static DynamicQuantizeLinear bind_validated(const DynamicQuantizeLinearDesc& d) {
        constexpr std::string_view n = DynamicQuantizeLinearDesc::OperatorName;
        DynamicQuantizeLinear op;
        op.InputTensor = detail::bind_view<const TIn, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.OutputTensor = detail::bind_view<TOut, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        op.OutputScaleTensor = detail::bind_view<float, kMaxDimensions>(n, "OutputScaleTensor", d.OutputScaleTensor);
        op.OutputZeroPointTensor =
            detail::bind_view<TOut, kMaxDimensions>(n, "OutputZeroPointTensor", d.OutputZeroPointTensor);
        return op;
    }
};

inline void validate(const DynamicQuantizeLinearDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(DynamicQuantizeLinearDesc::OperatorName, level);
    v.available_since(FeatureLevel::L4_0);
    // One table from 4.0 (docs/feature-levels.md): 1-8 dimensions.
    const TypeSet q8{T::Int8, T::UInt8};
    v.tensor("InputTensor", d.InputTensor, {1, 8, {T::Float32, T::Float16}});
    v.tensor("OutputTensor", d.OutputTensor, {1, 8, q8});
    v.tensor("OutputScaleTensor", d.OutputScaleTensor, {1, 8, {T::Float32}});
    v.tensor("OutputZeroPointTensor", d.OutputZeroPointTensor, {1, 8, q8});
    v.same_sizes("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    v.same_type("OutputZeroPointTensor", d.OutputZeroPointTensor, "OutputTensor", d.OutputTensor);
    v.same_dimension_count("OutputScaleTensor", d.OutputScaleTensor, "InputTensor", d.InputTensor);
    v.same_dimension_count("OutputZeroPointTensor", d.OutputZeroPointTensor, "InputTensor", d.InputTensor);
    v.one_element("OutputScaleTensor", d.OutputScaleTensor);
    v.one_element("OutputZeroPointTensor", d.OutputZeroPointTensor);
    // Three outputs: none overlaps the input or another output.
    v.output("OutputTensor", d.OutputTensor, {{"InputTensor", &d.InputTensor}});
    v.output("OutputScaleTensor", d.OutputScaleTensor,
             {{"InputTensor", &d.InputTensor}, {"OutputTensor", &d.OutputTensor}});
    v.output("OutputZeroPointTensor", d.OutputZeroPointTensor,
             {{"InputTensor", &d.InputTensor},
              {"OutputTensor", &d.OutputTensor},
              {"OutputScaleTensor", &d.OutputScaleTensor}});
}

}  // namespace qdml
