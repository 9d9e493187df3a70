// QUANTIZED_LINEAR_MATRIX_MULTIPLY rows of qdml-bench (issue 8):
// matmul/<impl>/u8s8u8/{1024x1024x1024,1x4096x4096,64x64x64x64,256x256x256}
// (BATCHxMxNxK: 64 products of 64^3, a 3-D DML desc), and u8u8u8 and
// s8s8s8 at 1024x1024x1024. OPS = 2*M*N*K.
//   reference  qdml::run with Implementation::Reference;
//   simd       the stateless call on the GEMM engine: validate, then
//              qdml::simd::quantized_linear_matrix_multiply (B packed in
//              every call), on the path QDML_ISA allows (the JSON context
//              names it: qdml_gemm_isa).
#include "problems.hpp"

namespace qdml_bench {
namespace {

using Desc = qdml::QuantizedLinearMatrixMultiplyDesc;

void simd_matmul(const Desc& d) {
    qdml::validate(d);
    qdml::visit_typed(d, [](const auto& op) { qdml::simd::quantized_linear_matrix_multiply(op); });
}

[[maybe_unused]] const bool registered = [] {
    namespace gemm = qdml::simd::gemm;
    benchmark::AddCustomContext("qdml_gemm_isa", std::string(gemm::isa_name(gemm::select_isa(gemm::Isa::Best))));
    for_each_matmul_row([](auto problem, const MatmulShape& m) {
        using P = typename decltype(problem)::type;
        auto runners = qdml_runners<Desc>(false);
        runners.emplace_back("simd", simd_matmul);
        register_qdml_rows<P>("matmul", q8_types<typename P::A, typename P::B, typename P::Out>(), m.name(),
                              benchmark::kMicrosecond, runners, m.batch, m.m, m.n, m.k);
    });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
