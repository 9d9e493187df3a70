// QUANTIZED_LINEAR_CONVOLUTION (docs/semantics.md section 6). Expected values are
// derived by hand from
//   oH   = 1 + (H + StartPadding[0] + EndPadding[0] - (1 + (kH-1)*Dilations[0])) / Strides[0]
//   acc  = Bias[oc] + sum over (ic in group, ky, kx) of
//          (X[n][ic][oy*sy + ky*dy - padTop][ox*sx + kx*dx - padLeft] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])
//          (int32, wraps; a tap in the padding contributes exactly 0)
//   mult = fp32(InputScale * FilterScale[oc]) / OutputScale
//   Output = Q(fp32(acc) * mult, OutputZP, OutputType)
// plus one random case checked against a second transcription written here
// (an explicitly zero-point-padded input, int64 sums).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using Out = std::vector<long long>;
using Pair = std::array<std::uint32_t, 2>;

Param per_tensor(double v, std::size_t dims = 4) { return {Dims(dims, 1u), {v}}; }

/// Builder: one convolution. Input and Filter values are in logical
/// (row-major) order, written through their strides; buffer gaps hold 99.
struct Conv {
    Pool pool;
    DT in_type = DT::Int8, f_type = DT::Int8, out_type = DT::Int8;
    Dims in_sizes{1, 1, 1, 1}, f_sizes{1, 1, 1, 1}, out_sizes{1, 1, 1, 1};
    Dims in_strides, f_strides, out_strides;
    Values x{0}, f{1};
    Param in_scale = per_tensor(1), f_scale = per_tensor(1), out_scale = per_tensor(1);
    std::optional<Param> in_zp, f_zp, out_zp, bias;
    Pair strides{1, 1}, dilations{1, 1}, start{0, 0}, end{0, 0};
    std::uint32_t groups = 1;
    qdml::QuantizedLinearConvolutionDesc d;

    Tensor param(DT t, const Param& p) { return pool.raw(t, p.sizes, p.values, p.strides); }

    qdml::QuantizedLinearConvolutionDesc& build() {
        d.InputTensor = pool.logical(in_type, in_sizes, x, in_strides, 99);
        d.InputScaleTensor = param(DT::Float32, in_scale);
        if (in_zp) d.InputZeroPointTensor = param(in_type, *in_zp);
        d.FilterTensor = pool.logical(f_type, f_sizes, f, f_strides, 99);
        d.FilterScaleTensor = param(DT::Float32, f_scale);
        if (f_zp) d.FilterZeroPointTensor = param(f_type, *f_zp);
        if (bias) d.BiasTensor = param(DT::Int32, *bias);
        d.OutputScaleTensor = param(DT::Float32, out_scale);
        if (out_zp) d.OutputZeroPointTensor = param(out_type, *out_zp);
        d.OutputTensor = pool.output(out_type, out_sizes, out_strides);
        d.Strides = strides;
        d.Dilations = dilations;
        d.StartPadding = start;
        d.EndPadding = end;
        d.GroupCount = groups;
        return d;
    }
    Out run() {
        build();
        qdml::run(d, qtest::exact());
        return pool.read(d.OutputTensor);
    }
};

/// The hand-computed case of the first tests: asymmetric padding and zero points.
///   Input {1,1,2,3}: X - XZP(-2) = {{1,2,3}, {4,5,6}}
///   Filter {1,1,2,2}: F - FZP(1) = {{1,2}, {-4,8}}
///   StartPadding {1,0}, EndPadding {0,2}:
///     oH = 1 + (2 + 1 + 0 - 2) / 1 = 2,  oW = 1 + (3 + 0 + 2 - 2) / 1 = 4
///   tap rows y = oy + ky - 1, columns x = ox + kx (padding outside 0..1 / 0..2):
///     oy 0 (only ky 1 on input row 0): ox 0: -4*1 + 8*2 = 12;  ox 1: -4*2 + 8*3 = 16;
///                                      ox 2: -4*3 = -12;       ox 3: 0
///     oy 1: ox 0: 1*1 + 2*2 - 4*4 + 8*5 = 29;  ox 1: 1*2 + 2*3 - 4*5 + 8*6 = 36;
///           ox 2: 1*3 - 4*6 = -21;             ox 3: 0
///   mult = fp32(0.5 * 0.5) / 0.5 = 0.5: v = {6, 8, -6, 0, 14.5, 18, -10.5, 0}
///   rne = {6, 8, -6, 0, 14, 18, -10, 0}, + OutputZP 3 = {9, 11, -3, 3, 17, 21, -7, 3}
/// (padding read as a raw 0 instead would add (0 - -2) * k per padded tap:
///  oy 0 ox 0 would be 12 + 2*1 + 2*2 = 18.)
const Values kX = {1, 2, 3, 4, 5, 6};  // X - XZP
const Values kF = {1, 2, -4, 8};       // F - FZP
const Out kExpected = {9, 11, -3, 3, 17, 21, -7, 3};

Values offset_by(Values v, double k) {
    for (auto& e : v) e += k;
    return v;
}

void set_small_case(Conv& t, DT ti, DT tf, DT to) {
    t.in_type = ti;
    t.f_type = tf;
    t.out_type = to;
    t.in_sizes = {1, 1, 2, 3};
    t.f_sizes = {1, 1, 2, 2};
    t.out_sizes = {1, 1, 2, 4};
    t.start = {1, 0};
    t.end = {0, 2};
    // A UINT8 operand holds each value and its zero point +128 (same differences).
    t.x = shifted(offset_by(kX, -2), ti);
    t.in_zp = per_tensor(-2 + shift(ti));
    t.f = shifted(offset_by(kF, 1), tf);
    t.f_zp = per_tensor(1 + shift(tf));
    t.out_zp = per_tensor(3 + shift(to));
    t.in_scale = per_tensor(0.5);
    t.f_scale = per_tensor(0.5);
    t.out_scale = per_tensor(0.5);
}

/// The error of validate(d), or "<valid>".
std::string error_of(const qdml::QuantizedLinearConvolutionDesc& d,
                     qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
    try {
        qdml::validate(d, level);
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "<valid>";
}

}  // namespace

