// QUANTIZED_LINEAR_MATRIX_MULTIPLY rows of qdml-bench (issue 8):
// matmul/<impl>/u8s8u8/{1024x1024x1024,1x4096x4096,64x64x64x64,256x256x256}
// (BATCHxMxNxK: 64 products of 64^3, a 3-D DML desc), and u8u8u8 and
// s8s8s8 at 1024x1024x1024. OPS = 2*M*N*K.
//   reference  qdml::run with Implementation::Reference;
//   simd       the stateless call on the GEMM engine, in RunOptions' default
//              profile (docs/semantics.md section 10): validate, then
//              qdml::simd::quantized_linear_matrix_multiply (B packed in
//              every call), on the path QDML_ISA allows (the JSON context
//              names it: qdml_gemm_isa).
//   simd_exact / simd_directml  the same in the other profile (u8s8u8
//              1024x1024x1024 only: issue 32's speed criterion).
//   simd_prepared  B flagged constant (DML_TENSOR_FLAG_OWNED_BY_DML) and packed
//              once outside the timed loop
//              (qdml::compile with constant weights); execute
//              streams A; the label names the path and the mismatches.
//   simd_prepared/.../threads:N  (u8s8u8, issue 26; BENCH.md "Threads") the
//              same Compiled, executed with execute(desc, executor): for
//              N = 1 the default qdml::Executor (the calling thread alone:
//              the unsuffixed row), else a qdml::tools::ThreadPool(N), one per
//              N, made on first use and kept for the run (executor_of).
#include <memory>
#include <string>

#include "problems.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply_prepared.hpp"

namespace qdml_bench {
namespace {

using Desc = qdml::QuantizedLinearMatrixMultiplyDesc;

/// The stateless call in profile `f`: qdml::run (validation, then the typed
/// qdml::simd::quantized_linear_matrix_multiply through the compiled-once dispatch: the
/// code the runner ships, not a second instantiation of it here).
Runner<Desc> simd_matmul(qdml::Fidelity f) {
    return [f](const Desc& d) {
        qdml::RunOptions o;
        o.fidelity = f;
        qdml::run(d, o);
    };
}

/// The simd_prepared row: B constant, packed once by the Compiled; each call
/// executes it (on `threads` worker threads when given: executor_of).
template <class P>
Peer prepared(P& p, unsigned threads = 0) {
    auto desc = std::make_shared<Desc>(p.desc);
    desc->BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    return compiled_peer(desc, threads);
}

[[maybe_unused]] const bool registered = [] {
    namespace simd = qdml::simd;
    benchmark::AddCustomContext("qdml_gemm_isa", std::string(simd::isa_name(simd::select_isa(simd::Isa::Best))));
    for_each_matmul_row([](auto problem, const MatmulShape& m) {
        using P = typename decltype(problem)::type;
        const std::string types = q8_types<typename P::A, typename P::B, typename P::Out>();
        auto runners = qdml_runners<Desc>(false);
        runners.emplace_back("simd", simd_matmul(qdml::RunOptions{}.fidelity));
        if (m.batch == 1 && m.m == 1024 && m.n == 1024 && m.k == 1024 && types == "u8s8u8")  // (issue 32's row)
            runners.emplace_back("simd" + profile_suffix(other_profile()), simd_matmul(other_profile()));
        register_qdml_rows<P>("matmul", types, m.name(), benchmark::kMicrosecond, runners, m.batch, m.m, m.n, m.k);
        register_peer_row<P>("matmul/simd_prepared/" + types + "/" + m.name(), benchmark::kMicrosecond,
                             [](P& p) { return prepared<P>(p); }, m.batch, m.m, m.n, m.k);
        if (types == "u8s8u8")  // issue 26: on N worker threads
            for (const unsigned threads : thread_counts())
                register_peer_row<P>(
                    "matmul/simd_prepared/" + types + "/" + m.name() + threads_suffix(threads),
                    benchmark::kMicrosecond, [threads](P& p) { return prepared<P>(p, threads); }, m.batch, m.m, m.n,
                    m.k);
    });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
