// The depthwise convolution path's rows (issue 9), until the convolution
// entry (Implementation::Simd) calls it: conv/simd/u8s8u8/<shape> validates
// the desc and runs qdml::simd::conv::depthwise (filter prepared on every
// call), conv/simd_prepared/u8s8u8/<shape> runs it with the filter prepared
// once (outside the timed loop). Shapes: the depthwise ones of
// conv_shapes(), in NCHW and NHWC through DML strides.
#include <memory>
#include <optional>

#include "problems.hpp"
#include "qdml/simd/conv/depthwise.hpp"

namespace qdml_bench {
namespace {

using Desc = qdml::QuantizedLinearConvolutionDesc;

Runner<Desc> depthwise_stateless() {
    return [](const Desc& d) {
        qdml::validate(d);
        qdml::visit_typed(d, [](const auto& op) { qdml::simd::conv::depthwise(op); });
    };
}

/// The filter is prepared at the first call (the row's check, untimed).
Runner<Desc> depthwise_prepared() {
    auto filter = std::make_shared<std::optional<qdml::simd::conv::DepthwiseFilter>>();
    return [filter](const Desc& d) {
        qdml::visit_typed(d, [&](const auto& op) {
            if (!*filter) *filter = qdml::simd::conv::prepare_depthwise(op);
            qdml::simd::conv::depthwise(op, **filter);
        });
    };
}

[[maybe_unused]] const bool registered = [] {
    for (const ConvShape& c : conv_shapes()) {
        if (c.groups != c.cin || c.nhwc) continue;
        for (const ConvShape& s : {c, c.with_layout(true)})
            register_qdml_rows<ConvProblem>("conv", "u8s8u8", s.name(), benchmark::kMillisecond,
                                            {{"simd", depthwise_stateless()}, {"simd_prepared", depthwise_prepared()}},
                                            s);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
