// qdml/operators/element_wise_quantized_linear_add.hpp - DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD:
// the runtime desc, its validation, and the typed operator struct.
//   va = fp32(A - AZeroPoint) * AScale,  vb = fp32(B - BZeroPoint) * BScale
//   Output = Q((va + vb) / OutputScale, OutputZeroPoint, OutputType)   (docs/semantics.md section 4)
#pragma once

#include <cstddef>
#include <optional>

#include "qdml/core/bind.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/quantized_binary.hpp"

namespace qdml {

/// Mirrors DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC.
struct ElementWiseQuantizedLinearAddDesc {
    static constexpr std::string_view OperatorName = "ELEMENT_WISE_QUANTIZED_LINEAR_ADD";
    Tensor ATensor;
    Tensor AScaleTensor;
    OptionalTensor AZeroPointTensor;
    Tensor BTensor;
    Tensor BScaleTensor;
    OptionalTensor BZeroPointTensor;
    Tensor OutputScaleTensor;
    OptionalTensor OutputZeroPointTensor;
    Tensor OutputTensor;
};

/// Checks `d` against docs/semantics.md sections 1, 4 and 8; throws qdml::Error.
inline void validate(const ElementWiseQuantizedLinearAddDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form. Scales and zero points are per tensor: one element each.
template <class TA, class TB, class TOut>
struct ElementWiseQuantizedLinearAdd {
    TensorView<const TA, kMaxDimensions> ATensor;
    TensorView<const float, kMaxDimensions> AScaleTensor;
    std::optional<TensorView<const TA, kMaxDimensions>> AZeroPointTensor;
    TensorView<const TB, kMaxDimensions> BTensor;
    TensorView<const float, kMaxDimensions> BScaleTensor;
    std::optional<TensorView<const TB, kMaxDimensions>> BZeroPointTensor;
    TensorView<const float, kMaxDimensions> OutputScaleTensor;
    std::optional<TensorView<const TOut, kMaxDimensions>> OutputZeroPointTensor;
    TensorView<TOut, kMaxDimensions> OutputTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's (the views have rank 8: a desc's sizes right-aligned,
    /// leading sizes 1).
    static ElementWiseQuantizedLinearAdd bind(const ElementWiseQuantizedLinearAddDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only the types (and
    /// DimensionCount 1..8).
    static ElementWiseQuantizedLinearAdd bind_validated(const ElementWiseQuantizedLinearAddDesc& d) {
        constexpr std::string_view n = ElementWiseQuantizedLinearAddDesc::OperatorName;
        ElementWiseQuantizedLinearAdd op;
        op.ATensor = detail::bind_view<const TA, kMaxDimensions>(n, "ATensor", d.ATensor);
        op.AScaleTensor = detail::bind_view<const float, kMaxDimensions>(n, "AScaleTensor", d.AScaleTensor);
        op.AZeroPointTensor = detail::bind_view<const TA, kMaxDimensions>(n, "AZeroPointTensor", d.AZeroPointTensor);
        op.BTensor = detail::bind_view<const TB, kMaxDimensions>(n, "BTensor", d.BTensor);
        op.BScaleTensor = detail::bind_view<const float, kMaxDimensions>(n, "BScaleTensor", d.BScaleTensor);
        op.BZeroPointTensor = detail::bind_view<const TB, kMaxDimensions>(n, "BZeroPointTensor", d.BZeroPointTensor);
        op.OutputScaleTensor = detail::bind_view<const float, kMaxDimensions>(n, "OutputScaleTensor", d.OutputScaleTensor);
        op.OutputZeroPointTensor =
            detail::bind_view<const TOut, kMaxDimensions>(n, "OutputZeroPointTensor", d.OutputZeroPointTensor);
        op.OutputTensor = detail::bind_view<TOut, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        return op;
    }
};

inline void validate(const ElementWiseQuantizedLinearAddDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(ElementWiseQuantizedLinearAddDesc::OperatorName, level);
    v.available_since(FeatureLevel::L4_0);  // one support table from 4.0 (docs/feature-levels.md)
    const MemberSupport q8{1, 8, {T::Int8, T::UInt8}};
    detail::validate_quantized_binary_tensors(v, d, q8, {1, 8, {T::Float32}}, q8);

    v.same_sizes("BTensor", d.BTensor, "ATensor", d.ATensor);
    v.same_sizes("OutputTensor", d.OutputTensor, "ATensor", d.ATensor);
    const auto inputs = detail::quantized_binary_inputs(d);
    for (const auto& [m, t] : inputs) {  // scales and zero points: per tensor
        if (t == nullptr || t == &d.ATensor || t == &d.BTensor) continue;
        v.same_dimension_count(m, *t, "ATensor", d.ATensor);
        v.one_element(m, *t);
    }

    v.output("OutputTensor", d.OutputTensor, inputs);
}

}  // namespace qdml
