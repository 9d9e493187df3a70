// ELEMENT_WISE_DEQUANTIZE_LINEAR (docs/semantics.md sections 3 and 8). Every expected
// value below is derived by hand from
//   Output = fp32(Input - ZeroPoint) * Scale
// with Input - ZeroPoint exact (64-bit), one RNE rounding to binary32, one
// binary32 multiply, and for FLOAT16 one more RNE rounding of that binary32
// result to binary16. The tables were cross-checked with an independent numpy
// transcription (int64 difference, astype(float32), float32 multiply,
// astype(float16)).
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
using H = std::vector<std::uint16_t>;  // binary16 bit patterns
using F = std::vector<float>;

Dims zeros(std::size_t n) { return Dims(n, 0u); }

/// Builder: one dequantize. Scale and ZeroPoint have Input's Sizes; their
/// buffers are raw (memory order) and broadcast through their strides.
template <class TIn, class TOut>
struct Dq {
    Pool pool;
    Dims sizes{1};
    std::vector<TIn> in{0};
    Dims in_strides;
    std::vector<TOut> scale{TOut(1.0f)};
    Dims scale_strides;
    std::optional<std::vector<TIn>> zp;
    Dims zp_strides;
    Dims out_strides;
    qdml::ElementWiseDequantizeLinearDesc d;

    /// Scale and ZeroPoint each one value, broadcast to every element.
    void per_tensor(TOut s, std::optional<TIn> z) {
        scale = {s};
        scale_strides = zeros(sizes.size());
        if (z) zp = std::vector<TIn>{*z};
        zp_strides = zeros(sizes.size());
    }
    qdml::ElementWiseDequantizeLinearDesc& build() {
        d.InputTensor = pool.raw(sizes, in, in_strides);
        d.ScaleTensor = pool.raw(sizes, scale, scale_strides);
        if (zp) d.ZeroPointTensor = pool.raw(sizes, *zp, zp_strides);
        d.OutputTensor = pool.output(qdml::data_type_of<TOut>, sizes, out_strides);
        return d;
    }
    std::vector<TOut> run(FeatureLevel level = FeatureLevel::Latest) {
        build();
        qdml::run(d, qtest::exact(qdml::Implementation::Reference, level));
        return pool.read<TOut>(d.OutputTensor);
    }
};

/// One row of the type table: 5 inputs, 5 per-element zero points, Scale 0.5
/// per tensor; the expected FLOAT32 values and FLOAT16 bits.
template <class TIn>
void check_both_outputs(const std::vector<TIn>& in, const std::vector<TIn>& zp, const F& want32, const H& want16) {
    {
        INFO("FLOAT32 output");
        Dq<TIn, float> t;
        t.sizes = {5};
        t.in = in;
        t.zp = zp;
        t.scale = {0.5f};
        t.scale_strides = {0};
        CHECK(bits(t.run()) == bits(want32));
    }
    {
        INFO("FLOAT16 output");
        Dq<TIn, float16> t;
        t.sizes = {5};
        t.in = in;
        t.zp = zp;
        t.scale = halves({0x3800});  // 0.5
        t.scale_strides = {0};
        CHECK(bits16(t.run()) == bits16(want16));
    }
}

}  // namespace

