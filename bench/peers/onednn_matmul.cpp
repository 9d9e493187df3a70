// oneDNN peer of the matmul rows: matmul/onednn/<types>/<shape>, src with a
// zero point, weights reordered once (outside the timed loop) into the
// layout the primitive asks for (format_tag::any), dst with a zero point,
// one output scale fp32(AScale*BScale)/OutputScale (qdml's multiplier).
// Batched shapes are 3-D, as qdml's desc. (u8 weights with a zero point:
// oneDNN 2.6 has no such matmul; the u8u8u8 row is skipped with its message.)
// matmul/onednn/u8s8u8/<shape>/threads:N (issue 26, BENCH.md "Threads"): the
// same with oneDNN's OpenMP at N threads (onednn::on_threads).
// The integer family (issue 27), B reordered once the same way:
//   matmul_integer/onednn/u8s8s32/{1024x1024x1024,1x4096x4096}
//       src zero point (the problem's AZeroPoint), s32 dst, no output scale:
//       MATRIX_MULTIPLY_INTEGER exactly (mismatches against qdml's reference).
//   matmul_integer_to_float/onednn/u8s8f32/{1024x1024x1024,128x768x3072}
//       src zero point, output scales per column (mask 1 << 1)
//       fp32(AScale * BScale[n]), then the bias row {1, N} f32 added by a
//       binary_add post-op: fp32(acc) * scale + Bias, as the exact profile.
//       (The matmul's own bias argument is added before the output scales in
//       oneDNN 2.6, scale * (acc + bias): not this operation.) oneDNN 2.6's CPU
//       matmul takes a weights zero point per tensor only; the problem's are
//       per column, so this peer has none: it times the same work (a zero
//       point folds into the column sums at the same cost) but computes a
//       different result. The row is timing only: its `mismatches` (and the
//       label, which says so) count against qdml's exact-profile reference of
//       the same problem without BZeroPoint, computed once.
#include "../models.hpp"
#include "../problems.hpp"
#include "onednn_common.hpp"

namespace qdml_bench {
namespace {

using namespace onednn;
/// The matmul of P's plain A, B and output (2-D, or 3-D when batched) with
/// `attr`, B reordered once into the layout the primitive asks for;
/// `reorder_b` false (the model suite's activation B: BERT's attention
/// products): B in its plain layout, read by every call, no reorder.
/// `extra`: further arguments (post-op inputs).
template <class P>
Peer matmul_with(P& p, const dnnl::primitive_attr& attr, bool reorder_b,
                 std::unordered_map<int, memory> extra = {}) {
    const auto d = [&](std::uint32_t r, std::uint32_t c) {
        return p.batch > 1 ? memory::dims{p.batch, r, c} : memory::dims{r, c};
    };
    const tag plain = p.batch > 1 ? tag::abc : tag::ab;
    auto a = make_memory(d(p.M, p.K), plain, p.a.data());
    auto b_user = make_memory(d(p.K, p.N), plain, p.b.data());
    auto out = make_memory(d(p.M, p.N), plain, p.output.data());
    const memory::desc b_any(d(p.K, p.N), data_type<typename P::B>(), tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a.get_desc(), reorder_b ? b_any : b_user.get_desc(),
                                                        out.get_desc()),
                                    attr, engine());
    memory b = b_user;
    if (reorder_b) {
        b = memory(pd.weights_desc(), engine());
        dnnl::reorder(b_user, b).execute(stream(), b_user, b);
        stream().wait();
    }
    extra.insert({{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, out}});
    return peer_of(dnnl::matmul(pd), std::move(extra), pd.impl_info_str());
}

template <class P>
Peer matmul_b(P& p, bool reorder_b) try {
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {p.multiplier()});
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.a_zp});
    attr.set_zero_points(DNNL_ARG_DST, 0, {p.out_zp});
    if (p.desc.BZeroPointTensor) attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {p.b_zp});
    return matmul_with(p, attr, reorder_b);
} catch (const dnnl::error& e) {
    return unsupported(e);
}

