// MATRIX_MULTIPLY_INTEGER_TO_FLOAT (docs/semantics.md section 16). Expected
// values are derived by hand from
//   exact:    Output = fp32(acc) * fp32(AScale * BScale) (+ Bias),  acc = sum_k (A - AZP) * (B - BZP)  (int32, wraps)
//   directml: Output = sum_k ((fp32(A) - fp32(AZP)) * AScale) * ((fp32(B) - fp32(BZP)) * BScale)
//             in binary32, k in order (+ Bias)
// with dyadic scales (every product and sum exact) where the two profiles
// agree, and 32-bit operands near 2^24 where their roundings differ.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using qdml::Fidelity;
using qdml::float16;

Param per_tensor(double v, std::size_t dims = 2) { return {Dims(dims, 1u), {v}}; }

/// Builder: one MATRIX_MULTIPLY_INTEGER_TO_FLOAT with FLOAT32 scales, bias and output.
struct MatMulToFloat {
    Pool pool;
    DT a_type = DT::Int8, b_type = DT::Int8;
    Dims a_sizes, b_sizes, out_sizes;  // out_sizes empty: A's sizes with N last
    Dims a_strides, b_strides, out_strides;
    Values a, b;
    Param a_scale = per_tensor(1), b_scale = per_tensor(1);
    std::optional<Param> a_zp, b_zp, bias;
    qdml::FeatureLevel level = qdml::FeatureLevel::Latest;
    Fidelity fidelity = Fidelity::Exact;
    qdml::Implementation impl = qdml::Implementation::Reference;
    qdml::MatrixMultiplyIntegerToFloatDesc d;

    qdml::MatrixMultiplyIntegerToFloatDesc& build() {
        if (out_sizes.empty()) {
            out_sizes = a_sizes;
            out_sizes.back() = b_sizes.back();
        }
        d.ATensor = pool.raw(a_type, a_sizes, a, a_strides);
        d.AScaleTensor = pool.raw(DT::Float32, a_scale.sizes, a_scale.values, a_scale.strides);
        if (a_zp) d.AZeroPointTensor = pool.raw(a_type, a_zp->sizes, a_zp->values, a_zp->strides);
        d.BTensor = pool.raw(b_type, b_sizes, b, b_strides);
        d.BScaleTensor = pool.raw(DT::Float32, b_scale.sizes, b_scale.values, b_scale.strides);
        if (b_zp) d.BZeroPointTensor = pool.raw(b_type, b_zp->sizes, b_zp->values, b_zp->strides);
        if (bias) d.BiasTensor = pool.raw(DT::Float32, bias->sizes, bias->values, bias->strides);
        d.OutputTensor = pool.output(DT::Float32, out_sizes, out_strides);
        return d;
    }
    std::vector<float> run() {
        build();
        qdml::run(d, {impl, level, qdml::simd::Isa::Best, fidelity});
        return pool.read<float>(d.OutputTensor);
    }
};

/// The hand-computed 2x3 * 3x2 case:
///   A - AZP(1)  = {{0,1,2}, {3,4,5}}
///   B - BZP(-1) = {{2,0}, {3,1}, {4,2}}
///   acc = {{0*2+1*3+2*4, 0*0+1*1+2*2}, {3*2+4*3+5*4, 3*0+4*1+5*2}} = {{11, 5}, {38, 14}}
///   AScale 0.5, BScale 0.25: acc * 0.125 = {1.375, 0.625, 4.75, 1.75}; + Bias {1,2,3,4}
/// Every dequantized value, product and partial sum is a short dyadic: both profiles give these.
const Values kA = {1, 2, 3, 4, 5, 6};
const Values kB = {1, -1, 2, 0, 3, 1};
const std::vector<float> kScaled = {1.375f, 0.625f, 4.75f, 1.75f};
const std::vector<float> kBiased = {2.375f, 2.625f, 7.75f, 5.75f};

