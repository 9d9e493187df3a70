// ELEMENT_WISE_CLIP (docs/semantics.md sections 7 and 8). Every expected value below is
// derived by hand from
//   Output = max(Min, min(g(Input), Max)),  g(x) = x * Scale + Bias (two binary32
//   operations, no FMA) when ScaleBias is given, else g(x) = x.
// Float types compute in binary32 (FLOAT16 widened, Min/Max first rounded to
// binary16, result rounded once). Integer types: Min/Max truncated toward zero
// and saturated to the type; without ScaleBias the comparison is exact; with
// it g is computed in binary32 from fp32(x) and truncated/saturated back.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>

#include "qdml/qdml.hpp"
#include "support/float_bits.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using qdml::FeatureLevel;
using qdml::ScaleBiasDesc;
using H = std::vector<std::uint16_t>;  // binary16 bit patterns
using F = std::vector<float>;
using I = std::vector<std::int64_t>;
using U = std::vector<std::uint64_t>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t k2p62 = std::int64_t{1} << 62;
constexpr std::uint64_t k2p63 = std::uint64_t{1} << 63;

/// Builder: one clip; `in` is the raw input buffer (memory order).
template <class T>
struct Clip {
    Pool pool;
    Dims sizes;
    std::vector<T> in;
    Dims in_strides, out_strides;
    std::optional<ScaleBiasDesc> scale_bias;
    float min = -kInf, max = kInf;
    qdml::ElementWiseClipDesc d;

    qdml::ElementWiseClipDesc& build() {
        if (sizes.empty()) sizes = {static_cast<std::uint32_t>(in.size())};
        d.InputTensor = pool.raw(sizes, in, in_strides);
        d.OutputTensor = pool.output(qdml::data_type_of<T>, sizes, out_strides);
        d.ScaleBias = scale_bias;
        d.Min = min;
        d.Max = max;
        return d;
    }
    std::vector<T> run() {
        build();
        qdml::run(d, qtest::exact());
        return pool.read<T>(d.OutputTensor);
    }
};

/// Clips a 1-D tensor holding `in`.
template <class T>
std::vector<T> clip(const std::vector<T>& in, float min, float max, std::optional<ScaleBiasDesc> sb = std::nullopt) {
    Clip<T> t;
    t.in = in;
    t.min = min;
    t.max = max;
    t.scale_bias = sb;
    return t.run();
}

/// FLOAT16 clip on bit patterns.
H clip16(const H& in, float min, float max, std::optional<ScaleBiasDesc> sb = std::nullopt) {
    H out;
    for (auto h : clip(halves(in), min, max, sb)) out.push_back(h.bits);
    return out;
}

ScaleBiasDesc sb(float scale, float bias) { return ScaleBiasDesc{scale, bias}; }

}  // namespace

