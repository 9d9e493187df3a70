// qdml/operators/quantize.hpp - DML_QUANTIZE and DML_DEQUANTIZE (feature level
// 6.3): the runtime descs, their validation, and the typed operator structs.
//   QUANTIZE:   Output = Q(x(Input) / Scale[b(i)], ZeroPoint[b(i)], OutputType)
//   DEQUANTIZE: Output = fp32(Input - ZeroPoint[b(i)]) * Scale[b(i)]
// with b(i) the block of element i (each QuantizationTensors size divides
// the Input's), and INT4/UINT4 among the quantized types (docs/semantics.md
// section 18).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "qdml/core/bind.hpp"
#include "qdml/core/float16.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_QUANTIZATION_TYPE (DML_TARGET_VERSION >= 0x6300).
enum class QuantizationType : std::uint32_t {
    None = 0,
    Scale = 1,
    ScaleZeroPoint = 2,
};

/// DirectML's name without the prefix ("SCALE_ZERO_POINT"), or "UNKNOWN".
constexpr std::string_view name(QuantizationType t) noexcept {
    switch (t) {
        case QuantizationType::None: return "NONE";
        case QuantizationType::Scale: return "SCALE";
        case QuantizationType::ScaleZeroPoint: return "SCALE_ZERO_POINT";
        default: return "UNKNOWN";
    }
}

/// Parses a DML_QUANTIZATION_TYPE name without prefix; nullopt when unknown.
inline std::optional<QuantizationType> parse_quantization_type(std::string_view s) noexcept {
    for (std::uint32_t v = 0; v <= 2; ++v)
        if (name(static_cast<QuantizationType>(v)) == s) return static_cast<QuantizationType>(v);
    return std::nullopt;
}

/// The members QUANTIZE and DEQUANTIZE share (DML_QUANTIZE_OPERATOR_DESC and
/// DML_DEQUANTIZE_OPERATOR_DESC are the same struct). DirectML's
/// QuantizationTensorCount is the number of leading QuantizationTensors
/// present: [0] the scale, [1] the zero point (SCALE_ZERO_POINT only).
struct QuantizationDescBase {
    Tensor InputTensor;
    qdml::QuantizationType QuantizationType = qdml::QuantizationType::Scale;
    std::array<OptionalTensor, 2> QuantizationTensors;
    Tensor OutputTensor;

    std::uint32_t QuantizationTensorCount() const noexcept {
        return QuantizationTensors[0] ? (QuantizationTensors[1] ? 2u : 1u) : 0u;
    }
};

/// Mirrors DML_QUANTIZE_OPERATOR_DESC.
struct QuantizeDesc : QuantizationDescBase {
    static constexpr std::string_view OperatorName = "QUANTIZE";
};

/// Mirrors DML_DEQUANTIZE_OPERATOR_DESC.
struct DequantizeDesc : QuantizationDescBase {
    static constexpr std::string_view OperatorName = "DEQUANTIZE";
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 17; throws qdml::Error.
inline void validate(const QuantizeDesc& d, FeatureLevel level = FeatureLevel::Latest);
inline void validate(const DequantizeDesc& d, FeatureLevel level = FeatureLevel::Latest);

namespace detail {
/// The zero point a SCALE desc implies: 2^(bits-1) for an unsigned quantized
/// type (8 for UINT4, 128 for UINT8), 0 for a signed one (DirectML 1.15.4,
/// docs/semantics.md section 18).
template <class TQ>
constexpr std::int32_t implied_zero_point() noexcept {
    return value_range<TQ>::lo == 0 ? static_cast<std::int32_t>((value_range<TQ>::hi + 1) / 2) : 0;
}

/// The typed views QUANTIZE and DEQUANTIZE share: TFloat (float or float16)
/// the float side and the scale, TQ (int8_t, uint8_t, int4, uint4) the
/// quantized side and the zero point. Scale and ZeroPoint keep their own
/// Sizes (rank 8, right-aligned); element i reads them at i / block.
template <class TFloat, class TQ>
struct QuantizationViews {
    TensorView<const TFloat, kMaxDimensions> ScaleTensor;
    std::optional<TensorView<const TQ, kMaxDimensions>> ZeroPointTensor;
    std::array<std::uint32_t, kMaxDimensions> block{};  // Input's size / the scale's, per dimension

