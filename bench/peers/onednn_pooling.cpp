// oneDNN peer of the average_pooling rows: average_pooling/onednn/u8/3x3_64_56_nhwc,
// pooling_forward (forward_inference, pooling_avg_exclude_padding) on u8
// NHWC (tag::nhwc over the problem's buffers), stride 1, padding 1. oneDNN
// averages the integers (it has no scales or zero points); with the
// problem's parameters (problem_average_pooling.hpp) that is the function
// qdml computes, so its output is checked against qdml's reference.
#include "../problem_average_pooling.hpp"
#include "onednn_common.hpp"

namespace qdml_bench {
namespace {

using namespace onednn;

template <class T>
Peer average_pooling(AveragePoolingProblem<T>& p) try {
    const memory::dims dims{1, static_cast<memory::dim>(p.C), static_cast<memory::dim>(p.H),
                            static_cast<memory::dim>(p.W)};
    auto src = make_memory(dims, tag::nhwc, p.input.data());
    auto dst = make_memory(dims, tag::nhwc, p.output.data());
    const auto k = static_cast<memory::dim>(p.K), pad = static_cast<memory::dim>((p.K - 1) / 2);
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_avg_exclude_padding,
                                  src.get_desc(), dst.get_desc(), {1, 1}, {k, k}, {pad, pad}, {pad, pad});
    dnnl::pooling_forward::primitive_desc pd(d, engine());
    return peer_of(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.impl_info_str());
} catch (const dnnl::error& e) {
    return unsupported(e);
}

[[maybe_unused]] const bool registered = [] {
    register_peer_row<AveragePoolingProblem<std::uint8_t>>("average_pooling/onednn/u8/3x3_64_56_nhwc",
                                                          benchmark::kMicrosecond, average_pooling<std::uint8_t>,
                                                          64u, 56u, 3u);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
