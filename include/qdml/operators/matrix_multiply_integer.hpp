// qdml/operators/matrix_multiply_integer.hpp - DML_MATRIX_MULTIPLY_INTEGER:
// the runtime desc, its validation, and the typed operator struct.
//   Output[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])       (INT32, wraps mod 2^32)
// (docs/semantics.md section 12). Every tensor is seen right-aligned as 4-D.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "qdml/core/bind.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml {

/// Mirrors DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC.
struct MatrixMultiplyIntegerDesc {
    static constexpr std::string_view OperatorName = "MATRIX_MULTIPLY_INTEGER";
    Tensor ATensor;
    OptionalTensor AZeroPointTensor;
    Tensor BTensor;
    OptionalTensor BZeroPointTensor;
    Tensor OutputTensor;
};

/// Checks `d` against docs/semantics.md sections 1, 8 and 12; throws qdml::Error.
inline void validate(const MatrixMultiplyIntegerDesc& d, FeatureLevel level = FeatureLevel::Latest);

/// Typed form, every tensor right-aligned to {Batch, Channel, rows, cols}.
/// The zero-point views are broadcast to the output's sizes
/// {Batch, Channel, M, N}, so `AZeroPointTensor[{b, c, m, n}]` is AZP[m].
template <class TA, class TB>
struct MatrixMultiplyInteger {
    TensorView<const TA, 4> ATensor;
    std::optional<TensorView<const TA, 4>> AZeroPointTensor;
    TensorView<const TB, 4> BTensor;
    std::optional<TensorView<const TB, 4>> BZeroPointTensor;
    TensorView<std::int32_t, 4> OutputTensor;

    /// Views of `d` for these element types: validates `d` (throws
    /// qdml::Error), then checks that every member's DataType is the
    /// template's.
    static MatrixMultiplyInteger bind(const MatrixMultiplyIntegerDesc& d) {
        validate(d);
        return bind_validated(d);
    }

    /// The same for a desc that passed validate(): checks only types.
    static MatrixMultiplyInteger bind_validated(const MatrixMultiplyIntegerDesc& d) {
        constexpr std::string_view n = MatrixMultiplyIntegerDesc::OperatorName;
        MatrixMultiplyInteger op;
        op.OutputTensor = detail::bind_view<std::int32_t, 4>(n, "OutputTensor", d.OutputTensor);
        const auto& out = op.OutputTensor.sizes;
        op.ATensor = detail::bind_view<const TA, 4>(n, "ATensor", d.ATensor);
        op.AZeroPointTensor = detail::bind_param<const TA>(n, "AZeroPointTensor", d.AZeroPointTensor, out);
        op.BTensor = detail::bind_view<const TB, 4>(n, "BTensor", d.BTensor);
        op.BZeroPointTensor = detail::bind_param<const TB>(n, "BZeroPointTensor", d.BZeroPointTensor, out);
        return op;
    }
};

inline void validate(const MatrixMultiplyIntegerDesc& d, FeatureLevel level) {
    using T = TensorDataType;
    const Validator v(MatrixMultiplyIntegerDesc::OperatorName, level);
    v.available_since(FeatureLevel::L2_1);
    // docs/feature-levels.md: 4-D only before 4.0; BZeroPoint 2-4 from 4.0, 1-4 from 5.2.
    const bool any_rank = level >= FeatureLevel::L4_0;
    const MemberSupport q8{any_rank ? 2u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport a_zp{any_rank ? 1u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport b_zp{level >= FeatureLevel::L5_2 ? 1u : any_rank ? 2u : 4u, 4, {T::Int8, T::UInt8}};
    const MemberSupport i32{any_rank ? 2u : 4u, 4, {T::Int32}};
    v.tensor("ATensor", d.ATensor, q8);
    if (d.AZeroPointTensor) v.tensor("AZeroPointTensor", *d.AZeroPointTensor, a_zp);
    v.tensor("BTensor", d.BTensor, q8);
    if (d.BZeroPointTensor) v.tensor("BZeroPointTensor", *d.BZeroPointTensor, b_zp);
    v.tensor("OutputTensor", d.OutputTensor, i32);
    if (d.AZeroPointTensor) v.same_type("AZeroPointTensor", *d.AZeroPointTensor, "ATensor", d.ATensor);
    if (d.BZeroPointTensor) v.same_type("BZeroPointTensor", *d.BZeroPointTensor, "BTensor", d.BTensor);

    std::uint32_t o[4];
    const auto mn = detail::matmul_shapes(v, d.ATensor, d.BTensor, d.OutputTensor, o);
    const std::uint32_t M = mn.first, N = mn.second;
    if (d.AZeroPointTensor)
        detail::quantization_param_shape(v, "AZeroPointTensor", *d.AZeroPointTensor, 2, M, o, "{1,1,M,1} (per row)");
    if (d.BZeroPointTensor)
        detail::quantization_param_shape(v, "BZeroPointTensor", *d.BZeroPointTensor, 3, N, o, "{1,1,1,N} (per column)");

    v.output("OutputTensor", d.OutputTensor,
             {{"ATensor", &d.ATensor},
              {"AZeroPointTensor", d.AZeroPointTensor ? &*d.AZeroPointTensor : nullptr},
              {"BTensor", &d.BTensor},
              {"BZeroPointTensor", d.BZeroPointTensor ? &*d.BZeroPointTensor : nullptr}});
}

}  // namespace qdml
