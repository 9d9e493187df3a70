// oneDNN peers of the element-wise rows, packed 1-D (and the broadcast add):
//   dequantize_linear/onednn/{i8,u8}_f32: reorder s8/u8 -> f32 with an output
//     scale and a source zero point;
//   quantized_linear_add/onednn/{i8,u8}: binary add with per-source scales
//     (AScale/OutputScale, BScale/OutputScale) and an eltwise_linear post-op
//     adding OutputZP - (AScale*AZP + BScale*BZP)/OutputScale: oneDNN's binary
//     has no zero points, this is the same affine map in its own float order;
//   clip/onednn/{f32,i8,f16}: eltwise_clip (rows skipped where oneDNN has no
//     implementation for the type);
//   quantize_linear/onednn/f32_i8: reorder f32 -> s8 with an output scale of
//     1 / Scale and a destination zero point: x * (1/s) + zp rounded to
//     nearest even and saturated, where qdml divides (x / s): the mismatch
//     count shows the near-ties the reciprocal rounds the other way.
// dequantize_linear i8_f32 and quantized_linear_add i8 at 16777216, clip f32
// at 65536 and 16777216, also at /threads:N (issue 26, BENCH.md "Threads"):
// the same with oneDNN's OpenMP at N threads (onednn::on_threads).
#include "../problems.hpp"
#include "../quantize_problems.hpp"
#include "onednn_common.hpp"

namespace qdml_bench {
namespace {

using namespace onednn;

/// A 1-D reorder of problem p's input to its output with an output scale
/// and a zero point on `zp_arg` (DNNL_ARG_SRC or DNNL_ARG_DST).
template <class P>
Peer reorder(P& p, float scale, int zp_arg) try {
    const memory::dims dims{static_cast<memory::dim>(p.n)};
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {scale});
    attr.set_zero_points(zp_arg, 0, {static_cast<std::int32_t>(p.zero_point[0])});
    auto src = make_memory(dims, tag::a, p.input.data());
    auto dst = make_memory(dims, tag::a, p.output.data());
    dnnl::reorder::primitive_desc pd(engine(), src.get_desc(), engine(), dst.get_desc(), attr);
    return peer_of(dnnl::reorder(pd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, pd.impl_info_str());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

template <class TIn>
Peer dequantize(DequantizeProblem<TIn, float>& p) {
    return reorder(p, p.scale[0], DNNL_ARG_SRC);
}

template <class T>
Peer add(AddProblem<T>& p, Layout l) try {
    const auto n = static_cast<memory::dim>(p.n);
    const auto s = nchw_of(p.n);
    const memory::dims dims = l == Layout::packed ? memory::dims{n} : memory::dims{1, s[1], s[2], s[3]};
    const memory::dims b_dims = l == Layout::packed ? dims : memory::dims{1, 1, s[2], s[3]};
    const tag layout = l == Layout::packed ? tag::a : tag::abcd;
    auto a = make_memory(dims, layout, p.a.data());
    auto b = make_memory(b_dims, layout, p.b.data());
    auto out = make_memory(dims, layout, p.output.data());
    dnnl::primitive_attr attr;
    attr.set_scales(DNNL_ARG_SRC_0, 0, {p.p.a_scale / p.p.out_scale});
    attr.set_scales(DNNL_ARG_SRC_1, 0, {p.p.b_scale / p.p.out_scale});
    dnnl::post_ops ops;
    const float shift = static_cast<float>(p.p.out_zp) -
                        (p.p.a_scale * static_cast<float>(p.p.a_zp) + p.p.b_scale * static_cast<float>(p.p.b_zp)) /
                            p.p.out_scale;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, shift);
    attr.set_post_ops(ops);
    dnnl::binary::desc d(dnnl::algorithm::binary_add, a.get_desc(), b.get_desc(), out.get_desc());
    dnnl::binary::primitive_desc pd(d, attr, engine());
    return peer_of(dnnl::binary(pd), {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, out}},
                   pd.impl_info_str());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

template <class T>
Peer clip(ClipProblem<T>& p) try {
    const memory::dims dims{static_cast<memory::dim>(p.n)};
    auto src = make_memory(dims, tag::a, p.input.data());
    auto dst = make_memory(dims, tag::a, p.output.data());
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_clip, src.get_desc(),
                                  p.desc.Min, p.desc.Max);
    dnnl::eltwise_forward::primitive_desc pd(d, engine());
    return peer_of(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.impl_info_str());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

Peer quantize(QuantizeLinearProblem<std::int8_t>& p) {
    return reorder(p, 1.0f / p.scale[0], DNNL_ARG_DST);
}

template <class TIn>
void dequantize_rows(const std::string& types, std::uint32_t n) {
    register_element_wise_peer<DequantizeProblem<TIn, float>>("dequantize_linear", "onednn", types, n, Layout::packed,
                                                              dequantize<TIn>);
}
[[maybe_unused]] const bool registered = [] {
    for (std::uint32_t n : {65536u, 16777216u})
        register_element_wise_peer<QuantizeLinearProblem<std::int8_t>>("quantize_linear", "onednn", "f32_i8", n,
                                                                       Layout::packed, quantize);
    register_element_wise_peers(
        "onednn", dequantize<std::int8_t>, dequantize<std::uint8_t>, [](auto& p, Layout l) { return add(p, l); },
        [](auto& p) { return clip(p); });
    register_element_wise_peers_threads(
        "onednn",
        [](DequantizeProblem<std::int8_t, float>& p, unsigned threads) {
            return on_threads<DequantizeProblem<std::int8_t, float>>(threads, dequantize<std::int8_t>)(p);
        },
        [](AddProblem<std::int8_t>& p, unsigned threads) {
            return on_threads<AddProblem<std::int8_t>>(threads, [](auto& q) { return add(q, Layout::packed); })(p);
        },
        [](ClipProblem<float>& p, unsigned threads) {
            return on_threads<ClipProblem<float>>(threads, [](auto& q) { return clip(q); })(p);
        });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
