// qdml/operators/matrix_multiply_integer_to_float.hpp - DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT:
// the runtime desc, its validation, and the typed operator struct.
//   exact:    Output[m][n] = fp32(acc) * fp32(AScale[m] * BScale[n]) (+ Bias[m][n])
//             acc = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])   (int32, wraps mod 2^32)
//   directml: Output[m][n] = sum_k a[m][k] * b[k][n] in binary32, k in order (+ Bias[m][n])
//             a = (fp32(A) - fp32(AZP)) * AScale[m],  b = (fp32(B) - fp32(BZP)) * BScale[n]
// (docs/semantics.md section 16). Every tensor is seen right-aligned as 4-D.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "qdml/core/bind.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC.
struct MatrixMultiplyIntegerToFloatDesc {
    static constexpr std::string_view OperatorName = "MATRIX_MULTIPLY_INTEGER_TO_FLOAT";
    Tensor ATensor;
    Tensor AScaleTensor;
    OptionalTensor AZeroPointTensor;
    Tensor BTensor;
    Tensor BScaleTensor;
    OptionalTensor BZeroPointTensor;
    OptionalTensor BiasTensor;
    Tensor OutputTensor;
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 16; throws qdml::Error.
inline void validate(const MatrixMultiplyIntegerToFloatDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form, every tensor right-aligned to {Batch, Channel, rows, cols};
/// `TF` (float or float16) is the type of the scales, the bias and the
/// output. Scale, zero-point and bias views are broadcast to the output's
/// sizes {Batch, Channel, M, N}, so `AScaleTensor[{b, c, m, n}]` is AScale[m].
template <class TA, class TB, class TF>
struct MatrixMultiplyIntegerToFloat {
    TensorView<const TA, 4> ATensor;
    TensorView<const TF, 4> AScaleTensor;
    std::optional<TensorView<const TA, 4>> AZeroPointTensor;
    TensorView<const TB, 4> BTensor;
    TensorView<const TF, 4> BScaleTensor;
    std::optional<TensorView<const TB, 4>> BZeroPointTensor;
    std::optional<TensorView<const TF, 4>> BiasTensor;
    TensorView<TF, 4> OutputTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's.
    static MatrixMultiplyIntegerToFloat bind(const MatrixMultiplyIntegerToFloatDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types.
    static MatrixMultiplyIntegerToFloat bind_validated(const MatrixMultiplyIntegerToFloatDesc& d) {
        constexpr std::string_view n = MatrixMultiplyIntegerToFloatDesc::OperatorName;
        MatrixMultiplyIntegerToFloat op;
        op.OutputTensor = detail::bind_view<TF, 4>(n, "OutputTensor", d.OutputTensor);
        const auto& out = op.OutputTensor.sizes;
        op.ATensor = detail::bind_view<const TA, 4>(n, "ATensor", d.ATensor);
        op.AScaleTensor = detail::bind_param<const TF>(n, "AScaleTensor", d.AScaleTensor, out);
        op.AZeroPointTensor = detail::bind_param<const TA>(n, "AZeroPointTensor", d.AZeroPointTensor, out);
        op.BTensor = detail::bind_view<const TB, 4>(n, "BTensor", d.BTensor);
        op.BScaleTensor = detail::bind_param<const TF>(n, "BScaleTensor", d.BScaleTensor, out);
        op.BZeroPointTensor = detail::bind_param<const TB>(n, "BZeroPointTensor", d.BZeroPointTensor, out);
        op.BiasTensor = detail::bind_view<const TF, 4>(n, "BiasTensor", d.BiasTensor);
        return op;
    }
};

inline void validate(const MatrixMultiplyIntegerToFloatDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(MatrixMultiplyIntegerToFloatDesc::OperatorName, level);
    v.available_since(FeatureLevel::L6_2);
    // DirectML's page (one table): A, B and their zero points any 8-, 16- or
    // 32-bit integer type (each zero point of its tensor's type; A and B may
    // differ, as DirectML computes them: docs/semantics.md section 16);
    // scales, Bias and Output FLOAT32 or FLOAT16, one type.
    const TypeSet ints{T::Int8, T::UInt8, T::Int16, T::UInt16, T::Int32, T::UInt32};
    const MemberSupport operand{2, 4, ints};
    const MemberSupport zero_point{1, 4, ints};
    const MemberSupport scale{1, 4, {T::Float32, T::Float16}};
    const MemberSupport out{2, 4, {T::Float32, T::Float16}};
    v.tensor("ATensor", d.ATensor, operand);
    v.tensor("AScaleTensor", d.AScaleTensor, scale);
    if (d.AZeroPointTensor) v.tensor("AZeroPointTensor", *d.AZeroPointTensor, zero_point);
    v.tensor("BTensor", d.BTensor, operand);
    v.tensor("BScaleTensor", d.BScaleTensor, scale);
    if (d.BZeroPointTensor) v.tensor("BZeroPointTensor", *d.BZeroPointTensor, zero_point);
    if (d.BiasTensor) v.tensor("BiasTensor", *d.BiasTensor, out);
    v.tensor("OutputTensor", d.OutputTensor, out);
    if (d.AZeroPointTensor) v.same_type("AZeroPointTensor", *d.AZeroPointTensor, "ATensor", d.ATensor);
    if (d.BZeroPointTensor) v.same_type("BZeroPointTensor", *d.BZeroPointTensor, "BTensor", d.BTensor);
    v.same_type("AScaleTensor", d.AScaleTensor, "OutputTensor", d.OutputTensor);
    v.same_type("BScaleTensor", d.BScaleTensor, "OutputTensor", d.OutputTensor);
    if (d.BiasTensor) v.same_type("BiasTensor", *d.BiasTensor, "OutputTensor", d.OutputTensor);

    std::uint32_t o[4];
    const auto mn = detail::matmul_shapes(v, d.ATensor, d.BTensor, d.OutputTensor, o);
    const std::uint32_t M = mn.first, N = mn.second;
    const char* per_row = "{1,1,M,1} (per row)";
    const char* per_col = "{1,1,1,N} (per column)";
    detail::quantization_param_shape(v, "AScaleTensor", d.AScaleTensor, 2, M, o, per_row);
    if (d.AZeroPointTensor) detail::quantization_param_shape(v, "AZeroPointTensor", *d.AZeroPointTensor, 2, M, o, per_row);
    detail::quantization_param_shape(v, "BScaleTensor", d.BScaleTensor, 3, N, o, per_col);
    if (d.BZeroPointTensor) detail::quantization_param_shape(v, "BZeroPointTensor", *d.BZeroPointTensor, 3, N, o, per_col);
    // The bias has the output's DimensionCount and Sizes (DirectML refuses {1,N} or fewer
    // dimensions against {M,N}); a repeated row or column is written through zero Strides.
    if (d.BiasTensor) {
        v.same_dimension_count("BiasTensor", *d.BiasTensor, "OutputTensor", d.OutputTensor);
        v.same_sizes("BiasTensor", *d.BiasTensor, "OutputTensor", d.OutputTensor);
    }

    v.output("OutputTensor", d.OutputTensor,
             {{"ATensor", &d.ATensor},
              {"AScaleTensor", &d.AScaleTensor},
              {"AZeroPointTensor", d.AZeroPointTensor ? &*d.AZeroPointTensor : nullptr},
              {"BTensor", &d.BTensor},
              {"BScaleTensor", &d.BScaleTensor},
              {"BZeroPointTensor", d.BZeroPointTensor ? &*d.BZeroPointTensor : nullptr},
              {"BiasTensor", d.BiasTensor ? &*d.BiasTensor : nullptr}});
}

}  // namespace qdml
