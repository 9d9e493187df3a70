// gemmlowp peer of the matmul rows with a u8 A and output: matmul/gemmlowp/
// {u8s8u8,u8u8u8}/<shape>, a u8 x u8 GEMM with offsets (-AZP; -BZP, or -128
// for an s8 B handed over as b + 128: the same values) and its output pipeline: requantize by a fixed-point multiplier
// and shift (gemmlowp's own rounding of qdml's float multiplier), add the
// output zero point, saturate to u8. One thread; B is transposed to the
// column-major layout gemmlowp's L8R8 kernels prefer outside the timed loop
// (gemmlowp packs per call: there is no prepared form).
#include <gemmlowp/public/gemmlowp.h>

#include <cmath>

#include "../problems.hpp"

namespace qdml_bench {
namespace {

struct Gemmlowp {
    gemmlowp::GemmContext context;
    std::vector<std::uint8_t> b_colmajor;  // per batch: K x N column-major
    std::tuple<gemmlowp::OutputStageQuantizeDownInt32ByFixedPoint, gemmlowp::OutputStageSaturatingCastToUint8>
        pipeline;
};

template <class P>
Peer gemm(P& p) {
    constexpr bool shift_b = std::is_signed_v<typename P::B>;  // b + 128 in u8
    const int b_offset = shift_b ? -128 : -static_cast<int>(p.b_zp);
    auto g = std::make_shared<Gemmlowp>();
    g->context.set_max_num_threads(1);
    g->b_colmajor.resize(std::size_t{p.batch} * p.K * p.N);
    for (std::size_t i = 0; i < p.batch; ++i)
        for (std::uint32_t k = 0; k < p.K; ++k)
            for (std::uint32_t n = 0; n < p.N; ++n)
                g->b_colmajor[(i * p.N + n) * p.K + k] =
                    static_cast<std::uint8_t>(p.b[(i * p.K + k) * p.N + n] + (shift_b ? 128 : 0));
    // multiplier = q * 2^(exp - 31), q in [2^30, 2^31): gemmlowp's form.
    int exp = 0;
    const double frac = std::frexp(static_cast<double>(p.multiplier()), &exp);
    auto& quantize = std::get<0>(g->pipeline);
    quantize.result_fixedpoint_multiplier = static_cast<std::int32_t>(std::lround(frac * 2147483648.0));
    quantize.result_shift = -exp;
    quantize.result_offset_after_shift = p.out_zp;
    Peer peer;
    peer.call = [g = g.get(), &p, b_offset] {
        for (std::size_t i = 0; i < p.batch; ++i) {
            gemmlowp::MatrixMap<const std::uint8_t, gemmlowp::MapOrder::RowMajor> lhs(
                p.a.data() + i * p.M * p.K, p.M, p.K);
            gemmlowp::MatrixMap<const std::uint8_t, gemmlowp::MapOrder::ColMajor> rhs(
                g->b_colmajor.data() + i * p.K * p.N, p.K, p.N);
            gemmlowp::MatrixMap<std::uint8_t, gemmlowp::MapOrder::RowMajor> result(
                p.output.data() + i * p.M * p.N, p.M, p.N);
            gemmlowp::GemmWithOutputPipeline<std::uint8_t, std::uint8_t, gemmlowp::DefaultL8R8BitDepthParams>(
                &g->context, lhs, rhs, &result, -static_cast<int>(p.a_zp), b_offset, g->pipeline);
        }
    };
    peer.info = "gemmlowp:L8R8 fixed-point requantize";
    peer.keep = g;
    return peer;
}

[[maybe_unused]] const bool registered = [] {
    for_each_matmul_row([](auto problem, const MatmulShape& m) {
        using P = typename decltype(problem)::type;
        if constexpr (!std::is_signed_v<typename P::A> && !std::is_signed_v<typename P::Out>)
            register_peer_row<P>(matmul_row<P>("gemmlowp", m), benchmark::kMicrosecond, gemm<P>, m.batch, m.m, m.n,
                                 m.k);
    });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
