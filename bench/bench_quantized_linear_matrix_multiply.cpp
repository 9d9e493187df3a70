// QUANTIZED_LINEAR_MATRIX_MULTIPLY rows of qdml-bench (issue 8):
// matmul/<impl>/u8s8u8/{1024x1024x1024,1x4096x4096,64x64x64x64,256x256x256}
// (BATCHxMxNxK: 64 products of 64^3, a 3-D DML desc). OPS = 2*M*N*K.
#include "problems.hpp"

namespace qdml_bench {
namespace {

struct MatmulShape {
    std::uint32_t batch, m, n, k;
};

std::string shape_name(const MatmulShape& s) {
    std::string name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    return s.batch > 1 ? std::to_string(s.batch) + "x" + name : name;
}

[[maybe_unused]] const bool registered = [] {
    using P = MatmulProblem<std::uint8_t, std::int8_t, std::uint8_t>;
    for (const MatmulShape& shape : {MatmulShape{1, 1024, 1024, 1024}, MatmulShape{1, 1, 4096, 4096},
                                     MatmulShape{64, 64, 64, 64}, MatmulShape{1, 256, 256, 256}}) {
        for (const auto& impl : qdml_impls()) {
            const qdml::RunOptions options = impl.second;
            add_row("matmul/" + impl.first + "/u8s8u8/" + shape_name(shape), [=](benchmark::State& s) {
                auto& p = cached<P>(shape.batch, shape.m, shape.n, shape.k);
                time_qdml(s, p.desc, options);
                set_ops_counter(s, p.ops());
            });
        }
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
