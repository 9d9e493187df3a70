// The depthwise convolution path (qdml::simd::conv::depthwise) against the
// reference, bit for bit, once per depthwise path this CPU runs (generic,
// AVX2, AVX-512 VNNI; the others are named in a warning). Random cases:
// kernels 1x1 to 7x7 and 1xK / Kx1, strides and dilations 1-3, asymmetric
// padding up to beyond the kernel extent, output sizes of 1, N > 1, channel
// multipliers 1-3, all eight INT8/UINT8 mixes, per-tensor and per-channel
// filter parameters, bias present or absent (at the int32 extremes, so
// accumulators wrap), zero points absent or at the extremes, NCHW, NHWC
// through strides and padded layouts with misaligned bases; outputs
// sentinel-filled with guards (tests/support/differential.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"
#include "support/differential.hpp"
#include "support/executors.hpp"

namespace {

namespace diff = qtest::diff;
using DT = qdml::TensorDataType;
using qdml::simd::Isa;

/// The distinct depthwise paths this CPU runs (each cap that selects a new
/// one); warns once about the paths it cannot run.
std::vector<Isa> depthwise_paths() {
    std::vector<Isa> paths;
    for (Isa cap : qdml::simd::kAllIsas) {
        const Isa got = qdml::simd::conv::depthwise_isa(cap);
        if (paths.empty() || paths.back() != got) paths.push_back(got);
    }
    static bool warned = false;
    if (!warned) {
        std::string missing;
        for (Isa i : {Isa::Generic, Isa::Avx2, Isa::Avx512Vnni})
            if (std::find(paths.begin(), paths.end(), i) == paths.end())
                missing += std::string(" ") + std::string(qdml::simd::isa_name(i));
        if (!missing.empty()) WARN("depthwise paths this CPU cannot run (not tested here):" << missing);
        warned = true;
    }
    return paths;
}

/// Memory order of a {N, C, H, W} tensor: NCHW or NHWC, maybe with gaps.
enum class Order { Nchw, Nhwc };

std::vector<std::uint32_t> conv_strides(diff::Rng& r, const std::vector<std::uint32_t>& s, Order order, bool pad) {
    const auto gap = [&] { return pad && r.chance(50) ? static_cast<std::uint32_t>(r.range(1, 3)) : 0u; };
    std::vector<std::uint32_t> st(4);
    if (order == Order::Nchw) {
        st[3] = 1 + (pad && r.chance(20) ? 1u : 0u);  // sometimes every other element
        st[2] = st[3] * s[3] + gap();
        st[1] = st[2] * s[2] + gap();
        st[0] = st[1] * s[1] + gap();
    } else {
        st[1] = 1;
        st[3] = s[1] + gap();
        st[2] = st[3] * s[3] + gap();
        st[0] = st[2] * s[2] + gap();
    }
    return st;
}

/// One random depthwise problem.
struct Case {
    DT tin = DT::UInt8, tf = DT::Int8, tout = DT::UInt8;
    std::uint32_t n = 1, cin = 1, m = 1, h = 1, w = 1, kh = 1, kw = 1;
    std::uint32_t stride[2] = {1, 1}, dil[2] = {1, 1}, pad0[2] = {0, 0}, pad1[2] = {0, 0};
    bool per_channel = false, bias = true, zps = true;
    Order in_order = Order::Nchw, out_order = Order::Nchw;
    bool in_pad = false, out_pad = false;
    bool wrap = false;  ///< input and filter at their maxima, Bias 2^31 - 100: the accumulator wraps
    bool int8_weights = false;  ///< FilterZeroPoint 128 (UINT8) or 0 (INT8): every F - FZP fits int8
    /// Nonzero: InputScale = OutputScale = 1 and FilterScale[oc] = this
    /// (per channel: this, -this, 0.5 in turn), so the requantize multiplier
    /// is exactly that; Bias near +-2^31 (v reaches 2^31 when it is >= 1).
    float mult = 0;

