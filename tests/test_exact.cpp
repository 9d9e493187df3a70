// The exact checker (qdml/check/exact.hpp). Expectations by hand:
// with AScale 0.1f, BScale 0.3f, OutputScale 0.3f and acc 5,
//   binary32: fp32(0.1f * 0.3f) = 0.030000001f; / 0.3f = 0.1f (binary32 0.1,
//             i.e. 0.100000001490116); 5 * 0.1f rounds to 0.5f exactly -> rne = 0
//   exact:    5 * (0.1f * 0.3f / 0.3f in binary64) = 0.50000000745... -> 1
// (checked with numpy float32 arithmetic in this order.)
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <string>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;

/// A 1 x K x 1 matmul of INT8 A (all `a`) and B (all `b`), broadcast through
/// zero strides, per-tensor scales, output INT8 with zero point 0.
struct Dot {
    Pool pool;
    qdml::QuantizedLinearMatrixMultiplyDesc d;
    Dot(std::uint32_t K, double a, double b, double as, double bs, double os, DT t = DT::Int8) {
        d.ATensor = pool.raw(t, {1, K}, {a}, {0, 0});
        d.AScaleTensor = pool.scalar(DT::Float32, as, 2);
        d.BTensor = pool.raw(t, {K, 1}, {b}, {0, 0});
        d.BScaleTensor = pool.scalar(DT::Float32, bs, 2);
        d.OutputScaleTensor = pool.scalar(DT::Float32, os, 2);
        d.OutputTensor = pool.output(DT::Int8, {1, 1});
    }
    long long out() { return pool.read(d.OutputTensor)[0]; }
};

}  // namespace

TEST_CASE("exact: a binary32 one-step difference at a tie is reported and explained", "[exact]") {
    Dot t(1, 5, 1, 0.1, 0.3, 0.3);  // acc = 5
    qdml::run(t.d, qtest::exact());
    REQUIRE(t.out() == 0);  // binary32: 5 * mult == 0.5f exactly, ties to even -> 0
    const auto r = qdml::exact::check_exact(t.d, qdml::Fidelity::Exact);
    CHECK(r.elements == 1);
    REQUIRE(r.differences.size() == 1);
    const auto& e = r.differences[0];
    CHECK(e.got == 0);
    CHECK(e.exact == 1);                    // 0.50000000745... rounds up
    CHECK(e.value > 0.5);
    CHECK(e.value < 0.5 + 1e-7);
    CHECK(e.boundary_distance < 1e-7);
    CHECK(e.near_tie);
    CHECK_FALSE(e.accumulator_wrapped);
    CHECK(r.near_tie_elements == 1);
    CHECK(r.unexplained() == 0);
}

TEST_CASE("exact: agreement away from ties reports nothing", "[exact]") {
    Dot t(3, 2, 3, 0.5, 0.25, 1);  // acc = 18, value 18 * 0.125 = 2.25 -> 2
    qdml::run(t.d, qtest::exact());
    const auto r = qdml::exact::check_exact(t.d, qdml::Fidelity::Exact);
    CHECK(t.out() == 2);
    CHECK(r.differences.empty());
    CHECK(r.near_tie_elements == 0);
}

TEST_CASE("exact: a wrong output is unexplained", "[exact]") {
    Dot t(3, 2, 3, 0.5, 0.25, 1);
    qdml::run(t.d, qtest::exact());
    static_cast<std::int8_t*>(t.d.OutputTensor.Data)[0] = 3;  // true result: 2
    const auto r = qdml::exact::check_exact(t.d, qdml::Fidelity::Exact);
    REQUIRE(r.differences.size() == 1);
    CHECK_FALSE(r.differences[0].near_tie);
    CHECK(r.unexplained() == 1);
}

TEST_CASE("exact: an int32 accumulator that wraps is flagged", "[exact]") {
    // acc = 40000 * (127 * 127) = 645160000 fits; with UINT8 255 * 255 it is
    // 40000 * 65025 = 2601000000 > 2^31 - 1: qdml wraps to 2601000000 - 2^32 = -1693967296.
    Pool pool;
    qdml::QuantizedLinearMatrixMultiplyDesc d;
    d.ATensor = pool.raw(DT::UInt8, {1, 40000}, {255}, {0, 0});
    d.AScaleTensor = pool.scalar(DT::Float32, 1, 2);
    d.BTensor = pool.raw(DT::UInt8, {40000, 1}, {255}, {0, 0});
    d.BScaleTensor = pool.scalar(DT::Float32, 1, 2);
    d.OutputScaleTensor = pool.scalar(DT::Float32, 1e9, 2);  // exact 2.601 -> 3; wrapped -1.69 -> -2
    d.OutputTensor = pool.output(DT::Int8, {1, 1});
    qdml::run(d, qtest::exact());
    CHECK(pool.read(d.OutputTensor)[0] == -2);
    const auto r = qdml::exact::check_exact(d, qdml::Fidelity::Exact);
    REQUIRE(r.differences.size() == 1);
    CHECK(r.differences[0].exact == 3);
    CHECK(r.differences[0].accumulator_wrapped);
    CHECK_FALSE(r.differences[0].near_tie);
    CHECK(r.unexplained() == 0);  // the wrap is what docs/semantics.md specifies
}