void set_small_case(MatMulToFloat& t, DT ta, DT tb) {
    t.a_type = ta;
    t.b_type = tb;
    t.a_sizes = {2, 3};
    t.b_sizes = {3, 2};
    t.a = shifted(kA, ta);
    t.b = shifted(kB, tb);
    t.a_zp = per_tensor(1 + shift(ta));
    t.b_zp = per_tensor(-1 + shift(tb));
    t.a_scale = per_tensor(0.5);
    t.b_scale = per_tensor(0.25);
}

const Fidelity kProfiles[2] = {Fidelity::Exact, Fidelity::DirectML};
const qdml::Implementation kImpls[2] = {qdml::Implementation::Reference, qdml::Implementation::Simd};

}  // namespace

TEST_CASE("matmul integer to float: hand-computed 2x3 * 3x2, every 8-bit mix, both profiles, both implementations",
          "[matmul_integer_to_float]") {
    for (DT ta : kQ8)
        for (DT tb : kQ8)
            for (Fidelity f : kProfiles)
                for (auto impl : kImpls) {
                    INFO("A " << qdml::name(ta) << " B " << qdml::name(tb) << " fidelity " << qdml::to_string(f)
                              << (impl == qdml::Implementation::Simd ? " simd" : " reference"));
                    MatMulToFloat t;
                    set_small_case(t, ta, tb);
                    t.fidelity = f;
                    t.impl = impl;
                    SECTION("no bias") { CHECK(t.run() == kScaled); }
                    SECTION("bias") {
                        t.bias = Param{{2, 2}, {1, 2, 3, 4}};
                        CHECK(t.run() == kBiased);
                    }
                }
}

TEST_CASE("matmul integer to float: per-row AScale, per-column BScale, a bias repeated through zero strides",
          "[matmul_integer_to_float]") {
    // acc {{11, 5}, {38, 14}}; AScale {1, 2} per row, BScale {1, 0.5} per column:
    //   {{11*1*1, 5*1*0.5}, {38*2*1, 14*2*0.5}} = {{11, 2.5}, {76, 14}}; + per-column bias {10, 20}
    for (Fidelity f : kProfiles)
        for (auto impl : kImpls) {
            INFO(qdml::to_string(f));
            MatMulToFloat t;
            set_small_case(t, DT::UInt8, DT::Int8);
            t.fidelity = f;
            t.impl = impl;
            t.a_scale = Param{{2, 1}, {1, 2}};
            t.a_zp = Param{{2, 1}, {129, 129}};
            t.b_scale = Param{{1, 2}, {1, 0.5}};
            t.b_zp = Param{{1, 2}, {-1, -1}};
            t.bias = Param{{2, 2}, {10, 20}, {0, 1}};
            CHECK(t.run() == std::vector<float>{21, 22.5f, 86, 34});
        }
}

TEST_CASE("matmul integer to float: compiled with B constant (OWNED_BY_DML), B's side unbound and overwritten at "
          "execute",
          "[matmul_integer_to_float][prepared]") {
    // The hand-computed case through qdml::compile with BTensor flagged
    // constant: the prepared form reads B, BScale and BZeroPoint once (packed
    // for the engine, dequantized, or, for the reference's INT32 operands,
    // copied); execute binds none of them and their buffers hold other bytes.
    const std::pair<DT, DT> mixes[] = {{DT::UInt8, DT::Int8}, {DT::Int8, DT::UInt8}, {DT::Int32, DT::Int8}};
    for (const auto& mix : mixes)
        for (Fidelity f : kProfiles) {
            INFO("types " << static_cast<int>(mix.first) << " x " << static_cast<int>(mix.second) << " "
                          << qdml::to_string(f));
            MatMulToFloat t;
            set_small_case(t, mix.first, mix.second);
            t.bias = Param{{2, 2}, {1, 2, 3, 4}};
            auto& d = t.build();
            d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            const auto compiled = qdml::compile(d, {qdml::Implementation::Simd, t.level, qdml::simd::Isa::Best, f});
            for (qdml::Tensor* w : {&d.BTensor, &d.BScaleTensor, &*d.BZeroPointTensor})
                std::memset(w->Data, 0x5a, w->Desc.TotalTensorSizeInBytes);
            auto e = d;
            e.BTensor.Data = nullptr;
            e.BScaleTensor.Data = nullptr;
            e.BZeroPointTensor->Data = nullptr;
            for (int run = 0; run < 2; ++run) {
                compiled.execute(e);
                CHECK(t.pool.read<float>(d.OutputTensor) == kBiased);
            }
        }
}