    std::uint32_t cout() const { return cin * m; }
    std::uint32_t out_size(int i) const {
        const std::uint32_t in = i ? w : h, k = i ? kw : kh;
        return static_cast<std::uint32_t>(
            qdml::convolution_output_size(in, k, stride[i], dil[i], pad0[i], pad1[i]));
    }
    std::string describe(std::uint64_t seed) const {
        std::ostringstream s;
        s << qdml::name(tin) << " x " << qdml::name(tf) << " -> " << qdml::name(tout) << " N" << n << " Cin" << cin
          << " m" << m << " " << h << "x" << w << " k" << kh << "x" << kw << " s" << stride[0] << "," << stride[1]
          << " d" << dil[0] << "," << dil[1] << " pad " << pad0[0] << "," << pad0[1] << "," << pad1[0] << ","
          << pad1[1] << " per_channel " << per_channel << " bias " << bias << " zps " << zps << " in "
          << (in_order == Order::Nchw ? "nchw" : "nhwc") << (in_pad ? "+pad" : "") << " out "
          << (out_order == Order::Nchw ? "nchw" : "nhwc") << (out_pad ? "+pad" : "") << " seed " << seed;
        return s.str();
    }
};

Case random_case(diff::Rng& r) {
    static constexpr DT q8[] = {DT::UInt8, DT::Int8};
    Case c;
    c.tin = q8[r.range(0, 1)];
    c.tf = q8[r.range(0, 1)];
    c.tout = q8[r.range(0, 1)];
    c.n = r.chance(20) ? static_cast<std::uint32_t>(r.range(2, 3)) : 1;
    c.cin = r.chance(10) ? static_cast<std::uint32_t>(r.range(6, 40)) : static_cast<std::uint32_t>(r.range(1, 5));
    c.m = r.chance(30) ? static_cast<std::uint32_t>(r.range(2, 3)) : 1;
    c.kh = static_cast<std::uint32_t>(r.range(1, 7));
    c.kw = static_cast<std::uint32_t>(r.range(1, 7));
    if (r.chance(15)) c.kh = 1;  // 1xK
    if (r.chance(15)) c.kw = 1;  // Kx1
    static const std::vector<std::uint32_t> widths = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 80, 112, 129};
    for (int i = 0; i < 2; ++i) {
        c.stride[i] = r.chance(60) ? 1 : static_cast<std::uint32_t>(r.range(2, 3));
        c.dil[i] = r.chance(60) ? 1 : static_cast<std::uint32_t>(r.range(2, 3));
        const std::uint32_t k = i ? c.kw : c.kh, extent = 1 + (k - 1) * c.dil[i];
        const auto pad = [&] {
            return r.chance(40) ? 0u : r.chance(80) ? static_cast<std::uint32_t>(r.range(0, (k - 1) / 2 + 1))
                                                    : static_cast<std::uint32_t>(r.range(extent, extent + 3));
        };
        c.pad0[i] = pad();
        c.pad1[i] = pad();
        std::uint32_t in = i ? r.pick(widths) : static_cast<std::uint32_t>(r.range(1, 24));
        while (std::uint64_t{in} + c.pad0[i] + c.pad1[i] < extent) ++in;  // valid: extent fits the padded input
        (i ? c.w : c.h) = in;
    }
    c.per_channel = r.chance(50);
    c.bias = !r.chance(20);
    c.zps = !r.chance(15);
    c.in_order = r.chance(30) ? Order::Nhwc : Order::Nchw;
    c.out_order = r.chance(30) ? Order::Nhwc : Order::Nchw;
    c.in_pad = r.chance(25);
    c.out_pad = r.chance(25);
    c.int8_weights = r.chance(50);
    return c;
}

/// Fills an 8-bit tensor's buffer with values of its type (extremes favoured).
void fill_q8(diff::Rng& r, const qdml::Tensor& t) {
    if (t.Desc.DataType == DT::Int8)
        diff::fill<std::int8_t>(t, [&] { return r.integer<std::int8_t>(); });
    else
        diff::fill<std::uint8_t>(t, [&] { return r.integer<std::uint8_t>(); });
}

/// How many cases had weights that fit int8 (the AVX-512 path's byte quads) and how many not (int16 pairs).
struct FormCount {
    std::size_t quads = 0, pairs = 0;
} forms;

/// Fills an 8-bit tensor's buffer with its type's maximum.
void fill_max(const qdml::Tensor& t) {
    if (t.Desc.DataType == DT::Int8)
        diff::fill<std::int8_t>(t, [] { return std::int8_t{127}; });
    else
        diff::fill<std::uint8_t>(t, [] { return std::uint8_t{255}; });
}

