// MATRIX_MULTIPLY_INTEGER_TO_FLOAT rows of qdml-bench (issue 27):
// matmul_integer_to_float/<impl>/u8s8f32/{1024x1024x1024,128x768x3072}, the
// operator as ONNX Runtime's MatMulIntegerToFloat maps onto it (per-tensor A
// scale and zero point, per-column B ones, a bias row). OPS = 2*M*N*K.
//   reference   qdml::run with Implementation::Reference (the default profile, directml);
//   simd        qdml::run with Implementation::Simd in the directml profile:
//               the dequantized operands summed in binary32 in k order, a row at a time;
//   simd_exact  the exact profile: the GEMM engine's int32 sums (B packed in
//               every call), then fp32(acc) * fp32(AScale * BScale) + Bias per row;
//   simd_prepared, simd_prepared_exact  B flagged constant, read once by
//               qdml::compile before timing (dequantized in the directml
//               profile, packed for the engine in the exact one); each call
//               executes the Compiled (bench/support.hpp's prepared_runner);
//               /threads:N the same on N worker threads (issue 26).
#include <cstdint>
#include <string>

#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    using P = MatmulIntegerToFloatProblem<std::uint8_t, std::int8_t>;
    using Desc = qdml::MatrixMultiplyIntegerToFloatDesc;
    for (const MatmulShape& shape : matmul_integer_to_float_shapes()) {
        auto runners = qdml_runners<Desc>(true, true);
        runners.emplace_back("simd_prepared", prepared_runner<Desc>());
        runners.emplace_back("simd_prepared" + profile_suffix(other_profile()), prepared_runner<Desc>(other_profile()));
        register_qdml_rows<P>("matmul_integer_to_float", q8_types<P::A, P::B, P::Out>(), shape.name(),
                              benchmark::kMicrosecond, runners, shape.batch, shape.m, shape.n, shape.k);
        for (const unsigned threads : thread_counts())  // issue 26: on N worker threads
            register_qdml_rows<P>("matmul_integer_to_float", q8_types<P::A, P::B, P::Out>(),
                                  shape.name() + threads_suffix(threads), benchmark::kMicrosecond,
                                  {{"simd_prepared", prepared_runner<Desc>(qdml::RunOptions{}.fidelity, threads)},
                                   {"simd_prepared" + profile_suffix(other_profile()),
                                    prepared_runner<Desc>(other_profile(), threads)}},
                                  shape.batch, shape.m, shape.n, shape.k);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
