// QUANTIZED_LINEAR_AVERAGE_POOLING (docs/semantics.md section 17). Expected
// values are derived by hand from
//   o[k]   = 1 + (I + StartPadding + EndPadding - (1 + (WindowSize - 1) * Dilations)) / Strides
//   sum    = over the window's taps inside the input, in row-major window order:
//            sum + fp32(X - InputZeroPoint) * InputScale        (binary32, +0.0 first)
//   count  = WindowSize's product (IncludePadding) or the taps inside the input
//   Output = Q((sum / fp32(count)) / OutputScale, OutputZeroPoint)   (Q: section 2, ties to even)
// (scales that are powers of two keep every step exact, except where a test
// says otherwise), plus random cases checked against a second transcription
// written here (an explicitly padded input in double-free binary32 steps).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "qdml/qdml.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using Out = std::vector<long long>;
using Triple = std::array<std::uint32_t, 3>;

Param one(double v, std::size_t dims = 4) { return {Dims(dims, 1u), {v}}; }

/// Builder: one pooling. Input values are in logical (row-major) order,
/// written through its strides; buffer gaps hold 99.
struct AvgPool {
    Pool pool;
    DT type = DT::UInt8;
    Dims in_sizes{1, 1, 1, 1}, out_sizes{1, 1, 1, 1};
    Dims in_strides, out_strides;
    Values x{0};
    Param xs = one(1.0), ys = one(1.0);
    std::optional<Param> xz, yz;
    Triple strides{1, 1, 1}, window{1, 1, 1}, start{0, 0, 0}, end{0, 0, 0}, dilations{1, 1, 1};
    bool include = false;
    std::uint32_t dims = 2;
    qdml::FeatureLevel level = qdml::FeatureLevel::Latest;
    qdml::Fidelity fidelity = qdml::Fidelity::Exact;
    qdml::QuantizedLinearAveragePoolingDesc d;

    qdml::QuantizedLinearAveragePoolingDesc& build() {
        d.InputTensor = pool.logical(type, in_sizes, x, in_strides, 99);
        d.InputScaleTensor = pool.raw(DT::Float32, xs.sizes, xs.values, xs.strides);
        if (xz) d.InputZeroPointTensor = pool.raw(type, xz->sizes, xz->values, xz->strides);
        d.OutputScaleTensor = pool.raw(DT::Float32, ys.sizes, ys.values, ys.strides);
        if (yz) d.OutputZeroPointTensor = pool.raw(type, yz->sizes, yz->values, yz->strides);
        d.OutputTensor = pool.output(type, out_sizes, out_strides);
        d.DimensionCount = dims;
        d.Strides = strides;
        d.WindowSize = window;
        d.StartPadding = start;
        d.EndPadding = end;
        d.Dilations = dilations;
        d.IncludePadding = include;
        return d;
    }
    Out run() {
        build();
        qdml::reference::run(d, level, fidelity);
        return pool.read(d.OutputTensor);
    }
};

std::string error_of(const qdml::QuantizedLinearAveragePoolingDesc& d,
                     qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
    try {
        qdml::validate(d, level);
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "<valid>";
}

/// The hand-computed case: Input {1,1,2,3}, InputZeroPoint 3, InputScale 0.5:
///   X = {{5,7,9},{11,13,15}} -> dequantized {{1,2,3},{4,5,6}} (exact)
///   WindowSize {2,2}, StartPadding {1,0}, EndPadding {0,1}: padded 3 x 4,
///   oH = 1 + (3 - 2) = 2, oW = 1 + (4 - 2) = 3; taps rows oy-1..oy, columns ox..ox+1
///     (0,0): 1+2 = 3 (2 taps)   (0,1): 2+3 = 5 (2)   (0,2): 3 (1)
///     (1,0): 1+2+4+5 = 12 (4)   (1,1): 2+3+5+6 = 16 (4)   (1,2): 3+6 = 9 (2)
///   OutputScale 0.5, OutputZeroPoint 10: Output = rne(2 * sum / count) + 10
///     IncludePadding false: 2*{1.5, 2.5, 3, 3, 4, 4.5} = {3, 5, 6, 6, 8, 9} -> {13,15,16,16,18,19}
///     IncludePadding true (count 4): 2*{0.75, 1.25, 0.75, 3, 4, 2.25} = {1.5, 2.5, 1.5, 6, 8, 4.5}
///                                    -> rne {2, 2, 2, 6, 8, 4} -> {12,12,12,16,18,14}
void set_small_case(AvgPool& t, DT type) {
    t.type = type;
    t.in_sizes = {1, 1, 2, 3};
    t.x = shifted(Values{5, 7, 9, 11, 13, 15}, type);
    t.xz = one(3 + shift(type));
    t.xs = one(0.5);
    t.ys = one(0.5);
    t.yz = one(10 + shift(type));
    t.window = {2, 2, 0};
    t.start = {1, 0, 0};
    t.end = {0, 1, 0};
    t.out_sizes = {1, 1, 2, 3};
}
const Out kExclude{13, 15, 16, 16, 18, 19};
const Out kInclude{12, 12, 12, 16, 18, 14};

}  // namespace

