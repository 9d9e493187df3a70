// QUANTIZED_LINEAR_MATRIX_MULTIPLY (docs/semantics.md section 5). Expected values are
// derived by hand from
//   acc[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])      (int32, wraps)
//   mult      = fp32(AScale[m] * BScale[n]) / OutputScale[m]
//   Output    = Q(fp32(acc) * mult, OutputZP[m], OutputType)
// plus one random case checked against a second transcription written here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using Out = std::vector<long long>;

/// A per-tensor scale or zero point (qtest::Param).
Param per_tensor(double v, std::size_t dims = 2) { return {Dims(dims, 1u), {v}}; }

/// Builder: one matmul; a/b are raw buffer values.
struct MatMul {
    Pool pool;
    DT a_type = DT::Int8, b_type = DT::Int8, out_type = DT::Int8;
    Dims a_sizes, b_sizes, out_sizes;  // out_sizes empty: A's sizes with N last
    Dims a_strides, b_strides, out_strides;
    Values a, b;
    Param a_scale = per_tensor(1), b_scale = per_tensor(1), out_scale = per_tensor(1);
    std::optional<Param> a_zp, b_zp, out_zp;
    qdml::FeatureLevel level = qdml::FeatureLevel::Latest;
    qdml::QuantizedLinearMatrixMultiplyDesc d;

    Tensor param(DT t, const Param& p) { return pool.raw(t, p.sizes, p.values, p.strides); }

    qdml::QuantizedLinearMatrixMultiplyDesc& build() {
        if (out_sizes.empty()) {
            out_sizes = a_sizes;
            out_sizes.back() = b_sizes.back();
        }
        d.ATensor = pool.raw(a_type, a_sizes, a, a_strides);
        d.AScaleTensor = param(DT::Float32, a_scale);
        if (a_zp) d.AZeroPointTensor = param(a_type, *a_zp);
        d.BTensor = pool.raw(b_type, b_sizes, b, b_strides);
        d.BScaleTensor = param(DT::Float32, b_scale);
        if (b_zp) d.BZeroPointTensor = param(b_type, *b_zp);
        d.OutputScaleTensor = param(DT::Float32, out_scale);
        if (out_zp) d.OutputZeroPointTensor = param(out_type, *out_zp);
        d.OutputTensor = pool.output(out_type, out_sizes, out_strides);
        return d;
    }
    Out run() {
        build();
        qdml::run(d, qtest::exact(qdml::Implementation::Reference, level));
        return pool.read(d.OutputTensor);
    }
};

/// The hand-computed 4x3 * 3x2 case of the first two test cases.
///   A - AZP(1) = {{0,1,2}, {3,4,5}, {126,126,126}, {-129,-129,-129}}
///   B - BZP(-1) = {{2,0}, {3,1}, {4,2}}
///   acc = {{0+3+8, 0+1+4}, {6+12+20, 0+4+10}, {126*9, 126*3}, {-129*9, -129*3}}
///       = {{11, 5}, {38, 14}, {1134, 378}, {-1161, -387}}
///   mult = fp32(0.5 * 0.5) / 0.5 = 0.5
///   acc * 0.5 = {5.5, 2.5, 19, 7, 567, 189, -580.5, -193.5}
///   INT8, zp 3: clamp to [-131, 124], rne = {6, 2, 19, 7, 124, 124, -131, -131}
///   + 3 = {9, 5, 22, 10, 127, 127, -128, -128}
const Values kA = {1, 2, 3, 4, 5, 6, 127, 127, 127, -128, -128, -128};
const Values kB = {1, -1, 2, 0, 3, 1};
const Out kExpected = {9, 5, 22, 10, 127, 127, -128, -128};