TEST_CASE("clip: integer Min/Max truncated toward zero and saturated to the type", "[clip]") {
    SECTION("INT8") {
        // Min -2.5 -> -2 (toward zero, not -3); Max 5.9 -> 5
        CHECK(widen(clip<std::int8_t>({-128, -3, -2, 0, 5, 6, 127}, -2.5f, 5.9f)) == I{-2, -2, -2, 0, 5, 5, 5});
        // Min -0.7 -> 0 (not -1); Max 127.9 -> 127
        CHECK(widen(clip<std::int8_t>({-128, -1, 0, 1, 127}, -0.7f, 127.9f)) == I{0, 0, 0, 1, 127});
        // Min -1e6 -> -128 (saturated); Max -1.5 -> -1
        CHECK(widen(clip<std::int8_t>({-128, -2, -1, 0, 127}, -1e6f, -1.5f)) == I{-128, -2, -1, -1, -1});
    }
    SECTION("UINT8") {
        // Min -0.7 -> 0, Max 300.9 -> 255: nothing changes
        CHECK(widen(clip<std::uint8_t>({0, 1, 254, 255}, -0.7f, 300.9f)) == U{0, 1, 254, 255});
        // Min 3.99 -> 3, Max 200.5 -> 200
        CHECK(widen(clip<std::uint8_t>({0, 3, 4, 200, 201, 255}, 3.99f, 200.5f)) == U{3, 3, 4, 200, 200, 200});
    }
    SECTION("INT16") {
        // Min -40000 -> -32768, Max 1000.999 -> 1000
        CHECK(widen(clip<std::int16_t>({-32768, -1, 1000, 1001, 32767}, -40000.0f, 1000.999f)) ==
              I{-32768, -1, 1000, 1000, 1000});
    }
    SECTION("UINT16") {
        // Min 7.5 -> 7, Max 1e9 -> 65535
        CHECK(widen(clip<std::uint16_t>({0, 6, 7, 8, 65535}, 7.5f, 1e9f)) == U{7, 7, 7, 8, 65535});
        // Min -1e30 -> 0, Max 65535.9 -> 65535
        CHECK(widen(clip<std::uint16_t>({0, 65535}, -1e30f, 65535.9f)) == U{0, 65535});
    }
    SECTION("INT32") {
        // Min -2^31 exactly, Max 2^31 -> saturates to 2147483647: nothing changes
        CHECK(widen(clip<std::int32_t>({-2147483647 - 1, -1, 2147483647}, -2147483648.0f, 2147483648.0f)) ==
              I{-2147483648LL, -1, 2147483647});
        // Max 2147483520 (largest binary32 below 2^31), Min -2147483520: 2147483519 is not a
        // binary32 value, so keeping it proves the comparison does not go through float.
        CHECK(widen(clip<std::int32_t>({2147483647, 2147483520, 2147483519, -2147483647 - 1, -2147483519},
                                       -2147483520.0f, 2147483520.0f)) ==
              I{2147483520, 2147483520, 2147483519, -2147483520, -2147483519});
    }
    SECTION("UINT32") {
        // Max 4294967040 (largest binary32 below 2^32); 4294967039 rounds to 4294967040 in binary32
        CHECK(widen(clip<std::uint32_t>({4294967295u, 4294967041u, 4294967040u, 4294967039u, 0}, 0.0f,
                                        4294967040.0f)) == U{4294967040u, 4294967040u, 4294967040u, 4294967039u, 0});
        // Min -inf -> 0, Max +inf -> 4294967295
        CHECK(widen(clip<std::uint32_t>({0, 4294967295u}, -kInf, kInf)) == U{0, 4294967295u});
    }
    SECTION("INT64: extremes exact") {
        // +-inf saturate to the type's range; max-1 stays max-1 (a binary32 round trip would give 2^63)
        const std::vector<std::int64_t> ext = {kI64Min, kI64Min + 1, -1, 0, kI64Max - 1, kI64Max};
        CHECK(clip<std::int64_t>(ext, -kInf, kInf) == ext);
        // +-1e19 (beyond +-2^63) and 2^63 itself saturate too
        CHECK(clip<std::int64_t>(ext, -1e19f, 9223372036854775808.0f) == ext);
        // Min -2^62, Max 2^62: 2^62 - 1 and -2^62 + 1 are not binary32 values and stay
        CHECK(clip<std::int64_t>({k2p62 + 1, k2p62, k2p62 - 1, -k2p62 + 1, -k2p62 - 1}, -4611686018427387904.0f,
                                 4611686018427387904.0f) == I{k2p62, k2p62, k2p62 - 1, -k2p62 + 1, -k2p62});
    }
    SECTION("UINT64: extremes exact") {
        CHECK(clip<std::uint64_t>({kU64Max, kU64Max - 1, 0, 1}, -0.7f, kInf) == U{kU64Max, kU64Max - 1, 0, 1});
        // Max 2^64 (binary32 18446744073709551616) saturates to 2^64 - 1
        CHECK(clip<std::uint64_t>({kU64Max, kU64Max - 1}, 0.0f, 18446744073709551616.0f) == U{kU64Max, kU64Max - 1});
        // Max 2^63
        CHECK(clip<std::uint64_t>({k2p63 + 1, k2p63, k2p63 - 1}, 0.0f, 9223372036854775808.0f) ==
              U{k2p63, k2p63, k2p63 - 1});
        // Min 2^63
        CHECK(clip<std::uint64_t>({k2p63 - 1, 0, kU64Max}, 9223372036854775808.0f, kInf) == U{k2p63, k2p63, kU64Max});
    }
}