/// Builds the case's desc (buffers in `pool`), runs the reference and each
/// depthwise path into fresh sentinel-filled outputs, and compares.
void check(diff::Rng& r, const Case& c, std::uint64_t seed) {
    diff::GuardedPool pool;
    const std::string context = c.describe(seed);
    INFO(context);
    const std::uint32_t cout = c.cout(), oh = c.out_size(0), ow = c.out_size(1);
    const std::vector<std::uint32_t> in_sizes = {c.n, c.cin, c.h, c.w}, out_sizes = {c.n, cout, oh, ow},
                                     f_sizes = {cout, 1, c.kh, c.kw};
    const auto misalign = [&] { return static_cast<std::size_t>(r.range(0, 5)); };
    const std::vector<std::uint32_t> param = {1, c.per_channel ? cout : 1, 1, 1}, one = {1, 1, 1, 1};
    const std::vector<std::uint32_t> none;

    qdml::QuantizedLinearConvolutionDesc d;
    d.InputTensor = pool.tensor(c.tin, in_sizes, conv_strides(r, in_sizes, c.in_order, c.in_pad), misalign());
    d.FilterTensor = pool.tensor(c.tf, f_sizes, none, misalign());
    d.OutputTensor = pool.tensor(c.tout, out_sizes, conv_strides(r, out_sizes, c.out_order, c.out_pad), misalign());
    fill_q8(r, d.InputTensor);
    fill_q8(r, d.FilterTensor);

    // Scales: OutputScale from the typical accumulator (about sqrt(taps) * 100^2),
    // sometimes powers of two (ties), sometimes per-channel spread.
    const float in_scale = r.chance(30) ? 0.5f : 0.01f * static_cast<float>(r.range(1, 100));
    d.InputScaleTensor = pool.tensor(DT::Float32, one, none, 0);
    *static_cast<float*>(d.InputScaleTensor.Data) = in_scale;
    d.FilterScaleTensor = pool.tensor(DT::Float32, param, none, 0);
    const std::uint32_t scales = c.per_channel ? cout : 1;
    for (std::uint32_t i = 0; i < scales; ++i)
        static_cast<float*>(d.FilterScaleTensor.Data)[i] =
            r.chance(30) ? 0.25f : r.chance(3) ? r.real(0.01f) : 0.001f * static_cast<float>(r.range(1, 100));
    const float typical = std::sqrt(static_cast<float>(c.kh * c.kw)) * 10000.0f / 60.0f;
    d.OutputScaleTensor = pool.tensor(DT::Float32, one, none, 0);
    *static_cast<float*>(d.OutputScaleTensor.Data) =
        r.chance(30) ? 64.0f : in_scale * 0.01f * typical * static_cast<float>(r.range(20, 200)) / 100.0f;
    if (c.zps) {
        d.InputZeroPointTensor = pool.tensor(c.tin, one, none, 0);
        d.FilterZeroPointTensor = pool.tensor(c.tf, param, none, 0);
        d.OutputZeroPointTensor = pool.tensor(c.tout, one, none, 0);
        fill_q8(r, *d.InputZeroPointTensor);
        fill_q8(r, *d.FilterZeroPointTensor);
        if (c.int8_weights)
            diff::fill<std::uint8_t>(*d.FilterZeroPointTensor, [&] { return c.tf == DT::UInt8 ? 128 : 0; });
        fill_q8(r, *d.OutputZeroPointTensor);
    }
    if (c.bias) {
        d.BiasTensor = pool.tensor(DT::Int32, {1, cout, 1, 1}, none, 0);
        diff::fill<std::int32_t>(*d.BiasTensor, [&] {
            return r.chance(30) ? r.integer<std::int32_t>() : static_cast<std::int32_t>(r.range(-20000, 20000));
        });
    }
    if (c.mult != 0) {
        *static_cast<float*>(d.InputScaleTensor.Data) = 1.0f;
        *static_cast<float*>(d.OutputScaleTensor.Data) = 1.0f;
        for (std::uint32_t i = 0; i < scales; ++i)
            static_cast<float*>(d.FilterScaleTensor.Data)[i] = i % 3 == 0 ? c.mult : i % 3 == 1 ? -c.mult : 0.5f;
        if (c.bias)
            diff::fill<std::int32_t>(*d.BiasTensor, [&] {
                return r.chance(50) ? std::int32_t{0x7fffffff} - static_cast<std::int32_t>(r.range(0, 300))
                                    : std::int32_t{-0x7fffffff} + static_cast<std::int32_t>(r.range(0, 300));
            });
    }
    if (c.wrap) {
        fill_max(d.InputTensor);
        fill_max(d.FilterTensor);
        diff::fill<std::int32_t>(*d.BiasTensor, [] { return std::int32_t{0x7fffffff - 100}; });
    }
    d.Strides = {c.stride[0], c.stride[1]};
    d.Dilations = {c.dil[0], c.dil[1]};
    d.StartPadding = {c.pad0[0], c.pad0[1]};
    d.EndPadding = {c.pad1[0], c.pad1[1]};
    d.GroupCount = c.cin;
    qdml::validate(d);

    // Every other case in the directml profile (docs/semantics.md section 10).
    const qdml::Fidelity fidelity = (seed ^ (seed >> 3)) % 2 ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    const qdml::Tensor out = d.OutputTensor;
    qdml::visit_typed(d, [&](const auto& op) {
        REQUIRE(qdml::simd::conv::is_depthwise(op));
        ++(qdml::simd::conv::prepare_depthwise(op).quads ? forms.quads : forms.pairs);
        qdml::reference::quantized_linear_convolution(op, fidelity);
    });
    for (Isa isa : depthwise_paths()) {
        d.OutputTensor = pool.clone(out);
        std::memset(d.OutputTensor.Data, qtest::kSentinel, static_cast<std::size_t>(out.Desc.TotalTensorSizeInBytes));
        // Every other run as tasks of a test pool (support/executors.hpp; this
        // program is built with QDML_TEST_CONV_TASK_GRAIN: small shapes make
        // many row blocks).
        static std::size_t k = 0;
        const bool pooled = k++ % 2 != 0;
        const auto& ex = qtest::test_executors().at(k / 2);
        qdml::visit_typed(d, [&](const auto& op) {
            if (pooled)
                qdml::simd::conv::depthwise(op, qdml::simd::conv::prepare_depthwise(op), isa, fidelity, ex.second);
            else
                qdml::simd::conv::depthwise(op, isa, fidelity);
        });
        REQUIRE(diff::compare(pool, out, d.OutputTensor,
                              context + " path " + std::string(qdml::simd::isa_name(isa)) + " fidelity " +
                                  std::string(qdml::to_string(fidelity)) + " on " +
                                  (pooled ? ex.first : std::string("the calling thread"))));
    }
}

}  // namespace

