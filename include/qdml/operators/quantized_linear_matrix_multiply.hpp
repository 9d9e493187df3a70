// qdml/operators/quantized_linear_matrix_multiply.hpp - DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY:
// the runtime desc, its validation, and the typed operator struct.
//   acc[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])          (int32, wraps)
//   Output    = Q(fp32(acc) * (fp32(AScale[m] * BScale[n]) / OutputScale[m]), OutputZP[m])
// (SPEC.md section 5). Every tensor is seen right-aligned as 4-D.
#pragma once

#include <cstddef>
#include <optional>

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
    std::optional<Tensor> AZeroPointTensor;
    Tensor BTensor;
    Tensor BScaleTensor;
    std::optional<Tensor> BZeroPointTensor;
    Tensor OutputScaleTensor;
    std::optional<Tensor> OutputZeroPointTensor;
    Tensor OutputTensor;
};

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

    /// Views of a validated desc.
    static QuantizedLinearMatrixMultiply bind(const QuantizedLinearMatrixMultiplyDesc& d) {
        QuantizedLinearMatrixMultiply op;
        op.OutputTensor = make_view<TOut, 4>(d.OutputTensor);
        const auto& out = op.OutputTensor.sizes;
        op.ATensor = make_view<const TA, 4>(d.ATensor);
        op.AScaleTensor = broadcast_to(make_view<const float, 4>(d.AScaleTensor), out);
        if (d.AZeroPointTensor) op.AZeroPointTensor = broadcast_to(make_view<const TA, 4>(*d.AZeroPointTensor), out);
        op.BTensor = make_view<const TB, 4>(d.BTensor);
        op.BScaleTensor = broadcast_to(make_view<const float, 4>(d.BScaleTensor), out);
        if (d.BZeroPointTensor) op.BZeroPointTensor = broadcast_to(make_view<const TB, 4>(*d.BZeroPointTensor), out);
        op.OutputScaleTensor = broadcast_to(make_view<const float, 4>(d.OutputScaleTensor), out);
        if (d.OutputZeroPointTensor)
            op.OutputZeroPointTensor = broadcast_to(make_view<const TOut, 4>(*d.OutputZeroPointTensor), out);
        return op;
    }
};

/// Checks `d` against SPEC.md sections 1, 5 and 8; throws qdml::Error.
inline void validate(const QuantizedLinearMatrixMultiplyDesc& d, FeatureLevel level = FeatureLevel::Latest) {
    using T = TensorDataType;
    const Validator v(QuantizedLinearMatrixMultiplyDesc::OperatorName, level);
    v.available_since(FeatureLevel::L2_1);
    const bool any_rank = level >= FeatureLevel::L4_0;  // before 4.0: 4-D only (docs/feature-levels.md)
    const MemberSupport q8{any_rank ? 2u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_q8{any_rank ? 1u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport param_f32{any_rank ? 1u : 4u, 4, {T::Float32}};
    detail::validate_quantized_binary_tensors(v, d, q8, param_f32, param_q8);

    v.same_dimension_count("BTensor", d.BTensor, "ATensor", d.ATensor);
    v.same_dimension_count("OutputTensor", d.OutputTensor, "ATensor", d.ATensor);
    std::uint32_t a[4], b[4], o[4];
    std::uint64_t unused[4];
    detail::aligned4(d.ATensor.Desc, a, unused);
    detail::aligned4(d.BTensor.Desc, b, unused);
    detail::aligned4(d.OutputTensor.Desc, o, unused);
    const std::uint32_t M = a[2], K = a[3], N = b[3];
    v.require(b[2] == K, "BTensor",
              detail::cat("Sizes ", detail::sizes_str(d.BTensor.Desc), ": rows (K) ", b[2],
                          " must equal ATensor's columns (K) ", K));
    v.require(o[2] == M && o[3] == N, "OutputTensor",
              detail::cat("Sizes ", detail::sizes_str(d.OutputTensor.Desc), " must end in {M, N} = {", M, ", ", N,
                          "}"));
    for (std::uint32_t i = 0; i < 2; ++i) {
        v.require(a[i] == o[i], "ATensor",
                  detail::cat("Sizes ", detail::sizes_str(d.ATensor.Desc), ": batch dimension ", a[i],
                              " must equal OutputTensor's ", o[i], " (broadcast through zero Strides)"));
        v.require(b[i] == o[i], "BTensor",
                  detail::cat("Sizes ", detail::sizes_str(d.BTensor.Desc), ": batch dimension ", b[i],
                              " must equal OutputTensor's ", o[i], " (broadcast through zero Strides)"));
    }

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