TEST_CASE("clip: Min > Max gives Min", "[clip]") {
    CHECK(widen(clip<std::int8_t>({-128, 0, 127}, 10.0f, -10.0f)) == I{10, 10, 10});
    // after truncation: Min 2.5 -> 2 > Max 1.9 -> 1 gives 2; Min 1.9 -> 1 = Max 1.5 -> 1 gives 1
    CHECK(widen(clip<std::int8_t>({-128, 0, 127}, 2.5f, 1.9f)) == I{2, 2, 2});
    CHECK(widen(clip<std::int8_t>({-128, 0, 127}, 1.9f, 1.5f)) == I{1, 1, 1});
    CHECK(clip<std::uint64_t>({0, kU64Max}, 9223372036854775808.0f, 1.0f) == U{k2p63, k2p63});
    // floats: every number becomes Min; NaN stays NaN
    CHECK(bits(clip<float>({-kInf, 0.0f, 2.0f, 5.0f, kInf, kNaN}, 3.0f, 1.0f)) == bits(F{3, 3, 3, 3, 3, kNaN}));
    // FLOAT16: 3 = 0x4200; inputs -inf, 0, 2, 5, +inf
    CHECK(bits16(clip16({0xFC00, 0x0000, 0x4000, 0x4500, 0x7C00}, 3.0f, 1.0f)) ==
          bits16(H{0x4200, 0x4200, 0x4200, 0x4200, 0x4200}));
}

TEST_CASE("clip: FLOAT32", "[clip]") {
    SECTION("bounds, infinities, NaN stays NaN, a value equal to a bound passes unchanged") {
        CHECK(bits(clip<float>({-kInf, -2.0f, -1.5f, -0.0f, 0.0f, 2.25f, 3.0f, kInf, kNaN, -kNaN}, -1.5f, 2.25f)) ==
              bits(F{-1.5f, -1.5f, -1.5f, -0.0f, 0.0f, 2.25f, 2.25f, 2.25f, kNaN, kNaN}));
        // -0.0 compares equal to Min +0.0 and stays -0.0 (README choice)
        CHECK(bits(clip<float>({-0.0f, -1.0f}, 0.0f, 1.0f)) == bits(F{-0.0f, 0.0f}));
    }
    SECTION("no bound: every value, subnormals and extremes included, passes") {
        const F v = {std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max(),
                     std::numeric_limits<float>::max(), -kInf, kInf};
        CHECK(bits(clip<float>(v, -kInf, kInf)) == bits(v));
    }
    SECTION("Min and Max are used at full binary32 precision") {
        // 1 + 2^-22 clipped to Max 1 + 2^-23 (not rounded to any coarser type)
        CHECK(bits(clip<float>({0x1.000004p+0f}, 0.0f, 0x1.000002p+0f)) == bits(F{0x1.000002p+0f}));
    }
}

TEST_CASE("clip: FLOAT16", "[clip]") {
    SECTION("bounds, infinities, NaN stays NaN") {
        // Min -1.5 = 0xBE00, Max 2.25 = 0x4080; inputs -inf, -2, -1.5, 0, 2.25, 3, +inf, NaN
        CHECK(bits16(clip16({0xFC00, 0xC000, 0xBE00, 0x0000, 0x4080, 0x4200, 0x7C00, 0x7E00}, -1.5f, 2.25f)) ==
              bits16(H{0xBE00, 0xBE00, 0xBE00, 0x0000, 0x4080, 0x4080, 0x4080, 0x7E00}));
    }
    SECTION("Min and Max are rounded to binary16 first (ties to even)") {
        // Max 1 + 3*2^-11 is a binary16 tie between 0x3C01 and 0x3C02 -> 0x3C02 (even)
        CHECK(bits16(clip16({0x3C03, 0x3C02, 0x3C01}, 0.0f, 1.00146484375f)) == bits16(H{0x3C02, 0x3C02, 0x3C01}));
        // Min 0.1f -> binary16 0x2E66 (0.0999755859375)
        CHECK(bits16(clip16({0x0000, 0x2E66, 0x2E67}, 0.1f, 1.0f)) == bits16(H{0x2E66, 0x2E66, 0x2E67}));
        // Max 65519 -> 65504 (0x7BFF); Max 70000 -> +inf and Min -65520 -> -inf: nothing clipped
        CHECK(bits16(clip16({0x7C00, 0x7BFF}, 0.0f, 65519.0f)) == bits16(H{0x7BFF, 0x7BFF}));
        CHECK(bits16(clip16({0x7C00, 0x7BFF, 0xFC00}, -65520.0f, 70000.0f)) == bits16(H{0x7C00, 0x7BFF, 0xFC00}));
        // Where the order is visible: Min 1e-10 rounds to +0.0, which -0.0 (0x8000) equals, so -0.0
        // stays; clamping against 1e-10 first would give 1e-10 -> binary16 +0.0 (0x0000).
        CHECK(bits16(clip16({0x8000, 0x0000}, 1e-10f, 1.0f)) == bits16(H{0x8000, 0x0000}));
        // Likewise Max -1e-10 rounds to -0.0: +0.0 stays +0.0 (not 0x8000)
        CHECK(bits16(clip16({0x0000, 0x8000}, -1.0f, -1e-10f)) == bits16(H{0x0000, 0x8000}));
    }
}

