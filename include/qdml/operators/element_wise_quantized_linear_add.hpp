// qdml/operators/element_wise_quantized_linear_add.hpp - DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD:
// the runtime desc, its validation, and the typed operator struct.
//   va = fp32(A - AZeroPoint) * AScale,  vb = fp32(B - BZeroPoint) * BScale
//   Output = Q((va + vb) / OutputScale, OutputZeroPoint, OutputType)   (SPEC.md section 4)
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

/// Checks `d` against SPEC.md sections 1, 4 and 8; throws qdml::Error.
inline void validate(const ElementWiseQuantizedLinearAddDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form. Scales and zero points are per tensor: one element each.
template <class TA, class TB, class TOut, std::size_t Rank = kMaxDimensions>
struct ElementWiseQuantizedLinearAdd {
    TensorView<const TA, Rank> ATensor;
    TensorView<const float, Rank> AScaleTensor;
    std::optional<TensorView<const TA, Rank>> AZeroPointTensor;
    TensorView<const TB, Rank> BTensor;
    TensorView<const float, Rank> BScaleTensor;
    std::optional<TensorView<const TB, Rank>> BZeroPointTensor;
    TensorView<const float, Rank> OutputScaleTensor;
    std::optional<TensorView<const TOut, Rank>> OutputZeroPointTensor;
    TensorView<TOut, Rank> OutputTensor;

    /// Views of `d` for these element types and rank: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's and its DimensionCount at most Rank (views are right-aligned).
    static ElementWiseQuantizedLinearAdd bind(const ElementWiseQuantizedLinearAddDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types and rank.
    static ElementWiseQuantizedLinearAdd bind_validated(const ElementWiseQuantizedLinearAddDesc& d) {
        constexpr std::string_view n = ElementWiseQuantizedLinearAddDesc::OperatorName;
        ElementWiseQuantizedLinearAdd op;
        op.ATensor = detail::bind_view<const TA, Rank>(n, "ATensor", d.ATensor);
        op.AScaleTensor = detail::bind_view<const float, Rank>(n, "AScaleTensor", d.AScaleTensor);
        op.AZeroPointTensor = detail::bind_view<const TA, Rank>(n, "AZeroPointTensor", d.AZeroPointTensor);
        op.BTensor = detail::bind_view<const TB, Rank>(n, "BTensor", d.BTensor);
        op.BScaleTensor = detail::bind_view<const float, Rank>(n, "BScaleTensor", d.BScaleTensor);
        op.BZeroPointTensor = detail::bind_view<const TB, Rank>(n, "BZeroPointTensor", d.BZeroPointTensor);
        op.OutputScaleTensor = detail::bind_view<const float, Rank>(n, "OutputScaleTensor", d.OutputScaleTensor);
        op.OutputZeroPointTensor =
            detail::bind_view<const TOut, Rank>(n, "OutputZeroPointTensor", d.OutputZeroPointTensor);
        op.OutputTensor = detail::bind_view<TOut, Rank>(n, "OutputTensor", d.OutputTensor);
        return op;
    }

    /// The same views right-aligned to rank M >= Rank (leading sizes 1).
    template <std::size_t M>
    ElementWiseQuantizedLinearAdd<TA, TB, TOut, M> with_rank() const {
        return {right_align<M>(ATensor),           right_align<M>(AScaleTensor),
                right_align<M>(AZeroPointTensor),  right_align<M>(BTensor),
                right_align<M>(BScaleTensor),      right_align<M>(BZeroPointTensor),
                right_align<M>(OutputScaleTensor), right_align<M>(OutputZeroPointTensor),
                right_align<M>(OutputTensor)};
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
