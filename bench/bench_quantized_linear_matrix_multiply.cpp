// QUANTIZED_LINEAR_MATRIX_MULTIPLY rows of qdml-bench (issue 8):
// matmul/<impl>/u8s8u8/{1024x1024x1024,1x4096x4096,64x64x64x64,256x256x256}
// (BATCHxMxNxK: 64 products of 64^3, a 3-D DML desc). OPS = 2*M*N*K.
#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    using P = MatmulProblem<std::uint8_t, std::int8_t, std::uint8_t>;
    for (const MatmulShape& m : matmul_shapes())
        register_qdml_rows<P>("matmul", "u8s8u8", m.name(), benchmark::kMicrosecond, m.batch, m.m, m.n, m.k);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
