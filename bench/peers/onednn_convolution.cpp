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
//   conv_integer/onednn/u8s8s32/<shape>_nhwc  (issue 27) CONVOLUTION_INTEGER:
//                                        u8 src with its zero point, s8 weights
//                                        reordered once, s32 dst, no bias or
//                                        scale, src and dst in NHWC; checked
//                                        against qdml's reference;
//   conv_integer/onednn_e2e/u8s8s32/<shape>_nchw  the same from and to NCHW,
//                                        the reorders timed (as conv/onednn_e2e).
//   conv/onednn/u8s8u8/<shape>_ncw       (issue 27) one spatial dimension:
//                                        the same operation on 3-D memory
//                                        {N, C, W}, src and dst in NWC (its
//                                        preferred int8 layout) over an NWC
//                                        copy of qdml's NCW input; the output
//                                        transposed back to NCW is checked.
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

/// The convolution of problem P's shape and filter with `attr`, dst of type
/// `out`, with P's s32 bias when it has one (ConvProblem), none otherwise
/// (ConvIntegerProblem); the weights reordered once into the primitive's layout.
template <class P>
Conv make_conv_with(P& p, const dnnl::primitive_attr& attr, dt out, tag layout) {
    const auto& s = p.shape;
    const memory::dim g = s.groups, oc = s.cout, ic = s.cin, k = s.kh, o = s.out_hw();
    memory::dims src{1, ic, s.hw, s.hw}, dst{1, oc, o, o};
    memory::dims w = g > 1 ? memory::dims{g, oc / g, ic / g, k, k} : memory::dims{oc, ic, k, k};
    memory::dims st{s.stride, s.stride}, pad{s.pad(), s.pad()};
    if (s.one_d)  // one spatial dimension: {N, C, W}, {O, I, K}, one stride and padding
        for (memory::dims* d : {&src, &dst, &w, &st, &pad}) d->pop_back();
    constexpr bool with_bias = std::is_same_v<P, ConvProblem>;
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    const memory::desc src_d{src, dt::u8, layout}, w_d{w, dt::s8, tag::any}, dst_d{dst, out, layout};
    const auto d = with_bias ? dnnl::convolution_forward::desc(prop, alg, src_d, w_d, {{oc}, dt::s32, tag::x}, dst_d,
                                                               st, pad, pad)
                             : dnnl::convolution_forward::desc(prop, alg, src_d, w_d, dst_d, st, pad, pad);
    Conv c{dnnl::convolution_forward::primitive_desc(d, attr, engine()), {}, {}};
    const tag w_tag = s.one_d ? (g > 1 ? tag::goiw : tag::oiw) : (g > 1 ? tag::goihw : tag::oihw);
    auto w_user = make_memory(w, w_tag, p.filter.data());
    c.weights = memory(c.pd.weights_desc(), engine());
    dnnl::reorder(w_user, c.weights).execute(stream(), w_user, c.weights);
    stream().wait();
    if constexpr (with_bias) c.bias = make_memory({oc}, tag::x, p.bias.data());
    return c;
}

Conv make_conv(ConvProblem& p, tag layout) {
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {p.multiplier()});
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.in_zp});
    attr.set_zero_points(DNNL_ARG_DST, 0, {p.out_zp});
    return make_conv_with(p, attr, dt::u8, layout);
}

/// The conv over `src` and `dst` in the primitive's layout (the bias argument
/// only when the primitive has one).
Peer conv_over(const Conv& c, const void* src_data, void* dst_data) {
    auto src = memory(c.pd.src_desc(), engine(), const_cast<void*>(src_data));
    auto dst = memory(c.pd.dst_desc(), engine(), dst_data);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, dst}};
    if (c.bias) args.insert({DNNL_ARG_BIAS, c.bias});
    return peer_of(dnnl::convolution_forward(c.pd), std::move(args), c.pd.impl_info_str());
}

Peer nhwc(ConvProblem& p) try {
    return conv_over(make_conv(p, tag::nhwc), p.input.data(), p.output.data());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

/// conv_integer/onednn: the src zero point, s32 dst, no bias, no scale.
Conv make_conv_integer(ConvIntegerProblem& p, tag layout) {
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {p.in_zp});
    return make_conv_with(p, attr, dt::s32, layout);
}