TEST_CASE("clip: ScaleBias on floats, two binary32 operations, no FMA", "[clip]") {
    SECTION("FLOAT32 basics, clamp after g") {
        // x * 0.5 + 1: {2, -3, NaN, inf, 10} -> {2, -0.5, NaN, inf, 6}; Max 5
        CHECK(bits(clip<float>({2.0f, -3.0f, kNaN, kInf, 10.0f}, -kInf, 5.0f, sb(0.5f, 1.0f))) ==
              bits(F{2.0f, -0.5f, kNaN, 5.0f, 5.0f}));
    }
    SECTION("FLOAT32: fma would differ") {
        // x = Scale = 1 + 2^-12: x*Scale = 1 + 2^-11 + 2^-24, exactly half-way between binary32
        // 1 + 2^-11 and 1 + 2^-11 + 2^-23 -> even: 1 + 2^-11. + Bias -(1 + 2^-11) = 0.
        // fma(x, Scale, Bias) would be 2^-24 = 5.9604645e-08.
        CHECK(bits(clip<float>({0x1.001p+0f}, -1.0f, 1.0f, sb(0x1.001p+0f, -0x1.002p+0f))) ==
              bits(F{0.0f}));
    }
    SECTION("FLOAT16: fma would differ") {
        // x = 0x3C01 = 1 + 2^-10, Scale = 1 + 2^-14 + 2^-23:
        //   x*Scale = 1 + 2^-10 + 2^-14 + 2^-23 + 2^-24 + 2^-33; binary32 keeps down to 2^-23 and the
        //   rest (2^-24 + 2^-33) is above half an ulp -> 1 + 2^-10 + 2^-14 + 2^-22.
        //   + Bias -(1 + 2^-10 + 2^-14 + 2^-22) = 0 -> 0x0000.
        // fma would give -2^-24 + 2^-33 -> binary16 -2^-24 = 0x8001.
        CHECK(bits16(clip16({0x3C01}, -1.0f, 1.0f, sb(0x1.000402p+0f, -0x1.004404p+0f))) ==
              bits16(H{0x0000}));
    }
    SECTION("FLOAT16: g computed in binary32, rounded once") {
        // 1 * (1 + 2^-11) + 2^-20 = 1 + 2^-11 + 2^-20 (exact in binary32), just above the binary16
        // tie 1 + 2^-11 -> 0x3C01. Rounding the product to binary16 first would give 0x3C00.
        CHECK(bits16(clip16({0x3C00}, -kInf, kInf, sb(0x1.002p+0f, 0x1p-20f))) == bits16(H{0x3C01}));
    }
}

