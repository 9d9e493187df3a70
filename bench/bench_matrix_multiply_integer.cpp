// MATRIX_MULTIPLY_INTEGER rows of qdml-bench (issue 27):
// matmul_integer/<impl>/u8s8s32/{1024x1024x1024,1x4096x4096} (the cube and
// the GEMV of matmul_integer_shapes()), beside the matmul rows
// (bench_quantized_linear_matrix_multiply.cpp: the same operands and A zero
// point, no scales, an int32 output). OPS = 2*M*N*K.
//   reference  qdml::run with Implementation::Reference;
//   simd       qdml::run with Implementation::Simd: the GEMM engine with its
//              int32 store (B packed in every call), on the path QDML_ISA
//              allows (the JSON context's qdml_gemm_isa);
//   simd_prepared  B flagged constant (DML_TENSOR_FLAG_OWNED_BY_DML), packed
//              once by qdml::compile before timing; each call executes the
//              Compiled (A streamed: bench/support.hpp's prepared_runner);
//              /threads:N the same on N worker threads (issue 26).
#include <cstdint>
#include <string>

#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    using P = MatmulIntegerProblem<std::uint8_t, std::int8_t>;
    for (const MatmulShape& m : matmul_integer_shapes()) {
        auto runners = qdml_runners<qdml::MatrixMultiplyIntegerDesc>();
        runners.emplace_back("simd_prepared", prepared_runner<qdml::MatrixMultiplyIntegerDesc>());
        register_qdml_rows<P>("matmul_integer", q8_types<P::A, P::B, P::Out>(), m.name(), benchmark::kMicrosecond,
                              runners, m.batch, m.m, m.n, m.k);
        for (const unsigned threads : thread_counts())  // issue 26: on N worker threads
            register_qdml_rows<P>(
                "matmul_integer", q8_types<P::A, P::B, P::Out>(), m.name() + threads_suffix(threads),
                benchmark::kMicrosecond,
                {{"simd_prepared", prepared_runner<qdml::MatrixMultiplyIntegerDesc>(qdml::RunOptions{}.fidelity, threads)}},
                m.batch, m.m, m.n, m.k);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
