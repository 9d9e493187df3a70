// XNNPACK peer of the 2-D matmul rows: matmul/xnnpack/<types>/<MxNxK>,
// fully_connected_nc_qu8 (u8s8u8, u8u8u8) or _qs8 (s8s8s8), one thread (no
// pthreadpool).
// XNNPACK has no u8 x s8 operator, so for u8s8u8 B is handed to it as the
// same values in u8 with zero point 128 (b + 128, exact); A, the output and
// every scale and zero point are qdml's. XNNPACK packs the weights
// ({N, K}, output channels first) at create time, outside the timed loop.
// matmul/xnnpack/u8s8u8/<MxNxK>/threads:N (issue 26, BENCH.md "Threads"): the
// same operator set up and run with a pthreadpool of N (xnnpack::pool_of).
#include "../problems.hpp"
#include "xnnpack_common.hpp"

namespace qdml_bench {
namespace {

template <class P>
Peer fully_connected(P& p, unsigned threads = 1) {
    const pthreadpool_t pool = xnnpack::pool_of(threads);
    using TB = typename P::B;
    constexpr bool qs8 = std::is_signed_v<typename P::A>;
    constexpr bool shift_b = !qs8 && std::is_signed_v<TB>;  // u8s8u8: b + 128 in u8
    std::vector<TB> kernel(std::size_t{p.N} * p.K);
    for (std::uint32_t k = 0; k < p.K; ++k)
        for (std::uint32_t n = 0; n < p.N; ++n) kernel[std::size_t{n} * p.K + k] = p.b[std::size_t{k} * p.N + n];
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, s = xnn_status_uninitialized;
    if (xnnpack::initialized()) {
        if constexpr (qs8) {
            c = xnn_create_fully_connected_nc_qs8(p.K, p.N, p.K, p.N, p.a_zp, p.a_scale, p.b_scale, kernel.data(),
                                                  nullptr, p.out_zp, p.out_scale, -128, 127, 0, &op);
            if (op) s = xnn_setup_fully_connected_nc_qs8(op, p.M, p.a.data(), p.output.data(), pool);
        } else {
            std::vector<std::uint8_t> kernel_u8(kernel.size());
            for (std::size_t i = 0; i < kernel.size(); ++i)
                kernel_u8[i] = static_cast<std::uint8_t>(shift_b ? kernel[i] + 128 : kernel[i]);
            const std::uint8_t b_zp = shift_b ? 128 : static_cast<std::uint8_t>(p.b_zp);
            c = xnn_create_fully_connected_nc_qu8(p.K, p.N, p.K, p.N, p.a_zp, p.a_scale, b_zp, p.b_scale,
                                                  kernel_u8.data(), nullptr, p.out_zp, p.out_scale, 0, 255, 0, &op);
            if (op) s = xnn_setup_fully_connected_nc_qu8(op, p.M, p.a.data(), p.output.data(), pool);
        }
    }
    return xnnpack::peer_of(c, s, op, qs8 ? "fully_connected_nc_qs8" : "fully_connected_nc_qu8", pool);
}

[[maybe_unused]] const bool registered = [] {
    for_each_matmul_row([](auto problem, const MatmulShape& m) {
        using P = typename decltype(problem)::type;
        if (m.batch != 1) return;
        register_peer_row<P>(matmul_row<P>("xnnpack", m), benchmark::kMicrosecond,
                             [](P& p) { return fully_connected<P>(p); }, m.batch, m.m, m.n, m.k);
        if (q8_types<typename P::A, typename P::B, typename P::Out>() == "u8s8u8")
            for (const unsigned threads : thread_counts())
                register_peer_row<P>(matmul_row<P>("xnnpack", m) + threads_suffix(threads), benchmark::kMicrosecond,
                                     [threads](P& p) { return fully_connected<P>(p, threads); }, m.batch, m.m, m.n,
                                     m.k);
    });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
