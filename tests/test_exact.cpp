// The exact checker (qdml/check/exact.hpp). Expectations by hand:
// with AScale 0.1f, BScale 0.3f, OutputScale 0.3f and acc 5,
//   binary32: fp32(0.1f * 0.3f) = 0.030000001f; / 0.3f = 0.1f (binary32 0.1,
//             i.e. 0.100000001490116); 5 * 0.1f rounds to 0.5f exactly -> rne = 0
//   exact:    5 * (0.1f * 0.3f / 0.3f in binary64) = 0.50000000745... -> 1
// (checked with numpy float32 arithmetic in this order.)
#include <catch2/catch.hpp>

#include "qdml/qdml.hpp"
#include "support/common_c.hpp"

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
    qdml::run(t.d);
    REQUIRE(t.out() == 0);  // binary32: 5 * mult == 0.5f exactly, ties to even -> 0
    const auto r = qdml::exact::check_exact(t.d);
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
    qdml::run(t.d);
    const auto r = qdml::exact::check_exact(t.d);
    CHECK(t.out() == 2);
    CHECK(r.differences.empty());
    CHECK(r.near_tie_elements == 0);
}

TEST_CASE("exact: a wrong output is unexplained", "[exact]") {
    Dot t(3, 2, 3, 0.5, 0.25, 1);
    qdml::run(t.d);
    static_cast<std::int8_t*>(t.d.OutputTensor.Data)[0] = 3;  // true result: 2
    const auto r = qdml::exact::check_exact(t.d);
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
    qdml::run(d);
    CHECK(pool.read(d.OutputTensor)[0] == -2);
    const auto r = qdml::exact::check_exact(d);
    REQUIRE(r.differences.size() == 1);
    CHECK(r.differences[0].exact == 3);
    CHECK(r.differences[0].accumulator_wrapped);
    CHECK_FALSE(r.differences[0].near_tie);
    CHECK(r.unexplained() == 0);  // the wrap is what SPEC.md specifies
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
    qdml::run(d);
    const auto r = qdml::exact::check_exact(d);
    CHECK(r.elements == 2);
    REQUIRE(r.differences.size() == 1);
    CHECK(r.differences[0].index == std::vector<std::uint32_t>{1});
    CHECK(r.differences[0].got == 50331648);
    CHECK(r.differences[0].exact == 50331652);
    CHECK(r.differences[0].near_tie);
}