TEST_CASE("conv: hand-computed asymmetric padding with zero points, a tie and the zero point after rounding",
          "[conv]") {
    Conv t;
    set_small_case(t, DT::Int8, DT::Int8, DT::Int8);
    CHECK(t.run() == kExpected);
}

TEST_CASE("conv: every INT8/UINT8 mix of Input, Filter and Output", "[conv]") {
    // a UINT8 output is the INT8 result + 128 (its zero point is 131)
    for (DT ti : kQ8)
        for (DT tf : kQ8)
            for (DT to : kQ8) {
                INFO("Input " << qdml::name(ti) << " Filter " << qdml::name(tf) << " Output " << qdml::name(to));
                Conv t;
                set_small_case(t, ti, tf, to);
                CHECK(t.run() == shifted(kExpected, to));
            }
}

TEST_CASE("conv: optional zero points absent mean 0", "[conv]") {
    // The small case with raw values equal to the differences.
    Conv t;
    set_small_case(t, DT::Int8, DT::Int8, DT::Int8);
    t.x = kX;
    t.f = kF;
    t.in_zp.reset();
    t.f_zp.reset();
    SECTION("all three absent: rne(acc * 0.5) = {6, 8, -6, 0, 14, 18, -10, 0}") {
        t.out_zp.reset();
        CHECK(t.run() == Out{6, 8, -6, 0, 14, 18, -10, 0});
    }
    SECTION("only the output zero point present (3)") {
        CHECK(t.run() == kExpected);
    }
    SECTION("zero points present and 0 give the same as absent") {
        t.in_zp = per_tensor(0);
        t.f_zp = per_tensor(0);
        t.out_zp = per_tensor(0);
        CHECK(t.run() == Out{6, 8, -6, 0, 14, 18, -10, 0});
    }
}

TEST_CASE("conv: padded taps contribute exactly 0 whatever the zero points", "[conv]") {
    // Input {1,1,3,3} with X - XZP = 1 everywhere, 3x3 filter with F - FZP = 1,
    // padding 1 on every side: oH = oW = 1 + (3 + 2 - 3) = 3, and each output is
    // the number of its taps inside the input: corners 2*2 = 4, edges 2*3 = 6, centre 9.
    // (Reading padding as a raw 0 would add (0 - XZP) * 1 per padded tap.)
    const Out expected = {4, 6, 4, 6, 9, 6, 4, 6, 4};
    Conv t;
    t.in_sizes = {1, 1, 3, 3};
    t.f_sizes = {1, 1, 3, 3};
    t.out_sizes = {1, 1, 3, 3};
    t.start = {1, 1};
    t.end = {1, 1};
    auto set = [&](DT ti, double xzp, DT tf, double fzp) {
        t.in_type = ti;
        t.f_type = tf;
        t.x = Values(9, xzp + 1);
        t.in_zp = per_tensor(xzp);
        t.f = Values(9, fzp + 1);
        t.f_zp = per_tensor(fzp);
    };
    SECTION("INT8 input, zero point -100; INT8 filter, zero point 7") {
        set(DT::Int8, -100, DT::Int8, 7);
        CHECK(t.run() == expected);
    }
    SECTION("UINT8 input, zero point 200; UINT8 filter, zero point 250") {
        set(DT::UInt8, 200, DT::UInt8, 250);
        CHECK(t.run() == expected);
    }
    SECTION("UINT8 input, zero point 255; INT8 filter, zero point -128") {
        // X = 254, so X - XZP = -1 here: each output is minus its tap count.
        set(DT::UInt8, 255, DT::Int8, -128);
        t.x = Values(9, 254);
        CHECK(t.run() == Out{-4, -6, -4, -6, -9, -6, -4, -6, -4});
    }
    SECTION("padding only at the end of each dimension") {
        // StartPadding {0,0}, EndPadding {2,2}: oH = oW = 1 + (3 + 2 - 3) = 3; output (oy, ox)
        // sees input rows oy..2 and columns ox..2: (3-oy)*(3-ox) taps.
        set(DT::Int8, -100, DT::Int8, 7);
        t.start = {0, 0};
        t.end = {2, 2};
        CHECK(t.run() == Out{9, 6, 3, 6, 4, 2, 3, 2, 1});
    }
}