TEST_CASE("exact: dequantize beyond 2^24 differs by at most one ulp, explained", "[exact]") {
    // UINT32 16777217 - 0 = 2^24 + 1: fp32 rounds it to 2^24 (tie to even), times
    // scale 1 -> 16777216; exact 16777217 rounds to binary32 16777216 as well:
    // agree. With scale 3: binary32 16777216 * 3 = 50331648; exact 50331651
    // rounds to 50331652 (ulp 4 there) -> differ by one ulp.
    Pool pool;
    qdml::ElementWiseDequantizeLinearDesc d;
    d.InputTensor = pool.raw(DT::Int32, {2}, {16777217, 16777217});
    d.ScaleTensor = pool.raw(DT::Float32, {2}, {1, 3});
    d.OutputTensor = pool.output(DT::Float32, {2});
    d.ZeroPointTensor = pool.raw(DT::Int32, {2}, {0, 0});
    qdml::run(d, qtest::exact());
    const auto r = qdml::exact::check_exact(d, qdml::Fidelity::Exact);
    CHECK(r.elements == 2);
    REQUIRE(r.differences.size() == 1);
    CHECK(r.differences[0].index == std::vector<std::uint32_t>{1});
    CHECK(r.differences[0].got == 50331648);
    CHECK(r.differences[0].exact == 50331652);
    CHECK(r.differences[0].near_tie);
}

// ---------------------------------------------------------------------------
// Range effects: binary32 overflows, underflows or gives NaN where the exact
// value is ordinary. qdml follows docs/semantics.md's binary32 steps; the checker
// mirrors them and names the effect (explained, not UNEXPLAINED).

namespace {

using Reason = qdml::exact::Reason;

/// The one difference of a one-element check.
qdml::exact::Difference only_difference(const qdml::exact::Report& r) {
    REQUIRE(r.differences.size() == 1);
    CHECK(r.unexplained() == 0);
    return r.differences[0];
}

/// A {1} INT8 quantized add with every scale `scale` (zero points 0).
qdml::exact::Report add_case(double a, double b, double as, double bs, double os, long long expect_got) {
    Pool pool;
    qdml::ElementWiseQuantizedLinearAddDesc d;
    d.ATensor = pool.raw(DT::Int8, {1}, {a});
    d.AScaleTensor = pool.scalar(DT::Float32, as);
    d.BTensor = pool.raw(DT::Int8, {1}, {b});
    d.BScaleTensor = pool.scalar(DT::Float32, bs);
    d.OutputScaleTensor = pool.scalar(DT::Float32, os);
    d.OutputTensor = pool.output(DT::Int8, {1});
    qdml::run(d, qtest::exact());
    CHECK(pool.read(d.OutputTensor)[0] == expect_got);
    return qdml::exact::check_exact(d, qdml::Fidelity::Exact);
}

}  // namespace

TEST_CASE("exact: add whose binary32 terms overflow (scales near FLT_MAX)", "[exact]") {
    // A = 2, B = -1, every scale FLT_MAX: 2 * FLT_MAX = inf; inf - FLT_MAX = inf;
    // inf / FLT_MAX = inf -> Q saturates to 127. Exact: (2 - 1) * FLT_MAX / FLT_MAX = 1.
    const auto d = only_difference(add_case(2, -1, FLT_MAX, FLT_MAX, FLT_MAX, 127));
    CHECK(d.exact == 1);
    CHECK(d.binary32 == 127);
    CHECK(d.reason == Reason::Overflow);
}

TEST_CASE("exact: add with all scales 3e38: overflow, and inf - inf = NaN", "[exact]") {
    // A = B = 1: 3e38 + 3e38 = inf (binary32 max 3.4e38) -> inf / 3e38 = inf -> 127; exact 6e38 / 3e38 = 2.
    auto d = only_difference(add_case(1, 1, 3e38, 3e38, 3e38, 127));
    CHECK(d.exact == 2);
    CHECK(d.reason == Reason::Overflow);
    // A = 100, B = -100: 100 * 3e38 = inf, -100 * 3e38 = -inf, inf - inf = NaN -> Q gives lo - zp = -128;
    // exact 0.
    d = only_difference(add_case(100, -100, 3e38, 3e38, 3e38, -128));
    CHECK(d.exact == 0);
    CHECK(d.reason == Reason::NaN);
    CHECK(std::string(qdml::exact::name(d.reason)) == "NaN");
}

