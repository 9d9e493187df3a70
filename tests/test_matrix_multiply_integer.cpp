// MATRIX_MULTIPLY_INTEGER (docs/semantics.md section 12). Expected values are
// derived by hand from
//   Output[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])      (INT32, wraps mod 2^32)
// plus one random case checked against a second transcription written here
// (int64 sums reduced modulo 2^32).
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using Out = std::vector<long long>;

Param per_tensor(double v, std::size_t dims = 2) { return {Dims(dims, 1u), {v}}; }

/// Builder: one integer matmul; a/b are raw buffer values.
struct MatMulInt {
    Pool pool;
    DT a_type = DT::Int8, b_type = DT::Int8, out_type = DT::Int32;
    Dims a_sizes, b_sizes, out_sizes;  // out_sizes empty: A's sizes with N last
    Dims a_strides, b_strides, out_strides;
    Values a, b;
    std::optional<Param> a_zp, b_zp;
    qdml::FeatureLevel level = qdml::FeatureLevel::Latest;
    qdml::Fidelity fidelity = qdml::Fidelity::Exact;
    qdml::MatrixMultiplyIntegerDesc d;

    qdml::MatrixMultiplyIntegerDesc& build() {
        if (out_sizes.empty()) {
            out_sizes = a_sizes;
            out_sizes.back() = b_sizes.back();
        }
        d.ATensor = pool.raw(a_type, a_sizes, a, a_strides);
        if (a_zp) d.AZeroPointTensor = pool.raw(a_type, a_zp->sizes, a_zp->values, a_zp->strides);
        d.BTensor = pool.raw(b_type, b_sizes, b, b_strides);
        if (b_zp) d.BZeroPointTensor = pool.raw(b_type, b_zp->sizes, b_zp->values, b_zp->strides);
        d.OutputTensor = pool.output(out_type, out_sizes, out_strides);
        return d;
    }
    Out run() {
        build();
        qdml::reference::run(d, level, fidelity);
        return pool.read(d.OutputTensor);
    }
};

/// The hand-computed 2x3 * 3x2 case:
///   A - AZP(1)  = {{0,1,2}, {3,4,5}}
///   B - BZP(-1) = {{2,0}, {3,1}, {4,2}}
///   Output = {{0*2+1*3+2*4, 0*0+1*1+2*2}, {3*2+4*3+5*4, 3*0+4*1+5*2}} = {{11, 5}, {38, 14}}
const Values kA = {1, 2, 3, 4, 5, 6};
const Values kB = {1, -1, 2, 0, 3, 1};
const Out kExpected = {11, 5, 38, 14};

void set_small_case(MatMulInt& t, DT ta, DT tb) {
    t.a_type = ta;
    t.b_type = tb;
    t.a_sizes = {2, 3};
    t.b_sizes = {3, 2};
    t.a = shifted(kA, ta);
    t.b = shifted(kB, tb);
    t.a_zp = per_tensor(1 + shift(ta));
    t.b_zp = per_tensor(-1 + shift(tb));
}

}  // namespace

TEST_CASE("matmul integer: hand-computed 2x3 * 3x2 with zero points", "[matmul_integer]") {
    MatMulInt t;
    set_small_case(t, DT::Int8, DT::Int8);
    CHECK(t.run() == kExpected);
}

TEST_CASE("matmul integer: every INT8/UINT8 mix of A and B, both profiles", "[matmul_integer]") {
    // A UINT8 operand holds each value and its zero point +128: the same differences, the same sums.
    for (DT ta : kQ8)
        for (DT tb : kQ8)
            for (auto f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
                INFO("A " << qdml::name(ta) << " B " << qdml::name(tb) << " fidelity " << qdml::to_string(f));
                MatMulInt t;
                set_small_case(t, ta, tb);
                t.fidelity = f;
                CHECK(t.run() == kExpected);
            }
}