void set_small_case(MatMul& t, DT ta, DT tb, DT to) {
    t.a_type = ta;
    t.b_type = tb;
    t.out_type = to;
    t.a_sizes = {4, 3};
    t.b_sizes = {3, 2};
    t.a = shifted(kA, ta);
    t.b = shifted(kB, tb);
    t.a_zp = per_tensor(1 + shift(ta));
    t.b_zp = per_tensor(-1 + shift(tb));
    t.out_zp = per_tensor(3 + shift(to));
    t.a_scale = per_tensor(0.5);
    t.b_scale = per_tensor(0.5);
    t.out_scale = per_tensor(0.5);
}

}  // namespace

TEST_CASE("matmul: hand-computed 4x3 * 3x2 with zero points, ties and saturation", "[matmul]") {
    MatMul t;
    set_small_case(t, DT::Int8, DT::Int8, DT::Int8);
    CHECK(t.run() == kExpected);
}

TEST_CASE("matmul: every INT8/UINT8 mix of A, B and Output", "[matmul]") {
    // A UINT8 operand holds each value and its zero point +128 (same differences);
    // a UINT8 output is the INT8 result +128.
    for (DT ta : kQ8)
        for (DT tb : kQ8)
            for (DT to : kQ8) {
                INFO("A " << qdml::name(ta) << " B " << qdml::name(tb) << " Output " << qdml::name(to));
                MatMul t;
                set_small_case(t, ta, tb, to);
                CHECK(t.run() == shifted(kExpected, to));
            }
}

TEST_CASE("matmul: B transposed through strides", "[matmul]") {
    MatMul t;
    set_small_case(t, DT::Int8, DT::UInt8, DT::Int8);
    // B {3,2} stored column-major (strides {1, 3}): the buffer is B^T row-major.
    t.b = shifted(Values{1, 2, 3, -1, 0, 1}, DT::UInt8);
    t.b_strides = {1, 3};
    CHECK(t.run() == kExpected);
}

TEST_CASE("matmul: per-row A and Output parameters, per-column B parameters", "[matmul]") {
    // A UINT8 {{10, 12}, {20, 30}}, AZP per row {10, 20}  -> A - AZP = {{0, 2}, {0, 10}}
    // B INT8 {{1,2,3}, {4,5,6}}, BZP per column {1, 0, -1} -> B - BZP = {{0,2,4}, {3,5,7}}
    // acc = {{6, 10, 14}, {30, 50, 70}}
    // AScale {1, 0.5}, BScale {1, 0.5, 0.25}, OutputScale {1, 2}
    // mult = {{1, 0.5, 0.25}, {0.5/2, 0.25/2, 0.125/2}} = {{1, 0.5, 0.25}, {0.25, 0.125, 0.0625}}
    // acc * mult = {{6, 5, 3.5}, {7.5, 6.25, 4.375}} -> rne {{6, 5, 4}, {8, 6, 4}}
    // OutputZP per row {0, -10} -> {{6, 5, 4}, {-2, -4, -6}}
    const Out expected = {6, 5, 4, -2, -4, -6};
    MatMul t;
    t.a_type = DT::UInt8;
    t.a = {10, 12, 20, 30};
    t.b = {1, 2, 3, 4, 5, 6};
    SECTION("4-D tensors, parameters {1,1,M,1} and {1,1,1,N}") {
        t.a_sizes = {1, 1, 2, 2};
        t.b_sizes = {1, 1, 2, 3};
        t.a_scale = {{1, 1, 2, 1}, {1, 0.5}};
        t.a_zp = Param{{1, 1, 2, 1}, {10, 20}};
        t.b_scale = {{1, 1, 1, 3}, {1, 0.5, 0.25}};
        t.b_zp = Param{{1, 1, 1, 3}, {1, 0, -1}};
        t.out_scale = {{1, 1, 2, 1}, {1, 2}};
        t.out_zp = Param{{1, 1, 2, 1}, {0, -10}};
        CHECK(t.run() == expected);
    }
    SECTION("2-D tensors, parameters {M,1} and {1,N}") {
        t.a_sizes = {2, 2};
        t.b_sizes = {2, 3};
        t.a_scale = {{2, 1}, {1, 0.5}};
        t.a_zp = Param{{2, 1}, {10, 20}};
        t.b_scale = {{1, 3}, {1, 0.5, 0.25}};
        t.b_zp = Param{{1, 3}, {1, 0, -1}};
        t.out_scale = {{2, 1}, {1, 2}};
        t.out_zp = Param{{2, 1}, {0, -10}};
        CHECK(t.run() == expected);
    }
    SECTION("2-D tensors, parameters {M,N} repeated through zero strides") {
        t.a_sizes = {2, 2};
        t.b_sizes = {2, 3};
        t.a_scale = {{2, 3}, {1, 0.5}, {1, 0}};
        t.a_zp = Param{{2, 3}, {10, 20}, {1, 0}};
        t.b_scale = {{2, 3}, {1, 0.5, 0.25}, {0, 1}};
        t.b_zp = Param{{2, 3}, {1, 0, -1}, {0, 1}};
        t.out_scale = {{2, 3}, {1, 2}, {1, 0}};
        t.out_zp = Param{{2, 3}, {0, -10}, {1, 0}};
        CHECK(t.run() == expected);
    }
}

