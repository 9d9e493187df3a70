// qdml/simd/quantized_linear_matrix_multiply_prepared.hpp - QUANTIZED_LINEAR_MATRIX_MULTIPLY
// with constant weights (B flagged DML_TENSOR_FLAG_OWNED_BY_DML): B packed
// once, each execution streams A. The state behind qdml::compile
// (runtime/compiled.hpp), which checks execute's descs and bindings. Same
// bits as the reference (docs/semantics.md section 5).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/members.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"

namespace qdml::simd {

/// The initialized state of a QUANTIZED_LINEAR_MATRIX_MULTIPLY with constant
/// weights (DirectML's initialize step; qdml::compile keeps one): the
/// constructor validates the desc, whose BTensor carries
/// DML_TENSOR_FLAG_OWNED_BY_DML, and packs every distinct Batch/Channel slice
/// of B with its column sums, reading B, BScaleTensor and BZeroPointTensor
/// once. execute_unchecked() streams A only: it never reads B's buffer and
/// never writes the packed panels.
class PreparedQuantizedLinearMatrixMultiply {
public:
    explicit PreparedQuantizedLinearMatrixMultiply(const QuantizedLinearMatrixMultiplyDesc& desc,
                                                   const GemmOptions& options = {},
                                                   FeatureLevel level = FeatureLevel::Latest)
        : desc_(desc), isa_(simd::select_isa(options.isa)), directml_(options.fidelity == Fidelity::DirectML) {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        validate(desc, level);
        if (!(desc.BTensor.Desc.Flags & kTensorFlagOwnedByDml))
            throw Error(std::string(QuantizedLinearMatrixMultiplyDesc::OperatorName), "BTensor",
                        "Flags must include DML_TENSOR_FLAG_OWNED_BY_DML (1) for the prepared operator "
                        "(B is packed once, at initialize)");
        visit_typed(desc, [&](const auto& op) { initialize(op); });
    }

    /// Computes `desc`, which the caller has checked: it equals the prepared
    /// desc (Data and DataSizeInBytes aside) and its bindings pass validation.
    /// qdml::Compiled, the one compile -> execute entry, makes both checks
    /// (by comparisons); B's, BScale's and BZeroPoint's Data are not read.
    /// `executor`: the caller's thread pool (default: the calling thread).
    void execute_unchecked(const QuantizedLinearMatrixMultiplyDesc& desc, const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        QuantizedLinearMatrixMultiplyDesc d = desc;
        qdml::detail::copy_weights(desc_, d);
        visit_typed(d, [&](const auto& op) { run(op, executor); });
    }

    /// The micro-kernel family the panels were packed for.
    simd::Isa isa() const noexcept { return packed_.isa(); }
    /// The packed B slices (read-only: execute never writes them).
    const std::deque<gemm::PackedRight>& packed() const noexcept { return packed_.slices(); }

private:
    template <class TA, class TB, class TOut>
    void initialize(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op) {
        gemm::RequantSpec s;
        detail::right_params(op, s);
        b_zp_ = std::move(s.b_zp);
        b_scale_ = std::move(s.b_scale);
        packed_.pack(op, isa_);
    }

    template <class TA, class TB, class TOut>
    void run(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op, const Executor& executor) const {
        gemm::RequantSpec s;
        detail::left_params(op, s);
        s.b_zp = b_zp_;
        s.b_scale = b_scale_;
        s.directml = directml_;
        packed_.run(op, s, executor);
    }

    QuantizedLinearMatrixMultiplyDesc desc_;
    simd::Isa isa_;
    bool directml_;  // the DirectML profile's requantize (GemmOptions::fidelity)
    detail::PackedRightSlices packed_;
    std::vector<std::int32_t> b_zp_;  // BZP' per column
    std::vector<float> b_scale_;
};

}  // namespace qdml::simd
