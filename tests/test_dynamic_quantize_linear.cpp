// DYNAMIC_QUANTIZE_LINEAR (docs/semantics.md sections 8 and 14). Every expected value
// below is derived by hand (or, where a binary32 rounding decides, in numpy from the
// formula, never from qdml) from
//   m = min(0, min x), M = max(0, max x)   (NaN skipped)
//   exact:    s = (M - m) / 255,            z = Z(lo - m / s), Output = Q(x / s, z)
//   directml: s = (M - m) * fp32(1/255), r = 1 / s, z = Z(lo - m * r), Output = Q(x * r, z)
// with Z(v) = v clamped to [lo, hi] (NaN to lo) rounded ties to even, and Q section 2.
// The reference is called directly (qdml::reference::run) in both profiles.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "qdml/reference.hpp"
#include "support/float_bits.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using qdml::FeatureLevel;
using qdml::Fidelity;
using F = std::vector<float>;
using I = std::vector<std::int64_t>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float from_bits(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
std::uint32_t to_bits(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

/// Integer elements as int64 (for printing and comparison).
template <class T>
I ints(const std::vector<T>& v) {
    return I(v.begin(), v.end());
}

/// Builder: one DYNAMIC_QUANTIZE_LINEAR; `in` is the raw input buffer (memory order).
template <class TIn, class TOut>
struct Dql {
    Pool pool;
    Dims sizes;
    std::vector<TIn> in;
    Dims in_strides, out_strides;
    qdml::DynamicQuantizeLinearDesc d;

    qdml::DynamicQuantizeLinearDesc& build() {
        if (sizes.empty()) sizes = {static_cast<std::uint32_t>(in.size())};
        const Dims one(sizes.size(), 1u);
        d.InputTensor = pool.raw(sizes, in, in_strides);
        d.OutputTensor = pool.output(qdml::data_type_of<TOut>, sizes, out_strides);
        d.OutputScaleTensor = pool.output(DT::Float32, one);
        d.OutputZeroPointTensor = pool.output(qdml::data_type_of<TOut>, one);
        return d;
    }
    struct Result {
        I out;
        std::uint32_t scale_bits;
        std::int64_t zp;
    };
    Result run(Fidelity f) {
        build();
        qdml::reference::run(d, FeatureLevel::Latest, f);
        return {ints(pool.read<TOut>(d.OutputTensor)), to_bits(pool.read<float>(d.OutputScaleTensor)[0]),
                std::int64_t{pool.read<TOut>(d.OutputZeroPointTensor)[0]}};
    }
};

template <class TOut, class TIn = float>
typename Dql<TIn, TOut>::Result dql(const std::vector<TIn>& in, Fidelity f) {
    Dql<TIn, TOut> t;
    t.in = in;
    return t.run(f);
}

/// The same in both profiles (ranges whose scale is exact: every step agrees).
template <class TOut, class TIn = float>
typename Dql<TIn, TOut>::Result dql_both(const std::vector<TIn>& in) {
    const auto e = dql<TOut>(in, Fidelity::Exact);
    const auto d = dql<TOut>(in, Fidelity::DirectML);
    CHECK(d.out == e.out);
    CHECK(d.scale_bits == e.scale_bits);
    CHECK(d.zp == e.zp);
    return e;
}

constexpr std::uint32_t kOne = 0x3f800000u;

}  // namespace

TEST_CASE("dynamic quantize: range 255, scale 1, ties to even, saturation, NaN", "[dynamic_quantize]") {
    // m = -1.5, M = 253.5: M - m = 255, s = 1 in both profiles (255 * fp32(1/255) rounds to 1).
    const F in{-1.5f, 253.5f, 0.5f, 1.5f, 2.5f, -0.5f, kNaN, 0.0f};
    SECTION("UINT8: z = Z(0 + 1.5) = 2") {
        const auto r = dql_both<std::uint8_t>(in);
        CHECK(r.scale_bits == kOne);
        CHECK(r.zp == 2);
        // -1.5 -> -2 + 2; 253.5 clamped to hi - z = 253 -> 255; 0.5 -> 0; 1.5, 2.5 -> 2; -0.5 -> -0; NaN -> lo
        CHECK(r.out == I{0, 255, 2, 4, 4, 2, 0, 2});
    }
    SECTION("INT8: z = Z(-128 + 1.5) = Z(-126.5) = -126") {
        const auto r = dql_both<std::int8_t>(in);
        CHECK(r.scale_bits == kOne);
        CHECK(r.zp == -126);
        CHECK(r.out == I{-128, 127, -126, -124, -124, -126, -128, -126});
    }
    SECTION("the range is widened to 0") {
        // all positive: m = 0, M = 255; all negative: m = -255, M = 0 (z = hi)
        auto r = dql_both<std::uint8_t>(F{1, 2, 255, 7});
        CHECK((r.scale_bits == kOne && r.zp == 0 && r.out == I{1, 2, 255, 7}));
        r = dql_both<std::uint8_t>(F{-1, -2, -255, -7});
        CHECK((r.scale_bits == kOne && r.zp == 255 && r.out == I{254, 253, 0, 248}));
        auto s = dql_both<std::int8_t>(F{-1, -2, -255, -7});
        CHECK((s.scale_bits == kOne && s.zp == 127 && s.out == I{126, 125, -128, 120}));
    }
    SECTION("FLOAT16 input, widened exactly") {
        const auto r = dql_both<std::uint8_t, qdml::float16>(
            halves({0xBE00, 0x5BEC, 0x3800, 0x3E00, 0x4100, 0xB800, 0x7E00, 0x0000}));  // the values above
        CHECK((r.scale_bits == kOne && r.zp == 2 && r.out == I{0, 255, 2, 4, 4, 2, 0, 2}));
    }
}

TEST_CASE("dynamic quantize: the profiles' float orders", "[dynamic_quantize]") {
    // m = 0, M = 3 (numpy, binary32): exact s = 3 / 255 = 0x3C40C0C1; directml
    // s = 3 * 0x3B808081 = 0x3C40C0C2, r = 1 / s = 0x42A9FFFF (84.99999).
    // x1 = 0x3BC0C0C2: x1 / s = 0.50000006 -> 1, x1 * r = 0.5 -> 0 (tie, even);
    // x2 = 0x3C909091: 1.5 -> 2, 1.4999999 -> 1; x3 = 0x3CF0F0F3: 2.5000002 -> 3, 2.5 -> 2;
    // x4 = 0x3CF0F0F2: x4 / s = 2.5 -> 2 and x4 * r = 2.5 -> 2 (but x4 * (1 / s) = 2.5000002 -> 3).
    const F in{0.0f, 3.0f, from_bits(0x3BC0C0C2), from_bits(0x3C909091), from_bits(0x3CF0F0F3), from_bits(0x3CF0F0F2)};
    const auto e = dql<std::uint8_t>(in, Fidelity::Exact);
    CHECK(e.scale_bits == 0x3C40C0C1u);
    CHECK(e.zp == 0);
    CHECK(e.out == I{0, 255, 1, 2, 3, 2});
    const auto d = dql<std::uint8_t>(in, Fidelity::DirectML);
    CHECK(d.scale_bits == 0x3C40C0C2u);  // DirectML 1.15.4 gives these bits for {3, ...} (probe const_pos_uint8)
    CHECK(d.zp == 0);
    CHECK(d.out == I{0, 255, 0, 1, 2, 2});
    SECTION("the zero point: m = -1, M = 3, s = 0x3C808081 in both, lo - m / s = 63.749996 -> 64") {
        const auto u = dql_both<std::uint8_t>(F{-1.0f, 3.0f});
        CHECK((u.scale_bits == 0x3C808081u && u.zp == 64));
        const auto i = dql_both<std::int8_t>(F{-1.0f, 3.0f});  // -128 + 63.749996 = -64.25 -> -64
        CHECK((i.scale_bits == 0x3C808081u && i.zp == -64));
    }
}

TEST_CASE("dynamic quantize: zero, subnormal, infinite and NaN ranges", "[dynamic_quantize]") {
    SECTION("all zero, all -0.0, all NaN: s = +0, z = lo, every output lo (0/0, 0*inf are NaN)") {
        for (const F& in : {F{0, 0, 0}, F{-0.0f, -0.0f}, F{kNaN, kNaN}}) {
            auto u = dql_both<std::uint8_t>(in);
            CHECK((u.scale_bits == 0u && u.zp == 0 && u.out == I(in.size(), 0)));
            auto i = dql_both<std::int8_t>(in);
            CHECK((i.scale_bits == 0u && i.zp == -128 && i.out == I(in.size(), -128)));
        }
    }
    SECTION("a subnormal range: s = +0, z = Z(lo - m/0) = hi, x > 0 -> hi, x < 0 -> lo, 0 -> lo") {
        const F in{from_bits(1), -from_bits(1), 0.0f, from_bits(7)};  // M - m = 8 * 2^-149, / 255 rounds to 0
        auto u = dql_both<std::uint8_t>(in);
        CHECK((u.scale_bits == 0u && u.zp == 255 && u.out == I{255, 0, 0, 255}));
        auto i = dql_both<std::int8_t>(in);
        CHECK((i.scale_bits == 0u && i.zp == 127 && i.out == I{127, -128, -128, 127}));
    }
    SECTION("infinite range: s = +inf, z = lo, every output lo") {
        for (const F& in : {F{1, 2, kInf, -1}, F{1, -kInf, 2}, F{-kInf, kInf, 0.5f}, F{3e38f, -3e38f, 1}}) {
            auto u = dql_both<std::uint8_t>(in);
            CHECK((u.scale_bits == 0x7f800000u && u.zp == 0 && u.out == I(in.size(), 0)));
            auto i = dql_both<std::int8_t>(in);
            CHECK((i.scale_bits == 0x7f800000u && i.zp == -128 && i.out == I(in.size(), -128)));
        }
    }
    SECTION("NaN elements take no part in the range") {
        // m = -1.5, M = 253.5 as in the first test, NaN first and last
        auto u = dql_both<std::uint8_t>(F{kNaN, -1.5f, 253.5f, 1.5f, kNaN});
        CHECK((u.scale_bits == kOne && u.zp == 2 && u.out == I{0, 0, 255, 4, 0}));
    }
}

TEST_CASE("dynamic quantize: 1-D to 8-D, strides and broadcast", "[dynamic_quantize]") {
    SECTION("8-D") {
        Dql<float, std::uint8_t> t;
        t.sizes = Dims(8, 1u);
        t.sizes[7] = 2;
        t.sizes[0] = 2;
        t.in = {-1.5f, 0.5f, 253.5f, 2.5f};
        const auto r = t.run(Fidelity::Exact);
        CHECK((r.scale_bits == kOne && r.zp == 2 && r.out == I{0, 2, 255, 4}));
    }
    SECTION("transposed input, padded output") {
        Dql<float, std::int8_t> t;
        t.sizes = {2, 2};
        t.in = {-1.5f, 253.5f, 0.5f, 2.5f};  // logical {{-1.5, 0.5}, {253.5, 2.5}}
        t.in_strides = {1, 2};
        t.out_strides = {3, 1};
        const auto r = t.run(Fidelity::DirectML);
        CHECK((r.scale_bits == kOne && r.zp == -126 && r.out == I{-128, -126, 127, -124}));
    }
    SECTION("broadcast input: the range of the logical elements only") {
        Dql<float, std::uint8_t> t;
        t.sizes = {2, 2};
        t.in = {-1.5f, -1000.0f, 253.5f};  // the middle element is never addressed
        t.in_strides = {0, 2};
        const auto r = t.run(Fidelity::Exact);
        CHECK((r.scale_bits == kOne && r.zp == 2 && r.out == I{0, 255, 0, 255}));
    }
    SECTION("typed struct through bind") {
        Dql<float, std::uint8_t> t;
        t.in = {-1.5f, 253.5f};
        t.build();
        qdml::reference::dynamic_quantize_linear(qdml::DynamicQuantizeLinear<float, std::uint8_t>::bind(t.d),
                                                 Fidelity::Exact);
        CHECK(ints(t.pool.read<std::uint8_t>(t.d.OutputTensor)) == I{0, 255});
    }
}

TEST_CASE("dynamic quantize: validation, one rule at a time", "[dynamic_quantize][validation]") {
    Dql<float, std::uint8_t> t;
    t.sizes = {2, 3};
    t.in = {1, 2, 3, 4, 5, 6};
    auto& d = t.build();
    auto& pool = t.pool;
    REQUIRE(rejected_member(d) == "<valid>");

    SECTION("feature level: from 4.0") {
        CHECK(rejected_member(d, FeatureLevel::L3_1) == "operator");
        CHECK(rejected_member(d, FeatureLevel::L4_0) == "<valid>");
    }
    SECTION("InputTensor FLOAT32 or FLOAT16") {
        d.InputTensor = pool.raw(DT::Int8, {2, 3}, Values(6, 1));
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor = pool.raw(DT::Int32, {2, 3}, Values(6, 1));
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("OutputTensor INT8 or UINT8") {
        d.OutputTensor = pool.output(DT::Int32, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("OutputTensor has the input's Sizes") {
        d.OutputTensor = pool.output(DT::UInt8, {3, 2});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::UInt8, {1, 2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("OutputScaleTensor FLOAT32") {
        d.OutputScaleTensor = pool.output(DT::Float16, {1, 1});
        CHECK(rejected_member(d) == "OutputScaleTensor");
    }
    SECTION("OutputZeroPointTensor has the output's type") {
        d.OutputZeroPointTensor = pool.output(DT::Int8, {1, 1});
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
    }
    SECTION("scale and zero point: the input's DimensionCount") {
        d.OutputScaleTensor = pool.output(DT::Float32, {1});
        CHECK(rejected_member(d) == "OutputScaleTensor");
        d.OutputScaleTensor = pool.output(DT::Float32, {1, 1});
        d.OutputZeroPointTensor = pool.output(DT::UInt8, {1, 1, 1});
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
    }
    SECTION("scale and zero point: one element each") {
        d.OutputScaleTensor = pool.output(DT::Float32, {1, 2});
        CHECK(rejected_member(d) == "OutputScaleTensor");
        d.OutputScaleTensor = pool.output(DT::Float32, {1, 1});
        d.OutputZeroPointTensor = pool.output(DT::UInt8, {2, 1});
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
    }
    SECTION("outputs overlap neither the input nor each other") {
        Tensor big = pool.output(DT::UInt8, {16});
        d.OutputTensor = Pool::alias(big, DT::UInt8, {2, 3});
        d.OutputZeroPointTensor = Pool::alias(big, DT::UInt8, {1, 1}, 5);
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
        d.OutputZeroPointTensor = Pool::alias(big, DT::UInt8, {1, 1}, 6);
        CHECK(rejected_member(d) == "<valid>");
        Tensor f = pool.output(DT::Float32, {8});
        d.InputTensor = Pool::alias(f, DT::Float32, {2, 3});
        d.OutputScaleTensor = Pool::alias(f, DT::Float32, {1, 1}, 5);
        CHECK(rejected_member(d) == "OutputScaleTensor");
        d.OutputScaleTensor = Pool::alias(f, DT::Float32, {1, 1}, 6);
        CHECK(rejected_member(d) == "<valid>");
        // the zero point in the scale's bytes; the scale in the output's bytes
        d.OutputZeroPointTensor = Pool::alias(f, DT::UInt8, {1, 1}, 6 * 4 + 2);
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
        d.OutputZeroPointTensor = Pool::alias(f, DT::UInt8, {1, 1}, 7 * 4);
        CHECK(rejected_member(d) == "<valid>");
        d.OutputScaleTensor = Pool::alias(big, DT::Float32, {1, 1}, 1);  // bytes 4-7, the output's 4 and 5
        CHECK(rejected_member(d) == "OutputScaleTensor");
        d.OutputScaleTensor = Pool::alias(big, DT::Float32, {1, 1}, 2);
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("output stride 0 on a dimension of size > 1") {
        d.OutputTensor = pool.output(DT::UInt8, {2, 3}, {1, 0});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("run() rejects before touching any output") {
        d.OutputZeroPointTensor = pool.output(DT::Int8, {1, 1});
        CHECK_THROWS_WITH(qdml::reference::run(d), Catch::Contains("OutputZeroPointTensor") &&
                                                         Catch::Contains("must equal OutputTensor's DataType"));
        const auto* raw = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
        CHECK(std::vector<int>(raw, raw + 6) == std::vector<int>(6, kSentinel));
    }
}
