// XNNPACK peer of the NHWC conv rows: conv/xnnpack/u8s8u8/<shape>_nhwc,
// convolution2d_nhwc_qu8 (one thread; depthwise when each group has one
// input and one output channel), and .../threads:N (issue 26, BENCH.md
// "Threads": set up and run with a pthreadpool of N, xnnpack::pool_of). XNNPACK has no u8 x s8 convolution, so the
// filter is handed to it as the same values in u8 with zero point 128
// (f + 128, exact), in its {Cout, KH, KW, Cin/G} layout; input, bias, output
// and every scale are qdml's. XNNPACK packs the filter at create time.
#include "../models.hpp"
#include "../problems.hpp"
#include "xnnpack_common.hpp"

namespace qdml_bench {
namespace {

Peer convolution(ConvProblem& p, unsigned threads = 1) {
    const pthreadpool_t pool = xnnpack::pool_of(threads);
    const auto& s = p.shape;
    const std::uint32_t gin = s.cin / s.groups, gout = s.cout / s.groups, k = s.kh;
    std::vector<std::uint8_t> kernel(std::size_t{s.cout} * k * k * gin);
    for (std::uint32_t oc = 0; oc < s.cout; ++oc)
        for (std::uint32_t ic = 0; ic < gin; ++ic)
            for (std::uint32_t y = 0; y < k; ++y)
                for (std::uint32_t x = 0; x < k; ++x)
                    kernel[((std::size_t{oc} * k + y) * k + x) * gin + ic] =
                        static_cast<std::uint8_t>(p.filter[((std::size_t{oc} * gin + ic) * k + y) * k + x] + 128);
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, st = xnn_status_uninitialized;
    if (xnnpack::initialized()) {
        const std::uint32_t pad = s.pad();
        c = xnn_create_convolution2d_nhwc_qu8(pad, pad, pad, pad, k, k, s.stride, s.stride, 1, 1, s.groups, gin, gout,
                                              s.cin, s.cout, p.in_zp, p.in_scale, 128, p.filter_scale, kernel.data(),
                                              p.bias.data(), p.out_zp, p.out_scale, 0, 255, 0, &op);
        if (op) st = xnn_setup_convolution2d_nhwc_qu8(op, 1, s.hw, s.hw, p.input.data(), p.output.data(), pool);
    }
    return xnnpack::peer_of(c, st, op, "convolution2d_nhwc_qu8", pool);
}

[[maybe_unused]] const bool registered = [] {
    add_model_conv("xnnpack", {"nhwc"}, [](ConvProblem& p, unsigned t) { return convolution(p, t); });
    for (const ConvShape& c : conv_shapes()) {
        const ConvShape n = c.with_layout(true);
        register_peer_row<ConvProblem>("conv/xnnpack/u8s8u8/" + n.name(), benchmark::kMillisecond,
                                       [](ConvProblem& p) { return convolution(p); }, n);
        for (const unsigned threads : thread_counts())
            register_peer_row<ConvProblem>("conv/xnnpack/u8s8u8/" + n.name() + threads_suffix(threads),
                                           benchmark::kMillisecond,
                                           [threads](ConvProblem& p) { return convolution(p, threads); }, n);
    }
    return true;
}();

}  // namespace
}  // namespace qdml_bench
