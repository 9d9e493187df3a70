// ELEMENT_WISE_QUANTIZE_LINEAR (docs/semantics.md sections 2, 8 and 11). Every expected
// value below is derived by hand from
//   Output = Q(x(Input) / Scale, ZeroPoint, OutputType)
// with x(Input) the input widened (FLOAT16, exact) or converted by fp32
// (INT32, ties to even beyond 2^24), one binary32 division, then Q: clamp to
// [lo - zp, hi - zp] (NaN to lo - zp), round ties to even, add zp. The
// quotients near a tie were cross-checked in numpy (float32 division).
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
using F = std::vector<float>;
using I8 = std::vector<std::int8_t>;
using U8 = std::vector<std::uint8_t>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Builder: one quantize. Scale and ZeroPoint have Input's Sizes; their
/// buffers are raw (memory order) and broadcast through their strides.
template <class TIn, class TOut>
struct Qz {
    using TScale = typename qdml::ElementWiseQuantizeLinear<TIn, TOut>::TScale;
    Pool pool;
    Dims sizes{1};
    std::vector<TIn> in{TIn{}};
    Dims in_strides;
    std::vector<TScale> scale{TScale(1.0f)};
    Dims scale_strides;
    std::optional<std::vector<TOut>> zp;
    Dims zp_strides;
    Dims out_strides;
    qdml::ElementWiseQuantizeLinearDesc d;

    /// Scale and ZeroPoint each one value, broadcast to every element.
    void per_tensor(TScale s, std::optional<TOut> z) {
        scale = {s};
        scale_strides = Dims(sizes.size(), 0u);
        if (z) zp = std::vector<TOut>{*z};
        zp_strides = Dims(sizes.size(), 0u);
    }
    qdml::ElementWiseQuantizeLinearDesc& build() {
        d.InputTensor = pool.raw(sizes, in, in_strides);
        d.ScaleTensor = pool.raw(sizes, scale, scale_strides);
        if (zp) d.ZeroPointTensor = pool.raw(sizes, *zp, zp_strides);
        d.OutputTensor = pool.output(qdml::data_type_of<TOut>, sizes, out_strides);
        return d;
    }
    std::vector<int> run(Fidelity f = Fidelity::Exact, FeatureLevel level = FeatureLevel::Latest) {
        build();
        qdml::reference::run(d, level, f);
        const auto out = pool.read<TOut>(d.OutputTensor);
        return std::vector<int>(out.begin(), out.end());
    }
    /// The same result in both profiles (every rule but the NaN one).
    std::vector<int> run_both() {
        const auto exact = run(Fidelity::Exact);
        CHECK(run(Fidelity::DirectML) == exact);  // build() binds fresh buffers
        return exact;
    }
};

/// A 1-D FLOAT32 -> TOut quantize of `in`, one scale and zero point.
template <class TOut>
std::vector<int> quantize_f32(const F& in, float scale, std::optional<TOut> zp, Fidelity f = Fidelity::Exact) {
    Qz<float, TOut> t;
    t.sizes = {static_cast<std::uint32_t>(in.size())};
    t.in = in;
    t.per_tensor(scale, zp);
    return t.run(f);
}

template <class TOut>
std::vector<int> quantize_f32_both(const F& in, float scale, std::optional<TOut> zp) {
    const auto exact = quantize_f32<TOut>(in, scale, zp, Fidelity::Exact);
    CHECK(quantize_f32<TOut>(in, scale, zp, Fidelity::DirectML) == exact);
    return exact;
}

}  // namespace

TEST_CASE("quantize: a true binary32 division, not a multiplication by 1/Scale", "[quantize]") {
    // 0.3f = 0.300000011920928955078125 > 0.3, so 2.25 / 0.3f = 7.49999970..., which binary32
    // rounds to 7.4999995 (the neighbours are 7.4999995231 and 7.5; 7.49999970 is nearer the
    // first): rne gives 7. 1/0.3f rounds to 3.3333333 and 2.25 * that to exactly 7.5, which
    // would give 8. Likewise 8.25 / 0.3f = 27.499998 -> 27 (27.5 -> 28 by the reciprocal),
    // and the negatives -7, -27. 1 / 0.3f = 3.33 -> 3; 30 / 0.3f = 99.999997 -> 100.
    CHECK(quantize_f32_both<std::int8_t>({2.25f, 8.25f, -2.25f, -8.25f, 1.0f, 30.0f}, 0.3f, std::int8_t{0}) ==
          std::vector<int>{7, 27, -7, -27, 3, 100});
}

