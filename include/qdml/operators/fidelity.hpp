// qdml/operators/fidelity.hpp - validation per profile (docs/semantics.md
// section 10): the DirectML profile also refuses what DirectML 1.15.4
// refuses and the exact rules allow (each refusal measured:
// tests/data/directml/*/refuse_*, */params_zp_fewer_dims):
//   - a zero point whose DimensionCount or Sizes differ from its scale's
//     (QUANTIZED_LINEAR_MATRIX_MULTIPLY, QUANTIZED_LINEAR_CONVOLUTION,
//     MATRIX_MULTIPLY_INTEGER_TO_FLOAT, QUANTIZED_LINEAR_AVERAGE_POOLING);
//   - ELEMENT_WISE_CLIP and ELEMENT_WISE_CLIP1 with ScaleBias on INT64 or UINT64;
//   - a MATRIX_MULTIPLY_INTEGER zero point (a MATRIX_MULTIPLY_INTEGER_TO_FLOAT
//     scale) repeated to the output's size through zero strides
//     (docs/semantics.md sections 12 and 16).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "qdml/core/data_type.hpp"
#include "qdml/core/error.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/operators/dynamic_quantize_linear.hpp"
#include "qdml/operators/quantize.hpp"
#include "qdml/operators/element_wise_clip.hpp"
#include "qdml/operators/element_wise_clip1.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/operators/matrix_multiply_integer_to_float.hpp"
#include "qdml/operators/quantized_linear_average_pooling.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"

