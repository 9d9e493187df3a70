// QUANTIZED_LINEAR_CONVOLUTION rows of qdml-bench (issue 9), u8 input, s8
// filter, int32 bias, u8 output: conv/<impl>/u8s8u8/<shape> for the shapes of
// conv_shapes(). OPS = 2 * N * OH * OW * COUT * CIN/G * KH * KW.
#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    for (const ConvShape& shape : conv_shapes()) {
        for (const auto& impl : qdml_impls()) {
            const qdml::RunOptions options = impl.second;
            add_row("conv/" + impl.first + "/u8s8u8/" + shape.name(), [=](benchmark::State& s) {
                auto& p = cached<ConvProblem>(shape);
                time_qdml(s, p.desc, options);
                set_ops_counter(s, p.ops());
            }, benchmark::kMillisecond);
        }
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