TEST_CASE("conv: strides and dilations", "[conv]") {
    Conv t;
    SECTION("Strides {2,3}, Dilations {2,1} on a 5x5 input") {
        // X[y][x] = 10*y + x; filter {{1, 2}, {3, -1}}.
        // oH = 1 + (5 - (1 + 1*2)) / 2 = 2;  oW = 1 + (5 - 2) / 3 = 2
        // taps y = 2*oy + 2*ky, x = 3*ox + kx:
        //   (0,0): X00 + 2*X01 + 3*X20 - X21 = 0 + 2 + 60 - 21 = 41
        //   (0,1): X03 + 2*X04 + 3*X23 - X24 = 3 + 8 + 69 - 24 = 56
        //   (1,0): X20 + 2*X21 + 3*X40 - X41 = 20 + 42 + 120 - 41 = 141
        //   (1,1): X23 + 2*X24 + 3*X43 - X44 = 23 + 48 + 129 - 44 = 156
        // OutputScale 2: {20.5, 28, 70.5, 78} -> {20, 28, 70, 78}
        t.in_sizes = {1, 1, 5, 5};
        t.x.clear();
        for (int y = 0; y < 5; ++y)
            for (int x = 0; x < 5; ++x) t.x.push_back(10 * y + x);
        t.f_sizes = {1, 1, 2, 2};
        t.f = {1, 2, 3, -1};
        t.out_sizes = {1, 1, 2, 2};
        t.strides = {2, 3};
        t.dilations = {2, 1};
        t.out_scale = per_tensor(2);
        CHECK(t.run() == Out{20, 28, 70, 78});
    }
    SECTION("Dilations {1,3} along a row") {
        // X = [1 2 3 4 5], filter [1 10] with dilation 3: extent 4, oW = 1 + (5 - 4) = 2
        // out = [X0 + 10*X3, X1 + 10*X4] = [41, 52]
        t.in_sizes = {1, 1, 1, 5};
        t.x = {1, 2, 3, 4, 5};
        t.f_sizes = {1, 1, 1, 2};
        t.f = {1, 10};
        t.out_sizes = {1, 1, 1, 2};
        t.dilations = {1, 3};
        CHECK(t.run() == Out{41, 52});
    }
    SECTION("Strides {1,3}: the remainder of the row is dropped") {
        // X = [1..7], filter [1 1]: oW = 1 + (7 - 2) / 3 = 2 (floor): [X0 + X1, X3 + X4] = [3, 9]
        t.in_sizes = {1, 1, 1, 7};
        t.x = {1, 2, 3, 4, 5, 6, 7};
        t.f_sizes = {1, 1, 1, 2};
        t.f = {1, 1};
        t.out_sizes = {1, 1, 1, 2};
        t.strides = {1, 3};
        CHECK(t.run() == Out{3, 9});
    }
    SECTION("stride, dilation and padding together") {
        // X - XZP(5) = [1..5], filter [1 2 4], Dilations {1,2}, StartPadding {0,3},
        // EndPadding {0,1}, Strides {1,2}:
        // padded row (p = pad, contributes 0): p p p 1 2 3 4 5 p; extent 1 + 2*2 = 5,
        // oW = 1 + (9 - 5) / 2 = 3; ox takes padded positions 2*ox + 2*kx:
        // ox 0: positions 0, 2, 4 = p, p, 2 -> 4*2 = 8
        // ox 1: positions 2, 4, 6 = p, 2, 4 -> 2*2 + 4*4 = 20
        // ox 2: positions 4, 6, 8 = 2, 4, p -> 2 + 2*4 = 10
        t.in_sizes = {1, 1, 1, 5};
        t.x = {6, 7, 8, 9, 10};
        t.in_zp = per_tensor(5);
        t.f_sizes = {1, 1, 1, 3};
        t.f = {1, 2, 4};
        t.out_sizes = {1, 1, 1, 3};
        t.dilations = {1, 2};
        t.strides = {1, 2};
        t.start = {0, 3};
        t.end = {0, 1};
        CHECK(t.run() == Out{8, 20, 10});
    }
}

TEST_CASE("conv: GroupCount > 1 and depthwise", "[conv]") {
    Conv t;
    SECTION("GroupCount 2: channels {0,1} feed outputs {0,1}, channels {2,3} feed {2,3}") {
        // Input {1,4,1,2}: c0 [1 2], c1 [3 4], c2 [5 6], c3 [7 8]; Filter {4,2,1,1}:
        //   oc0 [1 10] on (c0, c1): [1 + 30, 2 + 40] = [31, 42]
        //   oc1 [2 -1] on (c0, c1): [2 - 3, 4 - 4]   = [-1, 0]
        //   oc2 [1 10] on (c2, c3): [5 + 70, 6 + 80] = [75, 86]
        //   oc3 [-1 1] on (c2, c3): [-5 + 7, -6 + 8] = [2, 2]
        t.in_sizes = {1, 4, 1, 2};
        t.x = {1, 2, 3, 4, 5, 6, 7, 8};
        t.f_sizes = {4, 2, 1, 1};
        t.f = {1, 10, 2, -1, 1, 10, -1, 1};
        t.out_sizes = {1, 4, 1, 2};
        t.groups = 2;
        CHECK(t.run() == Out{31, 42, -1, 0, 75, 86, 2, 2});
    }
    SECTION("depthwise with channel multiplier 2 (GroupCount = Cin = 3, Cout = 6)") {
        // Input {1,3,1,3}: c0 [1 2 3], c1 [4 5 6], c2 [7 8 9]; Filter {6,1,1,2}, oc uses c = oc / 2:
        //   oc0 [1 1]: [3, 5];   oc1 [1 -1]: [-1, -1]
        //   oc2 [2 0]: [8, 10];  oc3 [0 2]:  [10, 12]
        //   oc4 [1 2]: [7 + 16, 8 + 18] = [23, 26];  oc5 [3 0]: [21, 24]
        t.in_sizes = {1, 3, 1, 3};
        t.x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        t.f_sizes = {6, 1, 1, 2};
        t.f = {1, 1, 1, -1, 2, 0, 0, 2, 1, 2, 3, 0};
        t.out_sizes = {1, 6, 1, 2};
        t.groups = 3;
        CHECK(t.run() == Out{3, 5, -1, -1, 8, 10, 10, 12, 23, 26, 21, 24});
    }
    SECTION("depthwise GroupCount = Cin = Cout = 3 with per-channel filter scales") {
        // oc0 [1 1] on c0: [3, 5];  oc1 [2 0] on c1: [8, 10];  oc2 [1 2] on c2: [23, 26]
        // FilterScale {1, 0.5, 0.25}: [3, 5, 4, 5, 5.75, 6.5] -> [3, 5, 4, 5, 6, 6]
        t.in_sizes = {1, 3, 1, 3};
        t.x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        t.f_sizes = {3, 1, 1, 2};
        t.f = {1, 1, 2, 0, 1, 2};
        t.f_scale = per_channel({1, 0.5, 0.25});
        t.out_sizes = {1, 3, 1, 2};
        t.groups = 3;
        CHECK(t.run() == Out{3, 5, 4, 5, 6, 6});
    }
}

