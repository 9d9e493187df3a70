// ELEMENT_WISE_QUANTIZED_LINEAR_ADD (docs/semantics.md section 4). Every expected value
// below is derived by hand from
//   va = fp32(A - AZP) * AScale,  vb = fp32(B - BZP) * BScale
//   Output = Q((va + vb) / OutputScale, OutputZP, OutputType)
//   Q(v, zp, T) = rne(clamp(v, lo - zp, hi - zp)) + zp
#include <catch2/catch.hpp>

#include <limits>
#include <optional>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using Out = std::vector<long long>;

/// Builder: one add with per-tensor parameters; a/b are raw buffer values.
struct Add {
    Pool pool;
    DT a_type = DT::Int8, b_type = DT::Int8, out_type = DT::Int8;
    Dims sizes{1};
    Values a{0}, b{0};
    Dims a_strides, b_strides, out_strides;
    double a_scale = 1, b_scale = 1, out_scale = 1;
    std::optional<double> a_zp, b_zp, out_zp;
    qdml::ElementWiseQuantizedLinearAddDesc d;

    qdml::ElementWiseQuantizedLinearAddDesc& build() {
        const std::size_t n = sizes.size();
        d.ATensor = pool.raw(a_type, sizes, a, a_strides);
        d.AScaleTensor = pool.scalar(DT::Float32, a_scale, n);
        if (a_zp) d.AZeroPointTensor = pool.scalar(a_type, *a_zp, n);
        d.BTensor = pool.raw(b_type, sizes, b, b_strides);
        d.BScaleTensor = pool.scalar(DT::Float32, b_scale, n);
        if (b_zp) d.BZeroPointTensor = pool.scalar(b_type, *b_zp, n);
        d.OutputScaleTensor = pool.scalar(DT::Float32, out_scale, n);
        if (out_zp) d.OutputZeroPointTensor = pool.scalar(out_type, *out_zp, n);
        d.OutputTensor = pool.output(out_type, sizes, out_strides);
        return d;
    }
    Out run() {
        build();
        qdml::run(d, qtest::exact());
        return pool.read(d.OutputTensor);
    }
};

}  // namespace

TEST_CASE("add: ties round half to even, zero point added after rounding", "[add]") {
    Add t;
    t.sizes = {8};
    // A + B (scales 1) = {1, 3, 5, 7, -1, -3, -5, -7}; / OutputScale 2:
    //   v = {0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5}
    //   rne(v) = {0, 2, 2, 4, 0, -2, -2, -4}
    t.a = {1, 2, 5, 4, -1, -2, -5, -4};
    t.b = {0, 1, 0, 3, 0, -1, 0, -3};
    t.out_scale = 2;
    SECTION("odd output zero point 3: rne(v) + 3 (not rne(v + 3))") {
        t.out_zp = 3;
        CHECK(t.run() == Out{3, 5, 5, 7, 3, 1, 1, -1});
    }
    SECTION("even output zero point 10") {
        t.out_zp = 10;
        CHECK(t.run() == Out{10, 12, 12, 14, 10, 8, 8, 6});
    }
    SECTION("odd negative output zero point -7") {
        t.out_zp = -7;
        CHECK(t.run() == Out{-7, -5, -5, -3, -7, -9, -9, -11});
    }
    SECTION("UINT8 output, odd zero point 101") {
        t.out_type = DT::UInt8;
        t.out_zp = 101;
        CHECK(t.run() == Out{101, 103, 103, 105, 101, 99, 99, 97});
    }
}