TEST_CASE("matmul: 3-D and 4-D batches, batch broadcast through zero strides", "[matmul]") {
    MatMul t;
    SECTION("3-D {Channel, M, K}") {
        // c0: [1 2] * [5 6]^T = 5 + 12 = 17;  c1: [3 4] * [7 8]^T = 21 + 32 = 53
        t.a_sizes = {2, 1, 2};
        t.b_sizes = {2, 2, 1};
        t.a = {1, 2, 3, 4};
        t.b = {5, 6, 7, 8};
        CHECK(t.run() == Out{17, 53});
    }
    SECTION("3-D, A broadcast over channels") {
        // A strides {0, 2, 1}: both channels use [1 2]: c0 = 17, c1 = 7 + 16 = 23
        t.a_sizes = {2, 1, 2};
        t.a_strides = {0, 2, 1};
        t.b_sizes = {2, 2, 1};
        t.a = {1, 2};
        t.b = {5, 6, 7, 8};
        CHECK(t.run() == Out{17, 23});
    }
    SECTION("4-D {Batch, Channel, M, K}, B broadcast over batches") {
        // A[b][c] = [2b + c + 1, 1];  B strides {0, 2, 1, 1}: B[b][c] = {{10},{1}} (c0), {{20},{2}} (c1)
        // b0c0: 1*10 + 1 = 11;  b0c1: 2*20 + 2 = 42;  b1c0: 3*10 + 1 = 31;  b1c1: 4*20 + 2 = 82
        t.a_sizes = {2, 2, 1, 2};
        t.b_sizes = {2, 2, 2, 1};
        t.b_strides = {0, 2, 1, 1};
        t.a = {1, 1, 2, 1, 3, 1, 4, 1};
        t.b = {10, 1, 20, 2};
        CHECK(t.run() == Out{11, 42, 31, 82});
    }
    SECTION("4-D, per-row parameters shared by every batch") {
        // A[b][c] (M=2, K=1) = {{b+c+1}, {1}}, B (K=1, N=1) = 1 everywhere, AScale per row {1, 0.5},
        // OutputZP per row {0, 100}: out[b][c] = {b+c+1, 1*0.5 -> rne 0 + 100 = 100}
        t.a_sizes = {2, 2, 2, 1};
        t.b_sizes = {2, 2, 1, 1};
        t.b_strides = {0, 0, 1, 1};
        t.a = {1, 1, 2, 1, 2, 1, 3, 1};
        t.b = {1};
        t.a_scale = {{1, 1, 2, 1}, {1, 0.5}};
        t.out_zp = Param{{1, 1, 2, 1}, {0, 100}};
        CHECK(t.run() == Out{1, 100, 2, 100, 2, 100, 3, 100});
    }
}