TEST_CASE("conv: per-output-channel FilterScale and FilterZeroPoint, Bias", "[conv]") {
    // Input {1,1,1,2} [2 3], XZP 1: X - XZP = [1 2].
    // Filter {3,1,1,2}: oc0 [5 6], oc1 [0 0], oc2 [10 10]; FZP {4, -2, 10}:
    //   F - FZP = oc0 [1 2], oc1 [2 2], oc2 [0 0]  ->  acc = [1 + 4, 2 + 4, 0] = [5, 6, 0]
    // FilterScale {0.5, 0.25, 1}, InputScale 1, OutputScale 1: mult = {0.5, 0.25, 1}
    // (a per-tensor FZP of 4 would give oc1 = -4 - 8 = -12.)
    Conv t;
    t.in_sizes = {1, 1, 1, 2};
    t.x = {2, 3};
    t.in_zp = per_tensor(1);
    t.f_sizes = {3, 1, 1, 2};
    t.f = {5, 6, 0, 0, 10, 10};
    t.out_sizes = {1, 3, 1, 1};
    SECTION("parameters {1,Cout,1,1}: v = {2.5, 1.5, 0} -> {2, 2, 0}") {
        t.f_scale = per_channel({0.5, 0.25, 1});
        t.f_zp = per_channel({4, -2, 10});
        CHECK(t.run() == Out{2, 2, 0});
    }
    SECTION("parameters {1,Cout,1} and {1,Cout}: fewer dimensions align with the output's first ones") {
        t.f_scale = Param{{1, 3, 1}, {0.5, 0.25, 1}};
        t.f_zp = Param{{1, 3, 1}, {4, -2, 10}};
        CHECK(t.run() == Out{2, 2, 0});
        t.f_scale = Param{{1, 3}, {0.5, 0.25, 1}};
        t.f_zp = Param{{1, 3}, {4, -2, 10}};
        CHECK(t.run() == Out{2, 2, 0});
    }
    SECTION("Bias {1, -10, 7}: acc = {6, -4, 7}, v = {3, -1, 7}") {
        t.f_scale = per_channel({0.5, 0.25, 1});
        t.f_zp = per_channel({4, -2, 10});
        t.bias = per_channel({1, -10, 7});
        CHECK(t.run() == Out{3, -1, 7});
    }
    SECTION("per-channel scale with a per-tensor zero point 0") {
        // F - 0: oc0 [5 6] . [1 2] = 5 + 12 = 17; oc1 0; oc2 [10 10] . [1 2] = 10 + 20 = 30
        // mult {0.5, 0.25, 1}: {8.5, 0, 30} -> {8, 0, 30}
        t.f_scale = per_channel({0.5, 0.25, 1});
        t.f_zp = per_tensor(0);
        CHECK(t.run() == Out{8, 0, 30});
    }
}

TEST_CASE("conv: Bias is added to the accumulator, in units of InputScale * FilterScale", "[conv]") {
    // X 3, F 4, acc = 12 + Bias 100 = 112; InputScale 0.5, FilterScale 0.25, OutputScale 0.25:
    // mult = fp32(0.125) / 0.25 = 0.5 -> 56.  (Bias in output units would give 6 + 100 = 106.)
    Conv t;
    t.x = {3};
    t.f = {4};
    t.bias = per_tensor(100);
    t.in_scale = per_tensor(0.5);
    t.f_scale = per_tensor(0.25);
    t.out_scale = per_tensor(0.25);
    CHECK(t.run() == Out{56});
}

TEST_CASE("conv: the int32 accumulator wraps modulo 2^32", "[conv]") {
    // InputScale 2^-13, FilterScale 2^-12, OutputScale 1: mult = 2^-25. OutputZP 3.
    Conv t;
    t.in_sizes = {1, 1, 1, 2};
    t.x = {2, 3};
    t.f_sizes = {1, 1, 1, 2};
    t.out_zp = per_tensor(3);
    t.in_scale = per_tensor(1.0 / 8192);
    t.f_scale = per_tensor(1.0 / 4096);
    SECTION("Bias near INT32_MAX, positive overflow") {
        // F [4 4]: sum = 8 + 12 = 20; Bias 2147483637: 2147483657 wraps to 2147483657 - 2^32 = -2147483639
        // fp32(-2147483639) = -2^31 (spacing 128 there); * 2^-25 = -64; + 3 = -61
        // (exact or saturated int32: +2^31 * 2^-25 = 64 -> 67)
        t.f = {4, 4};
        t.bias = per_tensor(2147483637.0);
        CHECK(t.run() == Out{-61});
    }
    SECTION("Bias near INT32_MIN, negative overflow") {
        // F [-5 0]: sum = -10; Bias -2147483643: -2147483653 wraps to 2147483643
        // fp32(2147483643) = 2^31; * 2^-25 = 64; + 3 = 67   (no wrap: -64 + 3 = -61)
        t.f = {-5, 0};
        t.bias = per_tensor(-2147483643.0);
        CHECK(t.run() == Out{67});
    }
    SECTION("40000 input channels of 255 * 255, no Bias") {
        // Input and Filter {1,40000,1,1} UINT8, every element 255 through zero strides.
        // sum = 40000 * 65025 = 2601000000 -> wraps to -1693967296; fp32 = -1693967360 (spacing 128)
        // InputScale = FilterScale = 2^-12: mult 2^-24: -100.968 -> -101; + 3 = -98
        t.in_type = DT::UInt8;
        t.f_type = DT::UInt8;
        t.in_sizes = {1, 40000, 1, 1};
        t.in_strides = {0, 0, 0, 0};
        t.x = Values(40000, 255);
        t.f_sizes = {1, 40000, 1, 1};
        t.f_strides = {0, 0, 0, 0};
        t.f = Values(40000, 255);
        t.in_scale = per_tensor(1.0 / 4096);
        CHECK(t.run() == Out{-98});
    }
}

TEST_CASE("conv: ties to even with odd and even output zero points", "[conv]") {
    // 1x1 filter 1, OutputScale 2: v = X / 2 = {0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5}
    // rne(v) = {0, 2, 2, 4, 0, -2, -2, -4}; the zero point is added after rounding.
    Conv t;
    t.in_sizes = {1, 1, 1, 8};
    t.x = {1, 3, 5, 7, -1, -3, -5, -7};
    t.out_sizes = {1, 1, 1, 8};
    t.out_scale = per_tensor(2);
    SECTION("odd zero point 3") {
        t.out_zp = per_tensor(3);
        CHECK(t.run() == Out{3, 5, 5, 7, 3, 1, 1, -1});
    }
    SECTION("even zero point 10") {
        t.out_zp = per_tensor(10);
        CHECK(t.run() == Out{10, 12, 12, 14, 10, 8, 8, 6});
    }
    SECTION("UINT8 output, odd zero point 101") {
        t.out_type = DT::UInt8;
        t.out_zp = per_tensor(101);
        CHECK(t.run() == Out{101, 103, 103, 105, 101, 99, 99, 97});
    }
}