TEST_CASE("matmul integer: absent zero points are 0", "[matmul_integer]") {
    // A INT8 {-128, 127}, B UINT8 {255, 255}^T: -128*255 + 127*255 = -255
    MatMulInt t;
    t.b_type = DT::UInt8;
    t.a_sizes = {1, 2};
    t.b_sizes = {2, 1};
    t.a = {-128, 127};
    t.b = {255, 255};
    SECTION("neither") { CHECK(t.run() == Out{-255}); }
    SECTION("only B's: 0 changes nothing") {
        t.b_zp = per_tensor(0);
        CHECK(t.run() == Out{-255});
    }
    SECTION("only A's: (-128-1)*255 + (127-1)*255 = -765") {
        t.a_zp = per_tensor(1);
        CHECK(t.run() == Out{-765});
    }
}

TEST_CASE("matmul integer: B transposed through strides", "[matmul_integer]") {
    MatMulInt t;
    set_small_case(t, DT::Int8, DT::UInt8);
    // B {3,2} stored column-major (strides {1, 3}): the buffer is B^T row-major.
    t.b = shifted(Values{1, 2, 3, -1, 0, 1}, DT::UInt8);
    t.b_strides = {1, 3};
    CHECK(t.run() == kExpected);
}

TEST_CASE("matmul integer: per-row A and per-column B zero points", "[matmul_integer]") {
    // A UINT8 {{10, 12}, {20, 30}}, AZP per row {10, 20}  -> A - AZP = {{0, 2}, {0, 10}}
    // B INT8 {{1,2,3}, {4,5,6}}, BZP per column {1, 0, -1} -> B - BZP = {{0,2,4}, {3,5,7}}
    // Output = {{0*0+2*3, 0*2+2*5, 0*4+2*7}, {10*3, 10*5, 10*7}} = {{6, 10, 14}, {30, 50, 70}}
    const Out expected = {6, 10, 14, 30, 50, 70};
    MatMulInt t;
    t.a_type = DT::UInt8;
    t.a = {10, 12, 20, 30};
    t.b = {1, 2, 3, 4, 5, 6};
    SECTION("4-D tensors, zero points {1,1,M,1} and {1,1,1,N}") {
        t.a_sizes = {1, 1, 2, 2};
        t.b_sizes = {1, 1, 2, 3};
        t.a_zp = Param{{1, 1, 2, 1}, {10, 20}};
        t.b_zp = Param{{1, 1, 1, 3}, {1, 0, -1}};
        CHECK(t.run() == expected);
    }
    SECTION("2-D tensors, zero points {M,1} and {1,N}") {
        t.a_sizes = {2, 2};
        t.b_sizes = {2, 3};
        t.a_zp = Param{{2, 1}, {10, 20}};
        t.b_zp = Param{{1, 3}, {1, 0, -1}};
        CHECK(t.run() == expected);
    }
    SECTION("BZeroPoint of 1 dimension {N} (feature level 5.2), AZeroPoint of 3 {1,M,1}") {
        t.a_sizes = {2, 2};
        t.b_sizes = {2, 3};
        t.a_zp = Param{{1, 2, 1}, {10, 20}};
        t.b_zp = Param{{3}, {1, 0, -1}};
        t.fidelity = qdml::Fidelity::DirectML;
        CHECK(t.run() == expected);
    }
    SECTION("zero points with strides: AZP every other element, BZP reversed") {
        t.a_sizes = {2, 2};
        t.b_sizes = {2, 3};
        t.a_zp = Param{{2, 1}, {10, 99, 20}, {2, 1}};
        t.b_zp = Param{{1, 3}, {1, 0, -1}, {3, 1}};  // {1,3}: stride of the size-1 dimension is never used
        CHECK(t.run() == expected);
    }
    SECTION("exact profile: zero points {M,N} repeated through zero strides") {
        t.a_sizes = {2, 2};
        t.b_sizes = {2, 3};
        t.a_zp = Param{{2, 3}, {10, 20}, {1, 0}};
        t.b_zp = Param{{2, 3}, {1, 0, -1}, {0, 1}};
        CHECK(t.run() == expected);
    }
}