TEST_CASE("add: saturation at both ends, clamp before rounding", "[add]") {
    Add t;
    t.a_type = DT::UInt8;
    t.b_type = DT::UInt8;
    t.out_type = DT::UInt8;
    t.sizes = {7};
    t.out_zp = 100;  // UINT8: v is clamped to [0 - 100, 255 - 100] = [-100, 155]
    SECTION("OutputScale 2, AZP 255") {
        t.a_zp = 255;
        t.out_scale = 2;
        // A - 255 + B, / 2:
        //   A=255,B=54 : 54/2 = 27         -> 127
        //   A=255,B=255: 255/2 = 127.5     -> 128 + 100 = 228
        //   A=0,  B=56 : -199/2 = -99.5    -> -100 + 100 = 0
        //   A=0,  B=58 : -197/2 = -98.5    -> -98 + 100 = 2
        //   A=0,  B=0  : -255/2 = -127.5   -> clamp -100 -> 0
        //   A=255,B=255 is the max here; use AZP to get high values below
        //   A=200,B=255: (-55+255)/2 = 100 -> 200
        //   A=1,  B=59 : (-254+59)/2 = -97.5 -> -98 + 100 = 2
        t.a = {255, 255, 0, 0, 0, 200, 1};
        t.b = {54, 255, 56, 58, 0, 255, 59};
        CHECK(t.run() == Out{127, 228, 0, 2, 0, 200, 2});
    }
    SECTION("OutputScale 0.5 (true division doubles)") {
        t.out_scale = 0.5;
        // (A + B) / 0.5:
        //   77+0  -> 154 -> 254;   77+1 -> 156 -> clamp 155 -> 255;   255+255 -> 1020 -> 255
        //   with BZP 60: A=0,B=60 -> 0 -> 100;  0 + (10-60) = -50 -> -100 -> 0;
        //   0 + (0-60) = -60 -> -120 -> clamp -100 -> 0
        t.b_zp = 60;
        t.a = {77, 77, 255, 0, 0, 0, 60};
        t.b = {60, 61, 255, 60, 10, 0, 10};
        // element 6: (60 + (10 - 60)) / 0.5 = 20 -> 120
        CHECK(t.run() == Out{254, 255, 255, 100, 0, 0, 120});
    }
    SECTION("INT8 output, both ends") {
        t.out_type = DT::Int8;
        t.out_zp = -100;  // v clamped to [-128 + 100, 127 + 100] = [-28, 227]
        // A + B - 2*128 (A,B zero point 128):
        //   255+255-256 = 254 -> clamp 227 -> 127;  228+0-128... see per element
        t.a_zp = 128;
        t.b_zp = 128;
        //   (255-128)+(255-128) = 254 -> 227 -> 127
        //   (228-128)+(127-128) = 99  -> -1
        //   (100-128)+(128-128) = -28 -> -128
        //   (99-128)+(128-128)  = -29 -> clamp -28 -> -128
        //   (0-128)+(0-128)     = -256 -> -128
        //   (228-128)+(255-128) = 227 -> 127
        //   (228-128)+(254-128) = 226 -> 126
        t.a = {255, 228, 100, 99, 0, 228, 228};
        t.b = {255, 127, 128, 128, 0, 255, 254};
        CHECK(t.run() == Out{127, -1, -128, -128, -128, 127, 126});
    }
}

TEST_CASE("add: NaN and infinity go through Q", "[add]") {
    Add t;
    t.sizes = {3};
    t.out_type = DT::UInt8;
    t.out_zp = 7;
    t.a_scale = std::numeric_limits<float>::infinity();
    // va = fp32(A) * inf: A=0 -> 0*inf = NaN -> lo - zp = -7 -> 0
    //                     A=1 -> +inf -> clamp 255-7 = 248 -> 255
    //                     A=-1 -> -inf -> clamp -7 -> 0
    t.a = {0, 1, -1};
    t.b = {5, 5, 5};
    CHECK(t.run() == Out{0, 255, 0});
}