Peer conv_integer_nhwc(ConvIntegerProblem& p) try {
    return conv_over(make_conv_integer(p, tag::nhwc), p.input.data(), p.output.data());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

/// Writes the transpose of the {rows, cols} matrix `from` into `to` (one
/// image's {C, W} <-> {W, C}).
void transpose(const std::uint8_t* from, std::uint8_t* to, std::size_t rows, std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) to[c * rows + r] = from[r * cols + c];
}

/// conv/onednn/.../_ncw (issue 27): the one-spatial-dimension conv in NWC,
/// oneDNN's preferred int8 layout (what format_tag::any picks for src and
/// dst, as NHWC for the 2-D rows; on NCW memory oneDNN 2.6 runs its
/// ref_int8), over its own NWC copy of the problem's NCW input (made once,
/// outside the timed loop) into its own NWC output, which is transposed into
/// the problem's NCW output to be checked.
Peer nwc(ConvProblem& p) try {
    const auto& s = p.shape;
    using Bytes = Buffer<std::uint8_t>;
    auto nwc_data = std::make_shared<std::pair<Bytes, Bytes>>(Bytes(p.input.size()), Bytes(p.output.size()));
    transpose(p.input.data(), nwc_data->first.data(), s.cin, s.hw);
    Peer peer = conv_over(make_conv(p, tag::nwc), nwc_data->first.data(), nwc_data->second.data());
    peer.mismatches = [&p, nwc_data, ow = std::size_t{s.out_hw()}, oc = std::size_t{s.cout}] {
        transpose(nwc_data->second.data(), p.output.data(), ow, oc);
        return count_mismatches(p.output.data(), p.expected.data(), p.output.size());
    };
    peer.keep = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(std::move(peer.keep),
                                                                                          std::move(nwc_data));
    return peer;
} catch (const dnnl::error& e) {
    return unsupported(e);
}

/// Problem p's conv `c` (layouts tag::any) from and to p's packed NCHW
/// buffers: the src and dst reorders timed with it.
template <class P>
Peer end_to_end(P& p, const Conv& c) {
    const auto& s = p.shape;
    auto user_src = make_memory({1, s.cin, s.hw, s.hw}, tag::nchw, p.input.data());
    auto user_dst = make_memory({1, s.cout, s.out_hw(), s.out_hw()}, tag::nchw, p.output.data());
    auto src = memory(c.pd.src_desc(), engine());
    auto dst = memory(c.pd.dst_desc(), engine());
    auto state = std::make_shared<std::tuple<dnnl::reorder, dnnl::convolution_forward, dnnl::reorder, Conv>>(
        dnnl::reorder(user_src, src), dnnl::convolution_forward(c.pd), dnnl::reorder(dst, user_dst), c);
    Peer peer;
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, dst}};
    if (c.bias) args.insert({DNNL_ARG_BIAS, c.bias});
    peer.call = [st = state.get(), user_src, src, dst, user_dst, args]() mutable {
        std::get<0>(*st).execute(stream(), user_src, src);
        std::get<1>(*st).execute(stream(), args);
        std::get<2>(*st).execute(stream(), dst, user_dst);
        stream().wait();
    };
    peer.info = std::string("onednn:") + c.pd.impl_info_str() + " + reorders";
    peer.keep = state;
    return peer;
}

Peer nchw_end_to_end(ConvProblem& p) try {
    return end_to_end(p, make_conv(p, tag::any));
} catch (const dnnl::error& e) {
    return unsupported(e);
}

Peer conv_integer_nchw_end_to_end(ConvIntegerProblem& p) try {
    return end_to_end(p, make_conv_integer(p, tag::any));
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
    for (const ConvShape& c : conv_1d_shapes())
        register_peer_row<ConvProblem>("conv/onednn/u8s8u8/" + c.name(), benchmark::kMillisecond, nwc, c);
    for (const ConvShape& c : conv_integer_shapes())
        register_peer_row<ConvIntegerProblem>(std::string("conv_integer/") + (c.nhwc ? "onednn" : "onednn_e2e") +
                                                  "/u8s8s32/" + c.name(),
                                              benchmark::kMillisecond,
                                              c.nhwc ? conv_integer_nhwc : conv_integer_nchw_end_to_end, c);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
