// qdml/simd/quantized_linear_convolution_prepared.hpp - QUANTIZED_LINEAR_CONVOLUTION
// with constant weights (FilterTensor flagged DML_TENSOR_FLAG_OWNED_BY_DML),
// the filter packed once with its row sums, each execution streams the
// input. The state behind qdml::compile (runtime/compiled.hpp), which checks
// execute's descs and bindings. Same bits as the reference (docs/semantics.md section 6).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/members.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"

namespace qdml::simd {

/// The initialized state of a QUANTIZED_LINEAR_CONVOLUTION with constant
/// weights (DirectML's initialize step; qdml::compile keeps one): the constructor
/// validates the desc, whose FilterTensor carries DML_TENSOR_FLAG_OWNED_BY_DML,
/// and packs the filter of every group with its row sums (depthwise descs:
/// the depthwise path's weight pairs and sums), reading
/// FilterTensor, FilterScaleTensor, FilterZeroPointTensor and BiasTensor once.
/// execute_unchecked() streams the input: it never reads those four buffers
/// (their Data may be null) and never writes the packed filter; the input
/// and output scales and zero points are read on every call.
class PreparedQuantizedLinearConvolution {
public:
    explicit PreparedQuantizedLinearConvolution(const QuantizedLinearConvolutionDesc& desc,
                                                const GemmOptions& options = {},
                                                FeatureLevel level = FeatureLevel::Latest)
        : desc_(desc) {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        validate(desc, level);
        if (!(desc.FilterTensor.Desc.Flags & kTensorFlagOwnedByDml))
            throw Error(std::string(QuantizedLinearConvolutionDesc::OperatorName), "FilterTensor",
                        "Flags must include DML_TENSOR_FLAG_OWNED_BY_DML (1) for the prepared operator "
                        "(the filter is packed once, at initialize)");
        visit_typed(desc, [&](const auto& op) {
            if (conv::select_form(op, simd::select_isa(options.isa)) == conv::ConvForm::Depthwise) {
                depthwise_ = conv::prepare_depthwise(op);
                if (op.BiasTensor)  // the depthwise path reads the bias per call: keep a copy
                    for (std::uint32_t oc = 0; oc < op.OutputTensor.sizes[1]; ++oc)
                        bias_.push_back((*op.BiasTensor)[{0, oc, 0, 0}]);
                cap_ = options.isa;
                fidelity_ = options.fidelity;
                filter_.isa = conv::depthwise_isa(options.isa);
            } else {
                conv::prepare_filter(op, simd::select_isa(options.isa), filter_);
                filter_.directml = options.fidelity == Fidelity::DirectML;
            }
        });
    }

    /// Computes `desc`, which the caller has checked: it equals the prepared
    /// desc (Data and DataSizeInBytes aside) and its bindings pass validation.
    /// qdml::Compiled, the one compile -> execute entry, makes both checks
    /// (by comparisons); the filter's, its parameters' and the bias's Data
    /// are not read.
    /// `executor`: the caller's thread pool (conv/tasks.hpp).
    void execute_unchecked(const QuantizedLinearConvolutionDesc& desc, const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        QuantizedLinearConvolutionDesc d = desc;
        qdml::detail::copy_weights(desc_, d);
        visit_typed(d, [&](const auto& op) {
            if (depthwise_) {
                auto bound = op;  // the bias as read at initialize
                if (bound.BiasTensor) {
                    bound.BiasTensor->data = bias_.data();
                    bound.BiasTensor->strides = {0, 1, 0, 0};
                }
                conv::depthwise(bound, *depthwise_, cap_, fidelity_, executor);
            } else {
                conv::run(op, filter_, executor);
            }
        });
    }

    /// The micro-kernel family the filter was packed for (depthwise: the path that runs).
    simd::Isa isa() const noexcept { return filter_.isa; }
    /// Whether the depthwise path computes it (conv::is_depthwise).
    bool depthwise() const noexcept { return depthwise_.has_value(); }
    /// The packed filter (read-only: execute never writes it; empty for depthwise).
    const conv::Filter& packed() const noexcept { return filter_; }

private:
    QuantizedLinearConvolutionDesc desc_;
    conv::Filter filter_;
    std::optional<conv::DepthwiseFilter> depthwise_;  // the depthwise path's filter side, when it computes the desc
    std::vector<std::int32_t> bias_;                  // the depthwise path's bias, per output channel
    simd::Isa cap_ = simd::Isa::Best;
    Fidelity fidelity_ = kDefaultFidelity;  // the depthwise path's profile
};

}  // namespace qdml::simd