TEST_CASE("matmul: the int32 accumulator wraps modulo 2^32", "[matmul]") {
    // Every A and B element is one buffer value repeated through zero strides.
    // AScale = BScale = 2^-12, OutputScale 1: mult = 2^-24.
    MatMul t;
    t.a_scale = per_tensor(1.0 / 4096);
    t.b_scale = per_tensor(1.0 / 4096);
    t.a_strides = {0, 0};
    t.b_strides = {0, 0};
    SECTION("positive overflow: 40000 * 255 * 255") {
        // sum = 40000 * 65025 = 2601000000 > 2^31 - 1
        // wrapped: 2601000000 - 4294967296 = -1693967296
        // fp32(-1693967296) = -1693967360 (spacing 128); * 2^-24 = -100.968 -> -101
        // (no wrap: 2601000000 * 2^-24 = 155.03 -> INT8 127)
        t.a_type = DT::UInt8;
        t.b_type = DT::UInt8;
        t.a_sizes = {1, 40000};
        t.b_sizes = {40000, 1};
        t.a = {255};
        t.b = {255};
        CHECK(t.run() == Out{-101});
    }
    SECTION("negative overflow: 70000 * -128 * 255") {
        // sum = 70000 * -32640 = -2284800000 < -2^31
        // wrapped: -2284800000 + 4294967296 = 2010167296 (exact in binary32)
        // * 2^-24 = 119.81 -> 120   (no wrap: -136.2 -> INT8 -128)
        t.b_type = DT::UInt8;
        t.a_sizes = {1, 70000};
        t.b_sizes = {70000, 1};
        t.a = {-128};
        t.b = {255};
        CHECK(t.run() == Out{120});
    }
    SECTION("wrap through the zero points: (0 - 255) * (255 - 0), 70000 times, UINT8 output") {
        // A UINT8 0 with AZP 255 -> -255; B UINT8 255 -> 255: sum = 70000 * -65025 = -4551750000
        // mod 2^32: -4551750000 + 2 * 4294967296 = 4038184592 -> as int32: 4038184592 - 4294967296 = -256782704
        // fp32(-256782704) = -256782704 (multiple of 16, spacing 16); * 2^-24 = -15.305 -> -15
        // OutputZP 100 (UINT8) -> 85
        t.a_type = DT::UInt8;
        t.b_type = DT::UInt8;
        t.out_type = DT::UInt8;
        t.a_sizes = {1, 70000};
        t.b_sizes = {70000, 1};
        t.a = {0};
        t.b = {255};
        t.a_zp = per_tensor(255);
        t.out_zp = per_tensor(100);
        CHECK(t.run() == Out{85});
    }
}

TEST_CASE("matmul: multiplier is fp32(AScale * BScale) / OutputScale, in that order", "[matmul]") {
    // AScale 0.02f (0x3CA3D70A), BScale 0.1f (0x3DCCCCCD), OutputScale 0.02f:
    //   fp32(0.02f * 0.1f) = 0x3B03126F;  / 0.02f = 0x3DCCCCCE = 0.10000000894
    //   acc -45: -45 * 0.10000000894 = -4.5000004 -> binary32 -4.5000005 -> rne -5
    //   acc 105:  10.500001 -> 11;   acc 25: 2.5000002 -> 3
    // Other orders give 0.1f (0x3DCCCCCD) or 0.099999994 and the ties
    //   -4.5 -> -4, 10.5 -> 10, 2.5 -> 2:  e.g. 0.02f * fp32(0.1f / 0.02f) = 0.02f * 5
    //   = 0.099999994, or the exact 0.1 rounded once = 0x3DCCCCCD.
    MatMul t;
    t.a_sizes = {3, 1};
    t.b_sizes = {1, 1};
    t.a = {-45, 105, 25};
    t.b = {1};
    t.a_scale = per_tensor(0.02f);
    t.b_scale = per_tensor(0.1f);
    t.out_scale = per_tensor(0.02f);
    CHECK(t.run() == Out{-5, 11, 3});
}

