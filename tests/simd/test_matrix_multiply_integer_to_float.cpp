// MATRIX_MULTIPLY_INTEGER_TO_FLOAT's fast paths (qdml::simd::matrix_multiply_integer_to_float:
// the exact profile's 8-bit operands on the GEMM engine with the float epilogue, the
// directml profile's k-order binary32 rows) against the reference, bit for bit, in both
// profiles, once per micro-kernel family this CPU runs, every other run on a thread
// pool. Random shapes, the four 8-bit mixes and 16/32-bit operands, scales with long
// mantissas (and now and then NaN, infinities, zeros, subnormals), zero points absent /
// per tensor / per row / per column, a bias or none (packed, or one row repeated through
// a zero stride), FLOAT32 or FLOAT16 outputs, strided and transposed operands, batch
// broadcast; outputs sentinel-filled with guards.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qdml/qdml.hpp"
#include "qdml/simd/matrix_multiply_integer_to_float.hpp"
#include "qdml/simd/matrix_multiply_integer_to_float_prepared.hpp"
#include "support/gemm_paths.hpp"
#include "support/matmul_layout.hpp"

namespace {

using DT = qdml::TensorDataType;
using qtest::Rng;
using qtest::matmul_layout::Layout;
using qtest::matmul_layout::make_desc;
using qtest::matmul_layout::param_desc;
using qtest::matmul_layout::random_layout;

/// The operand type pairs this test runs: the four 8-bit mixes (the engine's) and three
/// wider ones (the directml profile's float rows and the exact profile's reference), each
/// with FLOAT32 and FLOAT16 (a typed dispatch of these 14 instead of qdml::visit_typed's 72
/// keeps this file's compile time down).
constexpr std::pair<DT, DT> kPairs[] = {{DT::UInt8, DT::Int8},  {DT::UInt8, DT::UInt8},  {DT::Int8, DT::Int8},
                                        {DT::Int8, DT::UInt8},  {DT::Int32, DT::Int8},   {DT::UInt16, DT::Int16},
                                        {DT::Int32, DT::UInt32}};

template <class F>
void typed(const qdml::MatrixMultiplyIntegerToFloatDesc& d, F&& f) {
    using qdml::float16;
    const DT ta = d.ATensor.Desc.DataType, tb = d.BTensor.Desc.DataType;
    auto with = [&](auto a, auto b) {
        using A = decltype(a);
        using B = decltype(b);
        if (d.OutputTensor.Desc.DataType == DT::Float16)
            f(qdml::MatrixMultiplyIntegerToFloat<A, B, float16>::bind_validated(d));
        else
            f(qdml::MatrixMultiplyIntegerToFloat<A, B, float>::bind_validated(d));
    };
    if (ta == DT::UInt8 && tb == DT::Int8) with(std::uint8_t{}, std::int8_t{});
    else if (ta == DT::UInt8 && tb == DT::UInt8) with(std::uint8_t{}, std::uint8_t{});
    else if (ta == DT::Int8 && tb == DT::Int8) with(std::int8_t{}, std::int8_t{});
    else if (ta == DT::Int8 && tb == DT::UInt8) with(std::int8_t{}, std::uint8_t{});
    else if (ta == DT::Int32 && tb == DT::Int8) with(std::int32_t{}, std::int8_t{});
    else if (ta == DT::UInt16 && tb == DT::Int16) with(std::uint16_t{}, std::int16_t{});
    else if (ta == DT::Int32 && tb == DT::UInt32) with(std::int32_t{}, std::uint32_t{});
    else FAIL("a type pair outside kPairs");
}

struct Problem {
    DT ta = DT::UInt8, tb = DT::Int8, tf = DT::Float32;
    std::uint32_t rank = 2, batch = 1, channels = 1, M = 1, N = 1, K = 1;
    Layout la, lb, lout;
    bool per_row_a = false, per_col_b = false, a_zps = true, b_zps = true, bias = true, bias_row = false;
    bool specials = false;
    std::vector<std::uint8_t> a, b, a_zp, b_zp, a_scale, b_scale, bias_buf;
    qtest::GuardedBuffer out;
    qdml::MatrixMultiplyIntegerToFloatDesc d;

