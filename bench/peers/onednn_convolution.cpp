// oneDNN peers of the conv rows (issue 9): u8 src with a zero point, s8
// weights reordered once (outside the timed loop) into the layout the
// primitive asks for, s32 bias, u8 dst with a zero point, one output scale
// fp32(InputScale*FilterScale)/OutputScale (qdml's multiplier):
//   conv/onednn/u8s8u8/<shape>_nhwc      src and dst in NHWC, its preferred
//                                        int8 layout;
//   conv/onednn_e2e/u8s8u8/<shape>_nchw  from qdml's packed NCHW and back: the
//                                        src and dst reorders to and from the
//                                        layouts it picks are timed too.
// Both also at /threads:N (issue 26, BENCH.md "Threads"): oneDNN's OpenMP at
// N threads (onednn::on_threads).
#include "../models.hpp"
#include "../problems.hpp"
#include "onednn_common.hpp"

namespace qdml_bench {
namespace {

using namespace onednn;

/// The convolution primitive for the problem's shape, src/dst in `layout`.
struct Conv {
    dnnl::convolution_forward::primitive_desc pd;
    memory weights, bias;
};

Conv make_conv(ConvProblem& p, tag layout) {
    const auto& s = p.shape;
    const memory::dim g = s.groups, oc = s.cout, ic = s.cin, k = s.kh, o = s.out_hw();
    const memory::dims src{1, ic, s.hw, s.hw}, dst{1, oc, o, o};
    const memory::dims w = g > 1 ? memory::dims{g, oc / g, ic / g, k, k} : memory::dims{oc, ic, k, k};
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {p.multiplier()});
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.in_zp});
    attr.set_zero_points(DNNL_ARG_DST, 0, {p.out_zp});
    const memory::dim st = s.stride, pad = s.pad();
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      {src, dt::u8, layout}, {w, dt::s8, tag::any}, {{oc}, dt::s32, tag::x},
                                      {dst, dt::u8, layout}, {st, st}, {pad, pad}, {pad, pad});
    Conv c{dnnl::convolution_forward::primitive_desc(d, attr, engine()), {}, {}};
    auto w_user = make_memory(w, g > 1 ? tag::goihw : tag::oihw, p.filter.data());
    c.weights = memory(c.pd.weights_desc(), engine());
    dnnl::reorder(w_user, c.weights).execute(stream(), w_user, c.weights);
    stream().wait();
    c.bias = make_memory({oc}, tag::x, p.bias.data());
    return c;
}

Peer nhwc(ConvProblem& p) try {
    Conv c = make_conv(p, tag::nhwc);
    auto src = memory(c.pd.src_desc(), engine(), p.input.data());
    auto dst = memory(c.pd.dst_desc(), engine(), p.output.data());
    return peer_of(dnnl::convolution_forward(c.pd),
                   {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_BIAS, c.bias}, {DNNL_ARG_DST, dst}},
                   c.pd.impl_info_str());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

Peer nchw_end_to_end(ConvProblem& p) try {
    Conv c = make_conv(p, tag::any);
    const auto& s = p.shape;
    auto user_src = make_memory({1, s.cin, s.hw, s.hw}, tag::nchw, p.input.data());
    auto user_dst = make_memory({1, s.cout, s.out_hw(), s.out_hw()}, tag::nchw, p.output.data());
    auto src = memory(c.pd.src_desc(), engine());
    auto dst = memory(c.pd.dst_desc(), engine());
    auto state = std::make_shared<std::tuple<dnnl::reorder, dnnl::convolution_forward, dnnl::reorder, Conv>>(
        dnnl::reorder(user_src, src), dnnl::convolution_forward(c.pd), dnnl::reorder(dst, user_dst), c);
    Peer peer;
    peer.call = [st = state.get(), user_src, src, dst, user_dst, c]() mutable {
        std::get<0>(*st).execute(stream(), user_src, src);
        std::get<1>(*st).execute(stream(), {{DNNL_ARG_SRC, src},
                                            {DNNL_ARG_WEIGHTS, c.weights},
                                            {DNNL_ARG_BIAS, c.bias},
                                            {DNNL_ARG_DST, dst}});
        std::get<2>(*st).execute(stream(), dst, user_dst);
        stream().wait();
    };
    peer.info = std::string("onednn:") + c.pd.impl_info_str() + " + reorders";
    peer.keep = state;
    return peer;
} catch (const dnnl::error& e) {
    return unsupported(e);
}

[[maybe_unused]] const bool registered = [] {
    // The model suite (bench/models.cpp): NHWC layers as conv/onednn, NCHW as conv/onednn_e2e.
    add_model_conv("onednn", {"nhwc"}, [](ConvProblem& p, unsigned t) { return on_threads<ConvProblem>(t, nhwc)(p); });
    add_model_conv("onednn_e2e", {"nchw"},
                   [](ConvProblem& p, unsigned t) { return on_threads<ConvProblem>(t, nchw_end_to_end)(p); });
    for (const ConvShape& c : conv_shapes()) {
        const ConvShape n = c.with_layout(true);
        register_peer_row<ConvProblem>("conv/onednn/u8s8u8/" + n.name(), benchmark::kMillisecond, nhwc, n);
        register_peer_row<ConvProblem>("conv/onednn_e2e/u8s8u8/" + c.name(), benchmark::kMillisecond,
                                       nchw_end_to_end, c);
        for (const unsigned threads : thread_counts()) {
            register_peer_row<ConvProblem>("conv/onednn/u8s8u8/" + n.name() + threads_suffix(threads),
                                           benchmark::kMillisecond, on_threads<ConvProblem>(threads, nhwc), n);
            register_peer_row<ConvProblem>("conv/onednn_e2e/u8s8u8/" + c.name() + threads_suffix(threads),
                                           benchmark::kMillisecond, on_threads<ConvProblem>(threads, nchw_end_to_end),
                                           c);
        }
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