TEST_CASE("quantize: ties to even after the division", "[quantize]") {
    // Scale 0.5: {1.25, 1.75, -1.25, -1.75, 0.25, -0.25} / 0.5 = {2.5, 3.5, -2.5, -3.5, 0.5, -0.5}
    // (exact); ties to even: {2, 4, -2, -4, 0, 0}; away from zero would be {3, 4, -3, -4, 1, -1}.
    CHECK(quantize_f32_both<std::int8_t>({1.25f, 1.75f, -1.25f, -1.75f, 0.25f, -0.25f}, 0.5f, std::int8_t{0}) ==
          std::vector<int>{2, 4, -2, -4, 0, 0});
    // With zero point 10 (UINT8): the rounding is of the quotient, before the zero point is added:
    // 2.5 -> 2 + 10 = 12, 3.5 -> 4 + 10 = 14, -2.5 -> -2 + 10 = 8, 0.5 -> 0 + 10 = 10.
    CHECK(quantize_f32_both<std::uint8_t>({1.25f, 1.75f, -1.25f, 0.25f}, 0.5f, std::uint8_t{10}) ==
          std::vector<int>{12, 14, 8, 10});
}

TEST_CASE("quantize: saturation to the output type, with and without a zero point", "[quantize]") {
    SECTION("INT8") {
        // / 1: {127.4 -> 127, 127.5 -> 128 (tie, even) -> 127, -128.5 -> -128 (even), -129 -> -128,
        //       3e9 -> 127, -3e9 -> -128, +inf -> 127, -inf -> -128}
        CHECK(quantize_f32_both<std::int8_t>({127.4f, 127.5f, -128.5f, -129.0f, 3e9f, -3e9f, kInf, -kInf}, 1.0f,
                                             std::int8_t{0}) == std::vector<int>{127, 127, -128, -128, 127, -128, 127, -128});
        // Zero point 100: 20 + 100 = 120; 50 + 100 = 150 -> 127; -300 + 100 = -200 -> -128;
        // +inf -> 127 (no wrap of 2^31 - 1 + 100 to the low end); -inf -> -128; 3e9 -> 127.
        CHECK(quantize_f32_both<std::int8_t>({20.0f, 50.0f, -300.0f, kInf, -kInf, 3e9f}, 1.0f, std::int8_t{100}) ==
              std::vector<int>{120, 127, -128, 127, -128, 127});
        // Zero point -128 (the low extreme): -1 -> -129 -> -128; 255 -> 127; 254.5 -> 254 (even) -> 126.
        CHECK(quantize_f32_both<std::int8_t>({-1.0f, 255.0f, 254.5f}, 1.0f, std::int8_t{-128}) ==
              std::vector<int>{-128, 127, 126});
    }
    SECTION("UINT8") {
        // / 2: {511 -> 255.5 -> 256 -> 255, 509 -> 254.5 -> 254, -1 -> -0.5 -> -0 -> 0, -3 -> -1.5 -> -2 -> 0,
        //       +inf -> 255, -inf -> 0}
        CHECK(quantize_f32_both<std::uint8_t>({511.0f, 509.0f, -1.0f, -3.0f, kInf, -kInf}, 2.0f, std::uint8_t{0}) ==
              std::vector<int>{255, 254, 0, 0, 255, 0});
        // Zero point 255: 1 -> 256 -> 255; -255 -> 0; -256 -> -1 -> 0; +inf -> 255.
        CHECK(quantize_f32_both<std::uint8_t>({1.0f, -255.0f, -256.0f, kInf}, 1.0f, std::uint8_t{255}) ==
              std::vector<int>{255, 0, 0, 255});
        // No zero point: 0.
        CHECK(quantize_f32_both<std::uint8_t>({-5.0f, 300.0f, 7.6f}, 1.0f, std::nullopt) == std::vector<int>{0, 255, 8});
    }
}

