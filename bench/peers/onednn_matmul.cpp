// oneDNN peer of the matmul rows: matmul/onednn/u8s8u8/<shape>, u8 src with
// a zero point, s8 weights reordered once (outside the timed loop) into the
// layout the primitive asks for (format_tag::any), u8 dst with a zero point,
// one output scale fp32(AScale*BScale)/OutputScale (qdml's multiplier).
// Batched shapes are 3-D, as qdml's desc.
#include "../problems.hpp"
#include "onednn_common.hpp"

namespace qdml_bench {
namespace {

using namespace onednn;
using P = MatmulProblem<std::uint8_t, std::int8_t, std::uint8_t>;

Peer matmul(P& p) try {
    const auto d = [&](std::uint32_t r, std::uint32_t c) {
        return p.batch > 1 ? memory::dims{p.batch, r, c} : memory::dims{r, c};
    };
    const tag plain = p.batch > 1 ? tag::abc : tag::ab;
    auto a = make_memory(d(p.M, p.K), plain, p.a.data());
    auto b_user = make_memory(d(p.K, p.N), plain, p.b.data());
    auto out = make_memory(d(p.M, p.N), plain, p.output.data());
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {p.multiplier()});
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.a_zp});
    attr.set_zero_points(DNNL_ARG_DST, 0, {p.out_zp});
    const memory::desc b_any(d(p.K, p.N), dt::s8, tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a.get_desc(), b_any, out.get_desc()), attr, engine());
    memory b(pd.weights_desc(), engine());
    dnnl::reorder(b_user, b).execute(stream(), b_user, b);
    stream().wait();
    Peer peer = peer_of(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, out}},
                        pd.impl_info_str());
    return peer;
} catch (const dnnl::error& e) {
    return unsupported(e);
}

[[maybe_unused]] const bool registered = [] {
    for (const MatmulShape& m : matmul_shapes())
        register_peer_row<P>("matmul/onednn/u8s8u8/" + m.name(), benchmark::kMicrosecond, matmul, m.batch, m.m, m.n,
                             m.k);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