TEST_CASE("simd depthwise: random kernels, strides, dilations, paddings, layouts and type mixes equal the reference "
          "on every path",
          "[simd][conv][depthwise]") {
    diff::for_each_case(0xd3, diff::case_count(1500), [](diff::Rng& r, std::uint64_t seed) {
        const Case c = random_case(r);
        check(r, c, seed);
    });
    INFO("filters whose F - FZP fit int8: " << forms.quads << ", others: " << forms.pairs);
    CHECK(forms.quads > 100);
    CHECK(forms.pairs > 100);
}

TEST_CASE("simd depthwise: the benchmark's shape (3x3, 32 channels, 112^2, padding 1) in NCHW and NHWC, every mix",
          "[simd][conv][depthwise]") {
    diff::for_each_case(0xd4, 16, [](diff::Rng& r, std::uint64_t seed) {
        Case c;
        static constexpr DT q8[] = {DT::UInt8, DT::Int8};
        const std::size_t mix = seed % 8;
        c.tin = q8[mix & 1];
        c.tf = q8[(mix >> 1) & 1];
        c.tout = q8[(mix >> 2) & 1];
        c.cin = 32;
        c.h = c.w = 112;
        c.kh = c.kw = 3;
        c.pad0[0] = c.pad0[1] = c.pad1[0] = c.pad1[1] = 1;
        c.per_channel = (seed >> 3) & 1;
        c.in_order = c.out_order = (seed >> 3) & 1 ? Order::Nhwc : Order::Nchw;
        check(r, c, seed);
    });
}

TEST_CASE("simd depthwise: accumulators that wrap modulo 2^32 and saturating outputs", "[simd][conv][depthwise]") {
    // Bias 2^31 - 100 plus a positive sum of 4 to 9 taps of 255 * 255 (or
    // 255 * 127) passes 2^31: the reference's int32 accumulator wraps to a large negative
    // value; every path must give the same bits (outputs at the low bound).
    diff::for_each_case(0xd5, 24, [](diff::Rng& r, std::uint64_t seed) {
        Case c;
        c.tin = DT::UInt8;
        c.tf = seed % 2 ? DT::UInt8 : DT::Int8;
        c.tout = seed % 4 < 2 ? DT::UInt8 : DT::Int8;
        c.cin = 3;
        c.m = 2;
        c.h = 5;
        c.w = 37;
        c.kh = c.kw = 3;
        c.pad0[1] = 1;
        c.pad1[1] = 2;
        c.zps = false;
        c.wrap = true;
        check(r, c, seed);
    });
}

TEST_CASE("simd depthwise: requantize multipliers at and above 1, inf and NaN (Q's upper clamp before the "
          "conversion) on every form",
          "[simd][conv][depthwise]") {
    // The vector forms leave out Q's upper clamp for |multiplier| < 1
    // (qdml::requantize_fits_int32), where fp32(acc) * multiplier stays below 2^31;
    // from 1 up, v reaches 2^31 (Bias near 2^31: fp32(acc) = 2^31 for
    // multiplier 1) and only the clamp gives the high bound (the conversion
    // gives INT_MIN). Multipliers 1, 1.5, 1000, inf, NaN and 0.999 (no clamp
    // needed), each form: NCHW plane, NCHW rows (stride 2, C = 36), NHWC
    // direct, NCHW through the NHWC pairs form (stride 2, C = 32).
    static const float mults[] = {1.0f, 1.5f, 1000.0f, std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(), 0.999f};
    diff::for_each_case(0xd9, 96, [](diff::Rng& r, std::uint64_t seed) {
        Case c;
        static constexpr DT q8[] = {DT::UInt8, DT::Int8};
        c.tin = q8[seed & 1];
        c.tf = q8[(seed >> 1) & 1];
        c.tout = q8[(seed >> 2) & 1];
        c.mult = mults[seed % 6];
        c.per_channel = true;
        c.cin = 32;
        c.kh = c.kw = 3;
        c.pad0[0] = c.pad0[1] = c.pad1[0] = c.pad1[1] = 1;
        c.h = 6;
        c.w = 70;
        c.int8_weights = true;
        const int form = static_cast<int>((seed / 6) % 4);
        if (form == 1 || form == 3) c.stride[0] = c.stride[1] = 2;
        if (form == 1) c.cin = 36;
        c.in_order = c.out_order = form == 2 ? Order::Nhwc : Order::Nchw;
        check(r, c, seed);
    });
}

namespace {

/// A random case in the NHWC pairs form's geometry (C a multiple of 8, kH
/// <= 3, unit vertical dilation), with strides 1-3 in either dimension, odd
/// and even output widths, every padding the geometry allows, both weight
/// word forms, one or two images; input and output in `order`, packed.
Case pairs_geometry_case(diff::Rng& r, Order order) {
    static constexpr DT q8[] = {DT::UInt8, DT::Int8};
    Case c;
    c.tin = q8[r.range(0, 1)];
    c.tf = q8[r.range(0, 1)];
    c.tout = q8[r.range(0, 1)];
    c.n = r.chance(20) ? 2 : 1;
    c.cin = 8 * static_cast<std::uint32_t>(r.range(1, 6));
    c.kh = static_cast<std::uint32_t>(r.range(1, 3));
    c.kw = static_cast<std::uint32_t>(r.range(1, 5));
    c.stride[0] = static_cast<std::uint32_t>(r.range(1, 3));
    c.stride[1] = r.chance(30) ? 1 : static_cast<std::uint32_t>(r.range(2, 3));
    c.dil[1] = r.chance(80) ? 1 : 2;
    c.pad0[0] = static_cast<std::uint32_t>(r.range(0, 1)), c.pad1[0] = static_cast<std::uint32_t>(r.range(0, 2));
    c.pad0[1] = static_cast<std::uint32_t>(r.range(0, 2)), c.pad1[1] = static_cast<std::uint32_t>(r.range(0, 2));
    c.h = static_cast<std::uint32_t>(r.range(3, 17));
    c.w = static_cast<std::uint32_t>(r.range(1 + (c.kw - 1) * c.dil[1], 40));
    c.per_channel = r.chance(50);
    c.int8_weights = r.chance(50);
    c.in_order = c.out_order = order;
    return c;
}

}  // namespace