TEST_CASE("quantize: NaN goes to the low end; the directml profile gives 0 but in its packed per-tensor form",
          "[quantize]") {
    // NaN input, 0/0 and inf/inf are NaN quotients.
    SECTION("INT8 with a zero point: -128 in both profiles") {
        CHECK(quantize_f32_both<std::int8_t>({kNaN, -kNaN, 5.0f}, 1.0f, std::int8_t{3}) == std::vector<int>{-128, -128, 8});
    }
    SECTION("INT8 without a zero point: exact -128, directml 0") {
        CHECK(quantize_f32<std::int8_t>({kNaN, 0.0f, kInf, 5.0f}, kNaN, std::nullopt, Fidelity::Exact) ==
              std::vector<int>{-128, -128, -128, -128});
        CHECK(quantize_f32<std::int8_t>({kNaN, -kNaN, 5.0f}, 1.0f, std::nullopt, Fidelity::Exact) ==
              std::vector<int>{-128, -128, 5});
        CHECK(quantize_f32<std::int8_t>({kNaN, -kNaN, 5.0f}, 1.0f, std::nullopt, Fidelity::DirectML) ==
              std::vector<int>{0, 0, 5});
        CHECK(quantize_f32<std::int8_t>({0.0f, kInf, 5.0f}, kInf, std::nullopt, Fidelity::DirectML) ==
              std::vector<int>{0, 0, 0});  // 0/inf = 0, inf/inf = NaN -> 0, 5/inf = 0
    }
    SECTION("INT8 with a zero point, directml: -128 only for one-element parameters on packed tensors") {
        const auto nan_result = [](Dims scale_strides, std::vector<float> scale, Dims in_strides, Dims out_strides) {
            Qz<float, std::int8_t> t;
            t.sizes = {2, 2};
            t.in = {kNaN, 1.0f, kNaN, 3.0f};
            t.in_strides = std::move(in_strides);
            t.scale = std::move(scale);
            t.scale_strides = std::move(scale_strides);
            t.zp = I8{-3};
            t.zp_strides = {0, 0};
            t.out_strides = std::move(out_strides);
            const auto exact = t.run(Fidelity::Exact);
            CHECK(exact[0] == -128);  // element (0, 0) is the NaN at offset 0 in every layout below
            const auto dml = t.run(Fidelity::DirectML);
            CHECK(dml[3] == exact[3]);  // (1, 1), offset 3: 3 / s - 3, the same in both
            return dml[0];
        };
        CHECK(nan_result({0, 0}, {1.0f}, {}, {}) == -128);             // packed, one-element scale and zero point
        CHECK(nan_result({0, 0}, {1.0f}, {2, 1}, {2, 1}) == -128);     // explicit packed strides
        CHECK(nan_result({1, 0}, {1.0f, 2.0f}, {}, {}) == 0);          // scale per row
        CHECK(nan_result({0, 0}, {1.0f}, {1, 2}, {}) == 0);            // input transposed
        CHECK(nan_result({0, 0}, {1.0f}, {}, {1, 2}) == 0);            // output transposed
        CHECK(nan_result({2, 1}, {1.0f, 1.0f, 1.0f, 1.0f}, {}, {}) == 0);  // scale per element, equal values
    }
    SECTION("UINT8: the low end is 0 in both") {
        CHECK(quantize_f32_both<std::uint8_t>({kNaN, 9.0f}, 1.0f, std::nullopt) == std::vector<int>{0, 9});
        CHECK(quantize_f32_both<std::uint8_t>({kNaN, 9.0f}, 1.0f, std::uint8_t{200}) == std::vector<int>{0, 209});
    }
}