    /// The block index of element `i`.
    std::array<std::uint32_t, kMaxDimensions> block_of(const std::array<std::uint32_t, kMaxDimensions>& i) const noexcept {
        std::array<std::uint32_t, kMaxDimensions> b{};
        for (std::size_t d = 0; d < kMaxDimensions; ++d) b[d] = i[d] / block[d];
        return b;
    }
    /// Element i's zero point: the ZeroPointTensor's, or implied_zero_point.
    std::int32_t zero_point(const std::array<std::uint32_t, kMaxDimensions>& b) const noexcept {
        return ZeroPointTensor ? static_cast<std::int32_t>((*ZeroPointTensor)[b]) : implied_zero_point<TQ>();
    }

    void bind(std::string_view n, const QuantizationDescBase& d,
              const std::array<std::uint32_t, kMaxDimensions>& sizes) {
        ScaleTensor = bind_view<const TFloat, kMaxDimensions>(n, "QuantizationTensors[0]", *d.QuantizationTensors[0]);
        ZeroPointTensor = bind_view<const TQ, kMaxDimensions>(n, "QuantizationTensors[1]", d.QuantizationTensors[1]);
        for (std::size_t k = 0; k < kMaxDimensions; ++k) block[k] = sizes[k] / ScaleTensor.sizes[k];
    }
};
}  // namespace detail

/// Typed QUANTIZE (TIn float or float16, the scale's type too; TOut int8_t,
/// uint8_t, int4 or uint4, the zero point's type too); every view has rank 8
/// (a desc's sizes right-aligned, leading sizes 1).
template <class TIn, class TOut>
struct Quantize : detail::QuantizationViews<TIn, TOut> {
    TensorView<const TIn, kMaxDimensions> InputTensor;
    TensorView<TOut, kMaxDimensions> OutputTensor;

    static Quantize bind(const QuantizeDesc& d) {
        validate(d);
        return bind_validated(d);
    }
    /// The same for a desc that passed validate(): checks only the types.
    static Quantize bind_validated(const QuantizeDesc& d) {
        constexpr std::string_view n = QuantizeDesc::OperatorName;
        Quantize op;
        op.InputTensor = detail::bind_view<const TIn, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.OutputTensor = detail::bind_view<TOut, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        static_cast<detail::QuantizationViews<TIn, TOut>&>(op).bind(n, d, op.OutputTensor.sizes);
        return op;
    }
};

/// Typed DEQUANTIZE (TIn int8_t, uint8_t, int4 or uint4, the zero point's
/// type too; TOut float or float16, the scale's type too).
template <class TIn, class TOut>
struct Dequantize : detail::QuantizationViews<TOut, TIn> {
    TensorView<const TIn, kMaxDimensions> InputTensor;
    TensorView<TOut, kMaxDimensions> OutputTensor;

