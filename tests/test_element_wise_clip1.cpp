// ELEMENT_WISE_CLIP1 (docs/semantics.md sections 8 and 13). Every expected value below is
// derived by hand from
//   exact:    Output = min(Max, max(Min, g(Input)))  (v < Min gives Min, then > Max gives Max)
//   directml: t = v < Max ? v : Max, then t > Min ? t : Min, a NaN bound skipped;
//             ScaleBias (1, +-0) is no ScaleBias
// with g(x) = x * Scale + Bias (two binary32 operations, no FMA) when ScaleBias is
// given, else g(x) = x. Min and Max are values of the tensor's type, never
// converted. Integer types compare exactly; with ScaleBias g is computed in
// binary32 from fp32(x) and truncated toward zero, saturated, NaN giving 0.
// The reference is called directly (qdml::reference::run) in both profiles.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>

#include "qdml/reference.hpp"
#include "support/float_bits.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using qdml::FeatureLevel;
using qdml::Fidelity;
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
constexpr std::int64_t k2p53 = std::int64_t{1} << 53;
constexpr std::uint64_t k2p63 = std::uint64_t{1} << 63;

/// Builder: one CLIP1; `in` is the raw input buffer (memory order).
template <class T>
struct Clip1 {
    Pool pool;
    Dims sizes;
    std::vector<T> in;
    Dims in_strides, out_strides;
    std::optional<ScaleBiasDesc> scale_bias;
    T min = std::numeric_limits<T>::lowest(), max = std::numeric_limits<T>::max();
    qdml::ElementWiseClip1Desc d;

    qdml::ElementWiseClip1Desc& build() {
        if (sizes.empty()) sizes = {static_cast<std::uint32_t>(in.size())};
        d.InputTensor = pool.raw(sizes, in, in_strides);
        d.OutputTensor = pool.output(qdml::data_type_of<T>, sizes, out_strides);
        d.ScaleBias = scale_bias;
        d.MinMaxDataType = qdml::data_type_of<T>;
        d.Min = qdml::scalar_union(min);
        d.Max = qdml::scalar_union(max);
        return d;
    }
    std::vector<T> run(Fidelity f = Fidelity::Exact) {
        build();
        qdml::reference::run(d, FeatureLevel::Latest, f);
        return pool.read<T>(d.OutputTensor);
    }
};

/// Clips a 1-D tensor holding `in`.
template <class T>
std::vector<T> clip1(const std::vector<T>& in, T min, T max, std::optional<ScaleBiasDesc> sb = std::nullopt,
                     Fidelity f = Fidelity::Exact) {
    Clip1<T> t;
    t.in = in;
    t.min = min;
    t.max = max;
    t.scale_bias = sb;
    return t.run(f);
}

/// The same clip in both profiles (every rule they share).
template <class T>
std::vector<T> clip1_both(const std::vector<T>& in, T min, T max, std::optional<ScaleBiasDesc> sb = std::nullopt) {
    const auto exact = clip1(in, min, max, sb, Fidelity::Exact);
    if constexpr (std::is_floating_point_v<T>)
        CHECK(bits(clip1(in, min, max, sb, Fidelity::DirectML)) == bits(exact));
    else
        CHECK(clip1(in, min, max, sb, Fidelity::DirectML) == exact);
    return exact;
}

/// FLOAT32 clip in one profile, as bit patterns.
auto clip1f(const F& in, float min, float max, Fidelity f, std::optional<ScaleBiasDesc> sb = std::nullopt) {
    return bits(clip1(in, min, max, sb, f));
}

/// FLOAT16 clip on bit patterns (bounds as bit patterns too).
H clip1h(const H& in, std::uint16_t min, std::uint16_t max, std::optional<ScaleBiasDesc> sb = std::nullopt,
         Fidelity f = Fidelity::Exact) {
    H out;
    for (auto h : clip1(halves(in), float16::from_bits(min), float16::from_bits(max), sb, f)) out.push_back(h.bits);
    return out;
}

