// qdml/operators/element_wise_clip1.hpp - DML_ELEMENT_WISE_CLIP1: the runtime desc,
// its validation, and the typed operator struct.
//   Output = min(Max, max(Min, g(Input))),  g(x) = x * Scale + Bias (no FMA) or x,
// Min and Max typed scalars of the output's type (docs/semantics.md section 13).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "qdml/core/bind.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/element_wise_clip.hpp"

namespace qdml {

/// Mirrors DML_SCALAR_UNION: 8 bytes whose first element-size bytes hold one
/// value of a data type (FLOAT16: its binary16 bits, little-endian).
union ScalarUnion {
    std::uint8_t Bytes[8];
    std::int8_t Int8;
    std::uint8_t UInt8;
    std::int16_t Int16;
    std::uint16_t UInt16;
    std::int32_t Int32;
    std::uint32_t UInt32;
    std::int64_t Int64;
    std::uint64_t UInt64;
    float Float32;
    double Float64;
};

/// A ScalarUnion holding `v` (zero bytes after it).
template <class T>
ScalarUnion scalar_union(T v) noexcept {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "a scalar of at most 8 bytes");
    ScalarUnion u{};
    std::memcpy(u.Bytes, &v, sizeof v);
    return u;
}

/// The value of type T that `u` holds.
template <class T>
T scalar_value(const ScalarUnion& u) noexcept {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "a scalar of at most 8 bytes");
    T v;
    std::memcpy(&v, u.Bytes, sizeof v);
    return v;
}

/// Mirrors DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC.
struct ElementWiseClip1Desc {
    static constexpr std::string_view OperatorName = "ELEMENT_WISE_CLIP1";
    Tensor InputTensor;
    Tensor OutputTensor;
    std::optional<ScaleBiasDesc> ScaleBias;  // _Maybenull_
    TensorDataType MinMaxDataType = TensorDataType::Unknown;
    ScalarUnion Min{};
    ScalarUnion Max{};
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 13; throws qdml::Error.
inline void validate(const ElementWiseClip1Desc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form. OutputTensor may alias InputTensor (identical region only).
template <class T>
struct ElementWiseClip1 {
    TensorView<const T, kMaxDimensions> InputTensor;
    TensorView<T, kMaxDimensions> OutputTensor;
    std::optional<ScaleBiasDesc> ScaleBias;
    T Min{};
    T Max{};

    /// Views of `d` for this element type: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is T (the
    /// views have rank 8: a desc's sizes right-aligned, leading sizes 1).
    static ElementWiseClip1 bind(const ElementWiseClip1Desc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only the types (and
    /// DimensionCount 1..8).
    static ElementWiseClip1 bind_validated(const ElementWiseClip1Desc& d) {
        constexpr std::string_view n = ElementWiseClip1Desc::OperatorName;
        ElementWiseClip1 op;
        op.InputTensor = detail::bind_view<const T, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.OutputTensor = detail::bind_view<T, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        op.ScaleBias = d.ScaleBias;
        op.Min = scalar_value<T>(d.Min);
        op.Max = scalar_value<T>(d.Max);
        return op;
    }
};

inline void validate(const ElementWiseClip1Desc& d, FeatureLevel level) {
    const Validator v(ElementWiseClip1Desc::OperatorName, level);
    v.available_since(FeatureLevel::L5_0);
    const auto s = detail::clip_support(level);  // CLIP's table from 5.0: every type, 1-8 dims
    v.tensor("InputTensor", d.InputTensor, s);
    v.tensor("OutputTensor", d.OutputTensor, s);
    v.same_type("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    v.same_sizes("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    v.require(d.MinMaxDataType == d.OutputTensor.Desc.DataType, "MinMaxDataType", [&] {
        return detail::cat(name(d.MinMaxDataType), " must equal OutputTensor's DataType ",
                           name(d.OutputTensor.Desc.DataType), " (Min and Max are values of the output's type)");
    });
    v.output("OutputTensor", d.OutputTensor, {{"InputTensor", &d.InputTensor}}, /*in_place_ok=*/true);
}

}  // namespace qdml