TEST_CASE("simd depthwise: the NHWC direct form with strides (pairs: any stride, a vertical stride above 1 one "
          "row per pass) equals the reference",
          "[simd][conv][depthwise]") {
    // NHWC in and out, C a multiple of 8, kH <= 3, unit vertical dilation:
    // the direct geometry (nhwc_geometry), now with strides 1-3 in either
    // dimension (MobileNetV2's stride-2 layers took the rows form), odd and
    // even output widths (a 2-pixel block past the last output), every
    // padding the geometry allows, both weight word forms.
    diff::for_each_case(0xd52, 300, [](diff::Rng& r, std::uint64_t seed) {
        const Case c = pairs_geometry_case(r, Order::Nhwc);
        check(r, c, seed);
    });
}

TEST_CASE("simd depthwise: channel planes with strides or horizontal dilation through the NHWC pairs form "
          "(transposed in and out) equal the reference",
          "[simd][conv][depthwise]") {
    // NCHW in and out (packed rows; one case in five with gaps between rows
    // and planes, or every other element: the rows form), C a multiple of 8,
    // kH <= 3, unit vertical dilation, strides 1-3 (a stride above 1 or a
    // horizontal dilation of 2: the plane form's condition fails), every
    // padding the geometry allows, both weight word forms, one or two images:
    // the PlanesPairs form (select_depthwise_form), MobileNetV2's stride-2
    // layers in NCHW.
    diff::for_each_case(0xd53, 300, [](diff::Rng& r, std::uint64_t seed) {
        Case c = pairs_geometry_case(r, Order::Nchw);
        if (c.stride[0] == 1 && c.stride[1] == 1 && c.dil[1] == 1) c.stride[1] = 2;  // (else the plane form)
        c.in_pad = r.chance(10);
        c.out_pad = r.chance(10);
        check(r, c, seed);
    });
}

TEST_CASE("simd depthwise: NHWC by strides through the plane form (staged by transposition, output in bands), "
          "channel counts and widths around the vector widths",
          "[simd][conv][depthwise]") {
    // Unit strides and horizontal dilation (the plane form), NHWC input,
    // output or both (with and without gaps), channel counts around 16/32/64
    // (the transposition blocks), widths around 16/64 (the kernel's blocks
    // and its masked last block), filters whose F - FZP fit int8 (byte quads)
    // and, one case in four, not (int16 pairs: transposed planes instead).
    static const std::vector<std::uint32_t> channels = {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 64, 65};
    static const std::vector<std::uint32_t> widths = {1, 4, 15, 16, 17, 31, 33, 63, 64, 65, 66, 112, 129};
    diff::for_each_case(0xd6, diff::case_count(240), [](diff::Rng& r, std::uint64_t seed) {
        Case c;
        static constexpr DT q8[] = {DT::UInt8, DT::Int8};
        c.tin = q8[r.range(0, 1)];
        c.tf = q8[r.range(0, 1)];
        c.tout = q8[r.range(0, 1)];
        c.n = r.chance(15) ? 2 : 1;
        c.cin = r.pick(channels);
        c.m = r.chance(20) ? 2 : 1;
        c.kh = static_cast<std::uint32_t>(r.range(1, 5));
        c.kw = static_cast<std::uint32_t>(r.range(1, 5));
        c.dil[0] = r.chance(25) ? 2 : 1;
        c.pad0[0] = static_cast<std::uint32_t>(r.range(0, 2));
        c.pad1[0] = static_cast<std::uint32_t>(r.range(0, 2));
        c.pad0[1] = static_cast<std::uint32_t>(r.range(0, 2));
        c.pad1[1] = static_cast<std::uint32_t>(r.range(0, 2));
        c.w = r.pick(widths);
        c.h = static_cast<std::uint32_t>(r.range(1, 9));
        while (c.h + c.pad0[0] + c.pad1[0] < 1 + (c.kh - 1) * c.dil[0]) ++c.h;
        while (c.w + c.pad0[1] + c.pad1[1] < c.kw) ++c.w;
        c.per_channel = r.chance(50);
        c.bias = !r.chance(20);
        c.zps = !r.chance(10);
        const int layout = static_cast<int>(seed % 3);  // NHWC in, out, or both
        c.in_order = layout != 1 ? Order::Nhwc : Order::Nchw;
        c.out_order = layout != 0 ? Order::Nhwc : Order::Nchw;
        c.in_pad = r.chance(30);
        c.out_pad = r.chance(30);
        c.int8_weights = !r.chance(25);
        check(r, c, seed);
    });
}