TEST_CASE("quantize: every scale gives the IEEE quotient", "[quantize]") {
    const float tiny = std::numeric_limits<float>::denorm_min();  // 2^-149
    SECTION("subnormal scale and input (no flush to zero)") {
        // 3 * 2^-149 / 2^-149 = 3; 2^-126 / 2^-149 = 2^23 -> 127; 0 / 2^-149 = 0.
        // (Flushing the scale would divide by 0: +inf -> 127 for the first.)
        CHECK(quantize_f32_both<std::int8_t>({3 * tiny, std::numeric_limits<float>::min(), 0.0f}, tiny, std::int8_t{0}) ==
              std::vector<int>{3, 127, 0});
    }
    SECTION("negative scale, -0.0, infinite scale, zero scale") {
        // / -0.3f: 2.25 -> -7 (as 2.25 / 0.3f, negated); -30 -> 100.
        CHECK(quantize_f32_both<std::int8_t>({2.25f, -30.0f}, -0.3f, std::int8_t{0}) == std::vector<int>{-7, 100});
        // / -0.0: 1 -> -inf -> -128; -1 -> +inf -> 127.
        CHECK(quantize_f32_both<std::int8_t>({1.0f, -1.0f}, -0.0f, std::int8_t{0}) == std::vector<int>{-128, 127});
        // / +inf with zero point 5: 1e30 -> 0 + 5; -1e30 -> -0 + 5.
        CHECK(quantize_f32_both<std::int8_t>({1e30f, -1e30f}, kInf, std::int8_t{5}) == std::vector<int>{5, 5});
        // / 0 (DirectML's "undefined behavior"; qdml's IEEE quotient): 1 -> +inf -> 255, -1 -> -inf -> 0,
        // 0 -> NaN -> 0.
        CHECK(quantize_f32_both<std::uint8_t>({1.0f, -1.0f, 0.0f}, 0.0f, std::uint8_t{7}) == std::vector<int>{255, 0, 0});
    }
}

TEST_CASE("quantize: INT32 input is converted to binary32 before the division", "[quantize]") {
    Qz<std::int32_t, std::int8_t> t;
    t.sizes = {4};
    // fp32(16777217) = 16777216 (tie, even); / 2^25 = 0.5 exactly -> 0 (the exact quotient
    //   0.50000003 would give 1).
    // fp32(50331649) = 50331648 (spacing 4); / 100663296 (3 * 2^25) = 0.5 -> 0 (exact: 1).
    // fp32(-16777217) = -16777216 -> -0.5 -> -0 -> 0.  fp32(16777219) = 16777220 -> 0.50000012 -> 1.
    t.in = {16777217, 50331649, -16777217, 16777219};
    t.scale = {33554432.0f, 100663296.0f, 33554432.0f, 33554432.0f};
    t.scale_strides = {1};
    t.zp = I8{0, 0, 0, 0};
    t.zp_strides = {1};
    CHECK(t.run_both() == std::vector<int>{0, 0, 0, 1});

    SECTION("the INT32 extremes, with 0.3f") {
        Qz<std::int32_t, std::uint8_t> u;
        u.sizes = {3};
        // INT32_MIN / 0.3 -> -7.2e9 -> 0; INT32_MAX -> fp32 2^31 -> 7.2e9 -> 255; 2 / 0.3f = 6.67 -> 7.
        u.in = {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), 2};
        u.per_tensor(0.3f, std::uint8_t{0});
        CHECK(u.run_both() == std::vector<int>{0, 255, 7});
    }
}

TEST_CASE("quantize: FLOAT16 input and scale widened, one binary32 division", "[quantize]") {
    Qz<float16, std::int8_t> t;
    t.sizes = {4};
    // 1.0 (0x3C00) / 0.15380859375 (0x30EC) = 6.5015873... in binary32 -> 7 (a binary16 quotient
    //   would round to 6.5 and give 6); 2.5 (0x4100) / 1 -> 2; 3.5 (0x4300) / 1 -> 4;
    //   -inf (0xFC00) / 1 -> -128.
    t.in = halves({0x3C00, 0x4100, 0x4300, 0xFC00});
    t.scale = halves({0x30EC, 0x3C00, 0x3C00, 0x3C00});
    t.scale_strides = {1};
    t.zp = I8{0};
    t.zp_strides = {0};
    CHECK(t.run_both() == std::vector<int>{7, 2, 4, -128});
}

