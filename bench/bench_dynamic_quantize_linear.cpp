// DYNAMIC_QUANTIZE_LINEAR rows of qdml-bench (issue 28):
// dynamic_quantize_linear/<impl>/f32_u8/16777216 (reference, simd, and
// simd_<other profile>), and dynamic_quantize_linear/simd/f32_u8/16777216/threads:N
// (RunOptions::executor over N threads, BENCH.md "Threads"). The issue's
// target: 80% of the time of two streaming passes (hw/stream/f32_u8 plus a
// read of the input).
#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    using P = DynamicQuantizeProblem<std::uint8_t>;
    register_element_wise<P>("dynamic_quantize_linear", "f32_u8", 16777216, Layout::packed);
    register_element_wise_threads<P>("dynamic_quantize_linear", "f32_u8", 16777216);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
