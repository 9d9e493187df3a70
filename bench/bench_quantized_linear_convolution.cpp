// QUANTIZED_LINEAR_CONVOLUTION rows of qdml-bench (issue 9), u8 input, s8
// filter, int32 bias, u8 output: conv/<impl>/u8s8u8/<shape> for the shapes of
// conv_shapes(). OPS = 2 * N * OH * OW * COUT * CIN/G * KH * KW. The
// reference only: convolution has no SIMD path yet (issue 9).
#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    for (const ConvShape& c : conv_shapes())
        register_qdml_rows<ConvProblem>("conv", "u8s8u8", c.name(), benchmark::kMillisecond,
                                        qdml_runners<qdml::QuantizedLinearConvolutionDesc>(false), c);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
