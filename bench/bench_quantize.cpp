// QUANTIZE_LINEAR, QUANTIZE and DEQUANTIZE rows of qdml-bench (issue 28):
// quantize_linear/<impl>/f32_i8/{65536,16777216} (ELEMENT_WISE_QUANTIZE_LINEAR,
// per-tensor scale and zero point; the peers in peers/*_element_wise.cpp);
// dequantize/<impl>/u4_f32/16777216 and quantize/<impl>/f32_u4/16777216
// (DML_OPERATOR_DEQUANTIZE / QUANTIZE, {4096, 4096} packed, SCALE_ZERO_POINT
// in blocks of 32 along the rows: BlockQuantizeProblem). The issue's
// targets: quantize_linear 2^24 >= 85% of hw/stream/f32_u8 and >= 1.2x the
// best peer, 2^16 >= 1.0x the best peer; the 4-bit dequantize >= 80% of
// hw/stream/u8_f32 per output byte.
#include "quantize_problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    for (std::uint32_t n : {65536u, 16777216u})
        register_element_wise<QuantizeLinearProblem<std::int8_t>>("quantize_linear", "f32_i8", n, Layout::packed);
    register_element_wise<BlockQuantizeProblem<false, qdml::uint4>>("dequantize", "u4_f32", 16777216, Layout::packed);
    register_element_wise<BlockQuantizeProblem<true, qdml::uint4>>("quantize", "f32_u4", 16777216, Layout::packed);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