TEST_CASE("average pooling: hand-computed padding, both IncludePadding, both types and profiles",
          "[average_pooling]") {
    for (DT type : kQ8)
        for (auto fid : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML})
            for (bool include : {false, true}) {
                INFO(qdml::name(type) << " fidelity " << static_cast<int>(fid) << " IncludePadding " << include);
                AvgPool t;
                set_small_case(t, type);
                t.fidelity = fid;
                t.include = include;
                CHECK(t.run() == shifted(include ? kInclude : kExclude, type));
            }
}

TEST_CASE("average pooling: ties round to even before the zero point is added", "[average_pooling]") {
    // Window {1,2}, Strides {1,2}, scales 1, OutputZeroPoint 1 (DirectML's `ties` probe):
    //   (1+2)/2 = 1.5 -> 2 + 1 = 3;  (5+6)/2 = 5.5 -> 6 + 1 = 7;  (3+4)/2 = 3.5 -> 4 + 1 = 5;  (7+8)/2 = 7.5 -> 9
    //   (ONNX Runtime's rne(v + zp) would give 2, 6, 4, 8.)
    AvgPool t;
    t.in_sizes = {1, 1, 1, 8};
    t.x = {1, 2, 5, 6, 3, 4, 7, 8};
    t.yz = one(1);
    t.window = {1, 2, 0};
    t.strides = {1, 2, 0};
    t.out_sizes = {1, 1, 1, 4};
    CHECK(t.run() == Out{3, 7, 5, 9});
    // INT8, negative ties: (-1-2)/2 = -1.5 -> -2 + 1 = -1;  (-5-6)/2 = -5.5 -> -6 + 1 = -5
    AvgPool u;
    u.type = DT::Int8;
    u.in_sizes = {1, 1, 1, 4};
    u.x = {-1, -2, -5, -6};
    u.yz = one(1);
    u.window = {1, 2, 0};
    u.strides = {1, 2, 0};
    u.out_sizes = {1, 1, 1, 2};
    CHECK(u.run() == Out{-1, -5});
}

TEST_CASE("average pooling: the taps are summed in window order, in binary32", "[average_pooling]") {
    // One window of 4 taps, X - InputZeroPoint = {-7, 8, -32, -11}, both scales fp32(0.7) = 0x3F333333:
    //   products -4.9, 5.6, -22.4, -7.7 (binary32); running sums -4.9, 0.6999998, -21.7,
    //   -29.400002 (0xC1EB3334); / 4 = -7.3500004; / 0.7 = -10.500001 (0xC1280001) -> -11.
    //   (In reverse order the sum is -29.399998 and the result -10.499999 -> -10; exactly,
    //   -42 * 0.7 / 4 / 0.7 = -10.5, a tie, -> -10.)
    AvgPool t;
    t.type = DT::Int8;
    t.in_sizes = {1, 1, 2, 2};
    t.x = {-7, 8, -32, -11};
    t.xs = one(0.7);
    t.ys = one(0.7);
    t.window = {2, 2, 0};
    t.out_sizes = {1, 1, 1, 1};
    CHECK(t.run() == Out{-11});
}

