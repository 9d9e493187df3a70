// QUANTIZED_LINEAR_AVERAGE_POOLING rows of qdml-bench (issue 28):
// average_pooling/{reference,simd,simd_<other profile>}/u8/3x3_64_56_nhwc
// (problem_average_pooling.hpp: 3x3, stride 1, padding 1, IncludePadding
// false, scales 1/64, zero points 128); the oneDNN peer in
// peers/onednn_pooling.cpp. Target: simd >= 1.0x oneDNN.
#include "problem_average_pooling.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    using P = AveragePoolingProblem<std::uint8_t>;
    register_qdml_rows<P>("average_pooling", "u8", "3x3_64_56_nhwc", benchmark::kMicrosecond,
                          qdml_runners<qdml::QuantizedLinearAveragePoolingDesc>(true, true), 64u, 56u, 3u);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