ScaleBiasDesc sb(float scale, float bias) { return ScaleBiasDesc{scale, bias}; }

}  // namespace

TEST_CASE("clip1: integer bounds are values of the type, compared exactly", "[clip1]") {
    SECTION("INT8 and UINT8: the type's extremes as bounds") {
        CHECK(widen(clip1_both<std::int8_t>({-128, -100, -6, -5, 0, 100, 101, 127}, -5, 100)) ==
              I{-5, -5, -5, -5, 0, 100, 100, 100});
        CHECK(widen(clip1_both<std::uint8_t>({0, 1, 254, 255}, 1, 255)) == U{1, 1, 254, 255});
        CHECK(widen(clip1_both<std::int8_t>({-128, 0, 127}, -128, 127)) == I{-128, 0, 127});
    }
    SECTION("INT16 and UINT16") {
        CHECK(widen(clip1_both<std::int16_t>({-32768, -11, -10, 0, 10, 11, 32767}, -10, 10)) ==
              I{-10, -10, -10, 0, 10, 10, 10});
        CHECK(widen(clip1_both<std::uint16_t>({0, 7, 65534, 65535}, 7, 65534)) == U{7, 7, 65534, 65534});
    }
    SECTION("INT32: a bound that is no binary32 value") {
        // 2147483519 and -2147483519 are not binary32 values (binary32 steps by 128 there)
        CHECK(widen(clip1_both<std::int32_t>({2147483647, 2147483520, 2147483519, 2147483518, -2147483647 - 1,
                                              -2147483519, -2147483518},
                                             -2147483519, 2147483519)) ==
              I{2147483519, 2147483519, 2147483519, 2147483518, -2147483519, -2147483519, -2147483518});
    }
    SECTION("UINT32") {
        CHECK(widen(clip1_both<std::uint32_t>({0, 1, 4294967295u, 2147483648u, 3000000000u, 4000000001u}, 5,
                                              4000000000u)) == U{5, 5, 4000000000u, 2147483648u, 3000000000u, 4000000000u});
    }
    SECTION("INT64: bounds and values beyond 2^53 stay exact") {
        CHECK(clip1_both<std::int64_t>({kI64Min, kI64Max, k2p53 + 1, -k2p53 - 1, 0, k2p62 + 2, -k2p62 - 1}, -k2p62,
                                       k2p62 + 1) == I{-k2p62, k2p62 + 1, k2p53 + 1, -k2p53 - 1, 0, k2p62 + 1, -k2p62});
        CHECK(clip1_both<std::int64_t>({kI64Min, kI64Min + 1, kI64Max - 1, kI64Max}, kI64Min + 1, kI64Max - 1) ==
              I{kI64Min + 1, kI64Min + 1, kI64Max - 1, kI64Max - 1});
    }
    SECTION("UINT64") {
        CHECK(clip1_both<std::uint64_t>({0, kU64Max, k2p63, k2p53 + 1, 7}, 3, kU64Max - 1) ==
              U{3, kU64Max - 1, k2p63, k2p53 + 1, 7});
    }
}

