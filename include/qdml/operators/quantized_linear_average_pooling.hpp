// qdml/operators/quantized_linear_average_pooling.hpp - DML_QUANTIZED_LINEAR_AVERAGE_POOLING:
// the runtime desc, its validation, and the typed operator struct.
//   o[k]   = 1 + (I[k] + StartPadding[k] + EndPadding[k] - (1 + (WindowSize[k]-1)*Dilations[k])) / Strides[k]
//   sum    = sum over the window's taps inside the input, in window order, of fp32(X - InputZP) * InputScale
//   Output = Q((sum / fp32(count)) / OutputScale, OutputZP)   count: the window's size or its taps in the input
// (docs/semantics.md section 17). Two or three spatial dimensions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "qdml/core/bind.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"

namespace qdml {

/// Mirrors DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC. DimensionCount
/// is the number of spatial dimensions: 2 (Input and Output {N, C, H, W}) or
/// 3 ({N, C, D, H, W}); the arrays hold DimensionCount values (with 2, the
/// third is not read).
struct QuantizedLinearAveragePoolingDesc {
    static constexpr std::string_view OperatorName = "QUANTIZED_LINEAR_AVERAGE_POOLING";
    Tensor InputTensor;
    Tensor InputScaleTensor;
    OptionalTensor InputZeroPointTensor;
    Tensor OutputScaleTensor;
    OptionalTensor OutputZeroPointTensor;
    Tensor OutputTensor;
    std::uint32_t DimensionCount = 2;
    std::array<std::uint32_t, 3> Strides{1, 1, 1};
    std::array<std::uint32_t, 3> WindowSize{1, 1, 1};
    std::array<std::uint32_t, 3> StartPadding{0, 0, 0};
    std::array<std::uint32_t, 3> EndPadding{0, 0, 0};
    std::array<std::uint32_t, 3> Dilations{1, 1, 1};
    bool IncludePadding = false;
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 17; throws qdml::Error.
inline void validate(const QuantizedLinearAveragePoolingDesc& d, FeatureLevel level = FeatureLevel::Latest);

namespace detail {
/// A pooling's Input or Output in the three-spatial-dimension form of the
/// typed operator: with two spatial dimensions, {N, C, H, W} is {N, C, 1, H, W}.
inline TensorDesc pooling_tensor_form(const TensorDesc& d, std::uint32_t spatial) {
    return spatial == 2 && d.DimensionCount == 4 ? with_unit_dimension(d, 2) : d;
}
/// A scale or zero point in that form: aligned with the output's first
/// dimensions ({1, C} is {1, C, 1, 1}, as the convolutions' parameters,
/// docs/semantics.md section 17), then given the depth of 1.
inline TensorDesc pooling_param_form(TensorDesc d, std::uint32_t spatial) {
    if (d.DimensionCount == 0 || spatial < 2 || spatial > 3 || d.DimensionCount > spatial + 2) return d;
    while (d.DimensionCount < spatial + 2) d = with_unit_dimension(d, d.DimensionCount);
    return pooling_tensor_form(d, spatial);
}
inline Tensor pooling_tensor_form(Tensor t, std::uint32_t spatial) {
    t.Desc = pooling_tensor_form(t.Desc, spatial);
    return t;
}
inline Tensor pooling_param_form(Tensor t, std::uint32_t spatial) {
    t.Desc = pooling_param_form(t.Desc, spatial);
    return t;
}
inline OptionalTensor pooling_param_form(const OptionalTensor& t, std::uint32_t spatial) {
    if (!t) return t;
    return pooling_param_form(*t, spatial);
}
/// The arrays in that form: with two spatial dimensions, a depth of stride,
/// window and dilation 1 and no padding comes first.
inline std::array<std::uint32_t, 3> pooling_array_form(const std::array<std::uint32_t, 3>& a, std::uint32_t spatial,
                                                       std::uint32_t depth) {
    return spatial == 2 ? std::array<std::uint32_t, 3>{depth, a[0], a[1]} : a;
}
}  // namespace detail

/// Typed form, three spatial dimensions. Input {N, C, D, H, W}, Output {N,
/// C, oD, oH, oW} (two spatial dimensions read with D = oD = 1); the scale
/// and zero-point views are broadcast to the output's sizes, so
/// `InputScaleTensor[{n, c, z, y, x}]` is the scale of channel c.
template <class T>
struct QuantizedLinearAveragePooling {
    TensorView<const T, 5> InputTensor;
    TensorView<const float, 5> InputScaleTensor;
    std::optional<TensorView<const T, 5>> InputZeroPointTensor;
    TensorView<const float, 5> OutputScaleTensor;
    std::optional<TensorView<const T, 5>> OutputZeroPointTensor;
    TensorView<T, 5> OutputTensor;
    std::array<std::uint32_t, 3> Strides{1, 1, 1};
    std::array<std::uint32_t, 3> WindowSize{1, 1, 1};
    std::array<std::uint32_t, 3> StartPadding{0, 0, 0};
    std::array<std::uint32_t, 3> EndPadding{0, 0, 0};
    std::array<std::uint32_t, 3> Dilations{1, 1, 1};
    bool IncludePadding = false;
    /// The desc's OutputZeroPointTensor addresses one element (every
    /// dimension of size above 1 has stride 0): the directml profile's NaN rule.
    bool OutputZeroPointOneElement = false;