TEST_CASE("average pooling: dilations, strides and IncludePadding's divisor", "[average_pooling]") {
    // Input {1,1,1,4} = {3,6,9,12}, InputZeroPoint 1 -> {2,5,8,11}; WindowSize {1,2},
    // Dilations {1,3}, StartPadding {0,2}: padded width 6, extent 4, oW = 1 + (6-4) = 3.
    //   taps at ox - 2 and ox + 1:  ox 0: pad, 5;  ox 1: pad, 8;  ox 2: 2, 11
    //   IncludePadding (count 2): 2.5 -> 2, 4, 6.5 -> 6 (DirectML's include_padding_dilated)
    //   excluded: 5, 8, 6.5 -> 6
    for (bool include : {true, false}) {
        AvgPool t;
        t.in_sizes = {1, 1, 1, 4};
        t.x = {3, 6, 9, 12};
        t.xz = one(1);
        t.window = {1, 2, 0};
        t.dilations = {1, 3, 0};
        t.start = {0, 2, 0};
        t.include = include;
        t.out_sizes = {1, 1, 1, 3};
        CHECK(t.run() == (include ? Out{2, 4, 6} : Out{5, 8, 6}));
    }
    // Strides {2,2} on {1,1,3,3} = 1..9, WindowSize {1,1}: picks 1, 3, 7, 9.
    AvgPool s;
    s.in_sizes = {1, 1, 3, 3};
    s.x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    s.strides = {2, 2, 0};
    s.out_sizes = {1, 1, 2, 2};
    CHECK(s.run() == Out{1, 3, 7, 9});
}

TEST_CASE("average pooling: a window without input elements, per profile", "[average_pooling]") {
    // Input {3,6}, InputZeroPoint 1 -> {2,5}; WindowSize {1,2}, StartPadding {0,2}, IncludePadding false:
    //   oW = 1 + (4 - 2) = 3; ox 0: no taps, 0/0 = NaN; ox 1: 2/1 = 2; ox 2: 7/2 = 3.5 -> 4.
    //   OutputZeroPoint 4: {?, 6, 8}. Exact: NaN -> the low end. DirectML (measured): the high
    //   end without OutputZeroPoint, the low end with a one-element one, 0 with a per-channel one.
    for (DT type : kQ8) {
        const long long lo = type == DT::UInt8 ? 0 : -128, hi = type == DT::UInt8 ? 255 : 127;
        auto make = [&](qdml::Fidelity f, bool zp) {
            AvgPool t;
            t.type = type;
            t.in_sizes = {1, 1, 1, 2};
            t.x = {3, 6};
            t.xz = one(1);
            if (zp) t.yz = one(4);
            t.window = {1, 2, 0};
            t.start = {0, 2, 0};
            t.out_sizes = {1, 1, 1, 3};
            t.fidelity = f;
            return t.run();
        };
        INFO(qdml::name(type));
        CHECK(make(qdml::Fidelity::Exact, true) == Out{lo, 6, 8});
        CHECK(make(qdml::Fidelity::Exact, false) == Out{lo, 2, 4});
        CHECK(make(qdml::Fidelity::DirectML, true) == Out{lo, 6, 8});
        CHECK(make(qdml::Fidelity::DirectML, false) == Out{hi, 2, 4});
        // per channel: channels {3,6} and {1,2}, InputZeroPoint {1,2}, OutputZeroPoint {4,5}:
        //   channel 1: ox 1: (1-2)/1 = -1 + 5 = 4; ox 2: (-1+0)/2 = -0.5 -> -0 + 5 = 5
        for (auto f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
            AvgPool t;
            t.type = type;
            t.in_sizes = {1, 2, 1, 2};
            t.x = {3, 6, 1, 2};
            t.xz = per_channel({1, 2});
            t.yz = per_channel({4, 5});
            t.xs = per_channel({1.0, 1.0});
            t.ys = per_channel({1.0, 1.0});
            t.window = {1, 2, 0};
            t.start = {0, 2, 0};
            t.out_sizes = {1, 2, 1, 3};
            t.fidelity = f;
            const long long nan_out = f == qdml::Fidelity::Exact ? lo : 0;
            CHECK(t.run() == Out{nan_out, 6, 8, nan_out, 4, 5});
        }
    }
}

