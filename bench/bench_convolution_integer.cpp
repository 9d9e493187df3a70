// CONVOLUTION_INTEGER rows of qdml-bench (issue 27):
// conv_integer/<impl>/u8s8s32/3x3_64_64_56_nhwc, beside the conv rows
// (bench_quantized_linear_convolution.cpp: the same input, input zero point
// 128 and filter, in NHWC memory through DML strides; no filter zero point,
// bias or scales, an int32 output in NHWC). OPS = 2 * N * OH * OW * COUT * CIN/G * KH * KW.
//   reference  qdml::run with Implementation::Reference;
//   simd       qdml::run with Implementation::Simd: the convolution forms
//              of the conv rows (docs/design/convolution.md) with the GEMM
//              engine's int32 store (the filter packed in every call), on the
//              path QDML_ISA allows;
//   simd_prepared  the filter flagged constant (DML_TENSOR_FLAG_OWNED_BY_DML)
//              and packed once outside the timed loop (qdml::compile with
//              constant weights); execute streams the input.
// Shapes (conv_integer_shapes()): 3x3_64_64_56 NHWC, 1x1_256_64_56 NHWC,
// 3x3_64_64_56 NCHW.
#include <memory>
#include <string>

#include "problems.hpp"

namespace qdml_bench {
namespace {

using Desc = qdml::ConvolutionIntegerDesc;

/// The simd_prepared row: the filter constant, packed once by the Compiled;
/// each call executes it.
Peer prepared(ConvIntegerProblem& p) {
    auto desc = std::make_shared<Desc>(p.desc);
    desc->FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    return compiled_peer(desc, 0);
}

[[maybe_unused]] const bool registered = [] {
    for (const ConvShape& c : conv_integer_shapes()) {
        register_qdml_rows<ConvIntegerProblem>("conv_integer", "u8s8s32", c.name(), benchmark::kMillisecond,
                                               qdml_runners<Desc>(), c);
        register_peer_row<ConvIntegerProblem>("conv_integer/simd_prepared/u8s8s32/" + c.name(),
                                              benchmark::kMillisecond, prepared, c);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
