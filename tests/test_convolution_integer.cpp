// CONVOLUTION_INTEGER (docs/semantics.md section 14). Expected values are
// derived by hand from
//   oH     = 1 + (H + StartPadding[0] + EndPadding[0] - (1 + (kH-1)*Dilations[0])) / Strides[0]
//   Output = sum over (ic in group, ky, kx) of
//            (X[n][ic][oy*sy + ky*dy - padTop][ox*sx + kx*dx - padLeft] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])
//            (INT32, wraps mod 2^32; a tap in the padding contributes exactly 0)
// plus one random case checked against a second transcription written here
// (an explicitly zero-point-padded input, int64 sums reduced modulo 2^32).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using Out = std::vector<long long>;
using Pair = std::array<std::uint32_t, 2>;

Param per_tensor(double v, std::size_t dims = 4) { return {Dims(dims, 1u), {v}}; }

/// Builder: one integer convolution. Input and Filter values are in logical
/// (row-major) order, written through their strides; buffer gaps hold 99.
struct ConvInt {
    Pool pool;
    DT in_type = DT::Int8, f_type = DT::Int8, out_type = DT::Int32;
    Dims in_sizes{1, 1, 1, 1}, f_sizes{1, 1, 1, 1}, out_sizes{1, 1, 1, 1};
    Dims in_strides, f_strides, out_strides;
    Values x{0}, f{1};
    std::optional<Param> in_zp, f_zp;
    Pair strides{1, 1}, dilations{1, 1}, start{0, 0}, end{0, 0};
    std::uint32_t groups = 1, dims = 2;
    qdml::FeatureLevel level = qdml::FeatureLevel::Latest;
    qdml::Fidelity fidelity = qdml::Fidelity::Exact;
    qdml::ConvolutionIntegerDesc d;