TEST_CASE("matmul integer: 3-D and 4-D batches, batch broadcast through zero strides", "[matmul_integer]") {
    MatMulInt t;
    SECTION("3-D {Channel, M, K}") {
        // c0: [1 2] * [5 6]^T = 5 + 12 = 17;  c1: [3 4] * [7 8]^T = 21 + 32 = 53
        t.a_sizes = {2, 1, 2};
        t.b_sizes = {2, 2, 1};
        t.a = {1, 2, 3, 4};
        t.b = {5, 6, 7, 8};
        CHECK(t.run() == Out{17, 53});
    }
    SECTION("4-D {Batch, Channel, M, K}, B broadcast over batches, zero points") {
        // A[b][c] = [2b + c + 1, 1], AZP 1: [2b + c, 0];  B strides {0, 2, 1, 1}: B[b][c] = {{10},{1}} (c0),
        // {{20},{2}} (c1), BZP per tensor 2: {{8},{-1}}, {{18},{0}}
        // b0c0: 0*8 = 0;  b0c1: 1*18 = 18;  b1c0: 2*8 = 16;  b1c1: 3*18 = 54
        t.a_sizes = {2, 2, 1, 2};
        t.b_sizes = {2, 2, 2, 1};
        t.b_strides = {0, 2, 1, 1};
        t.a = {1, 1, 2, 1, 3, 1, 4, 1};
        t.b = {10, 1, 20, 2};
        t.a_zp = per_tensor(1, 4);
        t.b_zp = per_tensor(2, 1);
        CHECK(t.run() == Out{0, 18, 16, 54});
    }
    SECTION("output with padded strides") {
        // {2,1,2} output with strides {4,2,1}: c0: [1 2]*{{1,0},{0,1}} = [1 2]; c1: [3 4]*{{2,0},{0,2}} = [6 8]
        t.a_sizes = {2, 1, 2};
        t.b_sizes = {2, 2, 2};
        t.out_strides = {4, 2, 1};
        t.a = {1, 2, 3, 4};
        t.b = {1, 0, 0, 1, 2, 0, 0, 2};
        CHECK(t.run() == Out{1, 2, 6, 8});
    }
}

TEST_CASE("matmul integer: the int32 sum wraps modulo 2^32", "[matmul_integer]") {
    // Every A and B element is one buffer value repeated through zero strides.
    MatMulInt t;
    t.a_type = DT::UInt8;
    t.b_type = DT::UInt8;
    t.a_strides = {0, 0};
    t.b_strides = {0, 0};
    t.a = {255};
    t.b = {255};
    SECTION("33025 * 255 * 255 = 2147450625 still fits") {
        t.a_sizes = {1, 33025};
        t.b_sizes = {33025, 1};
        CHECK(t.run() == Out{2147450625});
    }
    SECTION("33026 * 255 * 255 = 2147515650 wraps to 2147515650 - 2^32 = -2147451646") {
        t.a_sizes = {1, 33026};
        t.b_sizes = {33026, 1};
        CHECK(t.run() == Out{-2147451646});
        // The exact checker names the difference from the unwrapped sum.
        const auto report = qdml::exact::check_exact(t.d, qdml::Fidelity::Exact);
        REQUIRE(report.differences.size() == 1);
        CHECK(report.differences[0].reason == qdml::exact::Reason::Int32Wrap);
        CHECK(report.differences[0].exact == 2147515650.0);
    }
    SECTION("through the zero points: (0 - 255) * (255 - 0) * 66052 = -4295031300 -> + 2^32 * 2 = 4294903292 -> -64004") {
        // -66052 * 65025 = -4295031300; mod 2^32: -4295031300 + 8589934592 = 4294903292; as int32: 4294903292 - 2^32
        t.a_sizes = {1, 66052};
        t.b_sizes = {66052, 1};
        t.a = {0};
        t.a_zp = per_tensor(255);
        CHECK(t.run() == Out{-64004});
    }
    SECTION("INT8 x INT8, negative: 140000 * (-128) * 127 = -2275840000 -> + 2^32 = 2019127296") {
        t.a_type = DT::Int8;
        t.b_type = DT::Int8;
        t.a = {-128};
        t.b = {127};
        t.a_sizes = {1, 140000};
        t.b_sizes = {140000, 1};
        CHECK(t.run() == Out{2019127296});
    }
}