TEST_CASE("conv: saturation at both ends, clamp before rounding", "[conv]") {
    // 1x1 filter 2, scales 1: v = 2 * X = {128, 130, -128, -130, 254, -256}
    Conv t;
    t.in_sizes = {1, 1, 1, 6};
    t.x = {64, 65, -64, -65, 127, -128};
    t.f = {2};
    t.out_sizes = {1, 1, 1, 6};
    SECTION("INT8, zero point -3: clamp to [-125, 130], then - 3") {
        t.out_zp = per_tensor(-3);
        CHECK(t.run() == Out{125, 127, -128, -128, 127, -128});
    }
    SECTION("UINT8, zero point 3: clamp to [-3, 252], then + 3") {
        t.out_type = DT::UInt8;
        t.out_zp = per_tensor(3);
        CHECK(t.run() == Out{131, 133, 0, 0, 255, 0});
    }
    SECTION("OutputScale 1e-30: |v| ~ 1e32 saturates without overflow") {
        t.out_scale = per_tensor(1e-30);
        CHECK(t.run() == Out{127, 127, -128, -128, 127, -128});
    }
}

TEST_CASE("conv: batch N = 2, strided input, filter and output", "[conv]") {
    // Input {2,2,1,2}: n0 c0 [1 2], c1 [3 4];  n1 c0 [-1 -2], c1 [5 6]
    // Filter {2,2,1,1}: oc0 [1 1] (c0 + c1), oc1 [1 -1] (c0 - c1)
    //   n0: oc0 [4 6], oc1 [-2 -2];  n1: oc0 [4 4], oc1 [-6 -8]
    const Out expected = {4, 6, -2, -2, 4, 4, -6, -8};
    Conv t;
    t.in_sizes = {2, 2, 1, 2};
    t.x = {1, 2, 3, 4, -1, -2, 5, 6};
    t.f_sizes = {2, 2, 1, 1};
    t.f = {1, 1, 1, -1};
    t.out_sizes = {2, 2, 1, 2};
    SECTION("packed") { CHECK(t.run() == expected); }
    SECTION("input NHWC (strides {4,1,4,2})") {
        t.in_strides = {4, 1, 4, 2};
        CHECK(t.run() == expected);
    }
    SECTION("input with gaps (strides {8,3,3,1}; the gaps hold 99)") {
        t.in_strides = {8, 3, 3, 1};
        CHECK(t.run() == expected);
    }
    SECTION("filter transposed (strides {1,2,1,1})") {
        t.f_strides = {1, 2, 1, 1};
        CHECK(t.run() == expected);
    }
    SECTION("input batch broadcast through stride 0: both batches are n0") {
        t.in_strides = {0, 2, 2, 1};
        t.x = {1, 2, 3, 4, 1, 2, 3, 4};
        CHECK(t.run() == Out{4, 6, -2, -2, 4, 6, -2, -2});
    }
    SECTION("output with gaps (strides {10,4,3,1}): nothing else is written") {
        t.out_strides = {10, 4, 3, 1};
        CHECK(t.run() == expected);  // Pool::read checks the gaps and guards
    }
    SECTION("output NHWC (strides {4,1,4,2})") {
        t.out_strides = {4, 1, 4, 2};
        CHECK(t.run() == expected);
    }
}

