// qdml/operators/element_wise_clip.hpp - DML_ELEMENT_WISE_CLIP: the runtime desc,
// its validation, and the typed operator struct.
//   Output = max(Min, min(g(Input), Max)),  g(x) = x * Scale + Bias (no FMA) or x
// (docs/semantics.md section 7).
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>

#include "qdml/core/bind.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_SCALE_BIAS.
struct ScaleBiasDesc {
    float Scale = 1.0f;
    float Bias = 0.0f;
};

/// Mirrors DML_ELEMENT_WISE_CLIP_OPERATOR_DESC.
struct ElementWiseClipDesc {
    static constexpr std::string_view OperatorName = "ELEMENT_WISE_CLIP";
    Tensor InputTensor;
    Tensor OutputTensor;
    std::optional<ScaleBiasDesc> ScaleBias;  // _Maybenull_
    float Min = 0.0f;
    float Max = 0.0f;
};

/// Checks `d` against docs/semantics.md sections 1, 7 and 8; throws qdml::Error.
inline void validate(const ElementWiseClipDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form. OutputTensor may alias InputTensor (identical region only).
template <class T>
struct ElementWiseClip {
    TensorView<const T, kMaxDimensions> InputTensor;
    TensorView<T, kMaxDimensions> OutputTensor;
    std::optional<ScaleBiasDesc> ScaleBias;
    float Min = 0.0f;
    float Max = 0.0f;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's (the views have rank 8: a desc's sizes right-aligned,
    /// leading sizes 1).
    static ElementWiseClip bind(const ElementWiseClipDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only the types (and
    /// DimensionCount 1..8).
    static ElementWiseClip bind_validated(const ElementWiseClipDesc& d) {
        constexpr std::string_view n = ElementWiseClipDesc::OperatorName;
        ElementWiseClip op;
        op.InputTensor = detail::bind_view<const T, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.OutputTensor = detail::bind_view<T, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        op.ScaleBias = d.ScaleBias;
        op.Min = d.Min;
        op.Max = d.Max;
        return op;
    }
};

namespace detail {
/// DirectML's tensor support table of ELEMENT_WISE_CLIP for the target level
/// (docs/feature-levels.md; the same row for InputTensor and OutputTensor).
inline MemberSupport clip_support(FeatureLevel level) {
    using T = TensorDataType;
    if (level >= FeatureLevel::L5_0)
        return {1, 8, {T::Float32, T::Float16, T::Int64, T::Int32, T::Int16, T::Int8, T::UInt64, T::UInt32,
                       T::UInt16, T::UInt8}};
    if (level >= FeatureLevel::L3_0)
        return {1, 8, {T::Float32, T::Float16, T::Int32, T::Int16, T::Int8, T::UInt32, T::UInt16, T::UInt8}};
    if (level >= FeatureLevel::L2_1)
        return {4, 4, {T::Float32, T::Float16, T::Int32, T::Int16, T::Int8, T::UInt32, T::UInt16, T::UInt8}};
    return {4, 4, {T::Float32, T::Float16}};
}
}  // namespace detail

inline void validate(const ElementWiseClipDesc& d, FeatureLevel level) {
    const Validator v(ElementWiseClipDesc::OperatorName, level);
    v.available_since(FeatureLevel::L1_0);
    const auto s = detail::clip_support(level);
    v.tensor("InputTensor", d.InputTensor, s);
    v.tensor("OutputTensor", d.OutputTensor, s);
    v.same_type("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    v.same_sizes("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    v.require(!std::isnan(d.Min), "Min", "is NaN; bounds must be numbers (use -INFINITY for no bound)");
    v.require(!std::isnan(d.Max), "Max", "is NaN; bounds must be numbers (use INFINITY for no bound)");
    v.output("OutputTensor", d.OutputTensor, {{"InputTensor", &d.InputTensor}}, /*in_place_ok=*/true);
}

}  // namespace qdml
