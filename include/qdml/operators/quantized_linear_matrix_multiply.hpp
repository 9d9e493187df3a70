// qdml/operators/quantized_linear_matrix_multiply.hpp - DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY:
// the runtime desc, its validation, and the typed operator struct.
//   acc[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])          (int32, wraps)
//   Output    = Q(fp32(acc) * (fp32(AScale[m] * BScale[n]) / OutputScale[m]), OutputZP[m])
// (docs/semantics.md section 5). Every tensor is seen right-aligned as 4-D.
#pragma once

#include <cstddef>
#include <optional>

#include "qdml/core/bind.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/quantized_binary.hpp"

namespace qdml {

/// Mirrors DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC.
struct QuantizedLinearMatrixMultiplyDesc {
    static constexpr std::string_view OperatorName = "QUANTIZED_LINEAR_MATRIX_MULTIPLY";
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

/// Checks `d` against docs/semantics.md sections 1, 5 and 8; throws qdml::Error.
inline void validate(const QuantizedLinearMatrixMultiplyDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form, every tensor right-aligned to {Batch, Channel, rows, cols}.
/// Scale and zero-point views are broadcast to the output's sizes
/// {Batch, Channel, M, N}, so `AScaleTensor[{b, c, m, n}]` is AScale[m].
template <class TA, class TB, class TOut>
struct QuantizedLinearMatrixMultiply {
    TensorView<const TA, 4> ATensor;
    TensorView<const float, 4> AScaleTensor;
    std::optional<TensorView<const TA, 4>> AZeroPointTensor;
    TensorView<const TB, 4> BTensor;
    TensorView<const float, 4> BScaleTensor;
    std::optional<TensorView<const TB, 4>> BZeroPointTensor;
    TensorView<const float, 4> OutputScaleTensor;
    std::optional<TensorView<const TOut, 4>> OutputZeroPointTensor;
    TensorView<TOut, 4> OutputTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's.
    static QuantizedLinearMatrixMultiply bind(const QuantizedLinearMatrixMultiplyDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types.
    static QuantizedLinearMatrixMultiply bind_validated(const QuantizedLinearMatrixMultiplyDesc& d) {
        constexpr std::string_view n = QuantizedLinearMatrixMultiplyDesc::OperatorName;
        QuantizedLinearMatrixMultiply op;
        op.OutputTensor = detail::bind_view<TOut, 4>(n, "OutputTensor", d.OutputTensor);
        const auto& out = op.OutputTensor.sizes;
        op.ATensor = detail::bind_view<const TA, 4>(n, "ATensor", d.ATensor);
        op.AScaleTensor = detail::bind_param<const float>(n, "AScaleTensor", d.AScaleTensor, out);
        op.AZeroPointTensor = detail::bind_param<const TA>(n, "AZeroPointTensor", d.AZeroPointTensor, out);
        op.BTensor = detail::bind_view<const TB, 4>(n, "BTensor", d.BTensor);
        op.BScaleTensor = detail::bind_param<const float>(n, "BScaleTensor", d.BScaleTensor, out);
        op.BZeroPointTensor = detail::bind_param<const TB>(n, "BZeroPointTensor", d.BZeroPointTensor, out);
        op.OutputScaleTensor = detail::bind_param<const float>(n, "OutputScaleTensor", d.OutputScaleTensor, out);
        op.OutputZeroPointTensor =
            detail::bind_param<const TOut>(n, "OutputZeroPointTensor", d.OutputZeroPointTensor, out);
        return op;
    }
};

inline void validate(const QuantizedLinearMatrixMultiplyDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(QuantizedLinearMatrixMultiplyDesc::OperatorName, level);
    v.available_since(FeatureLevel::L2_1);
    const bool any_rank = level >= FeatureLevel::L4_0;  // before 4.0: 4-D only (docs/feature-levels.md)
    const MemberSupport q8{any_rank ? 2u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_q8{any_rank ? 1u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_f32{any_rank ? 1u : 4u, 4, {T::Float32}};
    detail::validate_quantized_binary_tensors(v, d, q8, param_f32, param_q8);

    std::uint32_t o[4];
    const auto mn = detail::matmul_shapes(v, d.ATensor, d.BTensor, d.OutputTensor, o);
    const std::uint32_t M = mn.first, N = mn.second;

    const char* per_row = "{1,1,M,1} (per row)";
    const char* per_col = "{1,1,1,N} (per column)";
    detail::quantization_param_shape(v, "AScaleTensor", d.AScaleTensor, 2, M, o, per_row);
    if (d.AZeroPointTensor) detail::quantization_param_shape(v, "AZeroPointTensor", *d.AZeroPointTensor, 2, M, o, per_row);
    detail::quantization_param_shape(v, "BScaleTensor", d.BScaleTensor, 3, N, o, per_col);
    if (d.BZeroPointTensor) detail::quantization_param_shape(v, "BZeroPointTensor", *d.BZeroPointTensor, 3, N, o, per_col);
    detail::quantization_param_shape(v, "OutputScaleTensor", d.OutputScaleTensor, 2, M, o, per_row);
    if (d.OutputZeroPointTensor)
        detail::quantization_param_shape(v, "OutputZeroPointTensor", *d.OutputZeroPointTensor, 2, M, o, per_row);

    v.output("OutputTensor", d.OutputTensor, detail::quantized_binary_inputs(d));
}

}  // namespace qdml