TEST_CASE("matmul integer: 48x40x56 random case matches an independent int64 transcription", "[matmul_integer]") {
    constexpr std::uint32_t M = 48, K = 40, N = 56;
    qtest::Rng rng(qtest::case_seed(4856));
    const auto s8 = [&] { return static_cast<int>(rng.range(-128, 127)); };
    const auto u8 = [&] { return static_cast<int>(rng.range(0, 255)); };
    const bool transposed = GENERATE(false, true);
    INFO("B transposed: " << transposed << ", seed " << rng.seed());
    std::vector<int> a(M * K), b(K * N), a_zp(M), b_zp(N);
    for (auto& x : a) x = s8();
    for (auto& x : b) x = u8();
    for (auto& x : a_zp) x = s8();
    for (auto& x : b_zp) x = u8();
    Out expected(M * N);
    for (std::uint32_t m = 0; m < M; ++m)
        for (std::uint32_t n = 0; n < N; ++n) {
            std::int64_t s = 0;
            for (std::uint32_t k = 0; k < K; ++k) s += std::int64_t{a[m * K + k] - a_zp[m]} * (b[k * N + n] - b_zp[n]);
            expected[m * N + n] = s;  // |s| <= 40 * 255 * 255 < 2^31: no wrap here
        }
    MatMulInt t;
    t.b_type = DT::UInt8;
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
    t.a_zp = Param{{M, 1}, Values(a_zp.begin(), a_zp.end())};
    t.b_zp = Param{{1, N}, Values(b_zp.begin(), b_zp.end())};
    CHECK(t.run() == expected);
}