TEST_CASE("clip: ScaleBias on integers, binary32, truncation, saturation", "[clip]") {
    const std::vector<std::int8_t> x8 = {-128, -1, 0, 1, 100, 127};
    SECTION("INT8 truncation toward zero") {
        // x * 0.5 + 0.9 = {-63.1, 0.4, 0.9, 1.4, 50.9, 64.4} -> {-63, 0, 0, 1, 50, 64}
        CHECK(widen(clip(x8, -kInf, kInf, sb(0.5f, 0.9f))) == I{-63, 0, 0, 1, 50, 64});
    }
    SECTION("INT8 saturation before the clamp") {
        // x * 3 - 0.5 = {-384.5, -3.5, -0.5, 2.5, 299.5, 380.5} -> {-128, -3, 0, 2, 127, 127}
        CHECK(widen(clip(x8, -kInf, kInf, sb(3.0f, -0.5f))) == I{-128, -3, 0, 2, 127, 127});
        // then Min -50.5 -> -50, Max 100
        CHECK(widen(clip(x8, -50.5f, 100.0f, sb(3.0f, -0.5f))) == I{-50, -3, 0, 2, 100, 100});
    }
    SECTION("INT8: fma would differ") {
        // Scale = 0x3F8590B2 = 1 + 364722 * 2^-23, x = 23: x*Scale = 23 + 8388606 * 2^-23 = 24 - 2^-22,
        // which binary32 (spacing 2^-19 in [16, 32)) rounds to 24; + Bias -23 = 1 -> 1.
        // fma would give 1 - 2^-22 -> truncated to 0.
        CHECK(widen(clip<std::int8_t>({23}, -kInf, kInf, sb(0x1.0b2164p+0f, -23.0f))) == I{1});
    }
    SECTION("INT8: a NaN g(x) gives 0 (README choice), infinities saturate") {
        // 0 * inf = NaN -> 0;  1 * inf = inf -> 127;  -1 * inf = -inf -> -128
        CHECK(widen(clip<std::int8_t>({0, 1, -1}, -kInf, kInf, sb(kInf, 0.0f))) == I{0, 127, -128});
    }
    SECTION("UINT8 and UINT16: negative results saturate to 0") {
        // x * -1 + 0.5: {0.5, -0.5, -254.5} -> {0, 0 (toward zero), 0}
        CHECK(widen(clip<std::uint8_t>({0, 1, 255}, -kInf, kInf, sb(-1.0f, 0.5f))) == U{0, 0, 0});
        // x * 2 + 0.75: {0.75, 2.75, 131070.75} -> {0, 2, 65535}
        CHECK(widen(clip<std::uint16_t>({0, 1, 65535}, -kInf, kInf, sb(2.0f, 0.75f))) == U{0, 2, 65535});
    }
    SECTION("INT16") {
        // x * -2 + 0.75 = {65536.75, 2.75, 0.75, -1.25, -39999.25} -> {32767, 2, 0, -1, -32768}
        CHECK(widen(clip<std::int16_t>({-32768, -1, 0, 1, 20000}, -kInf, kInf, sb(-2.0f, 0.75f))) ==
              I{32767, 2, 0, -1, -32768});
    }
    SECTION("INT32 and UINT32 go through binary32") {
        // fp32(16777217) = 16777216; + 0.5 -> 16777216 (spacing 2) -> 16777216 (exact math: 16777217)
        // fp32(2147483647) = 2^31 -> saturates to 2147483647;  -2^31 is exact;  -16777217 -> -16777216
        CHECK(widen(clip<std::int32_t>({16777217, 2147483647, -2147483647 - 1, -16777217}, -kInf, kInf,
                                       sb(1.0f, 0.5f))) == I{16777216, 2147483647, -2147483648LL, -16777216});
        // x * 2 + 0.75: {0.75, 2.75, 2^33} -> {0, 2, 4294967295}
        CHECK(widen(clip<std::uint32_t>({0, 1, 4294967295u}, -kInf, kInf, sb(2.0f, 0.75f))) ==
              U{0, 2, 4294967295u});
    }
    SECTION("INT64 and UINT64 go through binary32") {
        // max-1 -> 2^63 -> saturates to max (compare: exact without ScaleBias);  2^62 + 1 -> 2^62;  min exact
        CHECK(clip<std::int64_t>({kI64Max - 1, k2p62 + 1, kI64Min}, -kInf, kInf, sb(1.0f, 0.0f)) ==
              I{kI64Max, k2p62, kI64Min});
        // 2^64 - 1 -> 2^64, * 0.5 = 2^63;  3 * 0.5 - 0 = 1.5 -> 1;  1 * 0.5 = 0.5 -> 0
        CHECK(clip<std::uint64_t>({kU64Max, 3, 1}, -kInf, kInf, sb(0.5f, 0.0f)) == U{k2p63, 1, 0});
        // 1 * -1 + 0 = -1 -> saturates to 0
        CHECK(clip<std::uint64_t>({1}, -kInf, kInf, sb(-1.0f, 0.0f)) == U{0});
    }
}