namespace qdml {

namespace detail {
/// DirectML: a zero point has its scale's DimensionCount and Sizes.
inline void zero_point_like_scale(std::string_view op, const char* zp_member, const OptionalTensor& zp,
                                  const char* scale_member, const Tensor& scale) {
    if (!zp) return;
    const TensorDesc &z = zp->Desc, &s = scale.Desc;
    bool same = z.DimensionCount == s.DimensionCount;
    for (std::uint32_t i = 0; same && i < z.DimensionCount; ++i) same = z.Sizes[i] == s.Sizes[i];
    if (!same)
        throw Error(std::string(op), zp_member,
                    cat("DimensionCount and Sizes ", sizes_str(z), " must equal ", scale_member, "'s ", sizes_str(s),
                        " (DirectML refuses a zero point shaped unlike its scale; fidelity exact allows it)"));
}

/// DirectML: a scale's or zero point's Sizes, right-aligned, are all 1 but
/// `extent` on `axis` (no repetition to the output's size through zero strides).
inline void param_documented_shape(const Validator& v, const char* member, const Tensor& t, std::uint32_t axis,
                                   std::uint32_t extent, const char* form, const char* what) {
    std::uint32_t sizes[4];
    std::uint64_t strides[4];
    aligned4(t.Desc, sizes, strides);
    for (std::uint32_t i = 0; i < 4; ++i)
        v.require(sizes[i] == 1 || (i == axis && sizes[i] == extent), member, [&] {
            return cat("Sizes ", sizes_str(t.Desc), " must be {1,1,1,1} (per tensor) or ", form, " (DirectML refuses a ",
                       what, " repeated through zero Strides; fidelity exact allows it)");
        });
}
inline void zero_point_documented_shape(const Validator& v, const char* member, const OptionalTensor& zp,
                                        std::uint32_t axis, std::uint32_t extent, const char* form) {
    if (zp) param_documented_shape(v, member, *zp, axis, extent, form, "zero point");
}
}  // namespace detail

/// The DirectML profile's refusals beyond validate(d, level); the others none.
inline void validate_directml(const ElementWiseDequantizeLinearDesc&) {}
inline void validate_directml(const ElementWiseQuantizedLinearAddDesc&) {}
inline void validate_directml(const ElementWiseQuantizeLinearDesc&) {}
inline void validate_directml(const DynamicQuantizeLinearDesc&) {}
inline void validate_directml(const QuantizeDesc&) {}    // validate() is DirectML's own (section 18)
inline void validate_directml(const DequantizeDesc&) {}

inline void validate_directml(const QuantizedLinearMatrixMultiplyDesc& d) {
    constexpr std::string_view n = QuantizedLinearMatrixMultiplyDesc::OperatorName;
    detail::zero_point_like_scale(n, "AZeroPointTensor", d.AZeroPointTensor, "AScaleTensor", d.AScaleTensor);
    detail::zero_point_like_scale(n, "BZeroPointTensor", d.BZeroPointTensor, "BScaleTensor", d.BScaleTensor);
    detail::zero_point_like_scale(n, "OutputZeroPointTensor", d.OutputZeroPointTensor, "OutputScaleTensor",
                                  d.OutputScaleTensor);
}

inline void validate_directml(const QuantizedLinearConvolutionDesc& d) {
    constexpr std::string_view n = QuantizedLinearConvolutionDesc::OperatorName;
    detail::zero_point_like_scale(n, "InputZeroPointTensor", d.InputZeroPointTensor, "InputScaleTensor",
                                  d.InputScaleTensor);
    detail::zero_point_like_scale(n, "FilterZeroPointTensor", d.FilterZeroPointTensor, "FilterScaleTensor",
                                  d.FilterScaleTensor);
    detail::zero_point_like_scale(n, "OutputZeroPointTensor", d.OutputZeroPointTensor, "OutputScaleTensor",
                                  d.OutputScaleTensor);
}

inline void validate_directml(const MatrixMultiplyIntegerToFloatDesc& d) {
    constexpr std::string_view n = MatrixMultiplyIntegerToFloatDesc::OperatorName;
    const Validator v(n, FeatureLevel::Latest);
    std::uint32_t a[4], b[4];
    std::uint64_t unused[4];
    detail::aligned4(d.ATensor.Desc, a, unused);
    detail::aligned4(d.BTensor.Desc, b, unused);
    detail::param_documented_shape(v, "AScaleTensor", d.AScaleTensor, 2, a[2], "{1,1,M,1} (per row)", "scale");
    detail::param_documented_shape(v, "BScaleTensor", d.BScaleTensor, 3, b[3], "{1,1,1,N} (per column)", "scale");
    detail::zero_point_like_scale(n, "AZeroPointTensor", d.AZeroPointTensor, "AScaleTensor", d.AScaleTensor);
    detail::zero_point_like_scale(n, "BZeroPointTensor", d.BZeroPointTensor, "BScaleTensor", d.BScaleTensor);
}

inline void validate_directml(const MatrixMultiplyIntegerDesc& d) {
    const Validator v(MatrixMultiplyIntegerDesc::OperatorName, FeatureLevel::Latest);
    std::uint32_t a[4], b[4];
    std::uint64_t unused[4];
    detail::aligned4(d.ATensor.Desc, a, unused);
    detail::aligned4(d.BTensor.Desc, b, unused);
    detail::zero_point_documented_shape(v, "AZeroPointTensor", d.AZeroPointTensor, 2, a[2], "{1,1,M,1} (per row)");
    detail::zero_point_documented_shape(v, "BZeroPointTensor", d.BZeroPointTensor, 3, b[3], "{1,1,1,N} (per column)");
}

inline void validate_directml(const QuantizedLinearAveragePoolingDesc& d) {
    constexpr std::string_view n = QuantizedLinearAveragePoolingDesc::OperatorName;
    detail::zero_point_like_scale(n, "InputZeroPointTensor", d.InputZeroPointTensor, "InputScaleTensor",
                                  d.InputScaleTensor);
    detail::zero_point_like_scale(n, "OutputZeroPointTensor", d.OutputZeroPointTensor, "OutputScaleTensor",
                                  d.OutputScaleTensor);
}

// CONVOLUTION_INTEGER: no refusals of DirectML's beyond validate() known (docs/semantics.md section 14).
inline void validate_directml(const ConvolutionIntegerDesc&) {}

namespace detail {
/// DirectML: no ScaleBias on INT64 or UINT64 tensors (CLIP and CLIP1).
template <class Desc>
void no_scale_bias_on_64_bit(const Desc& d) {
    const TensorDataType t = d.InputTensor.Desc.DataType;
    if (d.ScaleBias && (t == TensorDataType::Int64 || t == TensorDataType::UInt64))
        throw Error(std::string(Desc::OperatorName), "ScaleBias",
                    cat("must be absent for ", name(t), " tensors (DirectML refuses it; fidelity exact allows it)"));
}
}  // namespace detail

inline void validate_directml(const ElementWiseClipDesc& d) { detail::no_scale_bias_on_64_bit(d); }
inline void validate_directml(const ElementWiseClip1Desc& d) { detail::no_scale_bias_on_64_bit(d); }

/// validate(d, level), then, for Fidelity::DirectML, DirectML's own refusals.
template <class Desc, class = decltype(validate_directml(std::declval<const Desc&>()))>
void validate(const Desc& d, FeatureLevel level, Fidelity fidelity) {
    validate(d, level);
    if (fidelity == Fidelity::DirectML) validate_directml(d);
}

}  // namespace qdml