    std::string describe() const {
        std::ostringstream os;
        os << name(ta) << " x " << name(tb) << " -> " << name(tf) << " rank " << rank << " " << batch << "x"
           << channels << "x" << M << "x" << N << "x" << K << " A{T" << la.transposed << " pad" << la.pad << " bb"
           << la.bcast_batch << "} B{T" << lb.transposed << " pad" << lb.pad << " bb" << lb.bcast_batch << " bc"
           << lb.bcast_channel << "} Out{T" << lout.transposed << " pad" << lout.pad << "} scales "
           << (per_row_a ? "row" : "tensor") << "/" << (per_col_b ? "column" : "tensor") << " zp " << a_zps << b_zps
           << " bias " << bias << (bias_row ? " (a repeated row)" : "") << (specials ? " specials" : "");
        return os.str();
    }

    void build(Rng& rng) {
        const std::uint32_t sa[4] = {batch, channels, M, K}, sb[4] = {batch, channels, K, N},
                            so[4] = {batch, channels, M, N};
        const qdml::TensorDesc da = make_desc(ta, rank, sa, la), db = make_desc(tb, rank, sb, lb),
                               dout = make_desc(tf, rank, so, lout);
        const std::size_t ea = qdml::element_size(ta), eb = qdml::element_size(tb), ef = qdml::element_size(tf);
        a.resize(*qdml::min_buffer_elements(da) * ea);
        b.resize(*qdml::min_buffer_elements(db) * eb);
        a_zp.resize(M * ea);
        b_zp.resize(N * eb);
        for (auto* v : {&a, &b, &a_zp, &b_zp})
            for (auto& x : *v) x = rng.byte();
        // Wide operands: now and then values of a few bits only (sums that stay exact in binary32).
        if (ea > 1 && rng.coin(2))
            for (std::size_t i = 0; i < a.size(); ++i) a[i] = i % ea == 0 ? a[i] : 0;
        auto put = [&](std::vector<std::uint8_t>& buf, std::size_t i, float v) {
            if (tf == DT::Float16) {
                const qdml::float16 h(v);
                std::memcpy(buf.data() + 2 * i, &h, 2);
            } else {
                std::memcpy(buf.data() + 4 * i, &v, 4);
            }
        };
        const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, 1e-40f, 3e38f};
        auto value = [&](float scale) {
            if (specials && rng.coin(5)) return special[rng.uniform(0, 7)];
            const float m = 1.0f + static_cast<float>(rng.uniform(0, (1 << 23) - 1)) * 0x1p-23f;
            return (rng.coin(4) ? -m : m) * std::ldexp(scale, static_cast<int>(rng.uniform(0, 8)) - 4);
        };
        a_scale.assign(M * ef, 0);
        b_scale.assign(N * ef, 0);
        for (std::uint32_t i = 0; i < M; ++i) put(a_scale, i, value(0.01f));
        for (std::uint32_t i = 0; i < N; ++i) put(b_scale, i, value(0.01f));
        out.assign(*qdml::min_buffer_elements(dout) * ef);
        d = {};
        d.ATensor = {da, a.data()};
        d.BTensor = {db, b.data()};
        d.OutputTensor = {dout, out.data()};
        d.AScaleTensor = qdml::Tensor{param_desc(tf, rank, 2, per_row_a ? M : 1), a_scale.data()};
        d.BScaleTensor = qdml::Tensor{param_desc(tf, rank, 3, per_col_b ? N : 1), b_scale.data()};
        if (a_zps) d.AZeroPointTensor = qdml::Tensor{param_desc(ta, rank, 2, per_row_a ? M : 1), a_zp.data()};
        if (b_zps) d.BZeroPointTensor = qdml::Tensor{param_desc(tb, rank, 3, per_col_b ? N : 1), b_zp.data()};
        if (bias) {
            Layout lbias;
            lbias.bcast_rows = bias_row;
            const qdml::TensorDesc dbias = make_desc(tf, rank, so, lbias);
            const std::size_t n = *qdml::min_buffer_elements(dbias);
            bias_buf.assign(n * ef, 0);
            for (std::size_t i = 0; i < n; ++i) put(bias_buf, i, value(100.0f));
            d.BiasTensor = qdml::Tensor{dbias, bias_buf.data()};
        }
    }
};