TEST_CASE("dequantize: every input type x FLOAT32 and FLOAT16 output, extremes exact in 64 bits",
          "[dequantize]") {
    // FLOAT16 bits used below: 127.5 = 2^6 * 1.9921875 -> 0x57F8; 0.5 = 0x3800; 1.5 = 0x3E00;
    // 2.5 = 0x4100; 1 = 0x3C00; 1000 = 2^9 * 1.953125 -> 0x63D0; 5.5 = 2^2 * 1.375 -> 0x4580;
    // 2^15 = 0x7800; +-inf = 0x7C00 / 0xFC00 (anything >= 65520).
    SECTION("INT8") {
        // Input - ZP = {-128-127, 127+128, 0-1, 5-5, -3+8} = {-255, 255, -1, 0, 5}; * 0.5:
        check_both_outputs<std::int8_t>({-128, 127, 0, 5, -3}, {127, -128, 1, 5, -8}, {-127.5f, 127.5f, -0.5f, 0.0f, 2.5f},
                                        {0xD7F8, 0x57F8, 0xB800, 0x0000, 0x4100});
    }
    SECTION("UINT8") {
        // {0-255, 255-0, 255-255, 7-4, 200-201} = {-255, 255, 0, 3, -1}; * 0.5:
        check_both_outputs<std::uint8_t>({0, 255, 255, 7, 200}, {255, 0, 255, 4, 201},
                                         {-127.5f, 127.5f, 0.0f, 1.5f, -0.5f}, {0xD7F8, 0x57F8, 0x0000, 0x3E00, 0xB800});
    }
    SECTION("INT16") {
        // {-65535, 65535, 0, 3, 2000} (exact in binary32); * 0.5 = {-32767.5, 32767.5, 0, 1.5, 1000}.
        // FLOAT16: 32767.5 lies in [2^14, 2^15) where the spacing is 16: nearest is 2^15.
        check_both_outputs<std::int16_t>({-32768, 32767, -32768, 1, 1000}, {32767, -32768, -32768, -2, -1000},
                                         {-32767.5f, 32767.5f, 0.0f, 1.5f, 1000.0f},
                                         {0xF800, 0x7800, 0x0000, 0x3E00, 0x63D0});
    }
    SECTION("UINT16") {
        // {0-65535, 65535-0, 65535-1, 2-0, 3-0} = {-65535, 65535, 65534, 2, 3}; * 0.5:
        check_both_outputs<std::uint16_t>({0, 65535, 65535, 2, 3}, {65535, 0, 1, 0, 0},
                                          {-32767.5f, 32767.5f, 32767.0f, 1.0f, 1.5f},
                                          {0xF800, 0x7800, 0x7800, 0x3C00, 0x3E00});
    }
    SECTION("INT32") {
        // -2147483648 - 2147483647 = -4294967295 (32-bit arithmetic would wrap to 1), fp32 -> -2^32;
        // 2147483647 + 2147483648 = 4294967295 -> 2^32;  2147483647 - 0 -> fp32 2^31;
        // 16777217 -> fp32 2^24 (tie, even);  -5 - 6 = -11.  * 0.5 = {-2^31, 2^31, 2^30, 2^23, -5.5}
        check_both_outputs<std::int32_t>({-2147483647 - 1, 2147483647, 2147483647, 16777217, -5},
                                         {2147483647, -2147483647 - 1, 0, 0, 6},
                                         {-2147483648.0f, 2147483648.0f, 1073741824.0f, 8388608.0f, -5.5f},
                                         {0xFC00, 0x7C00, 0x7C00, 0x7C00, 0xC580});
    }
    SECTION("UINT32") {
        // 4294967295 - 0 -> fp32 2^32;  0 - 4294967295 = -4294967295 -> -2^32 (uint32 would wrap to 1);
        // 4294967295 - 4294967295 = 0;  16777217 -> 2^24;  7 - 2 = 5.  * 0.5:
        check_both_outputs<std::uint32_t>({4294967295u, 0, 4294967295u, 16777217, 7}, {0, 4294967295u, 4294967295u, 0, 2},
                                          {2147483648.0f, -2147483648.0f, 0.0f, 8388608.0f, 2.5f},
                                          {0x7C00, 0xFC00, 0x0000, 0x7C00, 0x4100});
    }
}

TEST_CASE("dequantize: the difference is rounded to binary32 before one binary32 multiply", "[dequantize]") {
    Dq<std::uint32_t, float> t;
    t.sizes = {3};
    t.in = {16777217, 16777219, 4294967295u};
    t.per_tensor(3.0f, 0u);
    // fp32(16777217) = 16777216 (tie, even), * 3 = 50331648 exactly; multiplying the exact
    //   difference would give 50331651 -> binary32 50331652 (spacing 4 in [2^25, 2^26)).
    // fp32(16777219) = 16777220 (tie, even), * 3 = 50331660 exactly; exact 50331657 -> 50331656.
    // fp32(4294967295) = 2^32, * 3 = 3 * 2^32 = 12884901888.
    CHECK(bits(t.run()) == bits(F{50331648.0f, 50331660.0f, 12884901888.0f}));
}