TEST_CASE("conv: random grouped, strided, dilated, padded case matches an independent transcription", "[conv]") {
    // N 2, Cin 4, GroupCount 2, Cout 6, H 7, W 6, kernel 3x2, Strides {2,1}, Dilations {1,2},
    // StartPadding {1,0}, EndPadding {2,1}:
    //   oH = 1 + (7 + 1 + 2 - (1 + 2*1)) / 2 = 1 + 7/2 = 4;  oW = 1 + (6 + 0 + 1 - (1 + 1*2)) / 1 = 5
    constexpr std::uint32_t N = 2, Cin = 4, G = 2, Cout = 6, H = 7, W = 6, kH = 3, kW = 2, oH = 4, oW = 5;
    constexpr std::uint32_t sy = 2, sx = 1, dy = 1, dx = 2, pt = 1, pl = 0, pb = 2, pr = 1;
    constexpr std::uint32_t Cg = Cin / G, Og = Cout / G;
    qtest::Rng rng(qtest::case_seed(65));
    const auto u8 = [&] { return static_cast<int>(rng.range(0, 255)); };
    const auto s8 = [&] { return static_cast<int>(rng.range(-128, 127)); };
    const auto scale = [&] { return rng.between(0.01f, 0.1f); };
    INFO("seed " << rng.seed());

    // UINT8 input, INT8 filter with per-channel parameters, Bias, UINT8 output.
    std::vector<int> x(N * Cin * H * W), f(Cout * Cg * kH * kW), f_zp(Cout), bias(Cout);
    std::vector<float> f_s(Cout);
    for (auto& v : x) v = u8();
    for (auto& v : f) v = s8();
    for (auto& v : f_zp) v = s8() / 4;
    for (auto& v : bias) v = s8() * 100;
    for (auto& v : f_s) v = scale();
    const int x_zp = u8(), out_zp = 120 + u8() / 32;
    const float x_s = scale();

    // Independent transcription: the input padded explicitly with its zero point,
    // then a dense sum over the padded image in int64, wrapped to int32 at the end.
    constexpr std::uint32_t pH = H + pt + pb, pW = W + pl + pr;
    std::vector<int> padded(N * Cin * pH * pW, x_zp);
    for (std::uint32_t n = 0; n < N; ++n)
        for (std::uint32_t c = 0; c < Cin; ++c)
            for (std::uint32_t y = 0; y < H; ++y)
                for (std::uint32_t xx = 0; xx < W; ++xx)
                    padded[((n * Cin + c) * pH + y + pt) * pW + xx + pl] = x[((n * Cin + c) * H + y) * W + xx];
    std::vector<std::int64_t> acc;
    double max_abs = 1;  // largest |acc * InputScale * FilterScale[oc]|
    for (std::uint32_t n = 0; n < N; ++n)
        for (std::uint32_t oc = 0; oc < Cout; ++oc)
            for (std::uint32_t oy = 0; oy < oH; ++oy)
                for (std::uint32_t ox = 0; ox < oW; ++ox) {
                    std::int64_t s = bias[oc];
                    const std::uint32_t g = oc / Og;
                    for (std::uint32_t i = 0; i < Cg; ++i)
                        for (std::uint32_t ky = 0; ky < kH; ++ky)
                            for (std::uint32_t kx = 0; kx < kW; ++kx) {
                                const int xv = padded[((n * Cin + g * Cg + i) * pH + oy * sy + ky * dy) * pW +
                                                      ox * sx + kx * dx];
                                s += std::int64_t{xv - x_zp} * (f[((oc * Cg + i) * kH + ky) * kW + kx] - f_zp[oc]);
                            }
                    REQUIRE(s == static_cast<std::int32_t>(s));  // small sizes: no wrap here
                    acc.push_back(s);
                    max_abs = std::max(max_abs, std::fabs(static_cast<double>(s) * x_s * f_s[oc]));
                }
    // Output scale from the observed range, so that few outputs saturate.
    const float out_s = static_cast<float>(max_abs / 110);
    // The spec epilogue, written out.
    std::vector<long long> expected;
    std::size_t saturated = 0;
    for (std::size_t i = 0; i < acc.size(); ++i) {
        const std::uint32_t oc = static_cast<std::uint32_t>(i / (oH * oW) % Cout);
        volatile float ab = x_s * f_s[oc];  // rounded to binary32 on its own
        const float mult = ab / out_s;
        float v = static_cast<float>(acc[i]) * mult;
        const float lo = static_cast<float>(0 - out_zp), hi = static_cast<float>(255 - out_zp);
        v = std::min(std::max(v, lo), hi);
        const long long q = static_cast<long long>(std::nearbyint(v)) + out_zp;
        saturated += (q == 0 || q == 255);
        expected.push_back(q);
    }
    REQUIRE(saturated < expected.size() / 10);

    Conv t;
    t.in_type = DT::UInt8;
    t.out_type = DT::UInt8;
    t.in_sizes = {N, Cin, H, W};
    t.x.assign(x.begin(), x.end());
    t.in_zp = per_tensor(x_zp);
    t.in_scale = per_tensor(x_s);
    t.f_sizes = {Cout, Cg, kH, kW};
    t.f.assign(f.begin(), f.end());
    t.f_zp = per_channel(Values(f_zp.begin(), f_zp.end()));
    t.f_scale = per_channel(Values(f_s.begin(), f_s.end()));
    t.bias = per_channel(Values(bias.begin(), bias.end()));
    t.out_scale = per_tensor(out_s);
    t.out_zp = per_tensor(out_zp);
    t.out_sizes = {N, Cout, oH, oW};
    t.groups = G;
    t.strides = {sy, sx};
    t.dilations = {dy, dx};
    t.start = {pt, pl};
    t.end = {pb, pr};
    const Out got = t.run();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output element " << i);
        REQUIRE(got[i] == expected[i]);
    }
}