void check_all_paths(Problem& p) {
    INFO(p.describe());
    qdml::validate(p.d);
    qtest::gemm_paths::require_same_in_both_profiles(
        p.out,
        [&](qdml::Fidelity f) {
            typed(p.d, [&](const auto& op) { qdml::reference::matrix_multiply_integer_to_float(op, f); });
        },
        [&](const qdml::simd::GemmOptions& o) {
            typed(p.d, [&](const auto& op) { qdml::simd::matrix_multiply_integer_to_float(op, o); });
        },
        qdml::element_size(p.tf));
}

Problem random_problem(Rng& rng, int iter, bool big) {
    Problem p;
    const auto& pair = kPairs[iter % 7];
    p.ta = pair.first;
    p.tb = pair.second;
    p.tf = rng.coin(4) ? DT::Float16 : DT::Float32;
    p.rank = rng.uniform(2, 4);
    p.batch = p.rank == 4 ? rng.uniform(1, 3) : 1;
    p.channels = p.rank >= 3 ? rng.uniform(1, 3) : 1;
    p.M = rng.size(big ? 200 : 40);
    p.N = rng.size(big ? 200 : 70);
    p.K = rng.size(big ? 300 : 140);
    p.la = random_layout(rng, false);
    p.lb = random_layout(rng, false);
    p.la.bcast_rows = p.lb.bcast_rows = false;
    p.lout = random_layout(rng, true);
    p.per_row_a = rng.coin(2);
    p.per_col_b = rng.coin(2);
    p.a_zps = !rng.coin(4);
    p.b_zps = !rng.coin(4);
    p.bias = !rng.coin(3);
    p.bias_row = rng.coin(3);
    p.specials = rng.coin(8);
    p.build(rng);
    return p;
}

/// The first byte where `got` differs from `want` (their size if none),
/// elements of `e` bytes that are NaN in both counting as equal.
std::size_t first_difference(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want,
                             std::size_t e) {
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) {
            const std::size_t at = i - i % e;
            if (at + e > got.size() || !qtest::gemm_paths::both_nan(&got[at], &want[at], e)) return i;
            i = at + e - 1;
        }
    return got.size();
}

}  // namespace

