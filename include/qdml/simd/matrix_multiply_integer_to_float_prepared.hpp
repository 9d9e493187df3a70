// qdml/simd/matrix_multiply_integer_to_float_prepared.hpp - MATRIX_MULTIPLY_INTEGER_TO_FLOAT
// with constant weights (B flagged DML_TENSOR_FLAG_OWNED_BY_DML): B's side
// read once, at initialize, in the form each profile's fast path reads it
// (simd/matrix_multiply_integer_to_float.hpp): the exact profile's 8-bit
// operands B packed for the GEMM engine with its column sums and BScale per
// column; the directml profile every distinct B slice dequantized to
// binary32. Each execution streams A. The state behind qdml::compile
// (runtime/compiled.hpp), which checks execute's descs and bindings. Same
// bits as the reference (docs/semantics.md section 16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/members.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/simd/matrix_multiply_integer_to_float.hpp"

namespace qdml::simd {

/// The initialized state of a MATRIX_MULTIPLY_INTEGER_TO_FLOAT with constant
/// weights (DirectML's initialize step; qdml::compile keeps one): the
/// constructor validates the desc, whose BTensor carries
/// DML_TENSOR_FLAG_OWNED_BY_DML, and reads BTensor, BScaleTensor and
/// BZeroPointTensor once. execute_unchecked() streams A, its scale and zero
/// point and the bias: it never reads B's side. (The exact profile's 16- and
/// 32-bit operands, which the reference computes, keep a copy of B's side's
/// buffers, which the reference reads on every execute.)
class PreparedMatrixMultiplyIntegerToFloat {
public:
    explicit PreparedMatrixMultiplyIntegerToFloat(const MatrixMultiplyIntegerToFloatDesc& desc,
                                                  const GemmOptions& options = {},
                                                  FeatureLevel level = FeatureLevel::Latest)
        : desc_(desc), options_(options) {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        validate(desc, level);
        if (!(desc.BTensor.Desc.Flags & kTensorFlagOwnedByDml))
            throw Error(std::string(MatrixMultiplyIntegerToFloatDesc::OperatorName), "BTensor",
                        "Flags must include DML_TENSOR_FLAG_OWNED_BY_DML (1) for the prepared operator "
                        "(B is read once, at initialize)");
        options_.executor = {};
        visit_typed(desc, [&](const auto& op) { initialize(op); });
        if (!right_ && options_.fidelity != Fidelity::DirectML) {  // the reference's operands: B's side copied
            own(desc_.BTensor);
            own(desc_.BScaleTensor);
            if (desc_.BZeroPointTensor) own(*desc_.BZeroPointTensor);
        }
    }

    /// Computes `desc`, which the caller has checked: it equals the prepared
    /// desc (Data and DataSizeInBytes aside) and its bindings pass validation.
    /// qdml::Compiled, the one compile -> execute entry, makes both checks
    /// (by comparisons). `executor`: the caller's thread pool.
    void execute_unchecked(const MatrixMultiplyIntegerToFloatDesc& desc, const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        MatrixMultiplyIntegerToFloatDesc d = desc;
        qdml::detail::copy_weights(desc_, d);
        visit_typed(d, [&](const auto& op) { run(op, executor); });
    }

    /// Whether B was packed for the GEMM engine (the exact profile, 8-bit operands).
    bool packed() const noexcept { return right_.has_value(); }

    /// The typed forms of the two steps, for `op` validated by the caller
    /// (its flags aside): the constructor reads `op`'s B side as the desc
    /// constructor does, but keeps no copy of it for the reference's
    /// operand types (there run() reads the B side of the op it is given).
    template <class TA, class TB, class TF>
    PreparedMatrixMultiplyIntegerToFloat(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op,
                                         const GemmOptions& options)
        : options_(options) {
        const FpEnvironment fp_env;
        options_.executor = {};
        initialize(op);
    }
    template <class TA, class TB, class TF>
    void run(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, const Executor& executor) const {
        const FpEnvironment fp_env;
        GemmOptions o = options_;
        o.executor = executor;
        if (o.fidelity == Fidelity::DirectML) {
            const std::uint32_t channels = op.OutputTensor.sizes[1];
            detail::mmitf_directml(op, o, [&](std::uint32_t b, std::uint32_t c, std::vector<float>&) {
                return static_cast<const float*>(dequantized_[slice_of_[std::size_t{b} * channels + c]].data());
            });
        } else if constexpr (detail::mmitf_on_engine<TA, TB>) {
            detail::mmitf_exact(op, executor, *right_);
        } else {
            reference::matrix_multiply_integer_to_float(op, o.fidelity);
        }
    }

private:
    template <class TA, class TB, class TF>
    void initialize(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op) {
        const auto& Out = op.OutputTensor;
        if (options_.fidelity == Fidelity::DirectML) {
            const std::size_t slice = std::size_t{op.ATensor.sizes[3]} * Out.sizes[3];
            slice_of_ = detail::distinct_b_slices(op, [&](std::uint32_t b, std::uint32_t c) {
                dequantized_.emplace_back(slice);
                detail::mmitf_dequantize_b(op, b, c, dequantized_.back().data());
            });
        } else if constexpr (detail::mmitf_on_engine<TA, TB>) {
            right_.emplace(op, simd::select_isa(options_.isa));
        }
    }

    /// `t` rebound to a copy of its buffer, which this object keeps.
    void own(Tensor& t) {
        const auto* from = static_cast<const unsigned char*>(t.Data);
        owned_.emplace_back(from, from + t.Desc.TotalTensorSizeInBytes);
        t.Data = owned_.back().data();
    }

    MatrixMultiplyIntegerToFloatDesc desc_;
    GemmOptions options_;                                // ISA cap and profile (no executor)
    std::optional<detail::MmitfRight> right_;            // the exact profile's packed B side
    std::deque<std::vector<float>> dequantized_;         // the directml profile's B slices, K x N each
    std::vector<std::size_t> slice_of_;                  // the slice of each (batch, channel)
    std::deque<std::vector<unsigned char>> owned_;       // the reference's B side, copied
};

}  // namespace qdml::simd