    qdml::ConvolutionIntegerDesc& build() {
        d.InputTensor = pool.logical(in_type, in_sizes, x, in_strides, 99);
        if (in_zp) d.InputZeroPointTensor = pool.raw(in_type, in_zp->sizes, in_zp->values, in_zp->strides);
        d.FilterTensor = pool.logical(f_type, f_sizes, f, f_strides, 99);
        if (f_zp) d.FilterZeroPointTensor = pool.raw(f_type, f_zp->sizes, f_zp->values, f_zp->strides);
        d.OutputTensor = pool.output(out_type, out_sizes, out_strides);
        d.Strides = strides;
        d.Dilations = dilations;
        d.StartPadding = start;
        d.EndPadding = end;
        d.GroupCount = groups;
        d.DimensionCount = dims;
        return d;
    }
    Out run() {
        build();
        qdml::reference::run(d, level, fidelity);
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
/// (padding read as a raw 0 instead would add (0 - -2) * k per padded tap:
///  oy 0 ox 0 would be 12 + 2*1 + 2*2 = 18.)
const Values kX = {1, 2, 3, 4, 5, 6};  // X - XZP
const Values kF = {1, 2, -4, 8};       // F - FZP
const Out kExpected = {12, 16, -12, 0, 29, 36, -21, 0};

Values offset_by(Values v, double k) {
    for (auto& e : v) e += k;
    return v;
}

void set_small_case(ConvInt& t, DT ti, DT tf) {
    t.in_type = ti;
    t.f_type = tf;
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
}

/// The error of validate(d), or "<valid>".
std::string error_of(const qdml::ConvolutionIntegerDesc& d, qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
    try {
        qdml::validate(d, level);
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "<valid>";
}

}  // namespace

TEST_CASE("conv integer: hand-computed asymmetric padding with zero points", "[conv_integer]") {
    ConvInt t;
    set_small_case(t, DT::Int8, DT::Int8);
    CHECK(t.run() == kExpected);
}

TEST_CASE("conv integer: every INT8/UINT8 mix of Input and Filter, both profiles", "[conv_integer]") {
    for (DT ti : kQ8)
        for (DT tf : kQ8)
            for (auto fid : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
                INFO("Input " << qdml::name(ti) << " Filter " << qdml::name(tf) << " fidelity "
                              << static_cast<int>(fid));
                ConvInt t;
                set_small_case(t, ti, tf);
                t.fidelity = fid;
                CHECK(t.run() == kExpected);
            }
}

TEST_CASE("conv integer: absent zero points mean 0", "[conv_integer]") {
    ConvInt t;
    set_small_case(t, DT::Int8, DT::Int8);
    t.x = kX;
    t.f = kF;
    SECTION("both absent") {
        t.in_zp.reset();
        t.f_zp.reset();
        CHECK(t.run() == kExpected);
    }
    SECTION("only the filter zero point present (0)") {
        t.in_zp.reset();
        t.f_zp = per_tensor(0);
        CHECK(t.run() == kExpected);
    }
}

TEST_CASE("conv integer: padded taps contribute exactly 0 whatever the zero points", "[conv_integer]") {
    // Input {1,1,3,3} with X - XZP = 1 everywhere, 3x3 filter with F - FZP = 1,
    // padding 1 on every side: each output is the number of its taps inside
    // the input: corners 4, edges 6, centre 9.
    const Out expected = {4, 6, 4, 6, 9, 6, 4, 6, 4};
    ConvInt t;
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
    SECTION("INT8 input, zero point -128; INT8 filter, zero point 126") {
        set(DT::Int8, -128, DT::Int8, 126);
        CHECK(t.run() == expected);
    }
    SECTION("UINT8 input, zero point 254; UINT8 filter, zero point 0") {
        set(DT::UInt8, 254, DT::UInt8, 0);
        CHECK(t.run() == expected);
    }
}

TEST_CASE("conv integer: strides, dilations and groups", "[conv_integer]") {
    ConvInt t;
    SECTION("Strides {2,2}: Input 1..9, 1x1 filter 2 -> rows 0, 2 and columns 0, 2 doubled") {
        t.in_sizes = {1, 1, 3, 3};
        t.x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        t.f = {2};
        t.strides = {2, 2};
        t.out_sizes = {1, 1, 2, 2};  // 1 + (3 - 1) / 2 = 2
        CHECK(t.run() == Out{2, 6, 14, 18});
    }
    SECTION("Strides {1,2} with EndPadding {0,1}: oW = 1 + (3 + 1 - 2) / 2 = 2") {
        // Input 1..9, filter {1,2,2} = {{1,1},{1,1}}: the 2x2 sums at x = 0, 2 (x 3 is padding)
        // oy 0: 1+2+4+5 = 12, 3+6 = 9; oy 1: 4+5+7+8 = 24, 6+9 = 15
        t.in_sizes = {1, 1, 3, 3};
        t.x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        t.f_sizes = {1, 1, 2, 2};
        t.f = {1, 1, 1, 1};
        t.strides = {1, 2};
        t.end = {0, 1};
        t.out_sizes = {1, 1, 2, 2};
        CHECK(t.run() == Out{12, 9, 24, 15});
    }
    SECTION("Dilations {2,2} and GroupCount 2: each output channel reads its own group's channel") {
        // Input {1,2,3,3}: channel 0 = 1..9, channel 1 = 10..18. Filter {2,1,2,2}:
        // oc 0 = {1,0,0,1} on channel 0, taps (0,0), (2,2): 1 + 9 = 10;
        // oc 1 = {0,1,1,0} on channel 1, taps (0,2), (2,0): 12 + 16 = 28.
        // (oc 1 reading channel 0 would give 3 + 7 = 10.)
        t.in_sizes = {1, 2, 3, 3};
        t.x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
        t.f_sizes = {2, 1, 2, 2};
        t.f = {1, 0, 0, 1, 0, 1, 1, 0};
        t.dilations = {2, 2};
        t.groups = 2;
        t.out_sizes = {1, 2, 1, 1};
        CHECK(t.run() == Out{10, 28});
    }
    SECTION("batch N = 2 and two output channels over two input channels (GroupCount 1)") {
        // Input {2,2,1,1}: n 0 = {1, 2}, n 1 = {3, -4}. Filter {2,2,1,1}: oc 0 = {1, 1}, oc 1 = {5, -1}.
        // n 0: {1 + 2, 5 - 2} = {3, 3}; n 1: {3 - 4, 15 + 4} = {-1, 19}
        t.in_sizes = {2, 2, 1, 1};
        t.x = {1, 2, 3, -4};
        t.f_sizes = {2, 2, 1, 1};
        t.f = {1, 1, 5, -1};
        t.out_sizes = {2, 2, 1, 1};
        CHECK(t.run() == Out{3, 3, -1, 19});
    }
}

TEST_CASE("conv integer: per-output-channel filter zero points", "[conv_integer]") {
    // Input {1,1,1,2} X = {3, 5}, XZP 1: X - XZP = {2, 4}.
    // Filter {3,1,1,2} = {{1,1}, {0,0}, {10,-10}}, FZP {1, -2, 0}:
    // F - FZP = {{0,0}, {2,2}, {10,-10}}: Output = {0, 4 + 8, 20 - 40} = {0, 12, -20}
    // (FZP[0] for every channel would give {0, -4, 18}.)
    ConvInt t;
    t.in_sizes = {1, 1, 1, 2};
    t.x = {3, 5};
    t.in_zp = per_tensor(1);
    t.f_sizes = {3, 1, 1, 2};
    t.f = {1, 1, 0, 0, 10, -10};
    t.out_sizes = {1, 3, 1, 1};
    const Out expected = {0, 12, -20};
    SECTION("{1,Cout,1,1}") {
        t.f_zp = per_channel({1, -2, 0});
        CHECK(t.run() == expected);
    }
    SECTION("{1,Cout,1} (3-D, aligned with the output's first dimensions) with a 3-D input zero point") {
        t.f_zp = Param{{1, 3, 1}, {1, -2, 0}};
        t.in_zp = per_tensor(1, 3);
        CHECK(t.run() == expected);
    }
    SECTION("{1,Cout,1,1} with stride 2 (gaps hold 99)") {
        t.f_zp = Param{{1, 3, 1, 1}, {1, 99, -2, 99, 0}, {6, 2, 1, 1}};
        CHECK(t.run() == expected);
    }
    SECTION("{1,Cout,oH,oW} repeated through zero strides") {
        t.f_zp = Param{{1, 3, 1, 1}, {1, -2, 0}, {0, 1, 0, 0}};
        CHECK(t.run() == expected);
    }
}

TEST_CASE("conv integer: the int32 sum wraps modulo 2^32", "[conv_integer]") {
    // Input and Filter {1,C,1,1}, every element the same through zero strides.
    ConvInt t;
    auto set = [&](DT type, std::uint32_t c, double xv, double xzp, double fv, double fzp) {
        t.in_type = type;
        t.f_type = type;
        t.in_sizes = {1, c, 1, 1};
        t.in_strides = {0, 0, 0, 0};
        t.x = Values(c, xv);
        t.in_zp = per_tensor(xzp);
        t.f_sizes = {1, c, 1, 1};
        t.f_strides = {0, 0, 0, 0};
        t.f = Values(c, fv);
        t.f_zp = per_tensor(fzp);
    };
    SECTION("33025 * 255 * 255 = 2147450625 fits") {
        set(DT::UInt8, 33025, 255, 0, 255, 0);
        CHECK(t.run() == Out{2147450625});
    }
    SECTION("33026 * 65025 = 2147515650 wraps to -2147451646") {
        set(DT::UInt8, 33026, 255, 0, 255, 0);
        CHECK(t.run() == Out{-2147451646});
    }
    SECTION("40000 * (-128 - 127) * (127 - -128) = -2601000000 wraps to 1693967296") {
        set(DT::Int8, 40000, -128, 127, 127, -128);
        CHECK(t.run() == Out{1693967296});
    }
}

TEST_CASE("conv integer: random grouped, strided, dilated, padded case matches an independent transcription",
          "[conv_integer]") {
    // Transcription: pad the input explicitly with its zero point, then sum
    // over the group's channels and the dilated taps in int64, reduce mod 2^32.
    std::mt19937 rng(27);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int rep = 0; rep < 12; ++rep) {
        const std::uint32_t N = pick(1, 2), G = pick(1, 3), cin_g = pick(1, 3), cout_g = pick(1, 3);
        const std::uint32_t H = pick(1, 6), W = pick(1, 6), kH = pick(1, 3), kW = pick(1, 3);
        const Pair s{std::uint32_t(pick(1, 3)), std::uint32_t(pick(1, 3))};
        const Pair dl{std::uint32_t(pick(1, 2)), std::uint32_t(pick(1, 2))};
        const Pair p0{std::uint32_t(pick(0, 2)), std::uint32_t(pick(0, 2))};
        const Pair p1{std::uint32_t(pick(0, 2)), std::uint32_t(pick(0, 2))};
        const long long eH = 1 + (kH - 1LL) * dl[0], eW = 1 + (kW - 1LL) * dl[1];
        const long long pH = H + p0[0] + p1[0], pW = W + p0[1] + p1[1];
        if (eH > pH || eW > pW) continue;
        const std::uint32_t oH = 1 + (pH - eH) / s[0], oW = 1 + (pW - eW) / s[1];
        const std::uint32_t Cin = G * cin_g, Cout = G * cout_g;
        const DT ti = kQ8[pick(0, 1)], tf = kQ8[pick(0, 1)];
        const int xlo = ti == DT::UInt8 ? 0 : -128, flo = tf == DT::UInt8 ? 0 : -128;
        ConvInt t;
        t.in_type = ti;
        t.f_type = tf;
        t.in_sizes = {N, Cin, H, W};
        t.f_sizes = {Cout, cin_g, kH, kW};
        t.out_sizes = {N, Cout, oH, oW};
        t.strides = s;
        t.dilations = dl;
        t.start = p0;
        t.end = p1;
        t.groups = G;
        t.x.clear();
        for (std::uint32_t i = 0; i < N * Cin * H * W; ++i) t.x.push_back(pick(xlo, xlo + 255));
        t.f.clear();
        for (std::uint32_t i = 0; i < Cout * cin_g * kH * kW; ++i) t.f.push_back(pick(flo, flo + 255));
        const int xzp = pick(xlo, xlo + 255);
        t.in_zp = per_tensor(xzp);
        Values fzp;
        for (std::uint32_t i = 0; i < Cout; ++i) fzp.push_back(pick(flo, flo + 255));
        t.f_zp = per_channel(fzp);
        // the padded input, the zero point in the padding
        std::vector<long long> padded(std::size_t(N) * Cin * pH * pW, xzp);
        for (std::uint32_t n = 0; n < N; ++n)
            for (std::uint32_t c = 0; c < Cin; ++c)
                for (std::uint32_t y = 0; y < H; ++y)
                    for (std::uint32_t x = 0; x < W; ++x)
                        padded[((std::size_t(n) * Cin + c) * pH + y + p0[0]) * pW + x + p0[1]] =
                            static_cast<long long>(t.x[((std::size_t(n) * Cin + c) * H + y) * W + x]);
        Out expected;
        for (std::uint32_t n = 0; n < N; ++n)
            for (std::uint32_t oc = 0; oc < Cout; ++oc)
                for (std::uint32_t oy = 0; oy < oH; ++oy)
                    for (std::uint32_t ox = 0; ox < oW; ++ox) {
                        long long sum = 0;
                        const std::uint32_t g = oc / cout_g;
                        for (std::uint32_t c = 0; c < cin_g; ++c)
                            for (std::uint32_t ky = 0; ky < kH; ++ky)
                                for (std::uint32_t kx = 0; kx < kW; ++kx) {
                                    const long long xv =
                                        padded[((std::size_t(n) * Cin + g * cin_g + c) * pH + oy * s[0] + ky * dl[0]) *
                                                   pW +
                                               ox * s[1] + kx * dl[1]];
                                    const long long fv =
                                        static_cast<long long>(t.f[((std::size_t(oc) * cin_g + c) * kH + ky) * kW + kx]);
                                    sum += (xv - xzp) * (fv - static_cast<long long>(fzp[oc]));
                                }
                        expected.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(sum)));
                    }
        INFO("rep " << rep << " N " << N << " G " << G << " Cin " << Cin << " Cout " << Cout << " H " << H << " W "
                    << W << " k " << kH << "x" << kW);
        CHECK(t.run() == expected);
    }
}

