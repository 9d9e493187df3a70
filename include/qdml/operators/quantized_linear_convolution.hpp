// qdml/operators/quantized_linear_convolution.hpp - DML_QUANTIZED_LINEAR_CONVOLUTION:
// the runtime desc, its validation, and the typed operator struct.
//   oH  = 1 + (H + StartPadding[0] + EndPadding[0] - (1 + (kH-1)*Dilations[0])) / Strides[0]
//   acc = Bias[oc] + sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])
//   Output = Q(fp32(acc) * (fp32(InputScale * FilterScale[oc]) / OutputScale), OutputZP)
// (docs/semantics.md section 6). One or two spatial dimensions, forward cross-correlation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "qdml/core/bind.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC. DimensionCount is
/// the number of spatial dimensions: 2, or 1 from feature level 4.0 (Input,
/// Filter, Output and Bias {N, C, W}); the arrays hold DimensionCount values
/// (with 1, the second is not read).
struct QuantizedLinearConvolutionDesc {
    static constexpr std::string_view OperatorName = "QUANTIZED_LINEAR_CONVOLUTION";
    Tensor InputTensor;
    Tensor InputScaleTensor;
    OptionalTensor InputZeroPointTensor;
    Tensor FilterTensor;
    Tensor FilterScaleTensor;
    OptionalTensor FilterZeroPointTensor;
    OptionalTensor BiasTensor;
    Tensor OutputScaleTensor;
    OptionalTensor OutputZeroPointTensor;
    Tensor OutputTensor;
    std::uint32_t DimensionCount = 2;
    std::array<std::uint32_t, 2> Strides{1, 1};
    std::array<std::uint32_t, 2> Dilations{1, 1};
    std::array<std::uint32_t, 2> StartPadding{0, 0};
    std::array<std::uint32_t, 2> EndPadding{0, 0};
    std::uint32_t GroupCount = 1;
};

