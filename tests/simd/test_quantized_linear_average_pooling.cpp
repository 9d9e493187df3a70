// Differential test of QUANTIZED_LINEAR_AVERAGE_POOLING: random cases in
// both profiles through the reference and the SIMD path (stateless and
// compiled: tests/support/differential.hpp), identical bits required over
// the whole output buffer. The cases reach each lane form of
// simd/quantized_linear_average_pooling.hpp: NHWC memory (channels as lanes,
// channel counts around every vector width, padded channels; a second test
// with tall inputs for the ring of product rows), packed NCHW
// (columns as lanes where the pooling stride along the last dimension is 1:
// the interior columns and the edges), other permutations and paddings (one
// element at a time); two and three spatial dimensions, windows, strides,
// dilations and paddings (windows reaching no input element without
// IncludePadding), IncludePadding both ways; per-tensor and per-channel
// scales and zero points, zero points at the extremes or absent, scales
// with ties (OutputScale a small multiple of InputScale), subnormal, huge,
// zero, negative, infinite and NaN scales; every element-wise ISA path and
// the test pools in turn.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

/// A scale: ordinary, or one of the section's edge cases.
float random_scale(Rng& r, std::string& why) {
    switch (r.range(0, 15)) {
        case 0: why += " scale NaN"; return std::numeric_limits<float>::quiet_NaN();
        case 1: why += " scale inf"; return r.chance(50) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
        case 2: why += " scale 0"; return r.chance(50) ? 0.0f : -0.0f;
        case 3: why += " scale subnormal"; return std::numeric_limits<float>::denorm_min() * static_cast<float>(r.range(1, 5000));
        case 4: why += " scale huge"; return std::ldexp(r.between(1.0f, 2.0f), static_cast<int>(r.range(100, 127)));
        case 5: why += " scale negative"; return -r.between(0.001f, 1.0f);
        default: return std::ldexp(r.between(1.0f, 2.0f), static_cast<int>(r.range(-12, 2)));
    }
}

/// Strides of a {N, C, spatial...} tensor in layout `form`: 0 packed NCHW,
/// 1 NHWC (channels innermost), 2 NHWC with padded channels, 3 a random
/// order and padding.
std::vector<std::uint32_t> pool_strides(Rng& r, const std::vector<std::uint32_t>& s, int form, std::string& why) {
    if (form == 0) {
        why = "nchw";
        return {};
    }
    if (form == 3) {
        const Layout l = static_cast<Layout>(r.range(1, 3));
        why = name(l);
        return make_strides(r, s, l);
    }
    const std::uint32_t pad = form == 2 ? static_cast<std::uint32_t>(r.range(1, 5)) : 0u;
    why = pad ? "nhwc, channels padded by " + std::to_string(pad) : "nhwc";
    std::vector<std::uint32_t> st(s.size());
    std::uint64_t acc = s[1] + pad;
    st[1] = 1;
    for (std::size_t d = s.size(); d-- > 2;) {
        st[d] = static_cast<std::uint32_t>(acc);
        acc *= s[d];
    }
    st[0] = static_cast<std::uint32_t>(acc);
    return st;
}