TEST_CASE("clip: in place on the identical region; other overlaps rejected", "[clip]") {
    SECTION("FLOAT32 packed") {
        Clip<float> t;
        t.sizes = {2, 3};
        t.in = {-1.0f, 5.0f, 2.0f, 3.0f, 9.0f, -0.5f};
        t.min = 0.0f;
        t.max = 4.0f;
        auto& d = t.build();
        d.OutputTensor = d.InputTensor;
        qdml::run(d, qtest::exact());
        CHECK(bits(t.pool.read<float>(d.InputTensor)) == bits(F{0, 4, 2, 3, 4, 0}));
    }
    SECTION("INT16 strided, with ScaleBias") {
        // strides {4, 1}: buffer element 3 is a gap and must keep its value
        Clip<std::int16_t> t;
        t.sizes = {2, 3};
        t.in_strides = {4, 1};
        t.in = {1, 2, 3, 777, 4, 5, 6};
        t.scale_bias = sb(10.0f, 0.0f);
        t.max = 45.0f;
        auto& d = t.build();
        d.OutputTensor = d.InputTensor;
        REQUIRE(rejected_member(d) == "<valid>");
        qdml::run(d, qtest::exact());
        const auto* raw = static_cast<const std::int16_t*>(d.InputTensor.Data);
        // {10, 20, 30, gap, 40, 45, 45}
        CHECK(std::vector<int>(raw, raw + 7) == std::vector<int>{10, 20, 30, 777, 40, 45, 45});
    }
    SECTION("overlapping but different regions are rejected") {
        Clip<std::int32_t> t;
        t.sizes = {2, 3};
        t.in = {1, 2, 3, 4, 5, 6};
        auto& d = t.build();
        Tensor big = t.pool.output(DT::Int32, {12});
        d.InputTensor = Pool::alias(big, DT::Int32, {2, 3});
        d.OutputTensor = Pool::alias(big, DT::Int32, {2, 3}, 1);  // shifted by one element
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(big, DT::Int32, {2, 3}, 0, {1, 2});  // same start, transposed
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(big, DT::Int32, {2, 3}, 6);  // right after the input: no overlap
        CHECK(rejected_member(d) == "<valid>");
        d.OutputTensor = Pool::alias(big, DT::Int32, {2, 3}, 0);  // identical region
        CHECK(rejected_member(d) == "<valid>");
    }
}