TEST_CASE("matmul integer to float: absent zero points are 0", "[matmul_integer_to_float]") {
    // A INT8 {-128, 127}, B UINT8 {255, 255}^T, scales 1: -128*255 + 127*255 = -255
    for (Fidelity f : kProfiles) {
        MatMulToFloat t;
        t.fidelity = f;
        t.b_type = DT::UInt8;
        t.a_sizes = {1, 2};
        t.b_sizes = {2, 1};
        t.a = {-128, 127};
        t.b = {255, 255};
        CHECK(t.run() == std::vector<float>{-255});
    }
}

TEST_CASE("matmul integer to float: where the profiles round differently (32-bit operands)",
          "[matmul_integer_to_float]") {
    MatMulToFloat t;
    t.a_type = t.b_type = DT::Int32;
    SECTION("DirectML converts A and its zero point to binary32 before subtracting") {
        // A 16777217 = 2^24 + 1, AZP 1, B 1, scales 1. exact: acc = 2^24, output 16777216.
        // directml: fp32(2^24 + 1) = 2^24 (a tie, to even), minus fp32(1): 16777215, times 1.
        t.a_sizes = {1, 1};
        t.b_sizes = {1, 1};
        t.a = {16777217};
        t.b = {1};
        t.a_zp = per_tensor(1);
        t.fidelity = Fidelity::Exact;
        CHECK(t.run() == std::vector<float>{16777216});
        MatMulToFloat u = MatMulToFloat{};
        u.a_type = u.b_type = DT::Int32;
        u.a_sizes = {1, 1};
        u.b_sizes = {1, 1};
        u.a = {16777217};
        u.b = {1};
        u.a_zp = per_tensor(1);
        u.fidelity = Fidelity::DirectML;
        CHECK(u.run() == std::vector<float>{16777215});
    }
    SECTION("DirectML adds in binary32 in k order; the exact profile sums integers") {
        // A {2^24, 1, 1}, B {1, 1, 1}^T, scales 1. exact: acc 16777218, representable.
        // directml: 2^24 + 1 = 16777217 rounds to 16777216 (a tie, to even), + 1 again: 16777216.
        for (auto impl : kImpls)
            for (Fidelity f : kProfiles) {
                MatMulToFloat u;
                u.a_type = u.b_type = DT::Int32;
                u.a_sizes = {1, 3};
                u.b_sizes = {3, 1};
                u.a = {16777216, 1, 1};
                u.b = {1, 1, 1};
                u.fidelity = f;
                u.impl = impl;
                CHECK(u.run() == std::vector<float>{f == Fidelity::Exact ? 16777218.0f : 16777216.0f});
            }
    }
    SECTION("the exact profile's int32 sum wraps; DirectML's float sum does not") {
        // A {65536, 65536}, B {32768, 32768}^T: each product 2^31, the sum 2^32.
        // exact: 2^32 mod 2^32 = 0; directml: 2^31 + 2^31 = 4294967296 in binary32.
        for (Fidelity f : kProfiles) {
            MatMulToFloat u;
            u.a_type = u.b_type = DT::Int32;
            u.a_sizes = {1, 2};
            u.b_sizes = {2, 1};
            u.a = {65536, 65536};
            u.b = {32768, 32768};
            u.fidelity = f;
            CHECK(u.run() == std::vector<float>{f == Fidelity::Exact ? 0.0f : 4294967296.0f});
        }
    }
}