TEST_CASE("matmul: ties to even and saturation in the epilogue", "[matmul]") {
    MatMul t;
    t.a_sizes = {10, 1};
    t.b_sizes = {1, 1};
    t.a = {1, 3, 5, -1, -3, -5, -7, -9, 127, -128};
    t.b = {1};
    t.out_scale = per_tensor(2);  // mult 0.5
    // acc * 0.5 = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -3.5, -4.5, 63.5, -64}
    SECTION("INT8, odd zero point 3") {
        // rne = {0, 2, 2, 0, -2, -2, -4, -4, 64, -64}; + 3
        t.out_zp = per_tensor(3);
        CHECK(t.run() == Out{3, 5, 5, 3, 1, 1, -1, -1, 67, -61});
    }
    SECTION("UINT8, zero point 3: clamp to [-3, 252] first") {
        // clamp: -3.5, -4.5, -64 -> -3; rne = {0, 2, 2, 0, -2, -2, -3, -3, 64, -3}; + 3
        t.out_type = DT::UInt8;
        t.out_zp = per_tensor(3);
        CHECK(t.run() == Out{3, 5, 5, 3, 1, 1, 0, 0, 67, 0});
    }
    SECTION("INT8, zero point -3, top end") {
        // B = 2, OutputScale 1: v = 2 * A = {2, 6, 10, -2, -6, -10, -14, -18, 254, -256}
        // clamp to [-125, 130] -> ..., 130, -125; - 3
        t.b = {2};
        t.out_scale = per_tensor(1);
        t.out_zp = per_tensor(-3);
        CHECK(t.run() == Out{-1, 3, 7, -5, -9, -13, -17, -21, 127, -128});
    }
}

TEST_CASE("matmul: 64x64x64 random case matches an independent int64 transcription", "[matmul]") {
    constexpr std::uint32_t M = 64, K = 64, N = 64;
    qtest::Rng rng(qtest::case_seed(64));
    const auto u8 = [&] { return static_cast<int>(rng.range(0, 255)); };
    const auto s8 = [&] { return static_cast<int>(rng.range(-128, 127)); };
    const auto scale = [&] { return rng.between(0.01f, 0.1f); };
    const bool transposed = GENERATE(false, true);
    INFO("B transposed: " << transposed << ", seed " << rng.seed());

    // A UINT8 per-row parameters, B INT8 per-column parameters, INT8 output per row.
    std::vector<int> a(M * K), b(K * N), a_zp(M), b_zp(N), out_zp(M);
    std::vector<float> a_s(M), b_s(N), out_s(M);
    for (auto& x : a) x = u8();
    for (auto& x : b) x = s8();
    for (auto& x : a_zp) x = u8();
    for (auto& x : b_zp) x = s8() / 4;
    for (auto& x : out_zp) x = s8() / 2;
    for (auto& x : a_s) x = scale();
    for (auto& x : b_s) x = scale();

    // Independent accumulation: int64 sums, then modulo 2^32 to int32.
    std::vector<std::int32_t> acc(M * N);
    for (std::uint32_t m = 0; m < M; ++m) {
        std::int64_t row_max = 1;
        for (std::uint32_t n = 0; n < N; ++n) {
            std::int64_t s = 0;
            for (std::uint32_t k = 0; k < K; ++k)
                s += std::int64_t{a[m * K + k] - a_zp[m]} * (b[k * N + n] - b_zp[n]);
            const std::uint64_t u = static_cast<std::uint64_t>(s) & 0xffffffffull;
            acc[m * N + n] = static_cast<std::int32_t>(u >= 0x80000000ull ? static_cast<std::int64_t>(u) - (1ll << 32)
                                                                           : static_cast<std::int64_t>(u));
            row_max = std::max<std::int64_t>(row_max, s < 0 ? -s : s);
        }
        // Output scale from the row's observed range, so that few outputs saturate.
        out_s[m] = static_cast<float>(a_s[m] * 0.055 * static_cast<double>(row_max) / 100.0);
    }
    // The spec epilogue, written out.
    std::vector<long long> expected(M * N);
    std::size_t saturated = 0;
    for (std::uint32_t m = 0; m < M; ++m)
        for (std::uint32_t n = 0; n < N; ++n) {
            volatile float ab = a_s[m] * b_s[n];  // rounded to binary32 on its own
            const float mult = ab / out_s[m];
            float v = static_cast<float>(acc[m * N + n]) * mult;
            const float lo = static_cast<float>(-128 - out_zp[m]), hi = static_cast<float>(127 - out_zp[m]);
            if (!(v >= lo)) v = lo;
            if (v > hi) v = hi;
            const long long q = static_cast<long long>(std::nearbyint(v)) + out_zp[m];
            saturated += (q == -128 || q == 127);
            expected[m * N + n] = q;
        }
    REQUIRE(saturated < M * N / 10);

    MatMul t;
    t.a_type = DT::UInt8;
    t.a_sizes = {M, K};
    t.b_sizes = {K, N};
    t.a.assign(a.begin(), a.end());
    if (transposed) {
        t.b_strides = {1, K};
        t.b.resize(K * N);
        for (std::uint32_t k = 0; k < K; ++k)
            for (std::uint32_t n = 0; n < N; ++n) t.b[n * K + k] = b[k * N + n];
    } else {
        t.b.assign(b.begin(), b.end());
    }
    t.a_scale = {{M, 1}, Values(a_s.begin(), a_s.end())};
    t.a_zp = Param{{M, 1}, Values(a_zp.begin(), a_zp.end())};
    t.b_scale = {{1, N}, Values(b_s.begin(), b_s.end())};
    t.b_zp = Param{{1, N}, Values(b_zp.begin(), b_zp.end())};
    t.out_scale = {{M, 1}, Values(out_s.begin(), out_s.end())};
    t.out_zp = Param{{M, 1}, Values(out_zp.begin(), out_zp.end())};
    const Out got = t.run();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("m " << i / N << " n " << i % N << " acc " << acc[i]);
        REQUIRE(got[i] == expected[i]);
    }
}

