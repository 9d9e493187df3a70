// CONVOLUTION_INTEGER rows of qdml-bench (issue 27):
// conv_integer/<impl>/u8s8s32/3x3_64_64_56_nhwc, beside the conv rows
// (bench_quantized_linear_convolution.cpp: the same input, input zero point
// 128 and filter, in NHWC memory through DML strides; no filter zero point,
// bias or scales, an int32 output in NHWC). OPS = 2 * N * OH * OW * COUT * CIN/G * KH * KW.
//   reference  qdml::run with Implementation::Reference;
//   simd       qdml::run with Implementation::Simd: each image's patch matrix
//              by the filter rows on the GEMM engine with its int32 store (the
//              filter packed in every call), on the path QDML_ISA allows.
#include <string>

#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    for (const ConvShape& c : conv_integer_shapes())
        register_qdml_rows<ConvIntegerProblem>("conv_integer", "u8s8s32", c.name(), benchmark::kMillisecond,
                                               qdml_runners<qdml::ConvolutionIntegerDesc>(), c);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