TEST_CASE("dequantize: FLOAT16 output rounded once, ties to even, overflow to infinity", "[dequantize]") {
    Dq<std::int16_t, float16> t;
    t.sizes = {8};
    // Scale per element (FLOAT16 bits), zero point 0:
    //  3 * 0x3C01 (1 + 2^-10)   = 3 + 3*2^-10 = 3 + 1.5*2^-9: tie between 0x4201 (odd) and 0x4202 -> 0x4202
    //  3 * 0x3C03 (1 + 3*2^-10) = 3 + 4.5*2^-9: tie between 0x4204 (even) and 0x4205 -> 0x4204
    //  3 * 0x7555 (21840)       = 65520: tie between 65504 (0x7BFF, odd) and 2^16 -> +inf 0x7C00
    //  -3 * 0x7555              = -65520 -> -inf 0xFC00
    //  32767 * 0x3C00 (1)       = 32767: spacing 16 in [2^14, 2^15) -> 32768 = 0x7800
    //  255 * 0x7BFF (65504)     = 16703520 -> +inf
    //  18637 * 0x3C05 (1 + 5*2^-10) = 18728 + 2^-10 exactly; in binary32 (spacing 2^-9 there) that is a
    //    tie -> 18728 (even); 18728 is a binary16 tie between 18720 (0x7492, even) and 18736 (0x7493)
    //    -> 0x7492. Rounding the exact product once to binary16 would give 0x7493: the spec computes
    //    in binary32 first.
    //  -1 * 0x0001 (2^-24, subnormal) = -2^-24 -> 0x8001
    t.in = {3, 3, 3, -3, 32767, 255, 18637, -1};
    t.scale = halves({0x3C01, 0x3C03, 0x7555, 0x7555, 0x3C00, 0x7BFF, 0x3C05, 0x0001});
    SECTION("zero point present (0)") {
        t.zp = std::vector<std::int16_t>{0};
        t.zp_strides = {0};
        CHECK(bits16(t.run()) == bits16(H{0x4202, 0x4204, 0x7C00, 0xFC00, 0x7800, 0x7C00, 0x7492, 0x8001}));
    }
    SECTION("65519 is the largest value below the overflow midpoint") {
        // UINT16 65519 - 0 = 65519 -> binary16 65504 (0x7BFF); 65535 - 15 = 65520 -> inf.
        Dq<std::uint16_t, float16> u;
        u.sizes = {2};
        u.in = {65519, 65535};
        u.zp = std::vector<std::uint16_t>{0, 15};
        u.scale = halves({0x3C00});
        u.scale_strides = {0};
        CHECK(bits16(u.run()) == bits16(H{0x7BFF, 0x7C00}));
    }
}

TEST_CASE("dequantize: FLOAT32 special values", "[dequantize]") {
    Dq<std::int32_t, float> t;
    t.sizes = {7};
    t.in = {0, 0, 1, 1, 3, -1, 0};
    t.zp = std::vector<std::int32_t>{0};
    t.zp_strides = {0};
    const float inf = std::numeric_limits<float>::infinity();
    const float tiny = std::numeric_limits<float>::denorm_min();  // 2^-149
    const float big = std::numeric_limits<float>::max();
    // 0 * -0.5 = -0.0;  0 * inf = NaN;  1 * -0.0 = -0.0;  1 * inf = inf;
    // 3 * 2^-149 = 3 * 2^-149 (subnormal, exact);  -1 * max = -max;  0 * max = +0
    t.scale = {-0.5f, inf, -0.0f, inf, tiny, big, big};
    CHECK(bits(t.run()) == bits(F{-0.0f, std::numeric_limits<float>::quiet_NaN(), -0.0f, inf,
                                  3 * std::numeric_limits<float>::denorm_min(), -big, 0.0f}));

    SECTION("overflow to infinity") {
        Dq<std::uint32_t, float> u;
        u.sizes = {2};
        u.in = {4294967295u, 0};
        u.zp = std::vector<std::uint32_t>{0, 4294967295u};
        u.scale = {big};
        u.scale_strides = {0};
        // +-2^32 * max overflows binary32 -> +-inf
        CHECK(bits(u.run()) == bits(F{inf, -inf}));
    }
}