TEST_CASE("matmul: validation, one rule at a time", "[matmul][validation]") {
    MatMul t;
    t.a_sizes = {2, 3};
    t.b_sizes = {3, 4};
    t.a = Values(6, 1);
    t.b = Values(12, 1);
    t.a_zp = per_tensor(0);
    t.b_zp = per_tensor(0);
    t.out_zp = per_tensor(0);
    auto& d = t.build();
    REQUIRE(rejected_member(d) == "<valid>");
    auto a = [&](DT type, const Dims& sizes, const Dims& strides = {}) {
        const auto n = qdml::min_buffer_elements(desc(type, sizes, strides)).value_or(0);
        return t.pool.raw(type, sizes, Values(n, 1), strides);
    };

    SECTION("K mismatch") {
        d.BTensor = a(DT::Int8, {4, 4});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("output size mismatch") {
        d.OutputTensor = t.pool.output(DT::Int8, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = t.pool.output(DT::Int8, {3, 4});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("batch mismatch") {
        d.ATensor = a(DT::Int8, {2, 2, 3});
        d.BTensor = a(DT::Int8, {3, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int8, {2, 2, 4});
        CHECK(rejected_member(d) == "BTensor");
        d.BTensor = a(DT::Int8, {2, 3, 4});
        CHECK(rejected_member(d) == "<valid>");
        d.ATensor = a(DT::Int8, {3, 2, 3});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("A and B DimensionCount differ") {
        d.BTensor = a(DT::Int8, {1, 3, 4});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("scale of shape {M, N} packed") {
        d.AScaleTensor = a(DT::Float32, {1, 1, 2, 4});
        CHECK(rejected_member(d) == "AScaleTensor");
    }
    SECTION("B scale per row instead of per column") {
        d.BScaleTensor = a(DT::Float32, {2, 1});
        CHECK(rejected_member(d) == "BScaleTensor");
    }
    SECTION("A zero point per column instead of per row") {
        d.AZeroPointTensor = a(DT::Int8, {1, 4});
        CHECK(rejected_member(d) == "AZeroPointTensor");
    }
    SECTION("output scale per column instead of per row") {
        d.OutputScaleTensor = a(DT::Float32, {1, 4});
        CHECK(rejected_member(d) == "OutputScaleTensor");
    }
    SECTION("A per-row scale with the wrong M") {
        d.AScaleTensor = a(DT::Float32, {3, 1});
        CHECK(rejected_member(d) == "AScaleTensor");
    }
    SECTION("parameter with 5 dimensions") {
        d.OutputScaleTensor = a(DT::Float32, {1, 1, 1, 1, 1});
        CHECK(rejected_member(d) == "OutputScaleTensor");
    }
    SECTION("DimensionCount 1") {
        d.ATensor = a(DT::Int8, {3});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("DimensionCount 5") {
        d.ATensor = a(DT::Int8, {1, 1, 1, 2, 3});
        d.BTensor = a(DT::Int8, {1, 1, 1, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int8, {1, 1, 1, 2, 4});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("type not allowed") {
        d.ATensor = a(DT::Int16, {2, 3});
        d.AZeroPointTensor.reset();
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("output type FLOAT32") {
        d.OutputTensor = t.pool.output(DT::Float32, {2, 4});
        d.OutputZeroPointTensor.reset();
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("scale not FLOAT32") {
        d.BScaleTensor = a(DT::Float16, {1, 1});
        CHECK(rejected_member(d) == "BScaleTensor");
    }
    SECTION("zero point type differs from its tensor's") {
        d.BZeroPointTensor = a(DT::UInt8, {1, 1});
        CHECK(rejected_member(d) == "BZeroPointTensor");
    }
    SECTION("feature level 3.1: 4-D only (2-4 dims from 4.0)") {
        CHECK(rejected_member(d, qdml::FeatureLevel::L3_1) == "ATensor");
        d.ATensor = a(DT::Int8, {1, 1, 2, 3});
        d.BTensor = a(DT::Int8, {1, 1, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int8, {1, 1, 2, 4});
        for (auto* p : {&d.AScaleTensor, &d.BScaleTensor, &d.OutputScaleTensor}) *p = a(DT::Float32, {1, 1, 1, 1});
        for (auto* p : {&d.AZeroPointTensor, &d.BZeroPointTensor, &d.OutputZeroPointTensor})
            *p = a(DT::Int8, {1, 1, 1, 1});
        CHECK(rejected_member(d, qdml::FeatureLevel::L3_1) == "<valid>");
        d.AScaleTensor = a(DT::Float32, {1, 1});  // 2-D parameter before 4.0
        CHECK(rejected_member(d, qdml::FeatureLevel::L3_1) == "AScaleTensor");
        CHECK(rejected_member(d, qdml::FeatureLevel::L4_0) == "<valid>");
    }
    SECTION("feature level 2.0 predates the operator") {
        CHECK(rejected_member(d, qdml::FeatureLevel::L2_0) == "operator");
    }
    SECTION("output overlaps an input") {
        Tensor big = t.pool.output(DT::Int8, {24});
        d.BTensor = Pool::alias(big, DT::Int8, {3, 4});  // bytes 0..11
        d.OutputTensor = Pool::alias(big, DT::Int8, {2, 4}, 8);  // bytes 8..15
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(big, DT::Int8, {2, 4}, 12);  // bytes 12..19: adjacent, no overlap
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("output stride 0") {
        d.OutputTensor = t.pool.output(DT::Int8, {2, 4}, {0, 1});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("bound buffer smaller than the desc") {
        d.ATensor.DataSizeInBytes = 4;
        CHECK(rejected_member(d) == "ATensor");
    }
}