TEST_CASE("simd matmul integer to float: random shapes, types, layouts, scales and biases equal the reference on "
          "every path, in both profiles",
          "[simd][matmul_integer_to_float]") {
    Rng rng(qtest::case_seed(290));
    for (int iter = 0; iter < 80; ++iter) {
        Problem p = random_problem(rng, iter, iter % 16 == 15);
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul integer to float: outputs of several row blocks (M x N above the exact profile's block), "
          "per-row scales and zero points, batches",
          "[simd][matmul_integer_to_float]") {
    // The exact profile cuts each product into blocks of rows whose int32
    // sums take about 256 KiB (simd/matrix_multiply_integer_to_float.hpp's
    // mmitf_block_rows): these shapes make two to five blocks, the last one
    // short (33 = 32 + 1 rows), so every block reads its own rows' A, zero
    // points and scales.
    Rng rng(qtest::case_seed(287));
    struct Shape {
        std::uint32_t rank, batch, channels, M, N, K;
    };
    const Shape shapes[] = {{2, 1, 1, 100, 1500, 24}, {2, 1, 1, 33, 4096, 8}, {4, 2, 1, 70, 2100, 5},
                            {3, 1, 2, 129, 1024, 3}};
    int iter = 0;
    for (const Shape& sh : shapes)
        for (int mix = 0; mix < 2; ++mix, ++iter) {
            Problem p;
            p.ta = mix ? DT::Int8 : DT::UInt8;
            p.tb = mix ? DT::UInt8 : DT::Int8;
            p.rank = sh.rank;
            p.batch = sh.batch;
            p.channels = sh.channels;
            p.M = sh.M;
            p.N = sh.N;
            p.K = sh.K;
            p.per_row_a = true;
            p.per_col_b = iter % 2 == 0;
            p.la.transposed = iter % 3 == 1;
            p.lout.pad = iter % 3 == 2 ? 5 : 0;
            p.bias_row = iter % 2 == 1;
            p.build(rng);
            check_all_paths(p);
        }
}

TEST_CASE("simd matmul integer to float: sums that wrap in the exact profile (K 40000, extreme 8-bit values)",
          "[simd][matmul_integer_to_float]") {
    Rng rng(qtest::case_seed(291));
    for (int variant = 0; variant < 2; ++variant) {
        Problem p;
        p.ta = variant ? DT::Int8 : DT::UInt8;
        p.tb = DT::UInt8;
        p.M = 3;
        p.N = 5;
        p.K = 40000;
        p.build(rng);
        // A - AZP = 255 or -255 and B - BZP = 255: |sum| = 65025 * 40000, past 2^31.
        std::memset(p.a.data(), variant ? 0x80 : 0xFF, p.a.size());
        std::memset(p.b.data(), 0xFF, p.b.size());
        std::memset(p.a_zp.data(), variant ? 0x7F : 0x00, p.a_zp.size());
        std::memset(p.b_zp.data(), 0x00, p.b_zp.size());
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul integer to float prepared: B's side read once, executed with new A three times, same bits as "
          "the reference in both profiles on every path",
          "[simd][matmul_integer_to_float][prepared]") {
    // After initialize, B's, BScale's and BZeroPoint's buffers are
    // overwritten: execute must read none of them (the exact profile's wide
    // operands, which the reference computes, read B's side on every call:
    // they are left as they were; qdml::compile's form copies it: the unit
    // test). NaN outputs of other payloads count as equal, as in check_all_paths.
    Rng rng(qtest::case_seed(285));
    for (int iter = 0; iter < 28; ++iter) {
        Problem p = random_problem(rng, iter, iter % 14 == 13);
        const std::vector<std::uint8_t> b0 = p.b, b_zp0 = p.b_zp, b_scale0 = p.b_scale;
        for (const qdml::Fidelity f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
            const bool engine = qdml::element_size(p.ta) == 1 && qdml::element_size(p.tb) == 1;
            for (qdml::simd::Isa isa : qtest::gemm_paths::runnable_isas()) {
                INFO(p.describe() << " fidelity " << qdml::to_string(f) << " path " << qdml::simd::isa_name(isa));
                p.b = b0;
                p.b_zp = b_zp0;
                p.b_scale = b_scale0;
                typed(p.d, [&](const auto& op) {
                    const qdml::simd::PreparedMatrixMultiplyIntegerToFloat prepared(op, qdml::simd::GemmOptions{isa, f});
                    REQUIRE(prepared.packed() == (engine && f == qdml::Fidelity::Exact));
                    for (int run = 0; run < 3; ++run) {
                        for (auto& v : p.a) v = rng.byte();
                        for (auto& v : p.a_zp) v = rng.byte();
                        p.b = b0;
                        p.b_zp = b_zp0;
                        p.b_scale = b_scale0;
                        p.out.reset();
                        qdml::reference::matrix_multiply_integer_to_float(op, f);
                        const std::vector<std::uint8_t> expected = p.out.with_guards();
                        if (f == qdml::Fidelity::DirectML || engine) {
                            std::fill(p.b.begin(), p.b.end(), std::uint8_t{0x5a});
                            std::fill(p.b_zp.begin(), p.b_zp.end(), std::uint8_t{0x5a});
                            std::fill(p.b_scale.begin(), p.b_scale.end(), std::uint8_t{0x5a});
                        }
                        p.out.reset();
                        const auto& ex = qtest::gemm_paths::run_executor(static_cast<std::size_t>(iter * 3 + run));
                        INFO("executor " << ex.first);
                        prepared.run(op, ex.second);
                        REQUIRE(first_difference(p.out.with_guards(), expected, qdml::element_size(p.tf)) ==
                                expected.size());
                        REQUIRE(p.out.broken_guard() == qtest::GuardedBuffer::ok);
                    }
                });
            }
        }
    }
}