TEST_CASE("dequantize: optional ZeroPoint absent means 0", "[dequantize]") {
    // INT8 {-128, 127, 0} * 2 = {-256, 254, 0}
    SECTION("FLOAT32") {
        Dq<std::int8_t, float> t;
        t.sizes = {3};
        t.in = {-128, 127, 0};
        t.per_tensor(2.0f, std::nullopt);
        CHECK(bits(t.run()) == bits(F{-256.0f, 254.0f, 0.0f}));
    }
    SECTION("FLOAT16") {
        // -256 = 0xDC00; 254 = 2^7 * 1.984375 -> 0x5BF0
        Dq<std::int8_t, float16> t;
        t.sizes = {3};
        t.in = {-128, 127, 0};
        t.per_tensor(float16(2.0f), std::nullopt);
        CHECK(bits16(t.run()) == bits16(H{0xDC00, 0x5BF0, 0x0000}));
    }
}

TEST_CASE("dequantize: per-tensor, per-axis and strided Scale and ZeroPoint", "[dequantize]") {
    SECTION("2-D: Scale per column {0, 1}, ZeroPoint per row {1, 0}") {
        // Input {{1,3,5},{10,20,40}}, ZP rows {1, 4} -> diff {{0,2,4},{6,16,36}}
        // Scale columns {1, 0.5, 0.25} -> {{0,1,1},{6,8,9}}
        Dq<std::uint8_t, float> t;
        t.sizes = {2, 3};
        t.in = {1, 3, 5, 10, 20, 40};
        t.scale = {1.0f, 0.5f, 0.25f};
        t.scale_strides = {0, 1};
        t.zp = std::vector<std::uint8_t>{1, 4};
        t.zp_strides = {1, 0};
        CHECK(bits(t.run()) == bits(F{0, 1, 1, 6, 8, 9}));
    }
    SECTION("4-D per channel {1, C, 1, 1} pattern on {1, 3, 2, 1}") {
        // Input {1,2 | 3,4 | 5,6}, ZP {0,1,2}, Scale {1,2,4}:
        //   diff {1,2 | 2,3 | 3,4} * {1 | 2 | 4} = {1,2, 4,6, 12,16}
        Dq<std::int16_t, float16> t;
        t.sizes = {1, 3, 2, 1};
        t.in = {1, 2, 3, 4, 5, 6};
        t.scale = halves({0x3C00, 0x4000, 0x4400});
        t.scale_strides = {0, 1, 0, 0};
        t.zp = std::vector<std::int16_t>{0, 1, 2};
        t.zp_strides = {0, 1, 0, 0};
        // 1 0x3C00, 2 0x4000, 4 0x4400, 6 0x4600, 12 0x4A00, 16 0x4C00
        CHECK(bits16(t.run()) == bits16(H{0x3C00, 0x4000, 0x4400, 0x4600, 0x4A00, 0x4C00}));
    }
    SECTION("full-size Scale stored transposed, ZeroPoint per tensor") {
        // Scale[i][j] = buf[i + 2j] with buf {1, 2, 0.5, 4, 0.25, 8}: {{1, 0.5, 0.25}, {2, 4, 8}}
        // Input - 10 = {{0, 2, 4}, {-2, -4, 6}} -> {{0, 1, 1}, {-4, -16, 48}}
        Dq<std::int32_t, float> t;
        t.sizes = {2, 3};
        t.in = {10, 12, 14, 8, 6, 16};
        t.scale = {1.0f, 2.0f, 0.5f, 4.0f, 0.25f, 8.0f};
        t.scale_strides = {1, 2};
        t.zp = std::vector<std::int32_t>{10};
        t.zp_strides = {0, 0};
        CHECK(bits(t.run()) == bits(F{0, 1, 1, -4, -16, 48}));
    }
}

namespace {
/// Rank test contents, in logical row-major index L: Input = (37 L + 11) mod
/// 65536 (UINT16); ZeroPoint per first index {1000, 60000}; Scale per last
/// index {0.5, 0.25, 2}. |Input - ZP| < 2^16 and the scales are powers of
/// two, so fp32(Input - ZP) * Scale is exact and the double product below is
/// the spec's value.
std::uint16_t nd_input(std::uint32_t L) { return static_cast<std::uint16_t>((37u * L + 11u) % 65536u); }
const double kNdZp[2] = {1000, 60000};
const float kNdScale[3] = {0.5f, 0.25f, 2.0f};
}  // namespace

