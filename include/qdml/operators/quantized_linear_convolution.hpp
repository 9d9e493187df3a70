// qdml/operators/quantized_linear_convolution.hpp - DML_QUANTIZED_LINEAR_CONVOLUTION:
// the runtime desc, its validation, and the typed operator struct.
//   oH  = 1 + (H + StartPadding[0] + EndPadding[0] - (1 + (kH-1)*Dilations[0])) / Strides[0]
//   acc = Bias[oc] + sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])
//   Output = Q(fp32(acc) * (fp32(InputScale * FilterScale[oc]) / OutputScale), OutputZP)
// (docs/semantics.md section 6). Two spatial dimensions, forward cross-correlation.
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
/// the number of spatial dimensions (2); the arrays hold DimensionCount values.
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
    static QuantizedLinearConvolution bind_validated(const QuantizedLinearConvolutionDesc& d) {
        constexpr std::string_view n = QuantizedLinearConvolutionDesc::OperatorName;
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
/// The convolution's shape rules (docs/semantics.md section 6), shared by
/// QUANTIZED_LINEAR_CONVOLUTION and CONVOLUTION_INTEGER: Strides and
/// Dilations at least 1, GroupCount dividing both channel counts, a kernel
/// that fits the padded input, Output {N, Cout, oH, oW}.
inline void convolution_shapes(const Validator& v, const Tensor& input, const Tensor& filter, const Tensor& output,
                               const std::array<std::uint32_t, 2>& strides,
                               const std::array<std::uint32_t, 2>& dilations,
                               const std::array<std::uint32_t, 2>& start_padding,
                               const std::array<std::uint32_t, 2>& end_padding, std::uint32_t group_count) {
    for (std::uint32_t i = 0; i < 2; ++i) {
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
    std::uint64_t spatial[2];
    for (std::uint32_t i = 0; i < 2; ++i) {
        spatial[i] = convolution_output_size(in[2 + i], f[2 + i], strides[i], dilations[i], start_padding[i],
                                             end_padding[i]);
        v.require(spatial[i] != 0, "FilterTensor", [&] {
            return detail::cat("kernel extent 1 + (", f[2 + i], " - 1) * Dilations[", i, "] = ",
                               1 + (std::uint64_t{f[2 + i]} - 1) * dilations[i], " is larger than the padded input ",
                               std::uint64_t{in[2 + i]} + start_padding[i] + end_padding[i], "; no output");
        });
    }
    v.require(out[0] == in[0] && out[1] == f[0] && out[2] == spatial[0] && out[3] == spatial[1], "OutputTensor", [&] {
        return detail::cat("Sizes ", detail::sizes_str(output.Desc), " must be {N, Cout, oH, oW} = {", in[0],
                           ",", f[0], ",", spatial[0], ",", spatial[1], "}");
    });
}
}  // namespace detail

inline void validate(const QuantizedLinearConvolutionDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(QuantizedLinearConvolutionDesc::OperatorName, level);
    v.available_since(FeatureLevel::L2_1);
    // docs/feature-levels.md. From 4.0 the docs allow 3-D Input/Filter/Output/Bias (one spatial
    // dimension); qdml has DimensionCount 2 only, and Bias must share their DimensionCount: 4-D.
    const bool any_rank = level >= FeatureLevel::L4_0;  // before 4.0: 4-D parameter tensors only
    const MemberSupport q8{4, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_q8{any_rank ? 1u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_f32{any_rank ? 1u : 4u, 4, {T::Float32}};
    const MemberSupport filter_scale{level >= FeatureLevel::L5_2 ? 1u : any_rank ? 3u : 4u, 4, {T::Float32}};
    const MemberSupport bias{4, 4, {T::Int32}};
    v.require(d.DimensionCount == 2, "DimensionCount",
              [&] { return detail::cat(d.DimensionCount, " spatial dimensions; only 2 are supported"); });
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

    detail::convolution_shapes(v, d.InputTensor, d.FilterTensor, d.OutputTensor, d.Strides, d.Dilations,
                               d.StartPadding, d.EndPadding, d.GroupCount);
    const auto& f = d.FilterTensor.Desc.Sizes;
    const auto& out = d.OutputTensor.Desc.Sizes;
    const std::uint32_t full[4] = {out[0], out[1], out[2], out[3]};
    const char* per_channel = "{1,Cout,1,1} (per output channel)";
    const char* per_tensor = "a single element";
    constexpr std::uint32_t kNoAxis = 4;
    detail::quantization_param_shape(v, "InputScaleTensor", d.InputScaleTensor, kNoAxis, 1, full, per_tensor);
    if (d.InputZeroPointTensor)
        detail::quantization_param_shape(v, "InputZeroPointTensor", *d.InputZeroPointTensor, kNoAxis, 1, full,
                                         per_tensor);
    detail::quantization_param_shape(v, "FilterScaleTensor", d.FilterScaleTensor, 1, f[0], full, per_channel);
    if (d.FilterZeroPointTensor)
        detail::quantization_param_shape(v, "FilterZeroPointTensor", *d.FilterZeroPointTensor, 1, f[0], full,
                                         per_channel);
    if (d.BiasTensor) {
        detail::quantization_param_shape(v, "BiasTensor", *d.BiasTensor, 1, f[0], full, "{1,Cout,1,1}");
        std::uint32_t bs[4];
        std::uint64_t unused[4];
        detail::aligned4(d.BiasTensor->Desc, bs, unused);
        v.require(bs[1] == f[0], "BiasTensor", [&] {
            return "Sizes " + detail::sizes_str(d.BiasTensor->Desc) +
                   " must be {1,Cout,1,1} (one value per output channel)";
        });
    }
    detail::quantization_param_shape(v, "OutputScaleTensor", d.OutputScaleTensor, kNoAxis, 1, full, per_tensor);
    if (d.OutputZeroPointTensor)
        detail::quantization_param_shape(v, "OutputZeroPointTensor", *d.OutputZeroPointTensor, kNoAxis, 1, full,
                                         per_tensor);

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

}  // namespace qdml