TEST_CASE("average pooling: infinite and NaN averages saturate as Q says", "[average_pooling]") {
    // OutputScale 0, InputZeroPoint 2, WindowSize 1: X - 2 = {1, 4, -1, 248} -> +inf, +inf, -inf, +inf
    // -> hi, hi, lo, hi in both profiles; X = 2 gives 0/0 = NaN -> lo (exact; directml with a zero point).
    for (auto f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
        AvgPool t;
        t.in_sizes = {1, 1, 1, 5};
        t.x = {3, 6, 1, 250, 2};
        t.xz = one(2);
        t.yz = one(4);
        t.ys = one(0.0);
        t.out_sizes = {1, 1, 1, 5};
        t.fidelity = f;
        CHECK(t.run() == Out{255, 255, 0, 255, 0});
    }
    // InputScale 3e38, two taps of 255: the sum overflows to +inf -> 255 (OutputZeroPoint 9).
    AvgPool o;
    o.in_sizes = {1, 1, 1, 2};
    o.x = {255, 255};
    o.xs = one(3e38);
    o.yz = one(9);
    o.window = {1, 2, 0};
    o.out_sizes = {1, 1, 1, 1};
    CHECK(o.run() == Out{255});
    // NaN InputScale: INT8 -> -128 (exact).
    AvgPool n;
    n.type = DT::Int8;
    n.in_sizes = {1, 1, 1, 2};
    n.x = {3, 6};
    n.xs = one(std::numeric_limits<double>::quiet_NaN());
    n.yz = one(4);
    n.out_sizes = {1, 1, 1, 2};
    CHECK(n.run() == Out{-128, -128});
}

TEST_CASE("average pooling: per-channel parameters in every accepted shape", "[average_pooling]") {
    // Input {1,2,1,4}: channel 0 {10,20,30,40}, channel 1 {50,60,70,80}; WindowSize {1,2}.
    //   InputScale {1,2}, OutputScale {1,3}, InputZeroPoint {0,10}, OutputZeroPoint {1,2}:
    //   channel 0: 15, 25, 35 + 1 = 16, 26, 36
    //   channel 1: (40+50)*2/2 = 90 / 3 = 30 + 2 = 32; (50+60) -> 110/3 = 36.67 -> 37 + 2 = 39;
    //              (60+70) = 130/3 = 43.33 -> 43 + 2 = 45       (DirectML's per_channel probe)
    const Out expected{16, 26, 36, 32, 39, 45};
    const std::vector<std::pair<const char*, std::function<Param(const Values&)>>> forms = {
        {"{1,C,1,1}", [](const Values& v) { return per_channel(v); }},
        {"{1,C}", [](const Values& v) { return Param{{1, 2}, v}; }},
        {"{1,C,1}", [](const Values& v) { return Param{{1, 2, 1}, v}; }},
        {"{1,C,1,4} stride 0", [](const Values& v) { return Param{{1, 2, 1, 4}, v, {0, 1, 0, 0}}; }},
        {"{1,C,1,3} stride 0 (the output's width)", [](const Values& v) { return Param{{1, 2, 1, 3}, v, {0, 1, 0, 0}}; }},
    };
    for (const auto& [name, form] : forms) {
        INFO(name);
        AvgPool t;
        t.in_sizes = {1, 2, 1, 4};
        t.x = {10, 20, 30, 40, 50, 60, 70, 80};
        t.xs = form({1.0, 2.0});
        t.ys = form({1.0, 3.0});
        t.xz = form({0, 10});
        t.yz = form({1, 2});
        t.window = {1, 2, 0};
        t.out_sizes = {1, 2, 1, 3};
        CHECK(t.run() == expected);
    }
}