TEST_CASE("conv integer: one spatial dimension (DimensionCount 1, 3-D tensors)", "[conv_integer]") {
    // Input UINT8 {1,1,5} [1 2 3 4 5], InputZeroPoint 1: X - XZP = [0 1 2 3 4].
    // Filter INT8 {2,1,2}: oc0 [1 10], oc1 [-1 3]; FilterZeroPoint per channel {0, 1}:
    //   F - FZP = oc0 [1 10], oc1 [-2 2].
    // Strides [2], StartPadding [1], EndPadding [0]: oW = 1 + (5 + 1 - 2) / 2 = 3; taps x = 2*ox + kx - 1:
    //   ox 0: x = -1 (padding, 0), 0:  oc0 0*10 = 0,            oc1 0*2 = 0
    //   ox 1: x = 1, 2:                oc0 1*1 + 2*10 = 21,     oc1 1*-2 + 2*2 = 2
    //   ox 2: x = 3, 4:                oc0 3*1 + 4*10 = 43,     oc1 3*-2 + 4*2 = 2
    // (DirectML 1.15.4 gives the same: docs/semantics.md section 6.)
    ConvInt t;
    t.dims = 1;
    t.in_type = DT::UInt8;
    t.in_sizes = {1, 1, 5};
    t.x = {1, 2, 3, 4, 5};
    t.f_sizes = {2, 1, 2};
    t.f = {1, 10, -1, 3};
    t.out_sizes = {1, 2, 3};
    t.strides = {2, 0};  // the second entry is not read with DimensionCount 1
    t.start = {1, 7};
    t.end = {0, 9};
    t.dilations = {1, 0};
    const Out expected = {0, 21, 43, 0, 2, 2};
    SECTION("zero points {1,1,1} and {1,2,1}") {
        t.in_zp = Param{{1, 1, 1}, {1}};
        t.f_zp = Param{{1, 2, 1}, {0, 1}};
        CHECK(t.run() == expected);
    }
    SECTION("zero points {1,1} and {1,2}, {1,1,1,1} and {1,2,1,1}: aligned with the output's first dimensions") {
        t.in_zp = Param{{1, 1}, {1}};
        t.f_zp = Param{{1, 2}, {0, 1}};
        CHECK(t.run() == expected);
        t.in_zp = Param{{1, 1, 1, 1}, {1}};
        t.f_zp = Param{{1, 2, 1, 1}, {0, 1}};
        CHECK(t.run() == expected);
    }
    SECTION("a per-channel zero point {2}, {2,1} or {1,1,2} is refused (DirectML refuses them)") {
        t.in_zp = Param{{1}, {1}};
        for (const Dims& s : {Dims{2}, Dims{1, 1, 2}}) {
            t.f_zp = Param{s, {0, 1}};
            t.build();
            CHECK(error_of(t.d).find("FilterZeroPointTensor") != std::string::npos);
        }
        t.in_zp = Param{{1, 1}, {1}};
        t.f_zp = Param{{2, 1}, {0, 1}};
        t.build();
        CHECK(error_of(t.d).find("FilterZeroPointTensor: Sizes {2,1} must be a single element or {1,Cout,1}") !=
              std::string::npos);
    }
    SECTION("before feature level 4.0, and with a 4-D Filter") {
        t.build();
        CHECK(error_of(t.d, qdml::FeatureLevel::L3_1).find("DimensionCount") != std::string::npos);
        CHECK(error_of(t.d, qdml::FeatureLevel::L4_0) == "<valid>");
        t.f_sizes = {2, 1, 1, 2};
        t.build();
        CHECK(error_of(t.d).find("FilterTensor: DimensionCount 4 must be DimensionCount (1 spatial) + 2 = 3") !=
              std::string::npos);
    }
}

