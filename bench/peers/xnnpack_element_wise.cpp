// XNNPACK peers of the element-wise rows (one thread, no pthreadpool, but
// for the /threads:N rows below):
//   dequantize_linear/xnnpack/{i8,u8}_f32: convert_nc_qs8_f32 / qu8_f32;
//   quantized_linear_add/xnnpack/{i8,u8}: add_nd_qs8 / add_nd_qu8 (also the
//     broadcast row: B {1,1,32,32} over {1,64,32,32});
//   clip/xnnpack/{f32,i8,f16}: clamp_nc_f32 / clamp_nc_s8 / clamp_nc_f16;
//   quantize_linear/xnnpack/f32_i8: convert_nc_f32_qs8 (x * (1/s), rounded
//     to nearest even, + zp, saturated; qdml divides: the mismatch count
//     shows the near-ties the reciprocal rounds the other way).
// Same scales and zero points as qdml's problem; XNNPACK requantizes its
// own way (the mismatch count shows where).
// dequantize_linear i8_f32 and quantized_linear_add i8 at 16777216, clip f32
// at 65536 and 16777216, also at /threads:N (issue 26, BENCH.md "Threads"):
// set up and run with a pthreadpool of N (xnnpack::pool_of). (This XNNPACK's
// add_nd parallelizes over the dimensions outside the innermost one only,
// and merges the dimensions of same-shape operands into one: a 1-D add of
// 2^24 is one task, whatever the pool.)
#include "../problems.hpp"
#include "../quantize_problems.hpp"
#include "xnnpack_common.hpp"

namespace qdml_bench {
namespace {

using xnnpack::peer_of;

template <class TIn>
Peer dequantize(DequantizeProblem<TIn, float>& p, unsigned threads = 1) {
    constexpr bool s8 = std::is_signed_v<TIn>;
    const pthreadpool_t pool = xnnpack::pool_of(threads);
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, s = xnn_status_uninitialized;
    if (xnnpack::initialized()) {
        if constexpr (s8) {
            c = xnn_create_convert_nc_qs8_f32(p.n, p.n, p.n, p.scale[0], p.zero_point[0], 0, &op);
            if (op) s = xnn_setup_convert_nc_qs8_f32(op, 1, p.input.data(), p.output.data(), pool);
        } else {
            c = xnn_create_convert_nc_qu8_f32(p.n, p.n, p.n, p.scale[0], p.zero_point[0], 0, &op);
            if (op) s = xnn_setup_convert_nc_qu8_f32(op, 1, p.input.data(), p.output.data(), pool);
        }
    }
    return peer_of(c, s, op, s8 ? "convert_nc_qs8_f32" : "convert_nc_qu8_f32", pool);
}

Peer quantize(QuantizeLinearProblem<std::int8_t>& p) {
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, s = xnn_status_uninitialized;
    if (xnnpack::initialized()) {
        c = xnn_create_convert_nc_f32_qs8(p.n, p.n, p.n, p.scale[0], p.zero_point[0], -128, 127, 0, &op);
        if (op) s = xnn_setup_convert_nc_f32_qs8(op, 1, p.input.data(), p.output.data(), nullptr);
    }
    return peer_of(c, s, op, "convert_nc_f32_qs8", nullptr);
}

/// The shapes XNNPACK broadcasts like qdml's problem.
template <class T>
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> add_shapes(const AddProblem<T>& p, Layout l) {
    if (l == Layout::packed) return {{p.n}, {p.n}};
    const auto s = nchw_of(p.n);
    return {{1, s[1], s[2], s[3]}, {1, 1, s[2], s[3]}};
}

template <class T>
Peer add(AddProblem<T>& p, Layout l, unsigned threads = 1) {
    constexpr bool s8 = std::is_signed_v<T>;
    const pthreadpool_t pool = xnnpack::pool_of(threads);
    const auto& q = p.p;
    const auto [a_shape, b_shape] = add_shapes(p, l);
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, s = xnn_status_uninitialized;
    if (xnnpack::initialized()) {
        if constexpr (s8) {
            c = xnn_create_add_nd_qs8(q.a_zp, q.a_scale, q.b_zp, q.b_scale, q.out_zp, q.out_scale, -128, 127, 0, &op);
            if (op) s = xnn_setup_add_nd_qs8(op, a_shape.size(), a_shape.data(), b_shape.size(), b_shape.data(),
                                             p.a.data(), p.b.data(), p.output.data(), pool);
        } else {
            c = xnn_create_add_nd_qu8(q.a_zp, q.a_scale, q.b_zp, q.b_scale, q.out_zp, q.out_scale, 0, 255, 0, &op);
            if (op) s = xnn_setup_add_nd_qu8(op, a_shape.size(), a_shape.data(), b_shape.size(), b_shape.data(),
                                             p.a.data(), p.b.data(), p.output.data(), pool);
        }
    }
    return peer_of(c, s, op, s8 ? "add_nd_qs8" : "add_nd_qu8", pool);
}

template <class T>
Peer clip(ClipProblem<T>& p, unsigned threads = 1) {
    const pthreadpool_t pool = xnnpack::pool_of(threads);
    xnn_operator_t op = nullptr;
    xnn_status c = xnn_status_uninitialized, s = xnn_status_uninitialized;
    const float lo = p.desc.Min, hi = p.desc.Max;
    std::string what;
    if (xnnpack::initialized()) {
        if constexpr (std::is_same_v<T, float>) {
            what = "clamp_nc_f32";
            c = xnn_create_clamp_nc_f32(p.n, p.n, p.n, lo, hi, 0, &op);
            if (op) s = xnn_setup_clamp_nc_f32(op, 1, p.input.data(), p.output.data(), pool);
        } else if constexpr (std::is_same_v<T, std::int8_t>) {
            what = "clamp_nc_s8";
            c = xnn_create_clamp_nc_s8(p.n, p.n, p.n, static_cast<std::int8_t>(lo), static_cast<std::int8_t>(hi), 0,
                                       &op);
            if (op) s = xnn_setup_clamp_nc_s8(op, 1, p.input.data(), p.output.data(), pool);
        } else {
            what = "clamp_nc_f16";
            c = xnn_create_clamp_nc_f16(p.n, p.n, p.n, lo, hi, 0, &op);
            if (op) s = xnn_setup_clamp_nc_f16(op, 1, p.input.data(), p.output.data(), pool);
        }
    }
    return peer_of(c, s, op, what, pool);
}

[[maybe_unused]] const bool registered = [] {
    for (std::uint32_t n : {65536u, 16777216u})
        register_element_wise_peer<QuantizeLinearProblem<std::int8_t>>("quantize_linear", "xnnpack", "f32_i8", n,
                                                                       Layout::packed, quantize);
    register_element_wise_peers(
        "xnnpack", [](auto& p) { return dequantize(p); }, [](auto& p) { return dequantize(p); },
        [](auto& p, Layout l) { return add(p, l); }, [](auto& p) { return clip(p); });
    register_element_wise_peers_threads(
        "xnnpack", [](auto& p, unsigned threads) { return dequantize(p, threads); },
        [](auto& p, unsigned threads) { return add(p, Layout::packed, threads); },
        [](auto& p, unsigned threads) { return clip(p, threads); });
    return true;
}();

}  // namespace
}  // namespace qdml_bench