TEST_CASE("clip1: Min > Max gives Max (exact) and Min (directml)", "[clip1]") {
    // exact: max(100, x) = 100 for every INT8 x here, then min(-5, 100) = -5.
    // directml: min'(x, -5) <= -5, then max'(., 100) = 100.
    const std::vector<std::int8_t> x = {-128, -5, 0, 100, 127};
    CHECK(widen(clip1<std::int8_t>(x, 100, -5)) == I(5, -5));
    CHECK(widen(clip1<std::int8_t>(x, 100, -5, std::nullopt, Fidelity::DirectML)) == I(5, 100));
    const std::vector<std::uint64_t> u = {0, 5, kU64Max};
    CHECK(clip1<std::uint64_t>(u, kU64Max, 1) == U(3, 1));
    CHECK(clip1<std::uint64_t>(u, kU64Max, 1, std::nullopt, Fidelity::DirectML) == U(3, kU64Max));
    // FLOAT32 Min 2, Max -1; NaN: exact lets it through (both comparisons false);
    // directml: NaN < -1 false -> -1, then -1 > 2 false -> 2.
    CHECK(clip1f({-3.0f, 0.0f, 5.0f, kNaN}, 2.0f, -1.0f, Fidelity::Exact) == bits(F{-1.0f, -1.0f, -1.0f, kNaN}));
    CHECK(clip1f({-3.0f, 0.0f, 5.0f, kNaN}, 2.0f, -1.0f, Fidelity::DirectML) == bits(F{2.0f, 2.0f, 2.0f, 2.0f}));
}

TEST_CASE("clip1: FLOAT32 specials per profile", "[clip1]") {
    const F x = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 1.5f, 3.0f, 0x1p-149f};
    SECTION("Min -1, Max 2: the profiles differ only on NaN") {
        // exact: NaN passes; directml: NaN < 2 false -> 2, 2 > -1 -> 2
        CHECK(clip1f(x, -1.0f, 2.0f, Fidelity::Exact) ==
              bits(F{kNaN, 2.0f, -1.0f, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -1.0f, 1.5f, 2.0f, 0x1p-149f}));
        CHECK(clip1f(x, -1.0f, 2.0f, Fidelity::DirectML) ==
              bits(F{2.0f, 2.0f, -1.0f, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -1.0f, 1.5f, 2.0f, 0x1p-149f}));
    }
    SECTION("Min -0, Max +0: a value equal to a bound stays (exact) or becomes the bound (directml)") {
        // exact: +0 < -0 false, +0 > +0 false -> +0; -0 likewise -> -0.
        // directml: +0 < +0 false -> +0 (Max), +0 > -0 false -> -0 (Min); -0: the same -> -0.
        CHECK(clip1f({0.0f, -0.0f, 1.0f, -1.0f}, -0.0f, 0.0f, Fidelity::Exact) == bits(F{0.0f, -0.0f, 0.0f, -0.0f}));
        CHECK(clip1f({0.0f, -0.0f, 1.0f, -1.0f}, -0.0f, 0.0f, Fidelity::DirectML) ==
              bits(F{-0.0f, -0.0f, -0.0f, -0.0f}));
        // Min = Max = +0, directml: -0 < +0 false -> +0, +0 > +0 false -> +0
        CHECK(clip1f({-0.0f, 0.0f}, 0.0f, 0.0f, Fidelity::DirectML) == bits(F{0.0f, 0.0f}));
        CHECK(clip1f({-0.0f, 0.0f}, 0.0f, 0.0f, Fidelity::Exact) == bits(F{-0.0f, 0.0f}));
    }
    SECTION("a NaN Min bounds nothing") {
        // Max 2: -inf stays, 3 -> 2; NaN: exact passes it, directml NaN < 2 false -> 2 (Min skipped)
        CHECK(clip1f({-kInf, 3.0f, 1.0f, kNaN}, kNaN, 2.0f, Fidelity::Exact) == bits(F{-kInf, 2.0f, 1.0f, kNaN}));
        CHECK(clip1f({-kInf, 3.0f, 1.0f, kNaN}, kNaN, 2.0f, Fidelity::DirectML) == bits(F{-kInf, 2.0f, 1.0f, 2.0f}));
    }
    SECTION("a NaN Max bounds nothing") {
        // Min -1: -2 -> -1, +inf stays; NaN: exact passes it; directml skips Max, NaN > -1 false -> -1
        CHECK(clip1f({-2.0f, kInf, 5.0f, kNaN}, -1.0f, kNaN, Fidelity::Exact) == bits(F{-1.0f, kInf, 5.0f, kNaN}));
        CHECK(clip1f({-2.0f, kInf, 5.0f, kNaN}, -1.0f, kNaN, Fidelity::DirectML) == bits(F{-1.0f, kInf, 5.0f, -1.0f}));
    }
    SECTION("both bounds NaN: nothing changes, NaN included") {
        CHECK(clip1f({-kInf, kNaN, 7.0f}, kNaN, kNaN, Fidelity::Exact) == bits(F{-kInf, kNaN, 7.0f}));
        CHECK(clip1f({-kInf, kNaN, 7.0f}, kNaN, kNaN, Fidelity::DirectML) == bits(F{-kInf, kNaN, 7.0f}));
    }
    SECTION("bounds at full binary32 precision") {
        // 0.1f and 0.3f themselves are the bounds: 0.1 -> 0.1f, 0.35 -> 0.3f
        CHECK(bits(clip1_both<float>({0.0f, 0.1f, 0.2f, 0.35f}, 0.1f, 0.3f)) == bits(F{0.1f, 0.1f, 0.2f, 0.3f}));
    }
}