TEST_CASE("add: all 8 INT8/UINT8 combinations of A, B and Output", "[add]") {
    // Base case in INT8; a UINT8 operand holds every value and its zero point
    // +128 (same differences), a UINT8 output is +128 (ranges map exactly).
    // AZP 10, BZP -20, AScale 0.5, BScale 0.25, OutputScale 0.5, OutputZP -5
    //   A - AZP = {40, -100, 117, -138, 1, 0, 0}  va = {20, -50, 58.5, -69, 0.5, 0, 0}
    //   B - BZP = {0, 80, 147, -108, 1, 1, -1}    vb = {0, 20, 36.75, -27, 0.25, 0.25, -0.25}
    //   sum     = {20, -30, 95.25, -96, 0.75, 0.25, -0.25}
    //   / 0.5   = {40, -60, 190.5, -192, 1.5, 0.5, -0.5}
    //   clamp to [-128+5, 127+5] = {40, -60, 132, -123, 1.5, 0.5, -0.5}
    //   rne     = {40, -60, 132, -123, 2, 0, 0};  + (-5) = {35, -65, 127, -128, -3, -5, -5}
    const Values a = {50, -90, 127, -128, 11, 10, 10};
    const Values b = {-20, 60, 127, -128, -19, -19, -21};
    const Out expected = {35, -65, 127, -128, -3, -5, -5};
    for (DT ta : kQ8)
        for (DT tb : kQ8)
            for (DT to : kQ8) {
                INFO("A " << qdml::name(ta) << " B " << qdml::name(tb) << " Output " << qdml::name(to));
                Add t;
                t.a_type = ta;
                t.b_type = tb;
                t.out_type = to;
                t.sizes = {7};
                t.a = shifted(a, ta);
                t.b = shifted(b, tb);
                t.a_zp = 10 + shift(ta);
                t.b_zp = -20 + shift(tb);
                t.out_zp = -5 + shift(to);
                t.a_scale = 0.5;
                t.b_scale = 0.25;
                t.out_scale = 0.5;
                CHECK(t.run() == shifted(expected, to));
            }
}

TEST_CASE("add: optional zero points absent mean 0", "[add]") {
    Add t;
    t.a_type = DT::UInt8;
    t.b_type = DT::Int8;
    t.out_type = DT::UInt8;
    t.sizes = {6};
    t.a = {3, 200, 5, 7, 0, 255};
    t.b = {-7, 100, 0, 0, 1, 127};
    t.out_scale = 2;
    SECTION("all three absent") {
        // (A + B) / 2 = {-2, 150, 2.5, 3.5, 0.5, 191} -> {0 (sat), 150, 2, 4, 0, 191}
        CHECK(t.run() == Out{0, 150, 2, 4, 0, 191});
    }
    SECTION("only the output zero point present (50)") {
        t.out_zp = 50;
        // rne = {-2, 150, 2, 4, 0, 191} + 50 = {48, 200, 52, 54, 50, 241}
        CHECK(t.run() == Out{48, 200, 52, 54, 50, 241});
    }
    SECTION("only A's zero point present (3)") {
        t.a_zp = 3;
        // (A - 3 + B) / 2 = {-3.5, 148.5, 1, 2, -1, 189.5} -> {0, 148, 1, 2, 0, 190}
        CHECK(t.run() == Out{0, 148, 1, 2, 0, 190});
    }
}

TEST_CASE("add: (va + vb) / OutputScale is a true division, not a multiply by 1/OutputScale", "[add]") {
    // AScale = BScale = 0.15f = 0x3E19999A (0.1500000059604645), OutputScale = 0.3f = 0x3E99999A
    // (0.3000000119209290); fp32(1/0.3f) = 0x40555555 (3.333333254).
    //  205 * 0.15f = 30.75000122 -> binary32 30.75 + 2^-19 = 30.75000191 (0x41F60001)
    //    / 0.3f = 102.50000228 -> binary32 102.5 (ulp 2^-17)  -> rne 102
    //    (* 3.333333254 = 102.50000393 -> 102.50000763 -> 103: the wrong result)
    //  255 * 0.15f = 38.25000152 -> binary32 38.25
    //    / 0.3f = 127.49999493 -> binary32 127.49999237      -> rne 127
    //    (* 3.333333254 = 127.49999696 -> 127.5 -> 128: the wrong result)
    // Negative differences mirror these. va + 0 and 0 + vb are exact.
    Add t;
    t.a_type = DT::UInt8;
    t.b_type = DT::UInt8;
    t.sizes = {4};
    t.a = {205, 255, 0, 0};  // AZP 0:  A - AZP = {205, 255, 0, 0}
    t.b = {255, 255, 50, 0};
    t.b_zp = 255;  //             B - BZP = {0, 0, -205, -255}
    t.a_scale = 0.15f;
    t.b_scale = 0.15f;
    t.out_scale = 0.3f;
    SECTION("INT8 output, zero point 0") {
        // v = {102.5, 127.49999, -102.5, -127.49999} -> {102, 127, -102, -127}
        CHECK(t.run() == Out{102, 127, -102, -127});
    }
    SECTION("UINT8 output, zero point 128") {
        t.out_type = DT::UInt8;
        t.out_zp = 128;
        // clamp to [-128, 127] -> rne {102, 127, -102, -127} + 128 = {230, 255, 26, 1}
        // (reciprocal would give {231, 255, 25, 0})
        CHECK(t.run() == Out{230, 255, 26, 1});
    }
}

