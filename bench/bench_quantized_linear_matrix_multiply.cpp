// QUANTIZED_LINEAR_MATRIX_MULTIPLY rows of qdml-bench (issue 8):
// matmul/<impl>/u8s8u8/{1024x1024x1024,1x4096x4096,64x64x64x64,256x256x256}
// (BATCHxMxNxK: 64 products of 64^3, a 3-D DML desc), and u8u8u8 and
// s8s8s8 at 1024x1024x1024. OPS = 2*M*N*K.
#include "problems.hpp"

namespace qdml_bench {
namespace {

[[maybe_unused]] const bool registered = [] {
    for_each_matmul_row([](auto problem, const MatmulShape& m) {
        using P = typename decltype(problem)::type;
        register_qdml_rows<P>("matmul", q8_types<typename P::A, typename P::B, typename P::Out>(), m.name(),
                              benchmark::kMicrosecond, m.batch, m.m, m.n, m.k);
    });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