TEST_CASE("exact: clip with ScaleBias 3e38 * 2 - 3e38 overflows in binary32", "[exact]") {
    // binary32: 3e38f * 2 = inf, inf - 3e38 = inf; exact: 3e38 * 2 - 3e38 = 3e38 -> fp32(3e38).
    float in = 3e38f, out = 0;
    qdml::ElementWiseClipDesc c;
    c.InputTensor = {qdml::TensorDesc::make(DT::Float32, {1}), &in};
    c.OutputTensor = {qdml::TensorDesc::make(DT::Float32, {1}), &out};
    c.ScaleBias = qdml::ScaleBiasDesc{2.0f, -3e38f};
    c.Min = -INFINITY;
    c.Max = INFINITY;
    qdml::run(c, qtest::exact());
    CHECK(std::isinf(out));
    const auto d = only_difference(qdml::exact::check_exact(c, qdml::Fidelity::Exact));
    CHECK(d.exact == static_cast<double>(3e38f));
    CHECK(d.reason == Reason::Overflow);
}

TEST_CASE("exact: matmul whose AScale * BScale underflows to 0", "[exact]") {
    // AScale = BScale = 1e-23f: the binary32 product ~1e-46 is below half the smallest
    // subnormal (2^-150 ~ 7e-46) and rounds to 0, so the multiplier is 0 and the output 0.
    // Exact: 127 * 127 * 1e-46 / 1e-44 ~ 1.6e2 (OutputScale 1e-44f is the subnormal
    // 7 * 2^-149 ~ 9.8e-45) -> saturates to 127.
    Dot t(1, 127, 127, 1e-23, 1e-23, 1e-44);
    qdml::run(t.d, qtest::exact());
    CHECK(t.out() == 0);
    const auto d = only_difference(qdml::exact::check_exact(t.d, qdml::Fidelity::Exact));
    CHECK(d.exact == 127);
    CHECK(d.reason == Reason::Underflow);
}

TEST_CASE("exact: INT32 dequantize whose exact value overflows binary32 (ulp at FLT_MAX and inf)", "[exact]") {
    // 16777217 * (2^104 - 2^80): binary32 fp32(16777217) = 2^24 (tie to even), times the
    // scale = 2^128 - 2^104 = FLT_MAX exactly. Exact: 2^128 - 2^80, above the midpoint
    // 2^128 - 2^103 between FLT_MAX and 2^128, so it rounds to inf.
    std::int32_t in = 16777217;
    float scale = std::ldexp(1.0f, 104) - std::ldexp(1.0f, 80), out = 0;
    qdml::ElementWiseDequantizeLinearDesc d;
    d.InputTensor = {qdml::TensorDesc::make(DT::Int32, {1}), &in};
    d.ScaleTensor = {qdml::TensorDesc::make(DT::Float32, {1}), &scale};
    d.OutputTensor = {qdml::TensorDesc::make(DT::Float32, {1}), &out};
    qdml::run(d, qtest::exact());
    CHECK(out == FLT_MAX);
    const auto e = only_difference(qdml::exact::check_exact(d, qdml::Fidelity::Exact));
    CHECK(std::isinf(e.exact));
    CHECK(e.reason == Reason::Overflow);
    CHECK(qdml::exact::detail::ulp_at<float>(FLT_MAX) == std::ldexp(1.0, 104));
    CHECK(qdml::exact::detail::ulp_at<float>(INFINITY) == std::ldexp(1.0, 104));
    CHECK(qdml::exact::detail::ulp_at<qdml::float16>(65504) == 32);
    CHECK(qdml::exact::detail::ulp_at<qdml::float16>(INFINITY) == 32);
    CHECK(qdml::exact::detail::ulp_at<float>(1.0) == std::ldexp(1.0, -23));
}

TEST_CASE("exact: FLOAT16 dequantize that rounds to inf in binary16", "[exact]") {
    // 33546239 * 2^-9: fp32(33546239) = 33546240 (odd, a tie between 33546238 and
    // 33546240; ties to even), times 2^-9 = 65520, the binary16 midpoint between 65504
    // and 2^16, which rounds (to even) to inf. Exact: 65519.998... -> 65504.
    std::int32_t in = 33546239;
    const qdml::float16 scale = qdml::float16(std::ldexp(1.0f, -9));
    qdml::float16 out{};
    qdml::ElementWiseDequantizeLinearDesc d;
    d.InputTensor = {qdml::TensorDesc::make(DT::Int32, {1}), &in};
    d.ScaleTensor = {qdml::TensorDesc::make(DT::Float16, {1}), &scale};
    d.OutputTensor = {qdml::TensorDesc::make(DT::Float16, {1}), &out};
    qdml::run(d, qtest::exact());
    CHECK(std::isinf(static_cast<float>(out)));
    const auto e = only_difference(qdml::exact::check_exact(d, qdml::Fidelity::Exact));
    CHECK(e.exact == 65504);
    CHECK(e.reason == Reason::Overflow);
}

TEST_CASE("exact: the tie window has an absolute floor and ceiling", "[exact]") {
    CHECK(qdml::exact::tie_window(0) == std::ldexp(1.0, -20));
    CHECK(qdml::exact::tie_window(1024) == std::ldexp(1.0, -10));
    CHECK(qdml::exact::tie_window(1e30) == 0.0625);  // never the whole half-unit between boundaries
}