TEST_CASE("conv integer: validation, one rule at a time", "[conv_integer][validation]") {
    // Valid base: Input {1,4,3,3}, Filter {4,2,2,2}, GroupCount 2, Output {1,4,2,2}
    // INT32 (oH = oW = 1 + (3 - 2) = 2), per-tensor input and per-channel filter zero points, 4-D.
    ConvInt t;
    t.in_sizes = {1, 4, 3, 3};
    t.x = Values(36, 1);
    t.f_sizes = {4, 2, 2, 2};
    t.f = Values(32, 1);
    t.out_sizes = {1, 4, 2, 2};
    t.groups = 2;
    t.in_zp = per_tensor(0);
    t.f_zp = per_channel({0, 0, 0, 0});
    auto& d = t.build();
    REQUIRE(error_of(d) == "<valid>");
    auto a = [&](DT type, const Dims& sizes, const Dims& strides = {}) {
        const auto n = qdml::min_buffer_elements(desc(type, sizes, strides)).value_or(0);
        return t.pool.raw(type, sizes, Values(n, 1), strides);
    };
    auto rejects = [&](const std::string& member, const std::string& fragment,
                       qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
        const std::string e = error_of(d, level);
        INFO("error: " << e);
        CHECK(rejected_member(d, level) == member);
        CHECK(e.find(fragment) != std::string::npos);
    };

    SECTION("feature levels: the operator from 2.1; 4-D zero points only before 4.0") {
        rejects("operator", "requires DML_FEATURE_LEVEL 2.1", qdml::FeatureLevel::L2_0);
        CHECK(error_of(d, qdml::FeatureLevel::L2_1) == "<valid>");
        d.InputZeroPointTensor = a(DT::Int8, {1});
        d.FilterZeroPointTensor = a(DT::Int8, {4, 1, 1});
        rejects("FilterZeroPointTensor", "DimensionCount", qdml::FeatureLevel::L4_0);  // 1 != 3
        d.FilterZeroPointTensor = a(DT::Int8, {4});
        rejects("FilterZeroPointTensor", "{1,Cout,1,1}");  // aligned with the output's first dimensions: {4,1,1,1}
        d.InputZeroPointTensor = a(DT::Int8, {1, 1, 1});
        d.FilterZeroPointTensor = a(DT::Int8, {4, 1, 1});
        rejects("FilterZeroPointTensor", "fewer dimensions align with the output's first ones");
        d.FilterZeroPointTensor = a(DT::Int8, {1, 4, 1});
        CHECK(error_of(d, qdml::FeatureLevel::L4_0) == "<valid>");
        rejects("InputZeroPointTensor", "DimensionCount", qdml::FeatureLevel::L3_1);
    }
    SECTION("Input, Filter and Output have DimensionCount + 2 dimensions") {
        d.InputTensor = a(DT::Int8, {4, 3, 3});
        rejects("InputTensor", "DimensionCount 3 must be DimensionCount (2 spatial) + 2 = 4");
        rejects("InputTensor", "DimensionCount 3 is not supported", qdml::FeatureLevel::L3_1);
        d.InputTensor = a(DT::Int8, {1, 1, 4, 3, 3});
        rejects("InputTensor", "DimensionCount");
    }
    SECTION("Output INT32 only") {
        d.OutputTensor = t.pool.output(DT::Int8, {1, 4, 2, 2});
        rejects("OutputTensor", "INT8");
        d.OutputTensor = t.pool.output(DT::UInt32, {1, 4, 2, 2});
        rejects("OutputTensor", "UINT32");
    }
    SECTION("Input and Filter INT8 or UINT8") {
        d.InputTensor = a(DT::Int32, {1, 4, 3, 3});
        rejects("InputTensor", "INT32");
    }
    SECTION("a zero point has its tensor's type") {
        d.InputZeroPointTensor = a(DT::UInt8, {1, 1, 1, 1});
        rejects("InputZeroPointTensor", "InputTensor");
        d.InputZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        d.FilterZeroPointTensor = a(DT::UInt8, {1, 4, 1, 1});
        rejects("FilterZeroPointTensor", "FilterTensor");
    }
    SECTION("InputZeroPoint per tensor only") {
        d.InputZeroPointTensor = a(DT::Int8, {1, 4, 1, 1});
        rejects("InputZeroPointTensor", "a single element");
    }
    SECTION("FilterZeroPoint per tensor or per output channel") {
        d.FilterZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        CHECK(error_of(d) == "<valid>");
        d.FilterZeroPointTensor = a(DT::Int8, {1, 1, 2, 1});
        rejects("FilterZeroPointTensor", "{1,Cout,1,1}");
        d.FilterZeroPointTensor = a(DT::Int8, {1, 2, 1, 1});
        rejects("FilterZeroPointTensor", "{1,Cout,1,1}");
    }
    SECTION("the two zero points share a DimensionCount") {
        d.InputZeroPointTensor = a(DT::Int8, {1, 1});
        rejects("FilterZeroPointTensor", "InputZeroPointTensor");
        d.FilterZeroPointTensor.reset();
        CHECK(error_of(d) == "<valid>");
    }
    SECTION("GroupCount") {
        d.GroupCount = 1;
        rejects("GroupCount", "input channels 4");
        d.GroupCount = 0;
        rejects("GroupCount", "is 0");
        d.GroupCount = 2;
        d.FilterTensor = a(DT::Int8, {3, 2, 2, 2});
        d.OutputTensor = t.pool.output(DT::Int32, {1, 3, 2, 2});
        d.FilterZeroPointTensor = a(DT::Int8, {1, 3, 1, 1});
        rejects("GroupCount", "does not divide");
    }
    SECTION("Strides, Dilations, DimensionCount") {
        d.Strides = {0, 1};
        rejects("Strides", "Strides[0] is 0");
        d.Strides = {1, 1};
        d.Dilations = {1, 0};
        rejects("Dilations", "Dilations[1] is 0");
        d.Dilations = {1, 1};
        d.DimensionCount = 3;
        rejects("DimensionCount", "DirectML supports 1 or 2");
        d.DimensionCount = 1;
        rejects("InputTensor", "DimensionCount 4 must be DimensionCount (1 spatial) + 2 = 3");
        rejects("DimensionCount", "4.0", qdml::FeatureLevel::L3_1);
    }
    SECTION("kernel larger than the padded input; Output sizes") {
        d.Dilations = {1, 3};
        rejects("FilterTensor", "no output");
        d.Dilations = {1, 1};
        d.OutputTensor = t.pool.output(DT::Int32, {1, 4, 2, 1});
        rejects("OutputTensor", "must be {N, Cout, oH, oW}");
    }
}