TEST_CASE("conv: validation, one rule at a time", "[conv][validation]") {
    // Valid base: Input {1,4,3,3}, Filter {4,2,2,2}, GroupCount 2, Output {1,4,2,2}
    // (oH = oW = 1 + (3 - 2) = 2), per-channel filter parameters and Bias, all 4-D.
    Conv t;
    t.in_sizes = {1, 4, 3, 3};
    t.x = Values(36, 1);
    t.f_sizes = {4, 2, 2, 2};
    t.f = Values(32, 1);
    t.out_sizes = {1, 4, 2, 2};
    t.groups = 2;
    t.in_zp = per_tensor(0);
    t.f_zp = per_channel({0, 0, 0, 0});
    t.f_scale = per_channel({1, 1, 1, 1});
    t.out_zp = per_tensor(0);
    t.bias = per_channel({0, 0, 0, 0});
    auto& d = t.build();
    REQUIRE(error_of(d) == "<valid>");
    auto a = [&](DT type, const Dims& sizes, const Dims& strides = {}) {
        const auto n = qdml::min_buffer_elements(desc(type, sizes, strides)).value_or(0);
        return t.pool.raw(type, sizes, Values(n, 1), strides);
    };
    auto out = [&](const Dims& sizes) { d.OutputTensor = t.pool.output(DT::Int8, sizes); };
    // The member named, and a fragment of the rule, so that the intended rule fired.
    auto rejects = [&](const std::string& member, const std::string& fragment,
                       qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
        const std::string e = error_of(d, level);
        INFO("error: " << e);
        CHECK(rejected_member(d, level) == member);
        CHECK(e.find(fragment) != std::string::npos);
    };

    SECTION("Cin != FilterTensor Sizes[1] * GroupCount") {
        d.GroupCount = 1;  // 2 * 1 != 4
        rejects("GroupCount", "input channels 4");
        d.GroupCount = 4;  // 2 * 4 != 4
        rejects("GroupCount", "input channels 4");
        d.GroupCount = 2;
        d.FilterTensor = a(DT::Int8, {4, 1, 2, 2});  // 1 * 2 != 4
        rejects("GroupCount", "input channels 4");
    }
    SECTION("Cout not divisible by GroupCount") {
        d.FilterTensor = a(DT::Int8, {3, 2, 2, 2});
        out({1, 3, 2, 2});
        rejects("GroupCount", "does not divide");
    }
    SECTION("GroupCount 0") {
        d.GroupCount = 0;
        rejects("GroupCount", "is 0");
    }
    SECTION("Strides 0") {
        d.Strides = {0, 1};
        rejects("Strides", "Strides[0] is 0");
        d.Strides = {1, 0};
        rejects("Strides", "Strides[1] is 0");
    }
    SECTION("Dilations 0") {
        d.Dilations = {0, 1};
        rejects("Dilations", "Dilations[0] is 0");
        d.Dilations = {1, 0};
        rejects("Dilations", "Dilations[1] is 0");
    }
    SECTION("DimensionCount (spatial) 1 or 2; the tensors have DimensionCount + 2 dimensions") {
        d.DimensionCount = 3;
        rejects("DimensionCount", "DirectML supports 1 or 2");
        d.DimensionCount = 0;
        rejects("DimensionCount", "DirectML supports 1 or 2");
        d.DimensionCount = 1;
        rejects("InputTensor", "DimensionCount 4 must be DimensionCount (1 spatial) + 2 = 3");
        rejects("DimensionCount", "4.0", qdml::FeatureLevel::L3_1);
    }
    SECTION("kernel extent larger than the padded input: no output") {
        d.FilterTensor = a(DT::Int8, {4, 2, 4, 2});  // kH 4 > H 3
        out({1, 4, 1, 2});
        rejects("FilterTensor", "no output");
        d.Strides = {2, 1};  // extent - padded = 1 must not look like 1 + (2^64 - 1) / 2 outputs
        rejects("FilterTensor", "no output");
        d.Strides = {1, 1};
        d.FilterTensor = a(DT::Int8, {4, 2, 6, 2});  // kH 6: two rows too many
        rejects("FilterTensor", "no output");
        d.FilterTensor = a(DT::Int8, {4, 2, 4, 2});
        d.StartPadding = {1, 0};  // padded H 4: oH = 1
        CHECK(error_of(d) == "<valid>");
        d.StartPadding = {0, 0};
        d.EndPadding = {1, 0};
        CHECK(error_of(d) == "<valid>");
    }
    SECTION("dilated kernel extent larger than the input") {
        d.Dilations = {1, 3};  // extent 1 + 1*3 = 4 > W 3
        out({1, 4, 2, 1});
        rejects("FilterTensor", "no output");
        d.EndPadding = {0, 1};  // padded W 4: oW = 1
        CHECK(error_of(d) == "<valid>");
    }
    SECTION("output Sizes not {N, Cout, oH, oW}") {
        for (const Dims& s : {Dims{2, 4, 2, 2}, Dims{1, 2, 2, 2}, Dims{1, 4, 3, 2}, Dims{1, 4, 2, 1}, Dims{1, 4, 1, 1}}) {
            out(s);
            rejects("OutputTensor", "must be {N, Cout, oH, oW}");
        }
        d.Strides = {2, 2};  // oH = oW = 1 + (3 - 2) / 2 = 1 (floor, not ceil)
        out({1, 4, 2, 2});
        rejects("OutputTensor", "must be {N, Cout, oH, oW}");
        out({1, 4, 1, 1});
        CHECK(error_of(d) == "<valid>");
    }
    SECTION("output DimensionCount other than 4") {
        out({4, 2, 2});
        rejects("OutputTensor", "DimensionCount 3");
    }
    SECTION("input or filter DimensionCount other than 4") {
        d.InputTensor = a(DT::Int8, {4, 3, 3});
        rejects("InputTensor", "DimensionCount 3");
        d.InputTensor = a(DT::Int8, {1, 1, 4, 3, 3});
        rejects("InputTensor", "DimensionCount 5");
        d.InputTensor = a(DT::Int8, {1, 4, 3, 3});
        d.FilterTensor = a(DT::Int8, {4, 2, 2});
        rejects("FilterTensor", "DimensionCount 3");
    }
    SECTION("input scale and zero point are per tensor") {
        d.InputScaleTensor = a(DT::Float32, {1, 4, 1, 1});
        rejects("InputScaleTensor", "Sizes {1,4,1,1}");
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        d.InputZeroPointTensor = a(DT::Int8, {1, 1, 1, 2});
        rejects("InputZeroPointTensor", "Sizes {1,1,1,2}");
    }
    SECTION("output scale and zero point are per tensor") {
        d.OutputScaleTensor = a(DT::Float32, {1, 4, 1, 1});
        rejects("OutputScaleTensor", "Sizes {1,4,1,1}");
        d.OutputScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        d.OutputZeroPointTensor = a(DT::Int8, {1, 4, 1, 1});
        rejects("OutputZeroPointTensor", "Sizes {1,4,1,1}");
    }
    SECTION("filter scale and zero point: per tensor or {1,Cout,1,1} only") {
        for (const Dims& s : {Dims{1, 1, 1, 4}, Dims{1, 3, 1, 1}, Dims{4, 1, 1, 1}, Dims{1, 1, 4, 1}, Dims{4}}) {
            d.FilterScaleTensor = a(DT::Float32, s);
            rejects("FilterScaleTensor", "Sizes {");
        }
        d.FilterScaleTensor = a(DT::Float32, {1, 1, 1, 1, 1});
        rejects("FilterScaleTensor", "DimensionCount 5");
        d.FilterScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        REQUIRE(error_of(d) == "<valid>");
        d.FilterZeroPointTensor = a(DT::Int8, {1, 2, 1, 1});
        rejects("FilterZeroPointTensor", "Sizes {1,2,1,1}");
    }
    SECTION("Bias of the wrong type") {
        d.BiasTensor = a(DT::Int8, {1, 4, 1, 1});
        rejects("BiasTensor", "DataType INT8");
        d.BiasTensor = a(DT::Float32, {1, 4, 1, 1});
        rejects("BiasTensor", "DataType FLOAT32");
        d.BiasTensor = a(DT::Int16, {1, 4, 1, 1});
        rejects("BiasTensor", "DataType INT16");
    }
    SECTION("Bias of the wrong shape") {
        d.BiasTensor = a(DT::Int32, {1, 1, 1, 1});  // one value for 4 output channels
        rejects("BiasTensor", "one value per output channel");
        d.BiasTensor = a(DT::Int32, {1, 3, 1, 1});
        rejects("BiasTensor", "Sizes {1,3,1,1}");
        d.BiasTensor = a(DT::Int32, {1, 1, 1, 4});
        rejects("BiasTensor", "Sizes {1,1,1,4}");
        d.BiasTensor = a(DT::Int32, {4});
        rejects("BiasTensor", "DimensionCount 1");
    }
    SECTION("Bias {1,1,1,1} is fine for one output channel") {
        d.FilterTensor = a(DT::Int8, {1, 4, 2, 2});
        d.GroupCount = 1;
        out({1, 1, 2, 2});
        d.FilterScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        d.FilterZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        d.BiasTensor = a(DT::Int32, {1, 1, 1, 1});
        CHECK(error_of(d) == "<valid>");
    }
    SECTION("types not allowed") {
        d.InputTensor = a(DT::Int16, {1, 4, 3, 3});
        rejects("InputTensor", "DataType INT16");
        d.InputTensor = a(DT::Int8, {1, 4, 3, 3});
        d.FilterTensor = a(DT::Int32, {4, 2, 2, 2});
        rejects("FilterTensor", "DataType INT32");
        d.FilterTensor = a(DT::Int8, {4, 2, 2, 2});
        d.OutputZeroPointTensor.reset();
        d.OutputTensor = t.pool.output(DT::Float32, {1, 4, 2, 2});
        rejects("OutputTensor", "DataType FLOAT32");
        d.OutputTensor = t.pool.output(DT::Int8, {1, 4, 2, 2});
        d.InputScaleTensor = a(DT::Float16, {1, 1, 1, 1});
        rejects("InputScaleTensor", "DataType FLOAT16");
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        d.FilterScaleTensor = a(DT::Int32, {1, 4, 1, 1});
        rejects("FilterScaleTensor", "DataType INT32");
    }
    SECTION("zero point type differs from its tensor's") {
        d.InputZeroPointTensor = a(DT::UInt8, {1, 1, 1, 1});
        rejects("InputZeroPointTensor", "must equal InputTensor's DataType");
        d.InputZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        d.FilterZeroPointTensor = a(DT::UInt8, {1, 4, 1, 1});
        rejects("FilterZeroPointTensor", "must equal FilterTensor's DataType");
        d.FilterZeroPointTensor.reset();
        d.OutputZeroPointTensor = a(DT::UInt8, {1, 1, 1, 1});
        rejects("OutputZeroPointTensor", "must equal OutputTensor's DataType");
    }
    SECTION("TotalTensorSizeInBytes too small") {
        d.FilterTensor.Desc.TotalTensorSizeInBytes = 28;  // needs 32
        rejects("FilterTensor", "TotalTensorSizeInBytes 28");
        d.FilterTensor.Desc.TotalTensorSizeInBytes = 32;
        d.InputTensor.Desc.TotalTensorSizeInBytes = 35;  // needs 36
        rejects("InputTensor", "TotalTensorSizeInBytes 35");
        d.InputTensor.Desc.TotalTensorSizeInBytes = 36;
        d.BiasTensor->Desc.TotalTensorSizeInBytes = 12;  // needs 16
        rejects("BiasTensor", "TotalTensorSizeInBytes 12");
    }
    SECTION("output overlaps an input") {
        Tensor big = t.pool.output(DT::Int8, {64});
        d.InputTensor = Pool::alias(big, DT::Int8, {1, 4, 3, 3});  // bytes 0..35
        d.OutputTensor = Pool::alias(big, DT::Int8, {1, 4, 2, 2}, 32);  // bytes 32..47
        rejects("OutputTensor", "overlaps InputTensor");
        d.OutputTensor = Pool::alias(big, DT::Int8, {1, 4, 2, 2}, 36);  // bytes 36..51: adjacent
        CHECK(error_of(d) == "<valid>");
        d.BiasTensor = Pool::alias(big, DT::Int32, {1, 4, 1, 1}, 12);  // bytes 48..63
        rejects("OutputTensor", "overlaps BiasTensor");
    }
    SECTION("output stride 0") {
        d.OutputTensor = t.pool.output(DT::Int8, {1, 4, 2, 2}, {16, 4, 0, 1});
        rejects("OutputTensor", "Strides[2] is 0");
    }
    SECTION("feature level: the operator exists from 2.1") {
        rejects("operator", "2.1", qdml::FeatureLevel::L2_0);
        CHECK(error_of(d, qdml::FeatureLevel::L2_1) == "<valid>");
    }
    SECTION("feature level: parameter tensors with fewer than 4 dimensions from 4.0") {
        d.InputScaleTensor = a(DT::Float32, {1});
        rejects("InputScaleTensor", "DimensionCount 1 is not supported", qdml::FeatureLevel::L3_1);
        CHECK(error_of(d, qdml::FeatureLevel::L4_0) == "<valid>");
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        d.OutputZeroPointTensor = a(DT::Int8, {1, 1});
        rejects("OutputZeroPointTensor", "DimensionCount 2 is not supported", qdml::FeatureLevel::L3_1);
        CHECK(error_of(d, qdml::FeatureLevel::L4_0) == "<valid>");
    }
    SECTION("feature level: FilterScale 3-D from 4.0, 1-D and 2-D from 5.2") {
        d.FilterScaleTensor = a(DT::Float32, {1, 4, 1});
        rejects("FilterScaleTensor", "DimensionCount 3 is not supported", qdml::FeatureLevel::L3_1);
        CHECK(error_of(d, qdml::FeatureLevel::L4_0) == "<valid>");
        // fewer dimensions align with the output's first ones: {4,1,1} is {4,1,1,1}, not per channel
        // (DirectML refuses it: docs/semantics.md section 6)
        d.FilterScaleTensor = a(DT::Float32, {4, 1, 1});
        rejects("FilterScaleTensor", "fewer dimensions align with the output's first ones");
        d.FilterScaleTensor = a(DT::Float32, {1, 4});
        CHECK(error_of(d, qdml::FeatureLevel::L5_2) == "<valid>");
        d.FilterScaleTensor = a(DT::Float32, {1});
        rejects("FilterScaleTensor", "DimensionCount 1 is not supported", qdml::FeatureLevel::L5_1);
        CHECK(error_of(d, qdml::FeatureLevel::L5_2) == "<valid>");
    }
    SECTION("feature level: Bias is 4-D at every level") {
        d.BiasTensor = a(DT::Int32, {4, 1, 1});
        rejects("BiasTensor", "DimensionCount 3 is not supported");
    }
    SECTION("run() rejects before touching the output") {
        d.GroupCount = 0;
        CHECK_THROWS_AS(qdml::run(d), qdml::Error);
        CHECK(t.pool.read(d.OutputTensor) == Out(16, static_cast<std::int8_t>(kSentinel)));
    }
}