TEST_CASE("clip1: FLOAT16 bounds are binary16 values", "[clip1]") {
    // Min 0x3C01 (1 + 2^-10), Max 0x4000 (2): 1.0 (0x3C00) -> 0x3C01, 3.0 (0x4200) -> 0x4000
    CHECK(bits16(clip1h({0x3C00, 0x3C01, 0x3E00, 0x4200, 0xFC00}, 0x3C01, 0x4000)) ==
          bits16(H{0x3C01, 0x3C01, 0x3E00, 0x4000, 0x3C01}));
    // NaN (0x7E00) passes in exact, becomes Max then stays (Max > Min) in directml
    CHECK(bits16(clip1h({0x7E00}, 0xBC00, 0x3C00)) == bits16(H{0x7E00}));
    CHECK(bits16(clip1h({0x7E00}, 0xBC00, 0x3C00, std::nullopt, Fidelity::DirectML)) == bits16(H{0x3C00}));
    // g in binary32, rounded once: 1 * (1 + 2^-11) + 2^-20 = 1 + 2^-11 + 2^-20, just above the
    // binary16 tie 1 + 2^-11 -> 0x3C01 (rounding the product to binary16 first gives 0x3C00)
    CHECK(bits16(clip1h({0x3C00}, 0xFC00, 0x7C00, sb(0x1.002p+0f, 0x1p-20f))) == bits16(H{0x3C01}));
}

TEST_CASE("clip1: ScaleBias on floats, two binary32 operations, no FMA", "[clip1]") {
    // x = Scale = 1 + 2^-12: x*Scale = 1 + 2^-11 + 2^-24, half-way between binary32 neighbours
    // -> even: 1 + 2^-11; + Bias -(1 + 2^-11) = 0. fma would give 2^-24.
    CHECK(bits(clip1_both<float>({0x1.001p+0f}, -1.0f, 1.0f, sb(0x1.001p+0f, -0x1.002p+0f))) == bits(F{0.0f}));
    // x * 0.5 + 1: {2, -3, NaN, inf, 10} -> {2, -0.5, NaN, inf, 6}, then Max 5
    CHECK(clip1f({2.0f, -3.0f, kNaN, kInf, 10.0f}, -kInf, 5.0f, Fidelity::Exact, sb(0.5f, 1.0f)) ==
          bits(F{2.0f, -0.5f, kNaN, 5.0f, 5.0f}));
}