namespace {
/// Closed-form check for the N-D test: A = L % 200 - 100 (INT8, AZP 0),
/// B = (7 L) % 256 (UINT8, BZP 128), scales 1, INT8 output without zero point:
/// Output = clamp(A + B - 128, -128, 127), all exact in binary32.
long long nd_expected(long long L) {
    const long long v = (L % 200 - 100) + ((7 * L) % 256 - 128);
    return v < -128 ? -128 : v > 127 ? 127 : v;
}
}  // namespace

TEST_CASE("add: 1-D to 8-D, padded A, packed B, column-major output", "[add]") {
    for (std::size_t rank = 1; rank <= 8; ++rank) {
        INFO("rank " << rank);
        Dims sizes(rank);
        for (std::size_t i = 0; i < rank; ++i) sizes[i] = 2 + static_cast<std::uint32_t>(i % 2);
        Dims a_strides(rank), out_strides(rank);
        a_strides[rank - 1] = 2;  // every other element, +1 padding per row level
        for (std::size_t i = rank - 1; i-- > 0;) a_strides[i] = a_strides[i + 1] * sizes[i + 1] + 1;
        std::uint32_t acc = 1;
        for (std::size_t i = 0; i < rank; ++i) {  // column-major: first index fastest
            out_strides[i] = acc;
            acc *= sizes[i];
        }
        const std::uint32_t count = acc;
        Values a(count), b(count);
        for (std::uint32_t L = 0; L < count; ++L) {
            a[L] = static_cast<double>(L % 200) - 100;
            b[L] = static_cast<double>((7 * L) % 256);
        }
        Add t;
        t.sizes = sizes;
        t.b_type = DT::UInt8;
        t.b_zp = 128;
        t.a = a;  // packed placeholders, replaced below
        t.b = b;
        t.build();
        t.d.ATensor = t.pool.logical(DT::Int8, sizes, a, a_strides, /*filler=*/99);
        t.d.BTensor = t.pool.logical(DT::UInt8, sizes, b);
        t.d.OutputTensor = t.pool.output(DT::Int8, sizes, out_strides);
        qdml::run(t.d, qtest::exact());
        const Out got = t.pool.read(t.d.OutputTensor);
        REQUIRE(got.size() == count);
        for (std::uint32_t L = 0; L < count; ++L) {
            INFO("logical element " << L);
            REQUIRE(got[L] == nd_expected(L));
        }
    }
}

