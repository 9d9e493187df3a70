// qdml/simd/matrix_multiply_integer_prepared.hpp - MATRIX_MULTIPLY_INTEGER
// with constant weights (B flagged DML_TENSOR_FLAG_OWNED_BY_DML): B packed
// once with its column sums, each execution streams A into the engine's
// int32 store. The state behind qdml::compile (runtime/compiled.hpp), which
// checks execute's descs and bindings. Same bits as the reference
// (docs/semantics.md section 12).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/members.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/simd/matrix_multiply_integer.hpp"

namespace qdml::simd {

/// The initialized state of a MATRIX_MULTIPLY_INTEGER with constant weights
/// (DirectML's initialize step; qdml::compile keeps one): the constructor
/// validates the desc, whose BTensor carries DML_TENSOR_FLAG_OWNED_BY_DML,
/// and packs every distinct Batch/Channel slice of B with its column sums,
/// reading BTensor and BZeroPointTensor once. execute_unchecked() streams A
/// only: it never reads B's or BZeroPoint's buffer and never writes the
/// packed panels.
class PreparedMatrixMultiplyInteger {
public:
    explicit PreparedMatrixMultiplyInteger(const MatrixMultiplyIntegerDesc& desc, const GemmOptions& options = {},
                                           FeatureLevel level = FeatureLevel::Latest)
        : desc_(desc), isa_(simd::select_isa(options.isa)) {
        const FpEnvironment fp_env;  // (no float step; kept as every entry does)
        validate(desc, level);
        if (!(desc.BTensor.Desc.Flags & kTensorFlagOwnedByDml))
            throw Error(std::string(MatrixMultiplyIntegerDesc::OperatorName), "BTensor",
                        "Flags must include DML_TENSOR_FLAG_OWNED_BY_DML (1) for the prepared operator "
                        "(B is packed once, at initialize)");
        visit_typed(desc, [&](const auto& op) { initialize(op); });
    }

    /// Computes `desc`, which the caller has checked: it equals the prepared
    /// desc (Data and DataSizeInBytes aside) and its bindings pass validation.
    /// qdml::Compiled, the one compile -> execute entry, makes both checks
    /// (by comparisons); B's and BZeroPoint's Data are not read.
    /// `executor`: the caller's thread pool (default: the calling thread).
    void execute_unchecked(const MatrixMultiplyIntegerDesc& desc, const Executor& executor = {}) const {
        const FpEnvironment fp_env;
        MatrixMultiplyIntegerDesc d = desc;
        qdml::detail::copy_weights(desc_, d);
        visit_typed(d, [&](const auto& op) { run(op, executor); });
    }

    /// The micro-kernel family the panels were packed for.
    simd::Isa isa() const noexcept { return packed_.isa(); }
    /// The packed B slices (read-only: execute never writes them).
    const std::deque<gemm::PackedRight>& packed() const noexcept { return packed_.slices(); }

private:
    template <class TA, class TB>
    void run(const MatrixMultiplyInteger<TA, TB>& op, const Executor& executor) const {
        gemm::RequantSpec s;
        detail::a_zero_points(op, s);
        s.b_zp = b_zp_;
        s.int32_out = true;
        packed_.run(op, s, executor);
    }

    template <class TA, class TB>
    void initialize(const MatrixMultiplyInteger<TA, TB>& op) {
        gemm::RequantSpec s;
        detail::b_zero_points(op, s);
        b_zp_ = std::move(s.b_zp);
        packed_.pack(op, isa_);
    }

    MatrixMultiplyIntegerDesc desc_;
    simd::Isa isa_;
    detail::PackedRightSlices packed_;
    std::vector<std::int32_t> b_zp_;  // BZP' per column (or one)
};

}  // namespace qdml::simd
