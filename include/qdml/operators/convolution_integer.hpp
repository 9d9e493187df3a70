// qdml/operators/convolution_integer.hpp - DML_CONVOLUTION_INTEGER:
// the runtime desc, its validation, and the typed operator struct.
//   oH  = 1 + (H + StartPadding[0] + EndPadding[0] - (1 + (kH-1)*Dilations[0])) / Strides[0]
//   Output = sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])   (INT32, wraps mod 2^32)
// (docs/semantics.md section 14): QUANTIZED_LINEAR_CONVOLUTION's sum without
// Bias, scales and requantization. One or two spatial dimensions, forward cross-correlation.
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

/// Mirrors DML_CONVOLUTION_INTEGER_OPERATOR_DESC. DimensionCount is the
/// number of spatial dimensions: 2, or 1 from feature level 4.0 (Input,
/// Filter and Output {N, C, W}); the arrays hold DimensionCount values (with
/// 1, the second is not read).
struct ConvolutionIntegerDesc {
    static constexpr std::string_view OperatorName = "CONVOLUTION_INTEGER";
    Tensor InputTensor;
    OptionalTensor InputZeroPointTensor;
    Tensor FilterTensor;
    OptionalTensor FilterZeroPointTensor;
    Tensor OutputTensor;
    std::uint32_t DimensionCount = 2;
    std::array<std::uint32_t, 2> Strides{1, 1};
    std::array<std::uint32_t, 2> Dilations{1, 1};
    std::array<std::uint32_t, 2> StartPadding{0, 0};
    std::array<std::uint32_t, 2> EndPadding{0, 0};
    std::uint32_t GroupCount = 1;
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 14; throws qdml::Error.
inline void validate(const ConvolutionIntegerDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// `d` as the typed operator reads it: as QUANTIZED_LINEAR_CONVOLUTION's
/// two_spatial_form (docs/semantics.md sections 6 and 14).
inline ConvolutionIntegerDesc two_spatial_form(const ConvolutionIntegerDesc& d) {
    const std::uint32_t sp = d.DimensionCount;
    ConvolutionIntegerDesc c = d;
    c.InputTensor = detail::convolution_tensor_form(d.InputTensor, sp);
    c.FilterTensor = detail::convolution_tensor_form(d.FilterTensor, sp);
    c.OutputTensor = detail::convolution_tensor_form(d.OutputTensor, sp);
    c.InputZeroPointTensor = detail::convolution_param_form(d.InputZeroPointTensor, sp);
    c.FilterZeroPointTensor = detail::convolution_param_form(d.FilterZeroPointTensor, sp);
    detail::two_spatial_params(c);
    return c;
}

/// Typed form. Input {N, Cin, H, W}, Filter {Cout, Cin/GroupCount, kH, kW},
/// Output {N, Cout, oH, oW} INT32; the zero-point views are broadcast to the
/// output's sizes, so `FilterZeroPointTensor[{n, oc, y, x}]` is FZP[oc].
template <class TIn, class TFilter>
struct ConvolutionInteger {
    TensorView<const TIn, 4> InputTensor;
    std::optional<TensorView<const TIn, 4>> InputZeroPointTensor;
    TensorView<const TFilter, 4> FilterTensor;
    std::optional<TensorView<const TFilter, 4>> FilterZeroPointTensor;
    TensorView<std::int32_t, 4> OutputTensor;
    std::array<std::uint32_t, 2> Strides{1, 1};
    std::array<std::uint32_t, 2> Dilations{1, 1};
    std::array<std::uint32_t, 2> StartPadding{0, 0};
    std::array<std::uint32_t, 2> EndPadding{0, 0};
    std::uint32_t GroupCount = 1;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's.
    static ConvolutionInteger bind(const ConvolutionIntegerDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types.
    static ConvolutionInteger bind_validated(const ConvolutionIntegerDesc& desc) {
        constexpr std::string_view n = ConvolutionIntegerDesc::OperatorName;
        const ConvolutionIntegerDesc d = two_spatial_form(desc);
        ConvolutionInteger op;
        op.OutputTensor = detail::bind_view<std::int32_t, 4>(n, "OutputTensor", d.OutputTensor);
        const auto& out = op.OutputTensor.sizes;
        op.InputTensor = detail::bind_view<const TIn, 4>(n, "InputTensor", d.InputTensor);
        op.InputZeroPointTensor = detail::bind_param<const TIn>(n, "InputZeroPointTensor", d.InputZeroPointTensor, out);
        op.FilterTensor = detail::bind_view<const TFilter, 4>(n, "FilterTensor", d.FilterTensor);
        op.FilterZeroPointTensor =
            detail::bind_param<const TFilter>(n, "FilterZeroPointTensor", d.FilterZeroPointTensor, out);
        op.Strides = d.Strides;
        op.Dilations = d.Dilations;
        op.StartPadding = d.StartPadding;
        op.EndPadding = d.EndPadding;
        op.GroupCount = d.GroupCount;
        return op;
    }
};

inline void validate(const ConvolutionIntegerDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(ConvolutionIntegerDesc::OperatorName, level);
    v.available_since(FeatureLevel::L2_1);
    // docs/feature-levels.md: all 4-D at 2.1; from 4.0 Input/Filter/Output 3-D (one spatial
    // dimension, DimensionCount 1) and zero points 1-4.
    const bool any_rank = level >= FeatureLevel::L4_0;
    detail::convolution_dimension_count(v, d.DimensionCount, level);
    const std::uint32_t spatial = d.DimensionCount;
    const MemberSupport q8{any_rank ? 3u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport zp{any_rank ? 1u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport i32{any_rank ? 3u : 4u, 4, {T::Int32}};
    v.tensor("InputTensor", d.InputTensor, q8);
    if (d.InputZeroPointTensor) v.tensor("InputZeroPointTensor", *d.InputZeroPointTensor, zp);
    v.tensor("FilterTensor", d.FilterTensor, q8);
    if (d.FilterZeroPointTensor) v.tensor("FilterZeroPointTensor", *d.FilterZeroPointTensor, zp);
    v.tensor("OutputTensor", d.OutputTensor, i32);
    if (d.InputZeroPointTensor) v.same_type("InputZeroPointTensor", *d.InputZeroPointTensor, "InputTensor", d.InputTensor);
    if (d.FilterZeroPointTensor)
        v.same_type("FilterZeroPointTensor", *d.FilterZeroPointTensor, "FilterTensor", d.FilterTensor);
    if (d.InputZeroPointTensor && d.FilterZeroPointTensor) {
        const std::uint32_t xr = d.InputZeroPointTensor->Desc.DimensionCount;
        const std::uint32_t fr = d.FilterZeroPointTensor->Desc.DimensionCount;
        v.require(xr == fr, "FilterZeroPointTensor", [&] {
            return detail::cat("DimensionCount ", fr, " must equal InputZeroPointTensor's (", xr, ")");
        });
    }

    detail::convolution_shapes(v, spatial, d.InputTensor, d.FilterTensor, d.OutputTensor, d.Strides, d.Dilations,
                               d.StartPadding, d.EndPadding, d.GroupCount);
    const std::uint32_t cout = d.FilterTensor.Desc.Sizes[0];
    const TensorDesc out4 = detail::convolution_tensor_form(d.OutputTensor.Desc, spatial);
    const std::uint32_t full[4] = {out4.Sizes[0], out4.Sizes[1], out4.Sizes[2], out4.Sizes[3]};
    if (d.InputZeroPointTensor)
        detail::convolution_param_shape(v, "InputZeroPointTensor", *d.InputZeroPointTensor, spatial, false, cout, full);
    if (d.FilterZeroPointTensor)
        detail::convolution_param_shape(v, "FilterZeroPointTensor", *d.FilterZeroPointTensor, spatial, true, cout, full);

    v.output("OutputTensor", d.OutputTensor,
             {{"InputTensor", &d.InputTensor},
              {"InputZeroPointTensor", d.InputZeroPointTensor ? &*d.InputZeroPointTensor : nullptr},
              {"FilterTensor", &d.FilterTensor},
              {"FilterZeroPointTensor", d.FilterZeroPointTensor ? &*d.FilterZeroPointTensor : nullptr}});
}

}  // namespace qdml