TEST_CASE("average pooling: three spatial dimensions and strided layouts", "[average_pooling]") {
    // {1,1,2,2,2} = 1..8, WindowSize {2,1,2}: oD 1, oH 2, oW 1:
    //   (y 0): 1 + 2 + 5 + 6 = 14 / 4 = 3.5 -> 4;  (y 1): 3 + 4 + 7 + 8 = 22 / 4 = 5.5 -> 6
    AvgPool t;
    t.dims = 3;
    t.in_sizes = {1, 1, 2, 2, 2};
    t.x = {1, 2, 3, 4, 5, 6, 7, 8};
    t.xs = one(1.0, 5);
    t.ys = one(1.0, 5);
    t.window = {2, 1, 2};
    t.out_sizes = {1, 1, 1, 2, 1};
    CHECK(t.run() == Out{4, 6});
    // The same with depth padding StartPadding {1,0,0}: oD = 1 + (2 + 1 - 2) = 2; at oz 0 only depth 0:
    //   (0,0): 1 + 2 = 3;  (0,1): 3 + 4 = 7;  oz 1 as above: 14, 22.
    //   IncludePadding (count 2*1*2 = 4): 0.75 -> 1, 1.75 -> 2, 3.5 -> 4, 5.5 -> 6
    //   without (count 2, 2, 4, 4): 1.5 -> 2, 3.5 -> 4, 4, 6
    for (bool include : {true, false}) {
        AvgPool p;
        p.dims = 3;
        p.in_sizes = {1, 1, 2, 2, 2};
        p.x = {1, 2, 3, 4, 5, 6, 7, 8};
        p.xs = one(1.0, 5);
        p.ys = one(1.0, 5);
        p.window = {2, 1, 2};
        p.start = {1, 0, 0};
        p.include = include;
        p.out_sizes = {1, 1, 2, 2, 1};
        CHECK(p.run() == (include ? Out{1, 2, 4, 6} : Out{2, 4, 4, 6}));
    }
    // NHWC memory through strides: Input {1,2,1,4} with strides {8,1,8,2}, Output {1,2,1,3}
    // with strides {6,1,6,2}: the logical values are those of the per-channel test above.
    AvgPool s;
    s.in_sizes = {1, 2, 1, 4};
    s.in_strides = {8, 1, 8, 2};
    s.x = {10, 20, 30, 40, 50, 60, 70, 80};
    s.window = {1, 2, 0};
    s.out_sizes = {1, 2, 1, 3};
    s.out_strides = {6, 1, 6, 2};
    CHECK(s.run() == Out{15, 25, 35, 55, 65, 75});
}