/// Checks `d` against docs/semantics.md sections 1, 6 and 8; throws qdml::Error.
inline void validate(const QuantizedLinearConvolutionDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// `d` as the typed operator reads it (docs/semantics.md section 6): with
/// DimensionCount 1, Input, Filter and Output {N, C, W} as {N, C, 1, W} and
/// the arrays' one value as the width's (height: stride and dilation 1, no
/// padding); scales, zero points and Bias of fewer dimensions than the
/// output aligned with its first dimensions. Other descs are returned as they are.
inline QuantizedLinearConvolutionDesc two_spatial_form(const QuantizedLinearConvolutionDesc& d);

/// Typed form. Input {N, Cin, H, W}, Filter {Cout, Cin/GroupCount, kH, kW},
/// Output {N, Cout, oH, oW}; scale, zero-point and bias views are broadcast
/// to the output's sizes, so `FilterScaleTensor[{n, oc, y, x}]` is FilterScale[oc].
template <class TIn, class TFilter, class TOut>
struct QuantizedLinearConvolution {
    TensorView<const TIn, 4> InputTensor;
    TensorView<const float, 4> InputScaleTensor;
    std::optional<TensorView<const TIn, 4>> InputZeroPointTensor;
    TensorView<const TFilter, 4> FilterTensor;
    TensorView<const float, 4> FilterScaleTensor;
    std::optional<TensorView<const TFilter, 4>> FilterZeroPointTensor;
    std::optional<TensorView<const std::int32_t, 4>> BiasTensor;
    TensorView<const float, 4> OutputScaleTensor;
    std::optional<TensorView<const TOut, 4>> OutputZeroPointTensor;
    TensorView<TOut, 4> OutputTensor;
    std::array<std::uint32_t, 2> Strides{1, 1};
    std::array<std::uint32_t, 2> Dilations{1, 1};
    std::array<std::uint32_t, 2> StartPadding{0, 0};
    std::array<std::uint32_t, 2> EndPadding{0, 0};
    std::uint32_t GroupCount = 1;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's.
    static QuantizedLinearConvolution bind(const QuantizedLinearConvolutionDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types.
    static QuantizedLinearConvolution bind_validated(const QuantizedLinearConvolutionDesc& desc) {
        constexpr std::string_view n = QuantizedLinearConvolutionDesc::OperatorName;
        const QuantizedLinearConvolutionDesc d = two_spatial_form(desc);
        QuantizedLinearConvolution op;
        op.OutputTensor = detail::bind_view<TOut, 4>(n, "OutputTensor", d.OutputTensor);
        const auto& out = op.OutputTensor.sizes;
        op.InputTensor = detail::bind_view<const TIn, 4>(n, "InputTensor", d.InputTensor);
        op.InputScaleTensor = detail::bind_param<const float>(n, "InputScaleTensor", d.InputScaleTensor, out);
        op.InputZeroPointTensor = detail::bind_param<const TIn>(n, "InputZeroPointTensor", d.InputZeroPointTensor, out);
        op.FilterTensor = detail::bind_view<const TFilter, 4>(n, "FilterTensor", d.FilterTensor);
        op.FilterScaleTensor = detail::bind_param<const float>(n, "FilterScaleTensor", d.FilterScaleTensor, out);
        op.FilterZeroPointTensor =
            detail::bind_param<const TFilter>(n, "FilterZeroPointTensor", d.FilterZeroPointTensor, out);
        op.BiasTensor = detail::bind_param<const std::int32_t>(n, "BiasTensor", d.BiasTensor, out);
        op.OutputScaleTensor = detail::bind_param<const float>(n, "OutputScaleTensor", d.OutputScaleTensor, out);
        op.OutputZeroPointTensor =
            detail::bind_param<const TOut>(n, "OutputZeroPointTensor", d.OutputZeroPointTensor, out);
        op.Strides = d.Strides;
        op.Dilations = d.Dilations;
        op.StartPadding = d.StartPadding;
        op.EndPadding = d.EndPadding;
        op.GroupCount = d.GroupCount;
        return op;
    }
};

/// Output spatial size for one dimension, or 0 when the kernel extent is
/// larger than the padded input (no output).
inline std::uint64_t convolution_output_size(std::uint64_t in, std::uint64_t kernel, std::uint32_t stride,
                                             std::uint32_t dilation, std::uint32_t pad_start, std::uint32_t pad_end) {
    const std::uint64_t padded = in + pad_start + pad_end;
    const std::uint64_t extent = 1 + (kernel - 1) * dilation;
    if (stride == 0 || extent > padded) return 0;
    return 1 + (padded - extent) / stride;
}

namespace detail {
/// `d` with a dimension of size 1 (stride 0) inserted at index `at`
/// (a packed desc stays packed: its layout does not change).
inline TensorDesc with_unit_dimension(TensorDesc d, std::uint32_t at) {
    if (d.DimensionCount >= kMaxDimensions || at > d.DimensionCount) return d;
    for (std::uint32_t i = d.DimensionCount; i > at; --i) {
        d.Sizes[i] = d.Sizes[i - 1];
        if (d.Strides) (*d.Strides)[i] = (*d.Strides)[i - 1];
    }
    d.Sizes[at] = 1;
    if (d.Strides) (*d.Strides)[at] = 0;
    ++d.DimensionCount;
    return d;
}

/// A convolution's Input, Filter or Output in the two-spatial-dimension form
/// of the typed operators (docs/semantics.md section 6): with one spatial
/// dimension, {N, C, W} is {N, C, 1, W}.
inline TensorDesc convolution_tensor_form(const TensorDesc& d, std::uint32_t spatial) {
    return spatial == 1 && d.DimensionCount == 3 ? with_unit_dimension(d, 2) : d;
}

/// A convolution's scale, zero point or bias in that form. DirectML aligns
/// such a tensor of fewer dimensions than the output with the output's
/// leading dimensions ({1, Cout} is {1, Cout, 1, 1}; {Cout, 1, 1} is not
/// per channel), measured (docs/semantics.md section 6); then, with one
/// spatial dimension, a three-dimension tensor gets the height of 1.
inline TensorDesc convolution_param_form(TensorDesc d, std::uint32_t spatial) {
    if (d.DimensionCount == 0 || d.DimensionCount > 4 || spatial < 1 || spatial > 2) return d;
    while (d.DimensionCount < spatial + 2) d = with_unit_dimension(d, d.DimensionCount);
    return convolution_tensor_form(d, spatial);
}

inline Tensor convolution_tensor_form(Tensor t, std::uint32_t spatial) {
    t.Desc = convolution_tensor_form(t.Desc, spatial);
    return t;
}
inline Tensor convolution_param_form(Tensor t, std::uint32_t spatial) {
    t.Desc = convolution_param_form(t.Desc, spatial);
    return t;
}
inline OptionalTensor convolution_param_form(const OptionalTensor& t, std::uint32_t spatial) {
    if (!t) return t;
    return convolution_param_form(*t, spatial);
}

/// The parameter arrays of a one-spatial-dimension convolution in the
/// two-dimension form: height stride and dilation 1, no height padding.
template <class Conv>
void two_spatial_params(Conv& c) {
    if (c.DimensionCount != 1) return;
    c.Strides = {1, c.Strides[0]};
    c.Dilations = {1, c.Dilations[0]};
    c.StartPadding = {0, c.StartPadding[0]};
    c.EndPadding = {0, c.EndPadding[0]};
    c.DimensionCount = 2;
}

/// A scale, zero-point or bias member of a convolution (docs/semantics.md
/// section 6), read as convolution_param_form reads it: every dimension 1,
/// except the output channel's, which may also be Cout when `per_channel`;
/// a dimension with Strides 0 may instead have the output's size there.
/// The message shows the member's own sizes.
inline void convolution_param_shape(const Validator& v, std::string_view m, const Tensor& t, std::uint32_t spatial,
                                    bool per_channel, std::uint32_t cout, const std::uint32_t (&full)[4]) {
    const char* form = !per_channel ? "a single element"
                       : spatial == 1 ? "{1,Cout,1} or {1,Cout,1,1} (per output channel)"
                                      : "{1,Cout,1,1} (per output channel)";
    v.require(t.Desc.DimensionCount <= 4, m,
              [&] { return detail::cat("DimensionCount ", t.Desc.DimensionCount, " must be at most 4"); });
    const TensorDesc c = convolution_param_form(t.Desc, spatial);
    std::uint32_t sizes[4];
    std::uint64_t strides[4];
    aligned4(c, sizes, strides);
    for (std::uint32_t i = 0; i < 4; ++i) {
        const bool ok = sizes[i] == 1 || (per_channel && i == 1 && sizes[i] == cout) ||
                        (strides[i] == 0 && sizes[i] == full[i]);
        v.require(ok, m, [&] {
            return "Sizes " + sizes_str(t.Desc) + " must be " + (per_channel ? "a single element or " : "") + form +
                   (t.Desc.DimensionCount < spatial + 2 ? " (fewer dimensions align with the output's first ones)" : "");
        });
    }
}

/// The spatial-dimension count rule shared by the convolutions: 2, or 1
/// from feature level 4.0 (the tensors {N, C, W}); the main tensors have
/// DimensionCount + 2 dimensions.
inline void convolution_dimension_count(const Validator& v, std::uint32_t dc, FeatureLevel level) {
    v.require(dc == 1 || dc == 2, "DimensionCount",
              [&] { return detail::cat(dc, " spatial dimensions; DirectML supports 1 or 2"); });
    v.require(dc == 2 || level >= FeatureLevel::L4_0, "DimensionCount",
              "1 spatial dimension needs DML_FEATURE_LEVEL 4.0 or later");
}

/// The convolution's shape rules (docs/semantics.md section 6), shared by
/// QUANTIZED_LINEAR_CONVOLUTION and CONVOLUTION_INTEGER: Input, Filter and
/// Output of `spatial` + 2 dimensions, Strides and Dilations at least 1,
/// GroupCount dividing both channel counts, a kernel that fits the padded
/// input, Output {N, Cout, oH, oW} ({N, Cout, oW} with one spatial dimension).
inline void convolution_shapes(const Validator& v, std::uint32_t spatial, const Tensor& input, const Tensor& filter,
                               const Tensor& output, const std::array<std::uint32_t, 2>& strides,
                               const std::array<std::uint32_t, 2>& dilations,
                               const std::array<std::uint32_t, 2>& start_padding,
                               const std::array<std::uint32_t, 2>& end_padding, std::uint32_t group_count) {
    const std::uint32_t rank = spatial + 2;
    const auto rank_rule = [&](const char* m, const Tensor& t) {
        v.require(t.Desc.DimensionCount == rank, m, [&] {
            return detail::cat("DimensionCount ", t.Desc.DimensionCount, " must be DimensionCount (", spatial,
                               " spatial) + 2 = ", rank);
        });
    };
    rank_rule("InputTensor", input);
    rank_rule("FilterTensor", filter);
    rank_rule("OutputTensor", output);
    for (std::uint32_t i = 0; i < spatial; ++i) {
        v.require(strides[i] >= 1, "Strides", [&] { return detail::cat("Strides[", i, "] is 0; must be >= 1"); });
        v.require(dilations[i] >= 1, "Dilations",
                  [&] { return detail::cat("Dilations[", i, "] is 0; must be >= 1"); });
    }
    const auto& in = input.Desc.Sizes;
    const auto& f = filter.Desc.Sizes;
    const auto& out = output.Desc.Sizes;
    v.require(group_count >= 1, "GroupCount", "is 0; must be >= 1");
    v.require(std::uint64_t{f[1]} * group_count == in[1], "GroupCount", [&] {
        return detail::cat("input channels ", in[1], " must equal FilterTensor Sizes[1] (", f[1], ") * GroupCount (",
                           group_count, ")");
    });
    v.require(f[0] % group_count == 0, "GroupCount", [&] {
        return detail::cat("does not divide the output channels (FilterTensor Sizes[0] = ", f[0], ") by GroupCount ",
                           group_count);
    });
    std::uint64_t o[2] = {0, 0};
    bool sizes_match = out[0] == in[0] && out[1] == f[0];
    for (std::uint32_t i = 0; i < spatial; ++i) {
        o[i] = convolution_output_size(in[2 + i], f[2 + i], strides[i], dilations[i], start_padding[i],
                                       end_padding[i]);
        v.require(o[i] != 0, "FilterTensor", [&] {
            return detail::cat("kernel extent 1 + (", f[2 + i], " - 1) * Dilations[", i, "] = ",
                               1 + (std::uint64_t{f[2 + i]} - 1) * dilations[i], " is larger than the padded input ",
                               std::uint64_t{in[2 + i]} + start_padding[i] + end_padding[i], "; no output");
        });
        sizes_match = sizes_match && out[2 + i] == o[i];
    }
    v.require(sizes_match, "OutputTensor", [&] {
        if (spatial == 1)
            return detail::cat("Sizes ", detail::sizes_str(output.Desc), " must be {N, Cout, oW} = {", in[0], ",", f[0],
                               ",", o[0], "}");
        return detail::cat("Sizes ", detail::sizes_str(output.Desc), " must be {N, Cout, oH, oW} = {", in[0], ",", f[0],
                           ",", o[0], ",", o[1], "}");
    });
}
}  // namespace detail

inline void validate(const QuantizedLinearConvolutionDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(QuantizedLinearConvolutionDesc::OperatorName, level);
    v.available_since(FeatureLevel::L2_1);
    // docs/feature-levels.md. From 4.0 Input/Filter/Output/Bias may have 3 dimensions (one
    // spatial dimension, DimensionCount 1) and the scales and zero points 1-4.
    const bool any_rank = level >= FeatureLevel::L4_0;  // before 4.0: 4-D tensors only
    detail::convolution_dimension_count(v, d.DimensionCount, level);
    const std::uint32_t spatial = d.DimensionCount;
    const MemberSupport q8{any_rank ? 3u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_q8{any_rank ? 1u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_f32{any_rank ? 1u : 4u, 4, {T::Float32}};
    const MemberSupport filter_scale{level >= FeatureLevel::L5_2 ? 1u : any_rank ? 3u : 4u, 4, {T::Float32}};
    const MemberSupport bias{spatial + 2, 4, {T::Int32}};
    v.tensor("InputTensor", d.InputTensor, q8);
    v.tensor("InputScaleTensor", d.InputScaleTensor, param_f32);
    if (d.InputZeroPointTensor) v.tensor("InputZeroPointTensor", *d.InputZeroPointTensor, param_q8);
    v.tensor("FilterTensor", d.FilterTensor, q8);
    v.tensor("FilterScaleTensor", d.FilterScaleTensor, filter_scale);
    if (d.FilterZeroPointTensor) v.tensor("FilterZeroPointTensor", *d.FilterZeroPointTensor, param_q8);
    if (d.BiasTensor) v.tensor("BiasTensor", *d.BiasTensor, bias);
    v.tensor("OutputScaleTensor", d.OutputScaleTensor, param_f32);
    if (d.OutputZeroPointTensor) v.tensor("OutputZeroPointTensor", *d.OutputZeroPointTensor, param_q8);
    v.tensor("OutputTensor", d.OutputTensor, q8);

    if (d.InputZeroPointTensor) v.same_type("InputZeroPointTensor", *d.InputZeroPointTensor, "InputTensor", d.InputTensor);
    if (d.FilterZeroPointTensor)
        v.same_type("FilterZeroPointTensor", *d.FilterZeroPointTensor, "FilterTensor", d.FilterTensor);
    if (d.OutputZeroPointTensor)
        v.same_type("OutputZeroPointTensor", *d.OutputZeroPointTensor, "OutputTensor", d.OutputTensor);

    detail::convolution_shapes(v, spatial, d.InputTensor, d.FilterTensor, d.OutputTensor, d.Strides, d.Dilations,
                               d.StartPadding, d.EndPadding, d.GroupCount);
    const std::uint32_t cout = d.FilterTensor.Desc.Sizes[0];
    const TensorDesc out4 = detail::convolution_tensor_form(d.OutputTensor.Desc, spatial);
    const std::uint32_t full[4] = {out4.Sizes[0], out4.Sizes[1], out4.Sizes[2], out4.Sizes[3]};
    detail::convolution_param_shape(v, "InputScaleTensor", d.InputScaleTensor, spatial, false, cout, full);
    if (d.InputZeroPointTensor)
        detail::convolution_param_shape(v, "InputZeroPointTensor", *d.InputZeroPointTensor, spatial, false, cout, full);
    detail::convolution_param_shape(v, "FilterScaleTensor", d.FilterScaleTensor, spatial, true, cout, full);
    if (d.FilterZeroPointTensor)
        detail::convolution_param_shape(v, "FilterZeroPointTensor", *d.FilterZeroPointTensor, spatial, true, cout, full);
    if (d.BiasTensor) {
        detail::convolution_param_shape(v, "BiasTensor", *d.BiasTensor, spatial, true, cout, full);
        std::uint32_t bs[4];
        std::uint64_t unused[4];
        detail::aligned4(detail::convolution_param_form(d.BiasTensor->Desc, spatial), bs, unused);
        v.require(bs[1] == cout, "BiasTensor", [&] {
            return "Sizes " + detail::sizes_str(d.BiasTensor->Desc) + " must be " +
                   (spatial == 1 ? "{1,Cout,1}" : "{1,Cout,1,1}") + " (one value per output channel)";
        });
    }
    detail::convolution_param_shape(v, "OutputScaleTensor", d.OutputScaleTensor, spatial, false, cout, full);
    if (d.OutputZeroPointTensor)
        detail::convolution_param_shape(v, "OutputZeroPointTensor", *d.OutputZeroPointTensor, spatial, false, cout,
                                        full);

    v.output("OutputTensor", d.OutputTensor,
             {{"InputTensor", &d.InputTensor},
              {"InputScaleTensor", &d.InputScaleTensor},
              {"InputZeroPointTensor", d.InputZeroPointTensor ? &*d.InputZeroPointTensor : nullptr},
              {"FilterTensor", &d.FilterTensor},
              {"FilterScaleTensor", &d.FilterScaleTensor},
              {"FilterZeroPointTensor", d.FilterZeroPointTensor ? &*d.FilterZeroPointTensor : nullptr},
              {"BiasTensor", d.BiasTensor ? &*d.BiasTensor : nullptr},
              {"OutputScaleTensor", &d.OutputScaleTensor},
              {"OutputZeroPointTensor", d.OutputZeroPointTensor ? &*d.OutputZeroPointTensor : nullptr}});
}

inline QuantizedLinearConvolutionDesc two_spatial_form(const QuantizedLinearConvolutionDesc& d) {
    const std::uint32_t sp = d.DimensionCount;
    QuantizedLinearConvolutionDesc c = d;
    c.InputTensor = detail::convolution_tensor_form(d.InputTensor, sp);
    c.FilterTensor = detail::convolution_tensor_form(d.FilterTensor, sp);
    c.OutputTensor = detail::convolution_tensor_form(d.OutputTensor, sp);
    c.InputScaleTensor = detail::convolution_param_form(d.InputScaleTensor, sp);
    c.InputZeroPointTensor = detail::convolution_param_form(d.InputZeroPointTensor, sp);
    c.FilterScaleTensor = detail::convolution_param_form(d.FilterScaleTensor, sp);
    c.FilterZeroPointTensor = detail::convolution_param_form(d.FilterZeroPointTensor, sp);
    c.BiasTensor = detail::convolution_param_form(d.BiasTensor, sp);
    c.OutputScaleTensor = detail::convolution_param_form(d.OutputScaleTensor, sp);
    c.OutputZeroPointTensor = detail::convolution_param_form(d.OutputZeroPointTensor, sp);
    detail::two_spatial_params(c);
    return c;
}

}  // namespace qdml