TEST_CASE("simd depthwise: the NHWC direct forms (channels across lanes: vertical quads, vertical pairs) on NHWC in "
          "and out",
          "[simd][conv][depthwise]") {
    // Channel counts multiples of 8 (the pairs form's lanes; 8-80 and 128;
    // the quads form takes multiples of 16, AVX-512 VNNI only) and 12, 20
    // (multiples of 4, not of 8: the plane form on transposed planes), kH
    // 1-3 (one or two output rows per build), any kW and horizontal
    // dilation, padding up to beyond the kernel, widths around 16/64, odd
    // and even output heights, weights in int8 (the quads form on AVX-512
    // VNNI when C is a multiple of 16, the plane form otherwise) and, one
    // case in six, not (the pairs form on AVX-512 too), every type mix.
    static const std::vector<std::uint32_t> channels = {8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 128};
    static const std::vector<std::uint32_t> widths = {1, 2, 3, 15, 16, 17, 31, 63, 64, 65, 112};
    diff::for_each_case(0xd7, diff::case_count(200), [](diff::Rng& r, std::uint64_t seed) {
        Case c;
        static constexpr DT q8[] = {DT::UInt8, DT::Int8};
        c.tin = q8[seed & 1];
        c.tf = q8[(seed >> 1) & 1];
        c.tout = q8[(seed >> 2) & 1];
        c.n = r.chance(15) ? 2 : 1;
        c.cin = r.pick(channels);
        c.kh = static_cast<std::uint32_t>(r.range(1, 3));
        c.kw = static_cast<std::uint32_t>(r.chance(70) ? 3 : r.range(1, 7));
        c.dil[1] = r.chance(75) ? 1 : static_cast<std::uint32_t>(r.range(2, 3));
        for (int i = 0; i < 2; ++i) {
            const std::uint32_t k = i ? c.kw : c.kh, extent = 1 + (k - 1) * c.dil[i];
            const auto pad = [&] {
                return r.chance(85) ? static_cast<std::uint32_t>(r.range(0, 2))
                                    : static_cast<std::uint32_t>(r.range(extent, extent + 2));
            };
            c.pad0[i] = pad();
            c.pad1[i] = pad();
        }
        c.w = r.pick(widths);
        c.h = static_cast<std::uint32_t>(r.range(1, 8));
        while (c.h + c.pad0[0] + c.pad1[0] < c.kh) ++c.h;
        while (c.w + c.pad0[1] + c.pad1[1] < 1 + (c.kw - 1) * c.dil[1]) ++c.w;
        c.per_channel = r.chance(60);
        c.bias = !r.chance(20);
        c.zps = !r.chance(10);
        c.in_order = c.out_order = Order::Nhwc;
        c.in_pad = r.chance(15);
        c.out_pad = r.chance(15);
        c.int8_weights = !r.chance(16);
        c.wrap = c.bias && r.chance(5);
        check(r, c, seed);
    });
}

namespace {

using qdml::simd::conv::DepthwiseForm;
using DwOp = qdml::QuantizedLinearConvolution<std::uint8_t, std::int8_t, std::uint8_t>;

/// A depthwise desc's views without data (select_depthwise_form reads none):
/// N = 1, C channels (multiplier m), H x W input, kH x kW filter, strides,
/// dilations, padding `pad` on every side, input and output NCHW or NHWC
/// (packed).
DwOp dw_op(std::uint32_t c, std::uint32_t m, std::uint32_t h, std::uint32_t w, std::uint32_t kh, std::uint32_t kw,
           std::uint32_t s, std::uint32_t sx, std::uint32_t dx, std::uint32_t pad, Order in, Order out) {
    DwOp op;
    op.Strides = {s, sx};
    op.Dilations = {1, dx};
    op.StartPadding = op.EndPadding = {pad, pad};
    op.GroupCount = c;
    const auto size = [&](std::uint32_t n, std::uint32_t k, std::uint32_t st, std::uint32_t d) {
        return static_cast<std::uint32_t>(qdml::convolution_output_size(n, k, st, d, pad, pad));
    };
    const std::uint32_t oh = size(h, kh, s, 1), ow = size(w, kw, sx, dx);
    const auto strides = [](const std::array<std::uint32_t, 4>& z, Order o) -> std::array<std::uint64_t, 4> {
        const std::uint64_t C = z[1], H = z[2], W = z[3];
        return o == Order::Nchw ? std::array<std::uint64_t, 4>{C * H * W, H * W, W, 1}
                                : std::array<std::uint64_t, 4>{C * H * W, 1, W * C, C};
    };
    op.InputTensor.sizes = {1, c, h, w};
    op.InputTensor.strides = strides(op.InputTensor.sizes, in);
    op.OutputTensor.sizes = {1, c * m, oh, ow};
    op.OutputTensor.strides = strides(op.OutputTensor.sizes, out);
    op.FilterTensor.sizes = {c * m, 1, kh, kw};
    op.FilterTensor.strides = strides(op.FilterTensor.sizes, Order::Nchw);
    return op;
}

}  // namespace