template <class P>
Peer matmul(P& p) {
    return matmul_b(p, true);
}

/// matmul_integer/onednn: the src zero point, s32 dst, nothing else (the
/// problems' B is s8, without a zero point).
Peer matmul_integer(MatmulIntegerProblem<std::uint8_t, std::int8_t>& p) try {
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.a_zp});
    return matmul_with(p, attr, true);
} catch (const dnnl::error& e) {
    return unsupported(e);
}

/// matmul_integer_to_float/onednn: the src zero point, per-column output
/// scales fp32(AScale * BScale[n]), the bias row by a binary_add post-op; no
/// weights zero point (the file's comment: timing only).
Peer matmul_integer_to_float(MatmulIntegerToFloatProblem<std::uint8_t, std::int8_t>& p) try {
    std::vector<float> scales(p.N);
    for (std::uint32_t n = 0; n < p.N; ++n) scales[n] = p.a_scale[0] * p.b_scale[n];
    dnnl::primitive_attr attr;
    attr.set_output_scales(1 << 1, scales);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.a_zp[0]});
    const memory::desc bias({1, p.N}, dt::f32, tag::ab);
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, bias);
    attr.set_post_ops(ops);
    Peer peer = matmul_with(p, attr, true,
                            {{DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                              memory(bias, engine(), p.bias.data())}});
    peer.info += ", no BZeroPoint (timing only; checked against the exact reference without it)";
    const auto& expected = p.expected_without_b_zero_point();
    peer.mismatches = [&p, &expected] { return count_mismatches(p.output.data(), expected.data(), p.output.size()); };
    return peer;
} catch (const dnnl::error& e) {
    return unsupported(e);
}

[[maybe_unused]] const bool registered = [] {
    add_model_matmul("onednn", [](ModelMatmul& p, bool weights, unsigned t) {
        return on_threads<ModelMatmul>(t, [weights](ModelMatmul& q) { return matmul_b(q, weights); })(p);
    });
    for_each_matmul_row([](auto problem, const MatmulShape& m) {
        using P = typename decltype(problem)::type;
        register_peer_row<P>(matmul_row<P>("onednn", m), benchmark::kMicrosecond, matmul<P>, m.batch, m.m, m.n, m.k);
        if (q8_types<typename P::A, typename P::B, typename P::Out>() == "u8s8u8")
            for (const unsigned threads : thread_counts())
                register_peer_row<P>(matmul_row<P>("onednn", m) + threads_suffix(threads), benchmark::kMicrosecond,
                                     on_threads<P>(threads, matmul<P>), m.batch, m.m, m.n, m.k);
    });
    // The integer family's rows, and each at N threads (issue 26's /threads:N rows).
    using MI = MatmulIntegerProblem<std::uint8_t, std::int8_t>;
    using MF = MatmulIntegerToFloatProblem<std::uint8_t, std::int8_t>;
    for (const MatmulShape& m : matmul_integer_shapes()) {
        register_peer_row<MI>("matmul_integer/onednn/u8s8s32/" + m.name(), benchmark::kMicrosecond, matmul_integer,
                              m.batch, m.m, m.n, m.k);
        for (const unsigned threads : thread_counts())
            register_peer_row<MI>("matmul_integer/onednn/u8s8s32/" + m.name() + threads_suffix(threads),
                                  benchmark::kMicrosecond, on_threads<MI>(threads, matmul_integer), m.batch, m.m,
                                  m.n, m.k);
    }
    for (const MatmulShape& m : matmul_integer_to_float_shapes()) {
        register_peer_row<MF>("matmul_integer_to_float/onednn/u8s8f32/" + m.name(), benchmark::kMicrosecond,
                              matmul_integer_to_float, m.batch, m.m, m.n, m.k);
        for (const unsigned threads : thread_counts())
            register_peer_row<MF>("matmul_integer_to_float/onednn/u8s8f32/" + m.name() + threads_suffix(threads),
                                  benchmark::kMicrosecond, on_threads<MF>(threads, matmul_integer_to_float), m.batch,
                                  m.m, m.n, m.k);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