TEST_CASE("average pooling: random cases match an independent transcription", "[average_pooling]") {
    // Transcription: the dequantized input in a padded binary32 buffer (NaN marks the
    // padding), the window's taps added in row-major order, then the two divisions and Q.
    std::mt19937 rng(17);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int rep = 0; rep < 40; ++rep) {
        const std::uint32_t N = pick(1, 2), C = pick(1, 3), H = pick(1, 6), W = pick(1, 6);
        const Triple k{1, std::uint32_t(pick(1, 3)), std::uint32_t(pick(1, 3))};
        const Triple s{1, std::uint32_t(pick(1, 3)), std::uint32_t(pick(1, 3))};
        const Triple dl{1, std::uint32_t(pick(1, 2)), std::uint32_t(pick(1, 2))};
        const Triple p0{0, std::uint32_t(pick(0, 2)), std::uint32_t(pick(0, 2))};
        const Triple p1{0, std::uint32_t(pick(0, 2)), std::uint32_t(pick(0, 2))};
        const long long eH = 1 + (k[1] - 1LL) * dl[1], eW = 1 + (k[2] - 1LL) * dl[2];
        const long long pH = H + p0[1] + p1[1], pW = W + p0[2] + p1[2];
        if (eH > pH || eW > pW) continue;
        const std::uint32_t oH = 1 + (pH - eH) / s[1], oW = 1 + (pW - eW) / s[2];
        const DT type = kQ8[pick(0, 1)];
        const int lo = type == DT::UInt8 ? 0 : -128;
        const bool include = pick(0, 1) == 1;
        AvgPool t;
        t.type = type;
        t.in_sizes = {N, C, H, W};
        t.out_sizes = {N, C, oH, oW};
        t.window = {k[1], k[2], 0};
        t.strides = {s[1], s[2], 0};
        t.dilations = {dl[1], dl[2], 0};
        t.start = {p0[1], p0[2], 0};
        t.end = {p1[1], p1[2], 0};
        t.include = include;
        t.x.clear();
        for (std::uint32_t i = 0; i < N * C * H * W; ++i) t.x.push_back(pick(lo, lo + 255));
        Values xs, ys, xz, yz;
        for (std::uint32_t c = 0; c < C; ++c) {
            xs.push_back(static_cast<float>(pick(1, 1000) / 997.0));
            ys.push_back(static_cast<float>(pick(1, 1000) / 991.0));
            xz.push_back(pick(lo, lo + 255));
            yz.push_back(pick(lo, lo + 255));
        }
        t.xs = per_channel(xs);
        t.ys = per_channel(ys);
        t.xz = per_channel(xz);
        t.yz = per_channel(yz);
        Out expected;
        for (std::uint32_t n = 0; n < N; ++n)
            for (std::uint32_t c = 0; c < C; ++c) {
                std::vector<float> padded(std::size_t(pH) * pW, std::numeric_limits<float>::quiet_NaN());
                for (std::uint32_t y = 0; y < H; ++y)
                    for (std::uint32_t x = 0; x < W; ++x) {
                        const long long q = static_cast<long long>(t.x[((std::size_t(n) * C + c) * H + y) * W + x]);
                        const float diff = static_cast<float>(q - static_cast<long long>(xz[c]));
                        const float prod = qdml::no_fuse(diff * static_cast<float>(xs[c]));
                        padded[(y + p0[1]) * pW + x + p0[2]] = prod;
                    }
                for (std::uint32_t oy = 0; oy < oH; ++oy)
                    for (std::uint32_t ox = 0; ox < oW; ++ox) {
                        float sum = 0.0f;
                        long long taps = 0;
                        for (std::uint32_t ky = 0; ky < k[1]; ++ky)
                            for (std::uint32_t kx = 0; kx < k[2]; ++kx) {
                                const float v = padded[(oy * s[1] + ky * dl[1]) * pW + ox * s[2] + kx * dl[2]];
                                if (std::isnan(v)) continue;
                                sum = sum + v;
                                ++taps;
                            }
                        const float count = static_cast<float>(include ? k[1] * k[2] : taps);
                        const float avg = sum / count;
                        const float v = avg / static_cast<float>(ys[c]);
                        // Q: clamp to [lo - zp, hi - zp] (NaN: lo - zp), rne, + zp
                        const float zp = static_cast<float>(yz[c]);
                        const float lo_z = static_cast<float>(lo) - zp, hi_z = static_cast<float>(lo + 255) - zp;
                        const float cl = std::isnan(v) ? lo_z : std::min(std::max(v, lo_z), hi_z);
                        expected.push_back(static_cast<long long>(std::nearbyint(cl)) + static_cast<long long>(yz[c]));
                    }
            }
        INFO("rep " << rep << " N " << N << " C " << C << " H " << H << " W " << W << " k " << k[1] << "x" << k[2]);
        CHECK(t.run() == expected);
    }
}

