// XNNPACK peer of the 2-D matmul rows: matmul/xnnpack/u8s8u8/<MxNxK>,
// fully_connected_nc_qu8 (one thread). XNNPACK has no u8 x s8 operator, so
// B is handed to it as the same values in u8 with zero point 128 (b + 128,
// exact); A, the output and every scale are qdml's. XNNPACK packs the
// weights at create time, outside the timed loop.
#include "../problems.hpp"
#include "xnnpack_common.hpp"

namespace qdml_bench {
namespace {

using P = MatmulProblem<std::uint8_t, std::int8_t, std::uint8_t>;

Peer fully_connected(P& p) {
    // Kernel {N, K} (output channels first) as XNNPACK wants, re-encoded to u8.
    std::vector<std::uint8_t> kernel(std::size_t{p.N} * p.K);
    for (std::uint32_t k = 0; k < p.K; ++k)
        for (std::uint32_t n = 0; n < p.N; ++n)
            kernel[std::size_t{n} * p.K + k] = static_cast<std::uint8_t>(p.b[std::size_t{k} * p.N + n] + 128);
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, s = xnn_status_uninitialized;
    if (xnnpack::initialized()) {
        c = xnn_create_fully_connected_nc_qu8(p.K, p.N, p.K, p.N, p.a_zp, p.a_scale, 128, p.b_scale, kernel.data(),
                                              nullptr, p.out_zp, p.out_scale, 0, 255, 0, &op);
        if (op) s = xnn_setup_fully_connected_nc_qu8(op, p.M, p.a.data(), p.output.data(), nullptr);
    }
    return xnnpack::peer_of(c, s, op, "fully_connected_nc_qu8");
}

[[maybe_unused]] const bool registered = [] {
    for (const MatmulShape& m : matmul_shapes())
        if (m.batch == 1)
            register_peer_row<P>("matmul/xnnpack/u8s8u8/" + m.name(), benchmark::kMicrosecond, fully_connected,
                                 m.batch, m.m, m.n, m.k);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
