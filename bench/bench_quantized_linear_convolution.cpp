// QUANTIZED_LINEAR_CONVOLUTION rows of qdml-bench (issue 9), u8 input, s8
// filter, int32 bias, u8 output: conv/<impl>/u8s8u8/<shape> for the shapes of
// conv_shapes(), each in NCHW (`_nchw`) and NHWC memory (`_nhwc`). OPS = 2 * N * OH * OW * COUT * CIN/G * KH * KW.
//   reference  qdml::run with Implementation::Reference;
//   simd       validation, then qdml::simd::quantized_linear_convolution (the
//              filter packed in every call, the implicit GEMM on the path
//              QDML_ISA allows), in RunOptions' default profile
//              (docs/semantics.md section 10);
//   simd_exact / simd_directml  the same in the other profile (3x3_64_64_56,
//              issue 32's speed criterion, and the depthwise shapes);
//   simd_prepared  the filter flagged constant (DML_TENSOR_FLAG_OWNED_BY_DML)
//              and packed once outside the timed loop
//              (qdml::compile with constant weights); execute
//              streams the input; the label names the path.
//   simd_prepared/.../threads:N  the same on N worker threads (issue 26,
//              BENCH.md "Threads": executor_of(N); conv/tasks.hpp's grid).
// Depthwise shapes (`_dw`) run the depthwise path through the same entries.
// One spatial dimension (issue 27): conv/{simd,simd_prepared}/u8s8u8/<shape>_ncw
// for the shapes of conv_1d_shapes(), DimensionCount 1 on {N, C, W} packed.
#include <memory>
#include <string>

#include "problems.hpp"
#include "qdml/simd/quantized_linear_convolution_prepared.hpp"

namespace qdml_bench {
namespace {

using Desc = qdml::QuantizedLinearConvolutionDesc;

/// The stateless call in profile `f`: qdml::run (validation, then the typed
/// qdml::simd::quantized_linear_convolution through the compiled-once dispatch: the
/// code the runner ships, not a second instantiation of it here).
Runner<Desc> simd_conv(qdml::Fidelity f) {
    return [f](const Desc& d) {
        qdml::RunOptions o;
        o.fidelity = f;
        qdml::run(d, o);
    };
}

/// The simd_prepared row: the filter constant, packed once by the Compiled;
/// each call executes it (on `threads` worker threads when given: executor_of).
Peer prepared(ConvProblem& p, unsigned threads) {
    auto desc = std::make_shared<Desc>(p.desc);
    desc->FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    return compiled_peer(desc, threads);
}

[[maybe_unused]] const bool registered = [] {
    for (const ConvShape& nchw : conv_shapes()) for (const ConvShape& c : {nchw, nchw.with_layout(true)}) {
        auto runners = qdml_runners<Desc>(false);
        runners.emplace_back("simd", simd_conv(qdml::RunOptions{}.fidelity));
        if ((c.kh == 3 && c.cin == 64 && c.cout == 64 && c.hw == 56) || c.groups > 1)  // (issue 32's rows; depthwise)
            runners.emplace_back("simd" + profile_suffix(other_profile()), simd_conv(other_profile()));
        register_qdml_rows<ConvProblem>("conv", "u8s8u8", c.name(), benchmark::kMillisecond, runners, c);
        register_peer_row<ConvProblem>("conv/simd_prepared/u8s8u8/" + c.name(), benchmark::kMillisecond,
                                       [](ConvProblem& p) { return prepared(p, 0); }, c);
        for (const unsigned threads : thread_counts())  // issue 26: on N worker threads
            register_peer_row<ConvProblem>("conv/simd_prepared/u8s8u8/" + c.name() + threads_suffix(threads),
                                           benchmark::kMillisecond,
                                           [threads](ConvProblem& p) { return prepared(p, threads); }, c);
    }
    for (const ConvShape& c : conv_1d_shapes()) {
        register_qdml_rows<ConvProblem>("conv", "u8s8u8", c.name(), benchmark::kMillisecond,
                                        {{"simd", simd_conv(qdml::RunOptions{}.fidelity)}}, c);
        register_peer_row<ConvProblem>("conv/simd_prepared/u8s8u8/" + c.name(), benchmark::kMillisecond,
                                       [](ConvProblem& p) { return prepared(p, 0); }, c);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
