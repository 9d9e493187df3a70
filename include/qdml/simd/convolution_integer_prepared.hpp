// qdml/simd/convolution_integer_prepared.hpp - CONVOLUTION_INTEGER with
// constant weights (FilterTensor flagged DML_TENSOR_FLAG_OWNED_BY_DML): the
// filter packed once with its sums and zero points, each execution streams
// the input into the engine's int32 store. The state behind qdml::compile
// (runtime/compiled.hpp), which checks execute's descs and bindings. Same
// bits as the reference (docs/semantics.md section 14).
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/members.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/simd/convolution_integer.hpp"

namespace qdml::simd {

/// The initialized state of a CONVOLUTION_INTEGER with constant weights
/// (DirectML's initialize step; qdml::compile keeps one): the constructor
/// validates the desc, whose FilterTensor carries DML_TENSOR_FLAG_OWNED_BY_DML,
/// and packs the filter of every group for the form conv::select_form picks
/// (simd/convolution_integer.hpp), reading FilterTensor and
/// FilterZeroPointTensor once. execute_unchecked() streams the input: it
/// never reads those two buffers (their Data may be null) and never writes
/// the packed filter; the input zero point is read on every call.
class PreparedConvolutionInteger {
public:
    explicit PreparedConvolutionInteger(const ConvolutionIntegerDesc& desc, const GemmOptions& options = {},
                                        FeatureLevel level = FeatureLevel::Latest)
        : desc_(desc) {
        const FpEnvironment fp_env;  // (no float step; kept as every entry does)
        validate(desc, level);
        if (!(desc.FilterTensor.Desc.Flags & kTensorFlagOwnedByDml))
            throw Error(std::string(ConvolutionIntegerDesc::OperatorName), "FilterTensor",
                        "Flags must include DML_TENSOR_FLAG_OWNED_BY_DML (1) for the prepared operator "
                        "(the filter is packed once, at initialize)");
        visit_typed(desc, [&](const auto& op) {
            conv::prepare_filter(conv::linear_form(op), simd::select_isa(options.isa), filter_);
        });
    }

    /// Computes `desc`, which the caller has checked: it equals the prepared
    /// desc (Data and DataSizeInBytes aside) and its bindings pass validation.
    /// qdml::Compiled, the one compile -> execute entry, makes both checks
    /// (by comparisons); the filter's and its zero point's Data are not read.
    /// `executor`: the caller's thread pool (conv/tasks.hpp).
    void execute_unchecked(const ConvolutionIntegerDesc& desc, const Executor& executor = {}) const {
        const FpEnvironment fp_env;
        ConvolutionIntegerDesc d = desc;
        qdml::detail::copy_weights(desc_, d);
        visit_typed(d, [&](const auto& op) { conv::run(conv::linear_form(op), filter_, executor); });
    }

    /// The micro-kernel family the filter was packed for.
    simd::Isa isa() const noexcept { return filter_.isa; }
    /// The packed filter (read-only: execute never writes it).
    const conv::Filter& packed() const noexcept { return filter_; }

private:
    ConvolutionIntegerDesc desc_;
    conv::Filter filter_;
};

}  // namespace qdml::simd