TEST_CASE("add: broadcast through zero strides on A and on B", "[add]") {
    Add t;
    t.sizes = {2, 3};
    SECTION("A rows repeated, B columns repeated") {
        t.a = {1, 2, 3};
        t.a_strides = {0, 1};  // A[i][j] = {1,2,3}[j]
        t.b = {10, 20};
        t.b_strides = {1, 0};  // B[i][j] = {10,20}[i]
        CHECK(t.run() == Out{11, 12, 13, 21, 22, 23});
    }
    SECTION("B a single element broadcast to all") {
        t.a = {1, 2, 3, 4, 5, 6};
        t.b = {-5};
        t.b_strides = {0, 0};
        t.out_scale = 2;
        // (A - 5) / 2 = {-2, -1.5, -1, -0.5, 0, 0.5} -> {-2, -2, -1, 0, 0, 0}
        CHECK(t.run() == Out{-2, -2, -1, 0, 0, 0});
    }
    SECTION("3-D, A broadcast on the middle dimension, B transposed") {
        t.sizes = {2, 2, 2};
        t.a = {1, 2, 3, 4};
        t.a_strides = {2, 0, 1};  // A[i][j][k] = a[2i + k]
        t.b = {10, 20, 30, 40, 50, 60, 70, 80};
        t.b_strides = {1, 2, 4};  // B[i][j][k] = b[i + 2j + 4k]
        // i=0: j=0: {1+10, 2+50}  j=1: {1+30, 2+70}
        // i=1: j=0: {3+20, 4+60}  j=1: {3+40, 4+80}
        CHECK(t.run() == Out{11, 52, 31, 72, 23, 64, 43, 84});
    }
}

TEST_CASE("add: non-packed input strides skip the gaps", "[add]") {
    Add t;
    t.sizes = {2, 2};
    t.a = {1, 99, 2, 99, 99, 3, 99, 4};  // strides {5, 2}: A = {{1,2},{3,4}} at 0, 2, 5, 7
    t.a_strides = {5, 2};
    t.b = {10, 30, 20, 40};  // strides {1, 2}: B = {{10,20},{30,40}}
    t.b_strides = {1, 2};
    CHECK(t.run() == Out{11, 22, 33, 44});
}

TEST_CASE("add: output strides write only the addressed elements", "[add]") {
    Add t;
    t.sizes = {2, 3};
    t.a = {1, 2, 3, 4, 5, 6};
    t.b = {0, 0, 0, 0, 0, 0};
    SECTION("padded rows {4, 1}: buffer element 3 keeps its sentinel") {
        t.out_strides = {4, 1};
        CHECK(t.run() == Out{1, 2, 3, 4, 5, 6});  // read() checks the gap and the guards
    }
    SECTION("transposed {1, 2}") {
        t.out_strides = {1, 2};
        t.build();
        qdml::run(t.d, qtest::exact());
        const auto* raw = static_cast<const std::int8_t*>(t.d.OutputTensor.Data);
        // Output[i][j] at i + 2j: buffer = {1, 4, 2, 5, 3, 6}
        CHECK(std::vector<int>(raw, raw + 6) == std::vector<int>{1, 4, 2, 5, 3, 6});
        CHECK(t.pool.read(t.d.OutputTensor) == Out{1, 2, 3, 4, 5, 6});
    }
    SECTION("sparse {7, 2}") {
        t.out_strides = {7, 2};
        CHECK(t.run() == Out{1, 2, 3, 4, 5, 6});
    }
}

