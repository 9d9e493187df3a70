// qdml/simd/quantized_linear_convolution_prepared.hpp - QUANTIZED_LINEAR_CONVOLUTION
// with constant weights (FilterTensor flagged DML_TENSOR_FLAG_OWNED_BY_DML),
// mirroring DirectML's compile -> initialize -> execute: the filter is packed
// once with its row sums, execute streams the input. Same bits as the
// reference (docs/semantics.md section 6).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qdml/operators/visit.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"

namespace qdml::simd {

/// QUANTIZED_LINEAR_CONVOLUTION with constant weights: the constructor
/// validates the desc, whose FilterTensor carries DML_TENSOR_FLAG_OWNED_BY_DML,
/// and packs the filter of every group with its row sums (depthwise descs:
/// the depthwise path's weight pairs and sums), reading
/// FilterTensor, FilterScaleTensor, FilterZeroPointTensor and BiasTensor once.
/// execute() streams the input: it never reads those four buffers (their
/// Data may be null) and never writes the packed filter; the input and
/// output scales and zero points are read on every call.
class PreparedQuantizedLinearConvolution {
public:
    explicit PreparedQuantizedLinearConvolution(const QuantizedLinearConvolutionDesc& desc,
                                                const GemmOptions& options = {},
                                                FeatureLevel level = FeatureLevel::Latest)
        : desc_(desc), level_(level) {
        validate(desc, level);
        if (!(desc.FilterTensor.Desc.Flags & kTensorFlagOwnedByDml))
            throw Error(std::string(QuantizedLinearConvolutionDesc::OperatorName), "FilterTensor",
                        "Flags must include DML_TENSOR_FLAG_OWNED_BY_DML (1) for the prepared operator "
                        "(the filter is packed once, at initialize)");
        visit_typed(desc, [&](const auto& op) {
            if (conv::is_depthwise(op)) {
                depthwise_ = conv::prepare_depthwise(op);
                if (op.BiasTensor)  // the depthwise path reads the bias per call: keep a copy
                    for (std::uint32_t oc = 0; oc < op.OutputTensor.sizes[1]; ++oc)
                        bias_.push_back((*op.BiasTensor)[{0, oc, 0, 0}]);
                cap_ = options.isa;
                filter_.isa = conv::depthwise_isa(options.isa);
            } else {
                conv::prepare_filter(op, simd::select_isa(options.isa), filter_);
            }
        });
    }

    /// Computes `desc`: the prepared descs (Data aside) with a new input,
    /// output and input / output parameters. The filter's, its parameters'
    /// and the bias's Data may be null.
    void execute(const QuantizedLinearConvolutionDesc& desc) const {
        QuantizedLinearConvolutionDesc d = desc;
        const auto mismatch = [&](const char* member) {
            return Error(std::string(QuantizedLinearConvolutionDesc::OperatorName), member,
                         "desc differs from the one the operator was prepared with (only Data may change)");
        };
        const std::pair<const Tensor*, const Tensor*> same[] = {
            {&d.InputTensor, &desc_.InputTensor},         {&d.InputScaleTensor, &desc_.InputScaleTensor},
            {&d.FilterTensor, &desc_.FilterTensor},       {&d.FilterScaleTensor, &desc_.FilterScaleTensor},
            {&d.OutputScaleTensor, &desc_.OutputScaleTensor}, {&d.OutputTensor, &desc_.OutputTensor}};
        const char* names[] = {"InputTensor",       "InputScaleTensor",  "FilterTensor",
                               "FilterScaleTensor", "OutputScaleTensor", "OutputTensor"};
        for (std::size_t i = 0; i < 6; ++i)
            if (!same_desc(same[i].first->Desc, same[i].second->Desc)) throw mismatch(names[i]);
        const std::pair<const OptionalTensor*, const OptionalTensor*> same_optional[] = {
            {&d.InputZeroPointTensor, &desc_.InputZeroPointTensor},
            {&d.FilterZeroPointTensor, &desc_.FilterZeroPointTensor},
            {&d.BiasTensor, &desc_.BiasTensor},
            {&d.OutputZeroPointTensor, &desc_.OutputZeroPointTensor}};
        const char* optional_names[] = {"InputZeroPointTensor", "FilterZeroPointTensor", "BiasTensor",
                                        "OutputZeroPointTensor"};
        for (std::size_t i = 0; i < 4; ++i)
            if (!same_desc(*same_optional[i].first, *same_optional[i].second)) throw mismatch(optional_names[i]);
        if (d.Strides != desc_.Strides) throw mismatch("Strides");
        if (d.Dilations != desc_.Dilations) throw mismatch("Dilations");
        if (d.StartPadding != desc_.StartPadding) throw mismatch("StartPadding");
        if (d.EndPadding != desc_.EndPadding) throw mismatch("EndPadding");
        if (d.GroupCount != desc_.GroupCount) throw mismatch("GroupCount");
        // The weights were read at initialize: validate against those bindings.
        d.FilterTensor = desc_.FilterTensor;
        d.FilterScaleTensor = desc_.FilterScaleTensor;
        d.FilterZeroPointTensor = desc_.FilterZeroPointTensor;
        d.BiasTensor = desc_.BiasTensor;
        // The descs equal the validated ones, so the verdict depends on the
        // bindings alone: the bindings of the last call that passed need no
        // second look.
        const Bindings bindings = bindings_of(d);
        {
            std::lock_guard<std::mutex> lock(validated_mutex_);
            if (!(validated_ && *validated_ == bindings)) {
                validate(d, level_);
                validated_ = bindings;
            }
        }
        visit_typed(d, [&](const auto& op) {
            if (depthwise_) {
                auto bound = op;  // the bias as read at initialize
                if (bound.BiasTensor) {
                    bound.BiasTensor->data = bias_.data();
                    bound.BiasTensor->strides = {0, 1, 0, 0};
                }
                conv::depthwise(bound, *depthwise_, cap_);
            } else {
                conv::run(op, filter_);
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
    using Bindings = std::array<std::pair<const void*, std::uint64_t>, 6>;
    static Bindings bindings_of(const QuantizedLinearConvolutionDesc& d) noexcept {
        const auto bound = [](const OptionalTensor& t) {
            return t ? std::make_pair(static_cast<const void*>(t->Data), t->DataSizeInBytes)
                     : std::make_pair(static_cast<const void*>(nullptr), std::uint64_t{0});
        };
        return {{{d.InputTensor.Data, d.InputTensor.DataSizeInBytes},
                 {d.InputScaleTensor.Data, d.InputScaleTensor.DataSizeInBytes},
                 bound(d.InputZeroPointTensor),
                 {d.OutputScaleTensor.Data, d.OutputScaleTensor.DataSizeInBytes},
                 bound(d.OutputZeroPointTensor),
                 {d.OutputTensor.Data, d.OutputTensor.DataSizeInBytes}}};
    }

    QuantizedLinearConvolutionDesc desc_;
    FeatureLevel level_;
    conv::Filter filter_;
    std::optional<conv::DepthwiseFilter> depthwise_;  // the depthwise path's filter side, when it computes the desc
    std::vector<std::int32_t> bias_;                  // the depthwise path's bias, per output channel
    simd::Isa cap_ = simd::Isa::Best;
    mutable std::mutex validated_mutex_;
    mutable std::optional<Bindings> validated_;  // bindings of the last execute that passed validation
};

}  // namespace qdml::simd