TEST_CASE("matmul integer to float: the exact profile rounds AScale * BScale to binary32 first",
          "[matmul_integer_to_float]") {
    // A 86, B 1 (acc 86), AScale 1 + 138 u, BScale 1 + 209 u, u = 2^-20; binary32's spacing is
    // 2^-23 in [1, 2) and 2^-17 in [64, 128).
    // exact profile: AScale * BScale = 1 + 347 u + 28842 u^2 = 1 + (2776 + 0.22) 2^-23, rounded to
    //   1 + 2776 * 2^-23; times 86: 86 + 238736 * 2^-23 = 86 + 3730.25 * 2^-17, rounded to 86 + 3730 * 2^-17.
    //   (The exact product, 86 + 3730.55 * 2^-17, and ((86 * AScale) * BScale) both round to 3731.)
    // directml: a = 86 * AScale = 86 + 1483.5 * 2^-17, a tie, to even: 86 + 1484 * 2^-17; b = BScale;
    //   a * b = 86 + (1484 + 2246.75 + 0.30) * 2^-17 = 86 + 3731.05 * 2^-17, rounded to 86 + 3731 * 2^-17.
    const double u = std::ldexp(1.0, -20);
    for (Fidelity f : kProfiles)
        for (auto impl : kImpls) {
            INFO(qdml::to_string(f));
            MatMulToFloat t;
            t.a_type = t.b_type = DT::UInt8;
            t.a_sizes = {1, 1};
            t.b_sizes = {1, 1};
            t.a = {86};
            t.b = {1};
            t.a_scale = per_tensor(1 + 138 * u);
            t.b_scale = per_tensor(1 + 209 * u);
            t.fidelity = f;
            t.impl = impl;
            const double units = f == Fidelity::Exact ? 3730 : 3731;
            CHECK(t.run() == std::vector<float>{static_cast<float>(86 + units * std::ldexp(1.0, -17))});
        }
}

TEST_CASE("matmul integer to float: the directml profile rounds each product before adding it (no FMA)",
          "[matmul_integer_to_float]") {
    // A [-1, 1], B [1, 1]^T, AScale = BScale = 1 + 2^-12, no zero points. directml: a = [-s, s],
    // b = [s, s]; s * s = 1 + 2^-11 + 2^-24 rounds (a tie, to even) to 1 + 2^-11, so the products are
    // -(1 + 2^-11) and 1 + 2^-11 and the sum is 0. A fused multiply-add of the second product would
    // give 2^-24. exact: acc = -1 + 1 = 0, output 0.
    const double sc = 1.0 + std::ldexp(1.0, -12);
    for (Fidelity f : kProfiles)
        for (auto impl : kImpls) {
            INFO(qdml::to_string(f));
            MatMulToFloat t;
            t.a_sizes = {1, 2};
            t.b_sizes = {2, 1};
            t.a = {-1, 1};
            t.b = {1, 1};
            t.a_scale = per_tensor(sc);
            t.b_scale = per_tensor(sc);
            t.fidelity = f;
            t.impl = impl;
            CHECK(t.run() == std::vector<float>{0.0f});
        }
}