/// `tall`: NHWC input, tall and narrow (many rows through the channels
/// form's ring of product rows: wraps, strides past it, dilations).
template <class T>
void one_case(Rng& r, std::uint64_t seed, bool tall = false) {
    GuardedPool pool;
    const std::uint32_t spatial = r.chance(25) ? 3 : 2;
    static const std::vector<std::uint32_t> kChannels = {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100};
    const std::uint32_t N = static_cast<std::uint32_t>(r.range(1, 2));
    const std::uint32_t C = r.pick(kChannels);
    std::vector<std::uint32_t> in{N, C}, out{N, C};
    qdml::QuantizedLinearAveragePoolingDesc d;
    d.DimensionCount = spatial;
    // About 2% of the cases are large (40K to 1M output elements): many tasks, on the pools too (docs/threads.md).
    const bool big = r.chance(2);
    const std::uint32_t max_size = big ? (spatial == 3 ? 24 : 130) : spatial == 3 ? 7 : (C > 17 ? 14 : 40);
    std::ostringstream geo;
    for (std::uint32_t k = 0; k < spatial; ++k) {
        const bool rows = tall && k + 2 == spatial;  // the dimension of the ring
        const std::uint32_t I = static_cast<std::uint32_t>(
            rows ? r.range(8, 90) : tall ? r.range(1, 6) : r.range(big ? max_size / 2 : 1, max_size));
        std::uint32_t w = static_cast<std::uint32_t>(r.chance(10) ? r.range(1, 7) : r.range(1, 4));
        const std::uint32_t dil = static_cast<std::uint32_t>(r.chance(70) ? 1 : r.range(2, 3));
        const std::uint32_t st = static_cast<std::uint32_t>(r.chance(60) ? 1 : r.range(2, rows ? 9 : 3));
        const std::uint32_t p0 = static_cast<std::uint32_t>(r.chance(40) ? 0 : r.range(0, 3 * dil));
        const std::uint32_t p1 = static_cast<std::uint32_t>(r.chance(40) ? 0 : r.range(0, 3 * dil));
        while (w > 1 && 1 + (w - 1) * dil > I + p0 + p1) --w;  // the dilated window within the padded input
        if (1 + (w - 1) * dil > I + p0 + p1) w = 1;
        d.WindowSize[k] = w;
        d.Dilations[k] = dil;
        d.Strides[k] = st;
        d.StartPadding[k] = p0;
        d.EndPadding[k] = p1;
        in.push_back(I);
        out.push_back(1 + (I + p0 + p1 - (1 + (w - 1) * dil)) / st);
        geo << " [I " << I << " w " << w << " s " << st << " d " << dil << " p " << p0 << "," << p1 << "]";
    }
    d.IncludePadding = r.chance(50);
    std::string l_in, l_out;
    const int in_form = tall ? r.pick(std::vector<int>{1, 2}) : r.pick(std::vector<int>{0, 1, 1, 2, 3});
    const int out_form = r.chance(70) ? in_form : static_cast<int>(r.range(0, 3));  // mostly the input's layout
    const auto in_st = pool_strides(r, in, in_form, l_in);
    const auto out_strides = pool_strides(r, out, out_form, l_out);
    const DT type = qdml::data_type_of<T>;
    d.InputTensor = pool.tensor(type, in, in_st, r.range(0, 7));
    d.OutputTensor = pool.tensor(type, out, out_strides, r.range(0, 7));
    // Parameters: per tensor ({1} or all ones), or per channel ({1,C,1,1}, or {1,C}).
    std::string params;
    const auto param_sizes = [&](bool per_channel) {
        if (!per_channel) return r.chance(50) ? std::vector<std::uint32_t>{1} : std::vector<std::uint32_t>(spatial + 2, 1);
        std::vector<std::uint32_t> s = r.chance(20) ? std::vector<std::uint32_t>{1, C} : std::vector<std::uint32_t>(spatial + 2, 1);
        s[1] = C;
        return s;
    };
    const float x_scale0 = random_scale(r, params);
    const bool ties = r.chance(30);  // OutputScale = InputScale * k / 2: averages land on halves
    // (The directml profile refuses a zero point shaped unlike its scale: there, each has its scale's Sizes.)
    const auto fidelity = r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    const auto scale_tensor = [&](const char* member, bool output, std::vector<std::uint32_t>& sizes) {
        const bool per_channel = r.chance(50);
        sizes = param_sizes(per_channel);
        const qdml::Tensor t = pool.tensor(DT::Float32, sizes, {}, r.range(0, 3));
        params += std::string(" ") + member + (per_channel ? " per channel" : " per tensor");
        fill<float>(t, [&] {
            if (output && ties) return x_scale0 * static_cast<float>(r.range(1, 6)) / 2.0f;
            return r.chance(80) ? (output ? x_scale0 * r.between(0.25f, 4.0f) : x_scale0) : random_scale(r, params);
        });
        return t;
    };
    const auto zp_tensor = [&](const char* member, const std::vector<std::uint32_t>& scale) -> std::optional<qdml::Tensor> {
        if (r.chance(20)) {
            params += std::string(" no ") + member;
            return std::nullopt;
        }
        const bool own = fidelity == qdml::Fidelity::Exact && r.chance(50);
        const bool per_channel = r.chance(50);
        const qdml::Tensor t = pool.tensor(type, own ? param_sizes(per_channel) : scale, {}, r.range(0, 3));
        params += std::string(" ") + member + (own ? (per_channel ? " per channel" : " per tensor") : " as its scale");
        fill<T>(t, [&] { return r.integer<T>(); });
        return t;
    };
    std::vector<std::uint32_t> in_scale, out_scale;
    d.InputScaleTensor = scale_tensor("InputScale", false, in_scale);
    d.InputZeroPointTensor = zp_tensor("InputZeroPoint", in_scale);
    d.OutputScaleTensor = scale_tensor("OutputScale", true, out_scale);
    d.OutputZeroPointTensor = zp_tensor("OutputZeroPoint", out_scale);
    const bool flat = r.chance(5);  // one input value everywhere (the extremes)
    const T flat_value = r.integer<T>();
    fill<T>(d.InputTensor, [&] { return flat ? flat_value : r.integer<T>(); });

    qdml::QuantizedLinearAveragePoolingDesc s = d, c = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    c.OutputTensor = pool.clone(d.OutputTensor);
    std::string path_s, path_c;
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    qdml::RunOptions describe_options{qdml::Implementation::Simd};
    describe_options.fidelity = fidelity;
    std::ostringstream ctx;
    ctx << "seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; IncludePadding " << d.IncludePadding
        << (big ? "; large" : "") << ";" << geo.str() << "; input " << l_in << ", output " << l_out << ";" << params << "\n"
        << qdml::describe(d, describe_options) << "\n"
        << describe("InputTensor", d.InputTensor) << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
    compare(pool, d.OutputTensor, c.OutputTensor, "compiled form, path " + path_c + "; " + ctx.str());
}

}  // namespace

TEST_CASE("SIMD average pooling equals the reference: INT8 and UINT8, random windows, layouts and parameters",
          "[simd][average_pooling]") {
    for_each_case(17, 6000, [](Rng& r, std::uint64_t seed) {
        if (r.chance(50))
            one_case<std::int8_t>(r, seed);
        else
            one_case<std::uint8_t>(r, seed);
    });
}

TEST_CASE("SIMD average pooling equals the reference: NHWC, many rows (the ring of product rows)",
          "[simd][average_pooling]") {
    for_each_case(29, 1500, [](Rng& r, std::uint64_t seed) {
        if (r.chance(50))
            one_case<std::int8_t>(r, seed, true);
        else
            one_case<std::uint8_t>(r, seed, true);
    });
}