TEST_CASE("matmul integer: validation, one rule at a time", "[matmul_integer][validation]") {
    MatMulInt t;
    t.a_sizes = {2, 3};
    t.b_sizes = {3, 4};
    t.a = Values(6, 1);
    t.b = Values(12, 1);
    t.a_zp = per_tensor(0);
    t.b_zp = per_tensor(0);
    auto& d = t.build();
    REQUIRE(rejected_member(d) == "<valid>");
    REQUIRE(rejected_member_directml(d) == "<valid>");
    auto a = [&](DT type, const Dims& sizes, const Dims& strides = {}) {
        const auto n = qdml::min_buffer_elements(desc(type, sizes, strides)).value_or(0);
        return t.pool.raw(type, sizes, Values(n, 1), strides);
    };

    SECTION("K mismatch") {
        d.BTensor = a(DT::Int8, {4, 4});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("output size mismatch") {
        d.OutputTensor = t.pool.output(DT::Int32, {2, 3});
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = t.pool.output(DT::Int32, {3, 4});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("batch sizes: equal to the output's, no broadcast through Sizes 1") {
        d.ATensor = a(DT::Int8, {2, 2, 3});
        d.BTensor = a(DT::Int8, {1, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int32, {2, 2, 4});
        CHECK(rejected_member(d) == "BTensor");
        d.BTensor = a(DT::Int8, {2, 3, 4}, {0, 4, 1});  // shared through a zero stride
        CHECK(rejected_member(d) == "<valid>");
        d.ATensor = a(DT::Int8, {1, 2, 3});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("A and B DimensionCount differ") {
        d.BTensor = a(DT::Int8, {1, 3, 4});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("Output DimensionCount differs") {
        d.OutputTensor = t.pool.output(DT::Int32, {1, 2, 4});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("A zero point per column of A or of the output instead of per row") {
        d.AZeroPointTensor = a(DT::Int8, {1, 3});
        CHECK(rejected_member(d) == "AZeroPointTensor");
        d.AZeroPointTensor = a(DT::Int8, {1, 4});
        CHECK(rejected_member(d) == "AZeroPointTensor");
    }
    SECTION("A zero point of 1 dimension holding M values: right-aligned it is {1,1,1,M}") {
        d.AZeroPointTensor = a(DT::Int8, {2});
        CHECK(rejected_member(d) == "AZeroPointTensor");
        d.AZeroPointTensor = a(DT::Int8, {2, 1});
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("B zero point per row instead of per column") {
        d.BZeroPointTensor = a(DT::Int8, {3, 1});
        CHECK(rejected_member(d) == "BZeroPointTensor");
    }
    SECTION("zero point per batch") {
        d.ATensor = a(DT::Int8, {2, 2, 3});
        d.BTensor = a(DT::Int8, {2, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int32, {2, 2, 4});
        d.AZeroPointTensor = a(DT::Int8, {2, 2, 1});
        CHECK(rejected_member(d) == "AZeroPointTensor");
    }
    SECTION("zero point with 5 dimensions") {
        d.BZeroPointTensor = a(DT::Int8, {1, 1, 1, 1, 4});
        CHECK(rejected_member(d) == "BZeroPointTensor");
    }
    SECTION("DimensionCount 1 and 5") {
        d.ATensor = a(DT::Int8, {3});
        CHECK(rejected_member(d) == "ATensor");
        d.ATensor = a(DT::Int8, {1, 1, 1, 2, 3});
        d.BTensor = a(DT::Int8, {1, 1, 1, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int32, {1, 1, 1, 2, 4});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("A or B of another type") {
        d.ATensor = a(DT::Int16, {2, 3});
        d.AZeroPointTensor.reset();
        CHECK(rejected_member(d) == "ATensor");
        d.ATensor = a(DT::Int32, {2, 3});
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("output not INT32") {
        for (DT o : {DT::Int8, DT::UInt8, DT::UInt32, DT::Float32}) {
            INFO(qdml::name(o));
            d.OutputTensor = t.pool.output(o, {2, 4});
            CHECK(rejected_member(d) == "OutputTensor");
        }
    }
    SECTION("zero point type differs from its tensor's") {
        d.AZeroPointTensor = a(DT::UInt8, {1, 1});
        CHECK(rejected_member(d) == "AZeroPointTensor");
        d.AZeroPointTensor = a(DT::Int8, {1, 1});
        d.BZeroPointTensor = a(DT::UInt8, {1, 1});
        CHECK(rejected_member(d) == "BZeroPointTensor");
    }
    SECTION("feature level 3.1: 4-D only (2-4 dims from 4.0)") {
        CHECK(rejected_member(d, qdml::FeatureLevel::L3_1) == "ATensor");
        d.ATensor = a(DT::Int8, {1, 1, 2, 3});
        d.BTensor = a(DT::Int8, {1, 1, 3, 4});
        d.OutputTensor = t.pool.output(DT::Int32, {1, 1, 2, 4});
        d.AZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        d.BZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        CHECK(rejected_member(d, qdml::FeatureLevel::L2_1) == "<valid>");
        d.AZeroPointTensor = a(DT::Int8, {1});  // 1-D AZeroPoint: from 4.0
        CHECK(rejected_member(d, qdml::FeatureLevel::L3_1) == "AZeroPointTensor");
        CHECK(rejected_member(d, qdml::FeatureLevel::L4_0) == "<valid>");
    }
    SECTION("BZeroPoint: 2-4 dimensions from 4.0, 1-4 from 5.2") {
        d.BZeroPointTensor = a(DT::Int8, {4});
        CHECK(rejected_member(d, qdml::FeatureLevel::L5_1) == "BZeroPointTensor");
        CHECK(rejected_member(d, qdml::FeatureLevel::L5_2) == "<valid>");
        d.BZeroPointTensor = a(DT::Int8, {1, 4});
        CHECK(rejected_member(d, qdml::FeatureLevel::L4_0) == "<valid>");
    }
    SECTION("feature level 2.0 predates the operator") {
        CHECK(rejected_member(d, qdml::FeatureLevel::L2_0) == "operator");
        CHECK(rejected_member(d, qdml::FeatureLevel::L2_1) == "ATensor");  // 2-D before 4.0
    }
    SECTION("output overlaps an input") {
        Tensor big = t.pool.output(DT::Int8, {64});
        d.BTensor = Pool::alias(big, DT::Int8, {3, 4});  // bytes 0..11
        d.OutputTensor = Pool::alias(big, DT::Int32, {2, 4}, 2);  // bytes 8..39
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(big, DT::Int32, {2, 4}, 3);  // bytes 12..43: adjacent, no overlap
        CHECK(rejected_member(d) == "<valid>");
    }
    SECTION("output stride 0") {
        d.OutputTensor = t.pool.output(DT::Int32, {2, 4}, {0, 1});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("bound buffer smaller than the desc") {
        d.ATensor.DataSizeInBytes = 4;
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("directml profile: no zero point repeated to the output's size through zero strides") {
        d.AZeroPointTensor = a(DT::Int8, {2, 4}, {1, 0});  // per row, written {M,N}
        CHECK(rejected_member(d) == "<valid>");
        CHECK(rejected_member_directml(d) == "AZeroPointTensor");
        d.AZeroPointTensor = a(DT::Int8, {2, 1}, {0, 0});  // per-row shape, one value: DirectML accepts it
        CHECK(rejected_member_directml(d) == "<valid>");
        d.BZeroPointTensor = a(DT::Int8, {2, 4}, {0, 1});  // per column, written {M,N}
        CHECK(rejected_member(d) == "<valid>");
        CHECK(rejected_member_directml(d) == "BZeroPointTensor");
    }
    SECTION("the error names the operator, the member and the rule") {
        d.OutputTensor = t.pool.output(DT::Int8, {2, 4});
        try {
            qdml::validate(d);
            FAIL("no error");
        } catch (const qdml::Error& e) {
            CHECK(std::string(e.what()).find("MATRIX_MULTIPLY_INTEGER: OutputTensor: DataType INT8 is not supported; "
                                             "allowed: INT32") != std::string::npos);
        }
    }
}

TEST_CASE("matmul integer: every entry computes the hand-computed case", "[matmul_integer]") {
    for (auto impl : {qdml::Implementation::Reference, qdml::Implementation::Simd}) {
        INFO("impl " << (impl == qdml::Implementation::Simd ? "simd" : "reference"));
        MatMulInt t;
        set_small_case(t, DT::UInt8, DT::Int8);
        t.build();
        qdml::run(t.d, qtest::exact(impl));
        CHECK(t.pool.read(t.d.OutputTensor) == kExpected);
        const std::string path = qdml::describe(t.d, qtest::exact(impl));
        if (impl == qdml::Implementation::Simd)
            CHECK(path.rfind("simd gemm ", 0) == 0);  // the GEMM engine, on this CPU's ISA path
        else
            CHECK(path == "reference");
        // Compiled once, executed on a second output buffer.
        const auto compiled = qdml::compile(t.d, qtest::exact(impl));
        qdml::MatrixMultiplyIntegerDesc d2 = t.d;
        d2.OutputTensor = t.pool.output(DT::Int32, {2, 2});
        compiled.execute(d2);
        CHECK(t.pool.read(d2.OutputTensor) == kExpected);
        // The exact checker: no difference (and an int32-wrapped one is named as such, below).
        const auto report = qdml::exact::check_exact(t.d, qdml::Fidelity::Exact);
        CHECK(report.elements == 4);
        CHECK(report.differences.empty());
    }
}