TEST_CASE("simd depthwise: select_depthwise_form picks the form the rules give, for hand-picked descs",
          "[simd][conv][depthwise]") {
    using qdml::simd::conv::depthwise_transposes;
    using qdml::simd::conv::select_depthwise_form;
    const auto form = [](const DwOp& op, bool quads, Isa isa) { return select_depthwise_form(op, quads, isa); };
    const auto N = Order::Nchw, H = Order::Nhwc;
    constexpr Isa G = Isa::Generic, A2 = Isa::Avx2, A5 = Isa::Avx512Vnni;

    // 3x3, stride 1, padding 1, NCHW (the bench row's 32 x 112^2): unit
    // strides and dilation -> the plane form on every vector path; the
    // generic path has no plane kernel -> rows.
    const DwOp plane = dw_op(32, 1, 112, 112, 3, 3, 1, 1, 1, 1, N, N);
    CHECK(form(plane, false, A2) == DepthwiseForm::Plane);
    CHECK(form(plane, true, A2) == DepthwiseForm::Plane);  // AVX2 has no quads: the word form does not matter
    CHECK(form(plane, true, A5) == DepthwiseForm::Plane);
    CHECK(form(plane, false, A5) == DepthwiseForm::Plane);
    CHECK(form(plane, true, G) == DepthwiseForm::Rows);
    CHECK_FALSE(depthwise_transposes(plane, DepthwiseForm::Plane, false, A2).input);
    // Stride 2 (either direction) or horizontal dilation 2, C = 32 (a
    // multiple of 8), kH <= 3: the pairs form between transpositions (NHWC
    // pairs' geometry once transposed), either word form, on the vector
    // paths; the generic path -> rows.
    const DwOp s2 = dw_op(32, 1, 112, 112, 3, 3, 2, 2, 1, 1, N, N);
    CHECK(form(s2, false, A2) == DepthwiseForm::PlanesPairs);
    CHECK(form(s2, true, A5) == DepthwiseForm::PlanesPairs);
    CHECK(form(s2, false, A5) == DepthwiseForm::PlanesPairs);
    CHECK(form(s2, false, G) == DepthwiseForm::Rows);
    CHECK(form(dw_op(32, 1, 112, 112, 3, 3, 2, 1, 1, 1, N, N), true, A5) == DepthwiseForm::PlanesPairs);
    CHECK(form(dw_op(32, 1, 112, 112, 3, 3, 1, 2, 1, 1, N, N), false, A2) == DepthwiseForm::PlanesPairs);
    CHECK(form(dw_op(32, 1, 112, 112, 3, 3, 1, 1, 2, 2, N, N), false, A2) == DepthwiseForm::PlanesPairs);
    CHECK_FALSE(depthwise_transposes(s2, DepthwiseForm::PlanesPairs, false, A2).input);  // (its own transpositions)
    // ... but not outside that geometry -> rows: C = 12 (not a multiple of
    // 8), kH = 5, multiplier 2, one side NHWC (the input alone planes), or
    // rows not packed (every other element: a strided view).
    CHECK(form(dw_op(12, 1, 112, 112, 3, 3, 2, 2, 1, 1, N, N), false, A2) == DepthwiseForm::Rows);
    CHECK(form(dw_op(32, 1, 112, 112, 5, 3, 2, 2, 1, 1, N, N), false, A2) == DepthwiseForm::Rows);
    CHECK(form(dw_op(16, 2, 112, 112, 3, 3, 2, 2, 1, 1, N, N), false, A2) == DepthwiseForm::Rows);
    CHECK(form(dw_op(32, 1, 112, 112, 3, 3, 2, 2, 1, 1, N, H), false, A2) == DepthwiseForm::Rows);
    DwOp sparse = s2;
    sparse.InputTensor.strides = {32ull * 112 * 224, 112ull * 224, 224, 2};
    CHECK(form(sparse, false, A2) == DepthwiseForm::Rows);
    sparse = s2;
    sparse.OutputTensor.strides[2] += 16;  // (gaps between rows)
    CHECK(form(sparse, false, A2) == DepthwiseForm::Rows);

    // NHWC in and out, C = 32 (a multiple of 16 and of 8), 3x3, unit strides,
    // multiplier 1: the NHWC direct geometry -> pairs on AVX2 and on AVX-512
    // VNNI when F - FZP leaves int8, quads on AVX-512 VNNI otherwise; the
    // generic path has neither -> rows, on transposed planes both ways.
    const DwOp nhwc = dw_op(32, 1, 56, 56, 3, 3, 1, 1, 1, 1, H, H);
    CHECK(form(nhwc, false, A2) == DepthwiseForm::NhwcPairs);
    CHECK(form(nhwc, true, A2) == DepthwiseForm::NhwcPairs);
    CHECK(form(nhwc, true, A5) == DepthwiseForm::NhwcQuads);
    CHECK(form(nhwc, false, A5) == DepthwiseForm::NhwcPairs);
    CHECK(form(nhwc, false, G) == DepthwiseForm::Rows);
    const auto tg = depthwise_transposes(nhwc, DepthwiseForm::Rows, false, G);
    CHECK((tg.input && tg.output));
    // C = 24 (a multiple of 8, not of 16): pairs on AVX2; with quads on
    // AVX-512 VNNI the plane form, which stages and stores NHWC itself.
    const DwOp c24 = dw_op(24, 1, 20, 40, 3, 3, 1, 1, 1, 1, H, H);
    CHECK(form(c24, false, A2) == DepthwiseForm::NhwcPairs);
    CHECK(form(c24, true, A5) == DepthwiseForm::Plane);
    const auto t24 = depthwise_transposes(c24, DepthwiseForm::Plane, true, A5);
    CHECK_FALSE((t24.input || t24.output));
    // C = 12 (not a multiple of 8), kH = 5 (> 3), multiplier 2 (Cout != C),
    // stride 2: not the direct geometry -> the channel forms, transposed on
    // AVX2 (pairs).
    const DwOp c12 = dw_op(12, 1, 20, 40, 3, 3, 1, 1, 1, 1, H, H);
    CHECK(form(c12, false, A2) == DepthwiseForm::Plane);
    const auto t12 = depthwise_transposes(c12, DepthwiseForm::Plane, false, A2);
    CHECK((t12.input && t12.output));
    CHECK(form(dw_op(32, 1, 20, 40, 5, 3, 1, 1, 1, 1, H, H), false, A2) == DepthwiseForm::Plane);
    CHECK(form(dw_op(16, 2, 20, 40, 3, 3, 1, 1, 1, 1, H, H), false, A2) == DepthwiseForm::Plane);
    // Stride 2: the pairs direct form (any strides); the quads one takes unit
    // strides only, so with byte quads on AVX-512 VNNI a stride above 1 takes
    // the pairs form too (its AVX2 kernels, the filter's pair words), C = 24 as well.
    CHECK(form(dw_op(32, 1, 20, 40, 3, 3, 2, 2, 1, 1, H, H), false, A2) == DepthwiseForm::NhwcPairs);
    CHECK(form(dw_op(32, 1, 20, 40, 3, 3, 2, 1, 1, 1, H, H), false, A2) == DepthwiseForm::NhwcPairs);
    CHECK(form(dw_op(32, 1, 20, 40, 3, 3, 2, 2, 1, 1, H, H), true, A5) == DepthwiseForm::NhwcPairs);
    CHECK(form(dw_op(32, 1, 20, 40, 3, 3, 1, 2, 1, 1, H, H), true, A5) == DepthwiseForm::NhwcPairs);
    CHECK(form(dw_op(24, 1, 20, 40, 3, 3, 2, 2, 1, 1, H, H), true, A5) == DepthwiseForm::NhwcPairs);
    CHECK(form(dw_op(12, 1, 20, 40, 3, 3, 2, 2, 1, 1, H, H), true, A5) == DepthwiseForm::Rows);
    // NHWC input, NCHW output: never the direct forms (they need both NHWC);
    // the input alone is transposed.
    const DwOp nhwc_in = dw_op(32, 1, 20, 40, 3, 3, 1, 1, 1, 1, H, N);
    CHECK(form(nhwc_in, false, A2) == DepthwiseForm::Plane);
    const auto tin = depthwise_transposes(nhwc_in, DepthwiseForm::Plane, false, A2);
    CHECK((tin.input && !tin.output));

    // One input row of 2^24 - 29 (1x3, no padding): 2^24 - 31 outputs, a word
    // row (pairs: two words per filter row) of round_up(round_up(2^24 - 31,
    // 16) + 2, 16) + 1 = 2^24 + 1 elements, over kMaxRowElements (2^24) ->
    // the reference's loop, though the plane (about 2^24 elements) is within
    // its own bound of 2^28: the row bound is checked first. Byte quads (one
    // word per filter row) need round_up(2^24 - 31, 16) + 3 = 2^24 - 13 ->
    // the plane form. Two elements narrower: 2^24 - 32 outputs, 2^24 - 15
    // elements in pairs -> the plane form.
    const DwOp wide = dw_op(1, 1, 1, (1u << 24) - 29, 1, 3, 1, 1, 1, 0, N, N);
    CHECK(form(wide, false, A2) == DepthwiseForm::Reference);
    CHECK(form(wide, false, A5) == DepthwiseForm::Reference);
    CHECK(form(wide, false, G) == DepthwiseForm::Reference);
    CHECK(form(wide, true, A5) == DepthwiseForm::Plane);
    CHECK(form(dw_op(1, 1, 1, (1u << 24) - 30, 1, 3, 1, 1, 1, 0, N, N), false, A2) == DepthwiseForm::Plane);
    // A horizontal dilation of 2^24 (kW 2, stride 2): the row reads x[j] and
    // x[j + 2^24] -> the reference's loop.
    CHECK(form(dw_op(4, 1, 3, (1u << 24) + 8, 3, 2, 2, 2, 1u << 24, 1, N, N), false, A2) == DepthwiseForm::Reference);

    // describe() names the form: "depthwise-<form> <isa>".
    CHECK(qdml::simd::conv::depthwise_form_name(DepthwiseForm::Plane) == "depthwise-plane");
    CHECK(qdml::simd::conv::depthwise_path(s2, Isa::Avx2) == "depthwise-planes-pairs avx2");
    CHECK(qdml::simd::conv::depthwise_path(plane, Isa::Generic) == "depthwise-rows generic");
}