TEST_CASE("clip1: ScaleBias on integers, binary32, truncation, saturation", "[clip1]") {
    SECTION("INT8: truncation toward zero, saturation, NaN to 0") {
        // x * 0.5 + 0.25 = {-63.75, -1.25, 0.25, 1.75, 63.75} -> {-63, -1, 0, 1, 63}
        CHECK(widen(clip1_both<std::int8_t>({-128, -3, 0, 3, 127}, -128, 127, sb(0.5f, 0.25f))) ==
              I{-63, -1, 0, 1, 63});
        // x * 3 = {-384, 300, 3} -> {-128, 127, 3}, then Max 100 -> {-128, 100, 3}
        CHECK(widen(clip1_both<std::int8_t>({-128, 100, 1}, -128, 100, sb(3.0f, 0.0f))) == I{-128, 100, 3});
        // Scale NaN: every g(x) NaN -> 0; Scale inf: 0 * inf = NaN -> 0, others saturate
        CHECK(widen(clip1_both<std::int8_t>({-5, 0, 5}, -128, 127, sb(kNaN, 0.0f))) == I{0, 0, 0});
        CHECK(widen(clip1_both<std::int8_t>({-5, 0, 5}, -128, 127, sb(kInf, 0.0f))) == I{-128, 0, 127});
        // then the typed clamp: Min -1 -> {-1, 0, 127}
        CHECK(widen(clip1_both<std::int8_t>({-5, 0, 5}, -1, 127, sb(kInf, 0.0f))) == I{-1, 0, 127});
    }
    SECTION("UINT8: negative g saturates to 0") {
        CHECK(widen(clip1_both<std::uint8_t>({0, 1, 255}, 0, 255, sb(-1.0f, 0.5f))) == U{0, 0, 0});
    }
    SECTION("INT32 and UINT64 go through fp32(x)") {
        // fp32(16777217) = 16777216 (tie to even); * 0.5 = 8388608
        CHECK(widen(clip1_both<std::int32_t>({16777217, 7}, -2147483647 - 1, 2147483647, sb(0.5f, 0.0f))) ==
              I{8388608, 3});
        // fp32(2^64 - 1) = 2^64; * 0.5 = 2^63 (exact profile: DirectML refuses ScaleBias on UINT64)
        CHECK(clip1<std::uint64_t>({kU64Max, 3}, 0, kU64Max, sb(0.5f, 0.0f)) == U{k2p63, 1});
    }
}

TEST_CASE("clip1: ScaleBias (1, +-0) is none in the directml profile", "[clip1]") {
    const std::vector<std::int32_t> x = {16777217, 16777219, 2147483647};
    const std::int32_t lo = -2147483647 - 1, hi = 2147483647;
    // exact: fp32(16777217) = 16777216, fp32(16777219) = 16777220 (ties to even),
    // fp32(2147483647) = 2^31 -> saturates to 2147483647
    CHECK(widen(clip1(x, lo, hi, sb(1.0f, 0.0f))) == I{16777216, 16777220, 2147483647});
    CHECK(widen(clip1(x, lo, hi, sb(1.0f, 0.0f), Fidelity::DirectML)) == I{16777217, 16777219, 2147483647});
    CHECK(widen(clip1(x, lo, hi, sb(1.0f, -0.0f), Fidelity::DirectML)) == I{16777217, 16777219, 2147483647});
    // Scale 1 + 2^-23: 16777216 * (1 + 2^-23) = 16777218; 16777220 * (1 + 2^-23) = 16777222.000002 -> 16777222
    CHECK(widen(clip1(x, lo, hi, sb(1.0000001f, 0.0f), Fidelity::DirectML)) == I{16777218, 16777222, 2147483647});
    // Bias 1: 16777216 + 1 = 16777217 -> tie to even 16777216; 16777220 + 1 -> 16777220
    CHECK(widen(clip1(x, lo, hi, sb(1.0f, 1.0f), Fidelity::DirectML)) == I{16777216, 16777220, 2147483647});
    // FLOAT32 -0: exact g(-0) = -0 * 1 + 0 = +0; directml leaves -0
    CHECK(clip1f({-0.0f}, -1.0f, 1.0f, Fidelity::Exact, sb(1.0f, 0.0f)) == bits(F{0.0f}));
    CHECK(clip1f({-0.0f}, -1.0f, 1.0f, Fidelity::DirectML, sb(1.0f, 0.0f)) == bits(F{-0.0f}));
}