TEST_CASE("quantize: per-axis scale and zero point through strides; 8-D; strided output", "[quantize]") {
    SECTION("{2, 3}: scale per column {0, 1}, zero point per row {1, 0}") {
        Qz<float, std::uint8_t> t;
        t.sizes = {2, 3};
        t.in = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
        t.scale = {0.5f, 0.3f, 2.0f};
        t.scale_strides = {0, 1};
        t.zp = U8{10, 20};
        t.zp_strides = {1, 0};
        // row 0 (zp 10): 1/0.5 = 2 -> 12; 2/0.3f = 6.67 -> 7 -> 17; 3/2 = 1.5 -> 2 -> 12.
        // row 1 (zp 20): 4/0.5 = 8 -> 28; 5/0.3f = 16.67 -> 17 -> 37; 6/2 = 3 -> 23.
        CHECK(t.run_both() == std::vector<int>{12, 17, 12, 28, 37, 23});
    }
    SECTION("8-D, transposed output strides") {
        Qz<float, std::int8_t> t;
        t.sizes = {1, 1, 1, 1, 1, 1, 2, 2};
        t.in = {-1.0f, 0.6f, 0.9f, -0.45f};
        t.per_tensor(0.3f, std::int8_t{-1});
        t.out_strides = {4, 4, 4, 4, 4, 4, 1, 2};
        // -1/0.3f = -3.33 -> -3 - 1 = -4; 0.6f/0.3f = 2 exactly (0.6f is 2 * 0.3f) -> 1;
        // 0.9f/0.3f = 2.9999998 -> 3 -> 2; -0.45f/0.3f = -1.4999999 (0.45f = 0.44999999, below
        // 1.5 * 0.3f) -> -1 -> -2. (read back in logical order)
        CHECK(t.run_both() == std::vector<int>{-4, 1, 2, -2});
    }
}