TEST_CASE("clip: 1-D to 8-D, padded input, column-major output", "[clip]") {
    // Input INT16 = (97 L) mod 3000 - 1500 in logical order L; Min -100.5 -> -100, Max 1000.9 -> 1000.
    for (std::size_t rank = 1; rank <= 8; ++rank) {
        INFO("rank " << rank);
        Dims sizes(rank), in_strides(rank), out_strides(rank);
        for (std::size_t i = 0; i < rank; ++i) sizes[i] = 3 - static_cast<std::uint32_t>(i % 2);
        in_strides[rank - 1] = 3;
        for (std::size_t i = rank - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * sizes[i + 1] + 2;
        std::uint32_t count = 1;
        for (std::size_t i = 0; i < rank; ++i) {
            out_strides[i] = count;
            count *= sizes[i];
        }
        std::vector<std::int16_t> in(count);
        for (std::uint32_t L = 0; L < count; ++L) in[L] = static_cast<std::int16_t>((97 * L) % 3000) - 1500;
        Clip<std::int16_t> t;
        t.sizes = sizes;
        t.in = in;  // packed placeholder, replaced below
        t.min = -100.5f;
        t.max = 1000.9f;
        auto& d = t.build();
        d.InputTensor = t.pool.logical(sizes, in, in_strides, std::int16_t{12345});
        d.OutputTensor = t.pool.output(DT::Int16, sizes, out_strides);
        qdml::run(d, qtest::exact());
        const auto got = t.pool.read<std::int16_t>(d.OutputTensor);
        REQUIRE(got.size() == count);
        for (std::uint32_t L = 0; L < count; ++L) {
            INFO("logical element " << L);
            const int v = in[L];
            REQUIRE(got[L] == (v < -100 ? -100 : v > 1000 ? 1000 : v));
        }
    }
}

TEST_CASE("clip: broadcast input through zero strides, strided output", "[clip]") {
    SECTION("FLOAT16 rows repeated, transposed output") {
        // Input[i][j] = {-5, 0.5, 5}[j] (strides {0, 1}); Min -1, Max 1 -> {-1, 0.5, 1} per row
        Clip<float16> t;
        t.sizes = {2, 3};
        t.in = halves({0xC500, 0x3800, 0x4500});
        t.in_strides = {0, 1};
        t.min = -1.0f;
        t.max = 1.0f;
        t.out_strides = {1, 2};
        CHECK(bits16(t.run()) == bits16(H{0xBC00, 0x3800, 0x3C00, 0xBC00, 0x3800, 0x3C00}));
        const auto* raw = static_cast<const std::uint16_t*>(t.d.OutputTensor.Data);  // Output[i][j] at i + 2j
        CHECK(bits16(H(raw, raw + 6)) == bits16(H{0xBC00, 0xBC00, 0x3800, 0x3800, 0x3C00, 0x3C00}));
    }
    SECTION("UINT64 columns repeated, single element broadcast, sparse output") {
        Clip<std::uint64_t> t;
        t.sizes = {3, 2};
        t.in = {kU64Max, 5, 0};
        t.in_strides = {1, 0};  // Input[i][j] = in[i]
        t.max = 9223372036854775808.0f;
        t.out_strides = {5, 2};
        CHECK(t.run() == U{k2p63, k2p63, 5, 5, 0, 0});  // read() checks the gaps and guards
        Clip<std::int8_t> s;
        s.sizes = {2, 2, 2};
        s.in = {-7};
        s.in_strides = {0, 0, 0};
        s.min = -3.0f;
        CHECK(widen(s.run()) == I(8, -3));
    }
}

TEST_CASE("clip: typed struct and every type through the runtime switch", "[clip]") {
    // The same clip {-3, 0, 9} -> Min -1.9 / Max 5.2 for the signed types ({-1, 0, 5}) and
    // {0, 3, 9} -> {0, 3, 5} for the unsigned ones, through ElementWiseClip<T>::bind.
    auto typed = [](auto tag, const auto& in, const I& want) {
        using T = typename decltype(tag)::type;
        Clip<T> t;
        for (auto v : in) t.in.push_back(static_cast<T>(v));
        t.min = -1.9f;
        t.max = 5.2f;
        t.build();
        qdml::validate(t.d);
        qdml::reference::element_wise_clip(qdml::ElementWiseClip<T>::bind(t.d), qdml::Fidelity::Exact);
        INFO(qdml::name(qdml::data_type_of<T>));
        I got;
        for (auto v : t.pool.template read<T>(t.d.OutputTensor)) got.push_back(static_cast<std::int64_t>(v));
        CHECK(got == want);
    };
    const I s = {-3, 0, 9}, u = {0, 3, 9};
    typed(qdml::type_tag<std::int8_t>{}, s, I{-1, 0, 5});
    typed(qdml::type_tag<std::int16_t>{}, s, I{-1, 0, 5});
    typed(qdml::type_tag<std::int32_t>{}, s, I{-1, 0, 5});
    typed(qdml::type_tag<std::int64_t>{}, s, I{-1, 0, 5});
    typed(qdml::type_tag<std::uint8_t>{}, u, I{0, 3, 5});
    typed(qdml::type_tag<std::uint16_t>{}, u, I{0, 3, 5});
    typed(qdml::type_tag<std::uint32_t>{}, u, I{0, 3, 5});
    typed(qdml::type_tag<std::uint64_t>{}, u, I{0, 3, 5});
    // floats: Min -1.9 / Max 5.2 are not truncated
    CHECK(bits(clip<float>({-3.0f, 0.0f, 9.0f}, -1.9f, 5.2f)) == bits(F{-1.9f, 0.0f, 5.2f}));
    // FLOAT16: -1.9 -> 0xBF9A (-1.900390625), 5.2 -> 0x4533 (5.19921875); inputs -3, 0, 9
    CHECK(bits16(clip16({0xC200, 0x0000, 0x4880}, -1.9f, 5.2f)) == bits16(H{0xBF9A, 0x0000, 0x4533}));
}

TEST_CASE("clip: validation, one rule at a time", "[clip][validation]") {
    Clip<std::int8_t> t;
    t.sizes = {2, 3};
    t.in = {1, 2, 3, 4, 5, 6};
    t.min = -1;
    t.max = 1;
    auto& d = t.build();
    auto& pool = t.pool;
    REQUIRE(rejected_member(d) == "<valid>");

    SECTION("NaN Min or Max; infinities are fine") {
        d.Min = kNaN;
        CHECK(rejected_member(d) == "Min");
        d.Min = -kInf;
        d.Max = kNaN;
        CHECK(rejected_member(d) == "Max");
        d.Max = kInf;
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("bad data type") {
        d.InputTensor.Desc.DataType = DT::Float64;
        d.OutputTensor.Desc.DataType = DT::Float64;
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor.Desc.DataType = static_cast<qdml::TensorDataType>(42);
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("Output type differs from Input") {
        d.OutputTensor = pool.output(DT::UInt8, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::Int16, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("Sizes or DimensionCount mismatch") {
        d.OutputTensor = pool.output(DT::Int8, {3, 2});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::Int8, {1, 2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::Int8, {6});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("a size of 0, DimensionCount 0 or 9") {
        d.InputTensor.Desc.Sizes[0] = 0;
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor.Desc.Sizes[0] = 2;
        d.OutputTensor.Desc.DimensionCount = 0;
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor.Desc.DimensionCount = 9;
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("TotalTensorSizeInBytes below the minimum") {
        d.InputTensor.Desc.TotalTensorSizeInBytes = 6;  // 6 bytes round up to 8
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("output stride 0 on a dimension of size > 1") {
        d.OutputTensor = pool.output(DT::Int8, {2, 3}, {1, 0});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("feature level: INT64/UINT64 from 5.0") {
        Clip<std::int64_t> e;
        e.in = {1, 2};
        auto& d64 = e.build();
        CHECK(rejected_member(d64, FeatureLevel::L4_1) == "InputTensor");
        CHECK(rejected_member(d64, FeatureLevel::L5_0) == "<valid>");
        Clip<std::uint64_t> f;
        f.in = {1, 2};
        CHECK(rejected_member(f.build(), FeatureLevel::L4_1) == "InputTensor");
        CHECK(rejected_member(f.d, FeatureLevel::L5_0) == "<valid>");
    }
    SECTION("feature level: dimension counts and integer types before 3.0") {
        CHECK(rejected_member(d, FeatureLevel::L2_1) == "InputTensor");  // 2 dims: only 4 before 3.0
        CHECK(rejected_member(d, FeatureLevel::L3_0) == "<valid>");
        Clip<std::int8_t> e;
        e.sizes = Dims(8, 1u);
        e.in = {5};
        CHECK(rejected_member(e.build(), FeatureLevel::L2_1) == "InputTensor");
        CHECK(rejected_member(e.d, FeatureLevel::L3_0) == "<valid>");
        Clip<std::int8_t> g;
        g.sizes = {1, 1, 2, 3};
        g.in = {1, 2, 3, 4, 5, 6};
        CHECK(rejected_member(g.build(), FeatureLevel::L2_1) == "<valid>");
        CHECK(rejected_member(g.d, FeatureLevel::L1_0) == "InputTensor");  // INT8 not at 1.0
        Clip<float> h;
        h.sizes = {1, 1, 2, 3};
        h.in = {1, 2, 3, 4, 5, 6};
        CHECK(rejected_member(h.build(), FeatureLevel::L1_0) == "<valid>");
    }
    SECTION("run() rejects before touching the output") {
        d.Max = kNaN;
        CHECK_THROWS_AS(qdml::run(d), qdml::Error);
        const auto* raw = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
        CHECK(std::vector<int>(raw, raw + 8) == std::vector<int>(8, kSentinel));
    }
}