TEST_CASE("clip1: in place, 1-D to 8-D, strides and broadcast", "[clip1]") {
    SECTION("INT64 in place, strided, with ScaleBias (exact profile)") {
        // strides {4, 1}: buffer element 3 is a gap and must keep its value
        Clip1<std::int64_t> t;
        t.sizes = {2, 3};
        t.in_strides = {4, 1};
        t.in = {1, 2, 3, 777, 4, 5, 6};
        t.scale_bias = sb(10.0f, 0.0f);
        t.max = 45;
        auto& d = t.build();
        d.OutputTensor = d.InputTensor;
        REQUIRE(rejected_member(d) == "<valid>");
        qdml::reference::run(d, FeatureLevel::Latest, Fidelity::Exact);
        const auto* raw = static_cast<const std::int64_t*>(d.InputTensor.Data);
        CHECK(I(raw, raw + 7) == I{10, 20, 30, 777, 40, 45, 45});
    }
    SECTION("ranks 1 to 8, padded input, column-major output") {
        // Input UINT16 = (97 L) mod 3000 in logical order L; Min 100, Max 2000
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
            std::vector<std::uint16_t> in(count);
            for (std::uint32_t L = 0; L < count; ++L) in[L] = static_cast<std::uint16_t>((97 * L) % 3000);
            Clip1<std::uint16_t> t;
            t.sizes = sizes;
            t.in = in;
            t.min = 100;
            t.max = 2000;
            auto& d = t.build();
            d.InputTensor = t.pool.logical(sizes, in, in_strides, std::uint16_t{12345});
            d.OutputTensor = t.pool.output(DT::UInt16, sizes, out_strides);
            qdml::reference::run(d, FeatureLevel::Latest, Fidelity::DirectML);
            const auto got = t.pool.read<std::uint16_t>(d.OutputTensor);
            REQUIRE(got.size() == count);
            for (std::uint32_t L = 0; L < count; ++L) {
                INFO("logical element " << L);
                const int v = in[L];
                REQUIRE(got[L] == (v < 100 ? 100 : v > 2000 ? 2000 : v));
            }
        }
    }
    SECTION("input broadcast through zero strides, transposed output") {
        // Input[i][j] = {-5, 0.5, 5}[j]; Min -1, Max 1 -> {-1, 0.5, 1} per row, Output[i][j] at i + 2j
        Clip1<float> t;
        t.sizes = {2, 3};
        t.in = {-5.0f, 0.5f, 5.0f};
        t.in_strides = {0, 1};
        t.min = -1.0f;
        t.max = 1.0f;
        t.out_strides = {1, 2};
        CHECK(bits(t.run()) == bits(F{-1.0f, 0.5f, 1.0f, -1.0f, 0.5f, 1.0f}));
        const auto* raw = static_cast<const float*>(t.d.OutputTensor.Data);
        CHECK(bits(F(raw, raw + 6)) == bits(F{-1.0f, -1.0f, 0.5f, 0.5f, 1.0f, 1.0f}));
    }
}

TEST_CASE("clip1: typed struct through bind", "[clip1]") {
    Clip1<std::int32_t> t;
    t.in = {-3, 0, 9};
    t.min = -1;
    t.max = 5;
    t.build();
    qdml::reference::element_wise_clip1(qdml::ElementWiseClip1<std::int32_t>::bind(t.d), Fidelity::Exact);
    CHECK(widen(t.pool.read<std::int32_t>(t.d.OutputTensor)) == I{-1, 0, 5});
    CHECK(qdml::scalar_value<std::uint64_t>(qdml::scalar_union(kU64Max - 1)) == kU64Max - 1);
    CHECK(qdml::scalar_union(std::int8_t{-1}).Bytes[1] == 0);  // the rest of the union is zero
}