    /// Views of `d` for this element type: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the template's.
    static QuantizedLinearAveragePooling bind(const QuantizedLinearAveragePoolingDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types.
    static QuantizedLinearAveragePooling bind_validated(const QuantizedLinearAveragePoolingDesc& d) {
        constexpr std::string_view n = QuantizedLinearAveragePoolingDesc::OperatorName;
        const std::uint32_t sp = d.DimensionCount;
        QuantizedLinearAveragePooling op;
        op.OutputTensor = detail::bind_view<T, 5>(n, "OutputTensor", detail::pooling_tensor_form(d.OutputTensor, sp));
        const auto& out = op.OutputTensor.sizes;
        op.InputTensor = detail::bind_view<const T, 5>(n, "InputTensor", detail::pooling_tensor_form(d.InputTensor, sp));
        const auto param = [&](const auto& t) { return detail::pooling_param_form(t, sp); };
        op.InputScaleTensor = detail::bind_param<const float>(n, "InputScaleTensor", param(d.InputScaleTensor), out);
        op.InputZeroPointTensor =
            detail::bind_param<const T>(n, "InputZeroPointTensor", param(d.InputZeroPointTensor), out);
        op.OutputScaleTensor = detail::bind_param<const float>(n, "OutputScaleTensor", param(d.OutputScaleTensor), out);
        op.OutputZeroPointTensor =
            detail::bind_param<const T>(n, "OutputZeroPointTensor", param(d.OutputZeroPointTensor), out);
        op.Strides = detail::pooling_array_form(d.Strides, sp, 1);
        op.WindowSize = detail::pooling_array_form(d.WindowSize, sp, 1);
        op.StartPadding = detail::pooling_array_form(d.StartPadding, sp, 0);
        op.EndPadding = detail::pooling_array_form(d.EndPadding, sp, 0);
        op.Dilations = detail::pooling_array_form(d.Dilations, sp, 1);
        op.IncludePadding = d.IncludePadding;
        if (d.OutputZeroPointTensor) {
            const auto st = effective_strides(d.OutputZeroPointTensor->Desc);
            bool one = true;
            for (std::uint32_t i = 0; i < d.OutputZeroPointTensor->Desc.DimensionCount; ++i)
                one = one && (d.OutputZeroPointTensor->Desc.Sizes[i] == 1 || st[i] == 0);
            op.OutputZeroPointOneElement = one;
        }
        return op;
    }
};

namespace detail {
/// A scale or zero point of the pooling (docs/semantics.md section 17): at
/// most Input's DimensionCount, read as pooling_param_form reads it, every
/// dimension 1 but the channel's, which may be C; a dimension with Strides 0
/// may instead have the output's or the input's size there.
inline void pooling_param_shape(const Validator& v, std::string_view m, const Tensor& t, std::uint32_t spatial,
                                const TensorDesc& in, const TensorDesc& out) {
    const std::uint32_t rank = spatial + 2;
    v.require(t.Desc.DimensionCount <= rank, m, [&] {
        return cat("DimensionCount ", t.Desc.DimensionCount, " must be at most InputTensor's (", rank, ")");
    });
    const TensorDesc c = pooling_param_form(t.Desc, spatial);
    const TensorDesc in5 = pooling_tensor_form(in, spatial), out5 = pooling_tensor_form(out, spatial);
    const auto st = effective_strides(c);
    for (std::uint32_t i = 0; i < 5; ++i) {
        const std::uint32_t s = c.Sizes[i];
        const bool ok = s == 1 || (i == 1 && s == in5.Sizes[1]) ||
                        (st[i] == 0 && (s == out5.Sizes[i] || s == in5.Sizes[i]));
        v.require(ok, m, [&] {
            return "Sizes " + sizes_str(t.Desc) + " must be a single element or " +
                   (spatial == 2 ? "{1,C,1,1}" : "{1,C,1,1,1}") + " (per channel)" +
                   (t.Desc.DimensionCount < rank ? " (fewer dimensions align with the output's first ones)" : "");
        });
    }
}
}  // namespace detail

inline void validate(const QuantizedLinearAveragePoolingDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(QuantizedLinearAveragePoolingDesc::OperatorName, level);
    v.available_since(FeatureLevel::L6_2);
    const std::uint32_t spatial = d.DimensionCount;
    v.require(spatial == 2 || spatial == 3, "DimensionCount",
              [&] { return detail::cat(spatial, " spatial dimensions; DirectML supports 2 or 3"); });
    // docs/feature-levels.md: one table from 6.2.
    const MemberSupport q8{4, 5, {T::Int8, T::UInt8}};
    const MemberSupport param_q8{1, 5, {T::Int8, T::UInt8}};
    const MemberSupport param_f32{1, 5, {T::Float32}};
    v.tensor("InputTensor", d.InputTensor, q8);
    v.tensor("InputScaleTensor", d.InputScaleTensor, param_f32);
    if (d.InputZeroPointTensor) v.tensor("InputZeroPointTensor", *d.InputZeroPointTensor, param_q8);
    v.tensor("OutputScaleTensor", d.OutputScaleTensor, param_f32);
    if (d.OutputZeroPointTensor) v.tensor("OutputZeroPointTensor", *d.OutputZeroPointTensor, param_q8);
    v.tensor("OutputTensor", d.OutputTensor, q8);
    if (d.InputZeroPointTensor) v.same_type("InputZeroPointTensor", *d.InputZeroPointTensor, "InputTensor", d.InputTensor);
    v.same_type("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);
    if (d.OutputZeroPointTensor)
        v.same_type("OutputZeroPointTensor", *d.OutputZeroPointTensor, "OutputTensor", d.OutputTensor);

    const std::uint32_t rank = spatial + 2;
    for (const auto& member : {std::pair<const char*, const Tensor*>{"InputTensor", &d.InputTensor},
                               std::pair<const char*, const Tensor*>{"OutputTensor", &d.OutputTensor}}) {
        const Tensor* t = member.second;  // (a structured binding cannot be captured in C++17: clang refuses it)
        v.require(t->Desc.DimensionCount == rank, member.first, [&] {
            return detail::cat("DimensionCount ", t->Desc.DimensionCount, " must be DimensionCount (", spatial,
                               " spatial) + 2 = ", rank);
        });
    }
    for (std::uint32_t i = 0; i < spatial; ++i) {
        v.require(d.Strides[i] >= 1, "Strides", [&] { return detail::cat("Strides[", i, "] is 0; must be >= 1"); });
        v.require(d.WindowSize[i] >= 1, "WindowSize",
                  [&] { return detail::cat("WindowSize[", i, "] is 0; must be >= 1"); });
        v.require(d.Dilations[i] >= 1, "Dilations",
                  [&] { return detail::cat("Dilations[", i, "] is 0; must be >= 1"); });
    }
    const auto& in = d.InputTensor.Desc.Sizes;
    const auto& out = d.OutputTensor.Desc.Sizes;
    std::uint64_t o[3] = {0, 0, 0};
    bool sizes_match = out[0] == in[0] && out[1] == in[1];
    for (std::uint32_t i = 0; i < spatial; ++i) {
        o[i] = convolution_output_size(in[2 + i], d.WindowSize[i], d.Strides[i], d.Dilations[i], d.StartPadding[i],
                                       d.EndPadding[i]);
        v.require(o[i] != 0, "WindowSize", [&] {
            return detail::cat("window extent 1 + (", d.WindowSize[i], " - 1) * Dilations[", i, "] = ",
                               1 + (std::uint64_t{d.WindowSize[i]} - 1) * d.Dilations[i],
                               " is larger than the padded input ",
                               std::uint64_t{in[2 + i]} + d.StartPadding[i] + d.EndPadding[i], "; no output");
        });
        sizes_match = sizes_match && out[2 + i] == o[i];
    }
    v.require(sizes_match, "OutputTensor", [&] {
        if (spatial == 2)
            return detail::cat("Sizes ", detail::sizes_str(d.OutputTensor.Desc), " must be {N, C, oH, oW} = {", in[0],
                               ",", in[1], ",", o[0], ",", o[1], "}");
        return detail::cat("Sizes ", detail::sizes_str(d.OutputTensor.Desc), " must be {N, C, oD, oH, oW} = {", in[0],
                           ",", in[1], ",", o[0], ",", o[1], ",", o[2], "}");
    });
    const TensorDesc &id = d.InputTensor.Desc, &od = d.OutputTensor.Desc;
    detail::pooling_param_shape(v, "InputScaleTensor", d.InputScaleTensor, spatial, id, od);
    if (d.InputZeroPointTensor)
        detail::pooling_param_shape(v, "InputZeroPointTensor", *d.InputZeroPointTensor, spatial, id, od);
    detail::pooling_param_shape(v, "OutputScaleTensor", d.OutputScaleTensor, spatial, id, od);
    if (d.OutputZeroPointTensor)
        detail::pooling_param_shape(v, "OutputZeroPointTensor", *d.OutputZeroPointTensor, spatial, id, od);

    v.output("OutputTensor", d.OutputTensor,
             {{"InputTensor", &d.InputTensor},
              {"InputScaleTensor", &d.InputScaleTensor},
              {"InputZeroPointTensor", d.InputZeroPointTensor ? &*d.InputZeroPointTensor : nullptr},
              {"OutputScaleTensor", &d.OutputScaleTensor},
              {"OutputZeroPointTensor", d.OutputZeroPointTensor ? &*d.OutputZeroPointTensor : nullptr}});
}

}  // namespace qdml