TEST_CASE("dequantize: 1-D to 8-D, padded input, column-major output", "[dequantize]") {
    for (std::size_t rank = 1; rank <= 8; ++rank) {
        INFO("rank " << rank);
        Dims sizes(rank), in_strides(rank), out_strides(rank);
        for (std::size_t i = 0; i < rank; ++i) sizes[i] = 2 + static_cast<std::uint32_t>(i % 2);
        in_strides[rank - 1] = 2;  // every other element, +1 padding per level
        for (std::size_t i = rank - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * sizes[i + 1] + 1;
        std::uint32_t count = 1;
        for (std::size_t i = 0; i < rank; ++i) {  // first index fastest
            out_strides[i] = count;
            count *= sizes[i];
        }
        const std::uint32_t last = sizes[rank - 1];  // 2 or 3
        std::vector<std::uint16_t> in(count);
        for (std::uint32_t L = 0; L < count; ++L) in[L] = nd_input(L);

        Dq<std::uint16_t, float> t;
        t.sizes = sizes;
        t.scale.assign(kNdScale, kNdScale + last);
        t.scale_strides = zeros(rank);
        t.scale_strides[rank - 1] = 1;
        t.zp = std::vector<std::uint16_t>{1000, 60000};
        t.zp_strides = zeros(rank);
        if (rank == 1) t.zp->resize(1);  // the one index is both first and last: ZP per tensor 1000
        else t.zp_strides[0] = 1;
        t.in = in;  // packed placeholder, replaced by the padded one
        t.build();
        t.d.InputTensor = t.pool.logical(sizes, in, in_strides, std::uint16_t{0xBEEF});
        t.d.OutputTensor = t.pool.output(DT::Float32, sizes, out_strides);
        qdml::run(t.d, qtest::exact());
        const auto got = t.pool.read<float>(t.d.OutputTensor);
        REQUIRE(got.size() == count);
        const std::uint32_t first_block = count / sizes[0];  // L / first_block = first index
        for (std::uint32_t L = 0; L < count; ++L) {
            INFO("logical element " << L);
            const double zp = rank == 1 ? kNdZp[0] : kNdZp[L / first_block];
            const double want = (static_cast<double>(in[L]) - zp) * static_cast<double>(kNdScale[L % last]);
            REQUIRE(static_cast<double>(got[L]) == want);
        }
    }
}

TEST_CASE("dequantize: strided input and output write only the addressed elements", "[dequantize]") {
    // Input {2,2} at buffer {0, 2, 5, 7} (strides {5, 2}): {{1, 2}, {3, 4}}; ZP 1, Scale 0.5
    //   -> {{0, 0.5}, {1, 1.5}} = FLOAT16 {0x0000, 0x3800, 0x3C00, 0x3E00}
    Dq<std::int8_t, float16> t;
    t.sizes = {2, 2};
    t.in = {1, 99, 2, 99, 99, 3, 99, 4};
    t.in_strides = {5, 2};
    t.per_tensor(float16(0.5f), std::int8_t{1});
    SECTION("sparse output strides {7, 3}") {
        t.out_strides = {7, 3};
        CHECK(bits16(t.run()) == bits16(H{0x0000, 0x3800, 0x3C00, 0x3E00}));  // read() checks gaps and guards
    }
    SECTION("transposed output strides {1, 2}") {
        t.out_strides = {1, 2};
        CHECK(bits16(t.run()) == bits16(H{0x0000, 0x3800, 0x3C00, 0x3E00}));
        const auto* raw = static_cast<const std::uint16_t*>(t.d.OutputTensor.Data);
        CHECK(bits16(H(raw, raw + 4)) == bits16(H{0x0000, 0x3C00, 0x3800, 0x3E00}));  // Output[i][j] at i + 2j
    }
}

TEST_CASE("dequantize: typed struct of a 2-D desc (right-aligned rank-8 views)", "[dequantize]") {
    // {2, 2} becomes {1, 1, 1, 1, 1, 1, 2, 2}. (5-1)*0.25=1, (9-1)*0.25=2, ...
    Dq<std::uint8_t, float> t;
    t.sizes = {2, 2};
    t.in = {5, 9, 13, 1};
    t.per_tensor(0.25f, std::uint8_t{1});
    t.build();
    qdml::validate(t.d);
    const auto op = qdml::ElementWiseDequantizeLinear<std::uint8_t, float>::bind(t.d);
    CHECK(op.InputTensor.sizes == std::array<std::uint32_t, 8>{1, 1, 1, 1, 1, 1, 2, 2});
    qdml::reference::element_wise_dequantize_linear(op, qdml::Fidelity::Exact);
    CHECK(bits(t.pool.read<float>(t.d.OutputTensor)) == bits(F{1, 2, 3, 0}));
}

TEST_CASE("dequantize: validation, one rule at a time", "[dequantize][validation]") {
    Dq<std::int8_t, float> t;
    t.sizes = {2, 3};
    t.in = {1, 2, 3, 4, 5, 6};
    t.per_tensor(0.5f, std::int8_t{0});
    auto& d = t.build();
    auto& pool = t.pool;
    REQUIRE(rejected_member(d) == "<valid>");

    SECTION("Input type not an integer of the table") {
        d.InputTensor = pool.raw<float>({2, 3}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor = pool.raw<std::int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("Input type outside the DML enum") {
        d.InputTensor.Desc.DataType = static_cast<qdml::TensorDataType>(99);
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("Scale not FLOAT32/FLOAT16") {
        d.ScaleTensor = pool.raw<std::int32_t>({2, 3}, {1}, {0, 0});
        CHECK(rejected_member(d) == "ScaleTensor");
    }
    SECTION("Output not FLOAT32/FLOAT16") {
        d.OutputTensor = pool.output(DT::Int32, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("ZeroPoint type differs from Input") {
        d.ZeroPointTensor = pool.raw<std::uint8_t>({2, 3}, {0}, {0, 0});
        CHECK(rejected_member(d) == "ZeroPointTensor");
        d.ZeroPointTensor = pool.raw<std::int16_t>({2, 3}, {0}, {0, 0});
        CHECK(rejected_member(d) == "ZeroPointTensor");
    }
    SECTION("Output type differs from Scale") {
        d.ScaleTensor = pool.raw<float16>({2, 3}, halves({0x3800}), {0, 0});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("DimensionCount mismatch") {
        d.ScaleTensor = pool.raw<float>({1, 2, 3}, {0.5f}, {0, 0, 0});
        CHECK(rejected_member(d) == "ScaleTensor");
        d.ScaleTensor = pool.raw<float>({2, 3}, {0.5f}, {0, 0});
        d.ZeroPointTensor = pool.raw<std::int8_t>({6}, {0}, {0});
        CHECK(rejected_member(d) == "ZeroPointTensor");
    }
    SECTION("Sizes mismatch (no implicit broadcast of a {1,1} tensor)") {
        d.ScaleTensor = pool.raw<float>({1, 1}, {0.5f});
        CHECK(rejected_member(d) == "ScaleTensor");
        d.ScaleTensor = pool.raw<float>({2, 3}, {0.5f}, {0, 0});
        d.ZeroPointTensor = pool.raw<std::int8_t>({3, 2}, {0}, {0, 0});
        CHECK(rejected_member(d) == "ZeroPointTensor");
        d.ZeroPointTensor = pool.raw<std::int8_t>({2, 3}, {0}, {0, 0});
        d.OutputTensor = pool.output(DT::Float32, {2, 2});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("a size of 0") {
        d.InputTensor.Desc.Sizes[1] = 0;
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("DimensionCount 0 and 9") {
        d.InputTensor.Desc.DimensionCount = 0;
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor.Desc.DimensionCount = 9;
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("TotalTensorSizeInBytes below the minimum") {
        d.InputTensor.Desc.TotalTensorSizeInBytes = 4;  // 6 bytes rounded up to 8
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor.Desc.TotalTensorSizeInBytes = 8;
        d.OutputTensor.Desc.TotalTensorSizeInBytes = 23;  // 6 * 4 = 24
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("output stride 0 on a dimension of size > 1 (allowed on size 1)") {
        d.OutputTensor = pool.output(DT::Float32, {2, 3}, {3, 0});
        CHECK(rejected_member(d) == "OutputTensor");
        Dq<std::int8_t, float> one;
        one.sizes = {1, 3};
        one.in = {1, 2, 3};
        one.per_tensor(1.0f, std::int8_t{0});
        one.out_strides = {0, 1};
        CHECK(bits(one.run()) == bits(F{1, 2, 3}));
    }
    SECTION("output strides mapping two elements to one address") {
        d.OutputTensor = pool.output(DT::Float32, {2, 3}, {1, 1});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("output overlapping an input, even the identical region") {
        // INT32 Input and FLOAT32 Output have the same element size.
        Dq<std::int32_t, float> s;
        s.sizes = {2, 3};
        s.in = {1, 2, 3, 4, 5, 6};
        s.per_tensor(0.5f, 0);
        auto& e = s.build();
        REQUIRE(rejected_member(e) == "<valid>");
        e.OutputTensor = Pool::alias(e.InputTensor, DT::Float32, {2, 3});
        CHECK(rejected_member(e) == "OutputTensor");
        e.OutputTensor = Pool::alias(e.InputTensor, DT::Float32, {2, 3}, 5);  // last element shared
        CHECK(rejected_member(e) == "OutputTensor");
    }
    SECTION("output overlapping Scale or ZeroPoint") {
        Tensor big = pool.output(DT::Float32, {7});
        d.OutputTensor = Pool::alias(big, DT::Float32, {2, 3});
        d.ScaleTensor = Pool::alias(big, DT::Float32, {2, 3}, 6, {0, 0});
        CHECK(rejected_member(d) == "<valid>");  // element 6 is just past the output
        d.ScaleTensor = Pool::alias(big, DT::Float32, {2, 3}, 5, {0, 0});
        CHECK(rejected_member(d) == "OutputTensor");
        d.ScaleTensor = pool.raw<float>({2, 3}, {0.5f}, {0, 0});
        d.ZeroPointTensor = Pool::alias(big, DT::Int8, {2, 3}, 0, {0, 0});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("null Data") {
        d.ScaleTensor.Data = nullptr;
        CHECK(rejected_member(d) == "ScaleTensor");
    }
    SECTION("feature level: ZeroPoint absent is rejected before 6.2") {
        d.ZeroPointTensor.reset();
        CHECK(rejected_member(d, FeatureLevel::L6_1) == "ZeroPointTensor");
        CHECK(rejected_member(d, FeatureLevel::L6_2) == "<valid>");
    }
    SECTION("feature level: 8 dimensions rejected at 2.1, accepted from 3.0") {
        Dq<std::int8_t, float> e;
        e.sizes = Dims(8, 1u);
        e.in = {7};
        e.per_tensor(1.0f, std::int8_t{0});
        auto& d8 = e.build();
        CHECK(rejected_member(d8, FeatureLevel::L2_1) == "InputTensor");
        CHECK(rejected_member(d8, FeatureLevel::L3_0) == "<valid>");
        CHECK(rejected_member(d, FeatureLevel::L2_1) == "InputTensor");  // 2 dims: 2.1 takes exactly 4
    }
    SECTION("feature level: 4-D INT8 from 2.1, only UINT8 at 1.0; FLOAT16 from 6.0") {
        Dq<std::int8_t, float> e;
        e.sizes = {1, 1, 2, 3};
        e.in = {1, 2, 3, 4, 5, 6};
        e.per_tensor(1.0f, std::int8_t{0});
        auto& d4 = e.build();
        CHECK(rejected_member(d4, FeatureLevel::L2_1) == "<valid>");
        CHECK(rejected_member(d4, FeatureLevel::L1_0) == "InputTensor");
        Dq<std::uint8_t, float16> h;
        h.sizes = {1, 1, 2, 3};
        h.in = {1, 2, 3, 4, 5, 6};
        h.per_tensor(float16(1.0f), std::uint8_t{0});
        auto& dh = h.build();
        CHECK(rejected_member(dh, FeatureLevel::L5_2) == "ScaleTensor");
        CHECK(rejected_member(dh, FeatureLevel::L6_0) == "<valid>");
    }
    SECTION("run() rejects before touching the output") {
        d.ZeroPointTensor = pool.raw<std::uint8_t>({2, 3}, {0}, {0, 0});
        CHECK_THROWS_AS(qdml::run(d), qdml::Error);
        const auto* raw = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
        CHECK(std::vector<int>(raw, raw + 24) == std::vector<int>(24, kSentinel));
    }
}