TEST_CASE("clip1: validation, one rule at a time", "[clip1][validation]") {
    Clip1<std::int8_t> t;
    t.sizes = {2, 3};
    t.in = {1, 2, 3, 4, 5, 6};
    t.min = -1;
    t.max = 1;
    auto& d = t.build();
    auto& pool = t.pool;
    REQUIRE(rejected_member(d) == "<valid>");

    SECTION("MinMaxDataType must be the output's type") {
        d.MinMaxDataType = DT::Int16;
        CHECK(rejected_member(d) == "MinMaxDataType");
        d.MinMaxDataType = DT::Float32;
        CHECK(rejected_member(d) == "MinMaxDataType");
        d.MinMaxDataType = DT::Unknown;
        CHECK(rejected_member(d) == "MinMaxDataType");
    }
    SECTION("NaN bounds are accepted") {
        Clip1<float> f;
        f.in = {1.0f};
        f.min = kNaN;
        f.max = kNaN;
        CHECK(rejected_member(f.build()) == "<valid>");
    }
    SECTION("bad data type") {
        d.InputTensor.Desc.DataType = DT::Float64;
        d.OutputTensor.Desc.DataType = DT::Float64;
        d.MinMaxDataType = DT::Float64;
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("Output type differs from Input") {
        d.OutputTensor = pool.output(DT::UInt8, {2, 3});
        d.MinMaxDataType = DT::UInt8;
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("Sizes or DimensionCount mismatch") {
        d.OutputTensor = pool.output(DT::Int8, {3, 2});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::Int8, {1, 2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("DimensionCount 9") {
        d.OutputTensor.Desc.DimensionCount = 9;
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("output stride 0 on a dimension of size > 1") {
        d.OutputTensor = pool.output(DT::Int8, {2, 3}, {1, 0});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("overlap other than in place") {
        Tensor big = pool.output(DT::Int8, {12});
        d.InputTensor = Pool::alias(big, DT::Int8, {2, 3});
        d.OutputTensor = Pool::alias(big, DT::Int8, {2, 3}, 1);
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(big, DT::Int8, {2, 3}, 0);
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("feature level: from 5.0, with every type and 1-8 dims") {
        CHECK(rejected_member(d, FeatureLevel::L4_1) == "operator");
        CHECK(rejected_member(d, FeatureLevel::L5_0) == "<valid>");
        Clip1<std::uint64_t> e;
        e.sizes = Dims(8, 1u);
        e.in = {5};
        CHECK(rejected_member(e.build(), FeatureLevel::L5_0) == "<valid>");
    }
    SECTION("directml profile: no ScaleBias on INT64 or UINT64") {
        Clip1<std::int64_t> e;
        e.in = {1, 2};
        e.scale_bias = sb(0.5f, 0.0f);
        auto& d64 = e.build();
        CHECK(rejected_member(d64) == "<valid>");
        CHECK_THROWS_WITH(qdml::validate(d64, FeatureLevel::Latest, Fidelity::DirectML),
                          Catch::Contains("ScaleBias") && Catch::Contains("INT64"));
        Clip1<std::uint64_t> f;
        f.in = {1, 2};
        f.scale_bias = sb(1.0f, 0.0f);
        CHECK_THROWS_WITH(qdml::validate(f.build(), FeatureLevel::Latest, Fidelity::DirectML),
                          Catch::Contains("ScaleBias") && Catch::Contains("UINT64"));
        Clip1<std::int32_t> g;
        g.in = {1, 2};
        g.scale_bias = sb(0.5f, 0.0f);
        CHECK_NOTHROW(qdml::validate(g.build(), FeatureLevel::Latest, Fidelity::DirectML));
    }
    SECTION("run() rejects before touching the output") {
        d.MinMaxDataType = DT::Int32;
        CHECK_THROWS_AS(qdml::reference::run(d), qdml::Error);
        const auto* raw = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
        CHECK(std::vector<int>(raw, raw + 8) == std::vector<int>(8, kSentinel));
    }
}