TEST_CASE("add: validation, one rule at a time", "[add][validation]") {
    Add t;
    t.sizes = {2, 3};
    t.a = {1, 2, 3, 4, 5, 6};
    t.b = {1, 2, 3, 4, 5, 6};
    t.a_zp = 0;
    t.b_zp = 0;
    t.out_zp = 0;
    auto& d = t.build();
    REQUIRE(rejected_member(d) == "<valid>");

    SECTION("scale with more than one element") {
        d.AScaleTensor = t.pool.raw(DT::Float32, {1, 2}, {1, 1});
        CHECK(rejected_member(d) == "AScaleTensor");
    }
    SECTION("output scale with more than one element") {
        d.OutputScaleTensor = t.pool.raw(DT::Float32, {2, 1}, {1, 1});
        CHECK(rejected_member(d) == "OutputScaleTensor");
    }
    SECTION("zero point with more than one element, even through zero strides") {
        d.BZeroPointTensor = t.pool.raw(DT::Int8, {2, 3}, {0}, {0, 0});
        CHECK(rejected_member(d) == "BZeroPointTensor");
    }
    SECTION("scale DimensionCount differing from A") {
        d.AScaleTensor = t.pool.scalar(DT::Float32, 1, 1);
        CHECK(rejected_member(d) == "AScaleTensor");
    }
    SECTION("zero point DimensionCount differing from A") {
        d.OutputZeroPointTensor = t.pool.scalar(DT::Int8, 0, 3);
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
    }
    SECTION("zero point type differing from its tensor's type") {
        d.AZeroPointTensor = t.pool.scalar(DT::UInt8, 0, 2);
        CHECK(rejected_member(d) == "AZeroPointTensor");
    }
    SECTION("output zero point type differing from Output's type") {
        d.OutputZeroPointTensor = t.pool.scalar(DT::UInt8, 0, 2);
        CHECK(rejected_member(d) == "OutputZeroPointTensor");
    }
    SECTION("scale not FLOAT32") {
        d.BScaleTensor = t.pool.scalar(DT::Float16, 1, 2);
        CHECK(rejected_member(d) == "BScaleTensor");
        d.BScaleTensor = t.pool.scalar(DT::Int32, 1, 2);
        CHECK(rejected_member(d) == "BScaleTensor");
    }
    SECTION("A and B sizes differ") {
        d.BTensor = t.pool.raw(DT::Int8, {3, 2}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("A and B DimensionCount differ") {
        d.BTensor = t.pool.raw(DT::Int8, {1, 2, 3}, {1, 2, 3, 4, 5, 6});
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("Output sizes differ") {
        d.OutputTensor = t.pool.output(DT::Int8, {2, 2});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("A type not INT8/UINT8") {
        d.ATensor = t.pool.raw(DT::Int16, {2, 3}, {1, 2, 3, 4, 5, 6});
        d.AZeroPointTensor.reset();
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("Output type FLOAT32") {
        d.OutputTensor = t.pool.output(DT::Float32, {2, 3});
        d.OutputZeroPointTensor.reset();
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("a size of 0") {
        d.BTensor.Desc.Sizes[1] = 0;
        CHECK(rejected_member(d) == "BTensor");
    }
    SECTION("DimensionCount 0") {
        d.ATensor.Desc.DimensionCount = 0;
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("TotalTensorSizeInBytes below the minimum") {
        d.ATensor.Desc.TotalTensorSizeInBytes = 4;  // needs 8 (6 bytes rounded up to 4)
        CHECK(rejected_member(d) == "ATensor");
    }
    SECTION("output overlaps an input") {
        d.OutputTensor = Pool::alias(d.BTensor, DT::Int8, {2, 3}, 1);
        CHECK(rejected_member(d) == "OutputTensor");
        d.OutputTensor = Pool::alias(d.ATensor, DT::Int8, {2, 3});  // not even in place is allowed
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("output overlaps a zero point") {
        Tensor big = t.pool.output(DT::Int8, {8});
        d.OutputTensor = Pool::alias(big, DT::Int8, {2, 3});
        d.OutputZeroPointTensor = Pool::alias(big, DT::Int8, {1, 1}, 7);
        CHECK(rejected_member(d) == "<valid>");  // byte 7 is outside the output's 6
        d.OutputZeroPointTensor = Pool::alias(big, DT::Int8, {1, 1}, 5);
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("output stride 0 on a dimension of size > 1") {
        d.OutputTensor = t.pool.output(DT::Int8, {2, 3}, {0, 1});
        CHECK(rejected_member(d) == "OutputTensor");
    }
    SECTION("feature level 3.1 predates the operator (introduced in 4.0)") {
        CHECK(rejected_member(d, qdml::FeatureLevel::L3_1) == "operator");
        CHECK(rejected_member(d, qdml::FeatureLevel::L4_0) == "<valid>");
    }
    SECTION("run() rejects before touching the output") {
        d.AScaleTensor = t.pool.raw(DT::Float32, {1, 2}, {1, 1});
        CHECK_THROWS_AS(qdml::run(d), qdml::Error);
        CHECK(t.pool.read(d.OutputTensor) == Out(6, static_cast<std::int8_t>(kSentinel)));
    }
}