TEST_CASE("matmul integer to float: FLOAT16 scales, bias and output", "[matmul_integer_to_float]") {
    // acc 2049 (A 2049 INT16, B 1), scales 1, bias 0: 2049 rounds to binary16 2048
    // (spacing 2 at 2048, a tie, to even); with bias 2: 2051 -> 2052 (a tie, to even).
    for (Fidelity f : kProfiles)
        for (auto impl : kImpls) {
            Pool pool;
            qdml::MatrixMultiplyIntegerToFloatDesc d;
            d.ATensor = pool.raw(DT::Int16, {1, 2}, {2049, 0});
            d.BTensor = pool.raw(DT::Int16, {2, 2}, {1, 1, 0, 0});
            const float16 one = float16(1.0f), two = float16(2.0f), zero = float16(0.0f);
            d.AScaleTensor = pool.raw<float16>({1, 1}, {one});
            d.BScaleTensor = pool.raw<float16>({1, 1}, {one});
            d.BiasTensor = pool.raw<float16>({1, 2}, {zero, two});
            d.OutputTensor = pool.output(DT::Float16, {1, 2});
            qdml::run(d, {impl, qdml::FeatureLevel::Latest, qdml::simd::Isa::Best, f});
            const auto y = pool.read<float16>(d.OutputTensor);
            CHECK(static_cast<float>(y[0]) == 2048.0f);
            CHECK(static_cast<float>(y[1]) == 2052.0f);
        }
}

TEST_CASE("matmul integer to float: NaN and infinite scales propagate", "[matmul_integer_to_float]") {
    // The 2x3 * 3x2 case with AScale {NaN, inf} per row. Row 0: NaN in both profiles. Row 1,
    // exact: acc {38, 14} times inf = inf. directml: a = {3, 4, 5} * inf = inf; column 0 of b
    // = {2, 3, 4} * 0.25 (none 0): inf; column 1 = {0, 1, 2} * 0.25: inf * 0 = NaN, so NaN.
    for (Fidelity f : kProfiles)
        for (auto impl : kImpls) {
            INFO(qdml::to_string(f));
            MatMulToFloat t;
            set_small_case(t, DT::Int8, DT::Int8);
            t.fidelity = f;
            t.impl = impl;
            t.a_scale = Param{{2, 1}, {NAN, INFINITY}};
            t.a_zp = Param{{2, 1}, {1, 1}};
            const auto y = t.run();
            CHECK(std::isnan(y[0]));
            CHECK(std::isnan(y[1]));
            CHECK(y[2] == INFINITY);
            if (f == Fidelity::Exact) CHECK(y[3] == INFINITY);
            else CHECK(std::isnan(y[3]));
        }
}