TEST_CASE("average pooling: validation, one rule at a time", "[average_pooling][validation]") {
    // Valid base: the hand-computed case (UINT8, 2 spatial dimensions, per-tensor parameters, 4-D).
    AvgPool t;
    set_small_case(t, DT::UInt8);
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

    SECTION("feature level 6.2") {
        rejects("operator", "requires DML_FEATURE_LEVEL 6.2", qdml::FeatureLevel::L6_1);
        CHECK(error_of(d, qdml::FeatureLevel::L6_2) == "<valid>");
    }
    SECTION("DimensionCount 2 or 3, Input and Output of DimensionCount + 2 dimensions") {
        d.DimensionCount = 1;
        rejects("DimensionCount", "DirectML supports 2 or 3");
        d.DimensionCount = 3;
        rejects("InputTensor", "DimensionCount 4 must be DimensionCount (3 spatial) + 2 = 5");
        d.DimensionCount = 2;
        d.InputTensor = a(DT::UInt8, {1, 2, 3});
        rejects("InputTensor", "DimensionCount 3 is not supported");
        d.InputTensor = a(DT::UInt8, {1, 1, 1, 2, 3});
        rejects("InputTensor", "DimensionCount 5 must be DimensionCount (2 spatial) + 2 = 4");
    }
    SECTION("types: Input and Output INT8/UINT8 of one type, zero points of their tensor's type, FLOAT32 scales") {
        d.InputTensor = a(DT::Int16, {1, 1, 2, 3});
        rejects("InputTensor", "DataType INT16 is not supported");
        d.InputTensor = a(DT::Int8, {1, 1, 2, 3});
        rejects("InputZeroPointTensor", "must equal InputTensor's DataType");
        d.InputZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        rejects("OutputTensor", "must equal InputTensor's DataType");
        d.OutputTensor = t.pool.output(DT::Int8, {1, 1, 2, 3});
        rejects("OutputZeroPointTensor", "must equal OutputTensor's DataType");
        d.OutputZeroPointTensor = a(DT::Int8, {1, 1, 1, 1});
        CHECK(error_of(d) == "<valid>");
        d.InputScaleTensor = a(DT::Float16, {1, 1, 1, 1});
        rejects("InputScaleTensor", "DataType FLOAT16 is not supported");
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 1});
        d.OutputScaleTensor = a(DT::Int32, {1, 1, 1, 1});
        rejects("OutputScaleTensor", "DataType INT32 is not supported");
    }
    SECTION("Strides, WindowSize and Dilations at least 1") {
        d.Strides = {1, 0, 1};
        rejects("Strides", "Strides[1] is 0");
        d.Strides = {1, 1, 1};
        d.WindowSize = {0, 2, 1};
        rejects("WindowSize", "WindowSize[0] is 0");
        d.WindowSize = {2, 2, 1};
        d.Dilations = {1, 0, 1};
        rejects("Dilations", "Dilations[1] is 0");
    }
    SECTION("the dilated window fits the padded input; Output sizes follow the formula") {
        d.WindowSize = {4, 2, 1};  // padded height 3
        rejects("WindowSize", "window extent 1 + (4 - 1) * Dilations[0] = 4 is larger than the padded input 3");
        d.WindowSize = {2, 2, 1};
        d.Dilations = {1, 4, 1};  // extent 5 > padded width 4
        rejects("WindowSize", "is larger than the padded input 4");
        d.Dilations = {1, 1, 1};
        d.OutputTensor = t.pool.output(DT::UInt8, {1, 1, 2, 4});
        rejects("OutputTensor", "must be {N, C, oH, oW} = {1,1,2,3}");
        d.OutputTensor = t.pool.output(DT::UInt8, {1, 2, 2, 3});
        rejects("OutputTensor", "{1,1,2,3}");
        d.OutputTensor = t.pool.output(DT::UInt8, {2, 1, 2, 3});
        rejects("OutputTensor", "{1,1,2,3}");
    }
    SECTION("parameters: one element or per channel, at most Input's DimensionCount, aligned left") {
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 1, 1});
        rejects("InputScaleTensor", "DimensionCount 5 must be at most InputTensor's (4)");
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 3});
        rejects("InputScaleTensor", "must be a single element or {1,C,1,1} (per channel)");
        d.InputScaleTensor = a(DT::Float32, {1, 1, 1, 3}, {0, 0, 0, 0});  // the output's width through stride 0
        CHECK(error_of(d) == "<valid>");
        d.InputScaleTensor = a(DT::Float32, {1});
        d.OutputZeroPointTensor = a(DT::UInt8, {2});  // aligned left: {2,1,1,1} is not per channel
        rejects("OutputZeroPointTensor", "fewer dimensions align with the output's first ones");
        d.OutputZeroPointTensor = a(DT::UInt8, {1, 2});  // C is 1
        rejects("OutputZeroPointTensor", "{1,C,1,1}");
    }
    SECTION("the output must not overlap an input") {
        d.OutputTensor.Data = const_cast<void*>(d.InputTensor.Data);
        rejects("OutputTensor", "overlap");
    }
    SECTION("directml profile: a zero point shaped like its scale") {
        CHECK(rejected_member_directml(d) == "<valid>");
        d.OutputZeroPointTensor = a(DT::UInt8, {1, 1});
        CHECK(error_of(d) == "<valid>");
        CHECK(rejected_member_directml(d) == "OutputZeroPointTensor");
        d.OutputZeroPointTensor = a(DT::UInt8, {1, 1, 1, 1});
        d.InputZeroPointTensor = a(DT::UInt8, {1, 1, 1, 1}, {0, 0, 0, 0});
        CHECK(rejected_member_directml(d) == "<valid>");
        d.InputScaleTensor = a(DT::Float32, {1, 1});
        CHECK(rejected_member_directml(d) == "InputZeroPointTensor");
    }
}