    static Dequantize bind(const DequantizeDesc& d) {
        validate(d);
        return bind_validated(d);
    }
    static Dequantize bind_validated(const DequantizeDesc& d) {
        constexpr std::string_view n = DequantizeDesc::OperatorName;
        Dequantize op;
        op.InputTensor = detail::bind_view<const TIn, kMaxDimensions>(n, "InputTensor", d.InputTensor);
        op.OutputTensor = detail::bind_view<TOut, kMaxDimensions>(n, "OutputTensor", d.OutputTensor);
        static_cast<detail::QuantizationViews<TOut, TIn>&>(op).bind(n, d, op.OutputTensor.sizes);
        return op;
    }
};

namespace detail {
/// The rules QUANTIZE and DEQUANTIZE share; `quantized` is the member of the
/// 8/4-bit type (QUANTIZE's OutputTensor, DEQUANTIZE's InputTensor), `real`
/// the float one.
inline void validate_quantization(const Validator& v, const QuantizationDescBase& d, bool quantize) {
    using T = TensorDataType;
    v.available_since(FeatureLevel::L6_3);
    // DirectML's support table (6.3): 1-8 dimensions; floats FLOAT32/FLOAT16,
    // quantized INT8, UINT8, INT4, UINT4.
    const TypeSet floats{T::Float32, T::Float16};
    const TypeSet quantized{T::Int8, T::UInt8, T::Int4, T::UInt4};
    const Tensor& real = quantize ? d.InputTensor : d.OutputTensor;
    const Tensor& q = quantize ? d.OutputTensor : d.InputTensor;
    const std::string_view real_m = quantize ? "InputTensor" : "OutputTensor";
    const std::string_view q_m = quantize ? "OutputTensor" : "InputTensor";
    v.tensor("InputTensor", d.InputTensor, {1, 8, quantize ? floats : quantized});
    v.tensor("OutputTensor", d.OutputTensor, {1, 8, quantize ? quantized : floats});
    v.same_sizes("OutputTensor", d.OutputTensor, "InputTensor", d.InputTensor);

    // QuantizationType and the count it takes (DirectML 1.15.4 refuses NONE,
    // and a count other than 1 for SCALE or 2 for SCALE_ZERO_POINT).
    const auto qt = d.QuantizationType;
    v.require(qt == QuantizationType::Scale || qt == QuantizationType::ScaleZeroPoint, "QuantizationType", [&] {
        return cat(name(qt), " (", static_cast<std::uint32_t>(qt),
                   ") is not supported; allowed: SCALE, SCALE_ZERO_POINT (DirectML refuses NONE)");
    });
    v.require(d.QuantizationTensors[0].has_value() || !d.QuantizationTensors[1].has_value(), "QuantizationTensors",
              "[1] is given without [0]: the tensors are a leading list (QuantizationTensorCount)");
    const std::uint32_t want = qt == QuantizationType::ScaleZeroPoint ? 2 : 1;
    v.require(d.QuantizationTensorCount() == want, "QuantizationTensorCount", [&] {
        return cat(d.QuantizationTensorCount(), " must be ", want, " for QuantizationType ", name(qt),
                   want == 2 ? " (the scale, then the zero point)" : " (the scale)");
    });

    const Tensor& scale = *d.QuantizationTensors[0];
    v.tensor("QuantizationTensors[0]", scale, {1, 8, floats});
    v.require(scale.Desc.DataType == real.Desc.DataType, "QuantizationTensors[0]", [&] {
        return cat("DataType ", name(scale.Desc.DataType), " must equal ", real_m, "'s DataType ",
                   name(real.Desc.DataType), " (the scale)");
    });
    v.same_dimension_count("QuantizationTensors[0]", scale, "InputTensor", d.InputTensor);
    for (std::uint32_t k = 0; k < scale.Desc.DimensionCount; ++k)
        v.require(d.InputTensor.Desc.Sizes[k] % scale.Desc.Sizes[k] == 0, "QuantizationTensors[0]", [&] {
            return cat("Sizes ", sizes_str(scale.Desc), " must divide InputTensor's Sizes ", sizes_str(d.InputTensor.Desc),
                       " dimension by dimension (Sizes[", k, "]: blocks of InputTensor's elements)");
        });
    if (d.QuantizationTensors[1]) {
        const Tensor& zp = *d.QuantizationTensors[1];
        v.tensor("QuantizationTensors[1]", zp, {1, 8, quantized});
        v.same_type("QuantizationTensors[1]", zp, q_m, q);
        v.same_dimension_count("QuantizationTensors[1]", zp, "QuantizationTensors[0]", scale);
        for (std::uint32_t k = 0; k < zp.Desc.DimensionCount; ++k)
            v.require(zp.Desc.Sizes[k] == scale.Desc.Sizes[k], "QuantizationTensors[1]", [&] {
                return "Sizes " + sizes_str(zp.Desc) + " must equal QuantizationTensors[0]'s Sizes " +
                       sizes_str(scale.Desc) + " (one zero point per scale)";
            });
    }
    v.output("OutputTensor", d.OutputTensor,
             {{"InputTensor", &d.InputTensor},
              {"QuantizationTensors[0]", d.QuantizationTensors[0] ? &*d.QuantizationTensors[0] : nullptr},
              {"QuantizationTensors[1]", d.QuantizationTensors[1] ? &*d.QuantizationTensors[1] : nullptr}});
}
}  // namespace detail

inline void validate(const QuantizeDesc& d, FeatureLevel level) {
    detail::validate_quantization(Validator(QuantizeDesc::OperatorName, level), d, true);
}
inline void validate(const DequantizeDesc& d, FeatureLevel level) {
    detail::validate_quantization(Validator(DequantizeDesc::OperatorName, level), d, false);
}

}  // namespace qdml