TEST_CASE("quantize: validation, one rule at a time", "[quantize][validation]") {
    Qz<float, std::int8_t> t;
    t.sizes = {2, 3};
    t.in = {1, 2, 3, 4, 5, 6};
    t.per_tensor(0.5f, std::int8_t{0});
    auto& d = t.build();
    auto& pool = t.pool;
    REQUIRE(rejected_member(d) == "<valid>");

    SECTION("Input type not FLOAT32, FLOAT16 or INT32") {
        d.InputTensor = pool.raw<std::int8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor = pool.raw<std::uint32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor.Desc.DataType = static_cast<qdml::TensorDataType>(99);
        CHECK(rejected_member(d) == "InputTensor");
    }
    SECTION("Scale FLOAT32 for INT32 input, else Input's type") {
        d.ScaleTensor = pool.raw<float16>({2, 3}, halves({0x3800}), {0, 0});
        CHECK(rejected_member(d) == "ScaleTensor");  // FLOAT32 input, FLOAT16 scale
        d.InputTensor = pool.raw<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "ScaleTensor");  // INT32 input, FLOAT16 scale
        d.ScaleTensor = pool.raw<float>({2, 3}, {0.5f}, {0, 0});
        CHECK(rejected_member(d) == "<valid>");
        d.InputTensor = pool.raw<float16>({2, 3}, halves({1, 2, 3, 4, 5, 6}));
        CHECK(rejected_member(d) == "ScaleTensor");  // FLOAT16 input, FLOAT32 scale
        d.ScaleTensor = pool.raw<std::int32_t>({2, 3}, {1}, {0, 0});
        CHECK(rejected_member(d) == "ScaleTensor");  // not a float
    }
    SECTION("Output INT8 or UINT8; ZeroPoint of Output's type") {
        d.OutputTensor = pool.output(DT::Int16, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::Float32, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::UInt8, {2, 3});
        CHECK(rejected_member(d) == "ZeroPointTensor");  // INT8 zero point, UINT8 output
        d.ZeroPointTensor = pool.raw<std::int32_t>({2, 3}, {0}, {0, 0});
        CHECK(rejected_member(d) == "ZeroPointTensor");
    }
    SECTION("DimensionCount and Sizes equal to Input's") {
        d.ScaleTensor = pool.raw<float>({1, 2, 3}, {0.5f}, {0, 0, 0});
        CHECK(rejected_member(d) == "ScaleTensor");
        d.ScaleTensor = pool.raw<float>({1, 1}, {0.5f});
        CHECK(rejected_member(d) == "ScaleTensor");  // no implicit broadcast
        d.ScaleTensor = pool.raw<float>({2, 3}, {0.5f}, {0, 0});
        d.ZeroPointTensor = pool.raw<std::int8_t>({3, 2}, {0}, {0, 0});
        CHECK(rejected_member(d) == "ZeroPointTensor");
        d.ZeroPointTensor = pool.raw<std::int8_t>({2, 3}, {0}, {0, 0});
        d.OutputTensor = pool.output(DT::Int8, {2, 2});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("sizes, DimensionCount, buffer size, null Data") {
        d.InputTensor.Desc.Sizes[1] = 0;
        CHECK(rejected_member(d) == "InputTensor");
        d.InputTensor.Desc.Sizes[1] = 3;
        d.OutputTensor.Desc.TotalTensorSizeInBytes = 4;  // 6 bytes rounded up to 8
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor.Desc.TotalTensorSizeInBytes = 8;
        d.ScaleTensor.Data = nullptr;
        CHECK(rejected_member(d) == "ScaleTensor");
    }
    SECTION("output rules: stride 0, two elements at one address, overlap with an input") {
        d.OutputTensor = pool.output(DT::Int8, {2, 3}, {3, 0});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = pool.output(DT::Int8, {2, 3}, {1, 1});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(d.InputTensor, DT::Int8, {2, 3}, 4);  // bytes 4..9 of the input
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(d.InputTensor, DT::Int8, {2, 3}, 24);  // just past it
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("feature level: ZeroPoint optional from 6.2") {
        d.ZeroPointTensor.reset();
        CHECK(rejected_member(d, FeatureLevel::L6_1) == "ZeroPointTensor");
        CHECK(rejected_member(d, FeatureLevel::L6_2) == "<valid>");
    }
    SECTION("feature level: 1.0 takes 4-D FLOAT32 -> UINT8; 2.1 INT8 and INT32; 3.0 1 to 8 dims; 6.0 FLOAT16") {
        Qz<float, std::uint8_t> u;
        u.sizes = {1, 1, 2, 3};
        u.in = {1, 2, 3, 4, 5, 6};
        u.per_tensor(1.0f, std::uint8_t{0});
        auto& du = u.build();
        CHECK(rejected_member(du, FeatureLevel::L1_0) == "<valid>");
        CHECK(rejected_member(d, FeatureLevel::L2_1) == "InputTensor");  // 2 dims: 4 only before 3.0
        CHECK(rejected_member(d, FeatureLevel::L3_0) == "<valid>");
        Qz<float, std::int8_t> s;
        s.sizes = {1, 1, 2, 3};
        s.in = {1, 2, 3, 4, 5, 6};
        s.per_tensor(1.0f, std::int8_t{0});
        auto& ds = s.build();
        CHECK(rejected_member(ds, FeatureLevel::L1_0) == "ZeroPointTensor");  // INT8 from 2.1
        CHECK(rejected_member(ds, FeatureLevel::L2_1) == "<valid>");
        Qz<std::int32_t, std::uint8_t> i;
        i.sizes = {1, 1, 2, 3};
        i.in = {1, 2, 3, 4, 5, 6};
        i.per_tensor(1.0f, std::uint8_t{0});
        auto& di = i.build();
        CHECK(rejected_member(di, FeatureLevel::L1_0) == "InputTensor");
        CHECK(rejected_member(di, FeatureLevel::L2_1) == "<valid>");
        Qz<float16, std::uint8_t> h;
        h.sizes = {1, 1, 2, 3};
        h.in = halves({1, 2, 3, 4, 5, 6});
        h.per_tensor(float16(1.0f), std::uint8_t{0});
        auto& dh = h.build();
        CHECK(rejected_member(dh, FeatureLevel::L5_2) == "InputTensor");
        CHECK(rejected_member(dh, FeatureLevel::L6_0) == "<valid>");
    }
    SECTION("run() rejects before touching the output") {
        d.ZeroPointTensor = pool.raw<std::uint8_t>({2, 3}, {0}, {0, 0});
        CHECK_THROWS_AS(qdml::reference::run(d), qdml::Error);
        const auto* raw = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
        CHECK(std::vector<int>(raw, raw + 6) == std::vector<int>(6, kSentinel));
    }
}