TEST_CASE("matmul integer to float: validation, one rule at a time", "[matmul_integer_to_float][validation]") {
    MatMulToFloat t;
    t.a_sizes = {2, 3};
    t.b_sizes = {3, 4};
    t.a = Values(6, 1);
    t.b = Values(12, 1);
    t.a_zp = per_tensor(0);
    t.b_zp = per_tensor(0);
    t.bias = Param{{2, 4}, Values(8, 0)};
    auto& d = t.build();
    REQUIRE(rejected_member(d) == "<valid>");
    REQUIRE(rejected_member_directml(d) == "<valid>");
    auto a = [&](DT type, const Dims& sizes, const Dims& strides = {}) {
        const auto n = qdml::min_buffer_elements(desc(type, sizes, strides)).value_or(0);
        return t.pool.raw(type, sizes, Values(n, 1), strides);
    };

    SECTION("feature level: from 6.2") {
        CHECK(rejected_member(d, qdml::FeatureLevel::L6_1) == "operator");
        CHECK(rejected_member(d, qdml::FeatureLevel::L6_2) == "<valid>");
    }
    SECTION("K mismatch") {
        d.BTensor = a(DT::Int8, {4, 4});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("output sizes") {
        d.OutputTensor = t.pool.output(DT::Float32, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("every integer type for A and B, mixed; zero points of their tensor's type") {
        for (DT ta : {DT::Int8, DT::UInt8, DT::Int16, DT::UInt16, DT::Int32, DT::UInt32})
            for (DT tb : {DT::Int8, DT::UInt32}) {
                INFO(qdml::name(ta) << " x " << qdml::name(tb));
                d.ATensor = a(ta, {2, 3});
                d.AZeroPointTensor = a(ta, {1, 1});
                d.BTensor = a(tb, {3, 4});
                d.BZeroPointTensor = a(tb, {1, 1});
                CHECK(rejected_member(d) == "<valid>");
            }
        d.AZeroPointTensor = a(DT::UInt8, {1, 1});
        CHECK(rejected_member(d) == "AZeroPointTensor");
    }
    SECTION("A of a float or 64-bit type") {
        d.AZeroPointTensor.reset();
        d.ATensor = a(DT::Float32, {2, 3});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("scales, bias and output: FLOAT32 or FLOAT16, one type") {
        d.OutputTensor = t.pool.output(DT::Int32, {2, 4});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = t.pool.output(DT::Float16, {2, 4});
        CHECK(rejected_member(d) == "AScaleTensor");  // FLOAT32 against a FLOAT16 output
        d.AScaleTensor = a(DT::Float16, {1, 1});
        d.BScaleTensor = a(DT::Float16, {1, 1});
        CHECK(rejected_member(d) == "BiasTensor");
        d.BiasTensor = a(DT::Float16, {2, 4});
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("scale per row of A, per column of B; not the other way") {
        d.AScaleTensor = a(DT::Float32, {2, 1});
        d.AZeroPointTensor.reset();
        d.BScaleTensor = a(DT::Float32, {1, 4});
        d.BZeroPointTensor.reset();
        CHECK(rejected_member(d) == "<valid>");
        d.AScaleTensor = a(DT::Float32, {1, 3});
        CHECK(rejected_member(d) == "AScaleTensor");
        d.AScaleTensor = a(DT::Float32, {2, 1});
        d.BScaleTensor = a(DT::Float32, {3, 1});
        CHECK(rejected_member(d) == "BScaleTensor");
    }
    SECTION("bias: the output's DimensionCount and Sizes; a repeated row through zero strides") {
        d.BiasTensor = a(DT::Float32, {1, 4});
        CHECK(rejected_member(d) == "BiasTensor");
        d.BiasTensor = a(DT::Float32, {4});
        CHECK(rejected_member(d) == "BiasTensor");
        d.BiasTensor = a(DT::Float32, {2, 4}, {0, 1});
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("scales of fewer dimensions than A, right-aligned (DirectML computes them)") {
        d.ATensor = a(DT::Int8, {1, 2, 3});
        d.BTensor = a(DT::Int8, {1, 3, 4});
        d.OutputTensor = t.pool.output(DT::Float32, {1, 2, 4});
        d.BiasTensor = a(DT::Float32, {1, 2, 4});
        d.AScaleTensor = a(DT::Float32, {1});
        d.AZeroPointTensor = a(DT::Int8, {1});
        CHECK(rejected_member(d) == "<valid>");
        CHECK(rejected_member_directml(d) == "<valid>");
    }
    SECTION("directml profile: a zero point shaped unlike its scale") {
        d.AScaleTensor = a(DT::Float32, {2, 1});
        d.AZeroPointTensor = a(DT::Int8, {1, 1});
        CHECK(rejected_member(d) == "<valid>");
        CHECK(rejected_member_directml(d) == "AZeroPointTensor");
        d.AZeroPointTensor = a(DT::Int8, {2, 1});
        d.BZeroPointTensor = a(DT::Int8, {1, 1, 1});
        CHECK(rejected_member_directml(d) == "BZeroPointTensor");
    }
    SECTION("directml profile: a scale repeated to the output's size through zero strides") {
        d.AScaleTensor = a(DT::Float32, {2, 4}, {1, 0});  // per row, written at {M, N}
        CHECK(rejected_member(d) == "<valid>");
        CHECK(rejected_member_directml(d) == "AScaleTensor");
    }
    SECTION("the output overlaps an input") {
        d.OutputTensor = Pool::alias(*d.BiasTensor, DT::Float32, {2, 4});
        CHECK(rejected_member(d) == "OutputTensor");
    }
}
