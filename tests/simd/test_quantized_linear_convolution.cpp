// qdml::simd::quantized_linear_convolution (the GEMM engine's implicit GEMM)
// against the reference, bit for bit, once per micro-kernel family this CPU
// runs (the others are named in a warning): kernels 1x1 to 7x7, 1xK and Kx1,
// strides and dilations 1-3, asymmetric and oversized padding, output size 1,
// groups (1, 2, several, depthwise, depthwise x2), Cin/Cout around the tile
// sizes, per-tensor and per-channel filter parameters, bias present or
// absent, all eight INT8/UINT8 mixes, NCHW / NHWC-by-strides / padded
// layouts, N > 1, wrapping accumulators; outputs sentinel-filled with guards.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qdml/qdml.hpp"
#include "qdml/simd/convolution_integer.hpp"
#include "qdml/simd/convolution_integer_prepared.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"
#include "qdml/simd/quantized_linear_convolution_prepared.hpp"
#include "support/executors.hpp"
#include "support/gemm_paths.hpp"

namespace {

using qdml::TensorDesc;
using DT = qdml::TensorDataType;
using qdml::simd::Isa;

using qtest::Rng;
using qtest::gemm_paths::run_executor;
using qtest::gemm_paths::runnable_isas;

/// Memory layout of a {N, C, H, W} tensor: packed NCHW, NHWC through strides,
/// or NCHW with padded rows and planes.
enum class Layout { Nchw, Nhwc, Padded };

const char* layout_name(Layout l) { return l == Layout::Nchw ? "nchw" : l == Layout::Nhwc ? "nhwc" : "padded"; }

TensorDesc tensor_desc(DT t, const std::uint32_t (&s)[4], Layout l) {
    std::uint64_t st[4];
    if (l == Layout::Nhwc) {
        st[1] = 1;
        st[3] = s[1];
        st[2] = st[3] * s[3];
        st[0] = st[2] * s[2];
    } else {
        const std::uint64_t pad = l == Layout::Padded ? 3 : 0;
        st[3] = 1;
        st[2] = s[3] + pad;
        st[1] = st[2] * s[2] + pad;
        st[0] = st[1] * s[1] + pad;
    }
    TensorDesc d;
    d.DataType = t;
    d.DimensionCount = 4;
    d.Strides.emplace();
    for (int i = 0; i < 4; ++i) {
        d.Sizes[i] = s[i];
        (*d.Strides)[i] = static_cast<std::uint32_t>(st[i]);
    }
    d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
    return d;
}

/// {1, C, 1, 1} (per channel) or {1, 1, 1, 1}.
TensorDesc param_desc(DT t, std::uint32_t channels) {
    TensorDesc d;
    d.DataType = t;
    d.DimensionCount = 4;
    d.Sizes = {1, channels, 1, 1};
    d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
    return d;
}

/// `d` without its dimension 2 (a height of 1): the one-spatial-dimension
/// form {N, C, W} of a {N, C, 1, W} tensor, the same bytes.
TensorDesc drop_height(TensorDesc d) {
    for (std::uint32_t i = 2; i + 1 < d.DimensionCount; ++i) {
        d.Sizes[i] = d.Sizes[i + 1];
        if (d.Strides) (*d.Strides)[i] = (*d.Strides)[i + 1];
    }
    --d.DimensionCount;
    d.Sizes[d.DimensionCount] = 0;
    if (d.Strides) (*d.Strides)[d.DimensionCount] = 0;
    return d;
}

/// One convolution problem with its buffers.
struct Problem {
    DT tin = DT::UInt8, tf = DT::Int8, tout = DT::UInt8;
    std::uint32_t batch = 1, cin = 1, cout = 1, H = 1, W = 1, kH = 1, kW = 1, groups = 1;
    std::uint32_t stride[2] = {1, 1}, dilation[2] = {1, 1}, start[2] = {0, 0}, end[2] = {0, 0};
    Layout lin = Layout::Nchw, lf = Layout::Nchw, lout = Layout::Nchw;
    bool per_channel = false, bias = true, zps = true;
    bool one_d = false;  ///< DimensionCount 1: 3-D tensors (H and kH 1, no height stride, dilation or padding)
    qdml::Fidelity fidelity = qdml::Fidelity::Exact;  ///< the profile of the prepared test's runs
    std::vector<std::uint8_t> x, f, x_zp, f_zp, out_zp;
    qtest::GuardedBuffer out;  ///< the output's buffer, between guards
    std::vector<std::int32_t> b;
    std::vector<float> x_scale, f_scale, out_scale;
    qdml::QuantizedLinearConvolutionDesc d;

    std::uint32_t out_size(int i) const {
        return static_cast<std::uint32_t>(qdml::convolution_output_size(i ? W : H, i ? kW : kH, stride[i], dilation[i],
                                                                         start[i], end[i]));
    }
    std::string describe() const {
        std::ostringstream os;
        os << name(tin) << " * " << name(tf) << " -> " << name(tout) << " N" << batch << " Cin" << cin << " Cout" << cout
           << " G" << groups << " " << H << "x" << W << " k" << kH << "x" << kW << " s" << stride[0] << "," << stride[1]
           << " d" << dilation[0] << "," << dilation[1] << " pad " << start[0] << "," << start[1] << "," << end[0] << ","
           << end[1] << " in " << layout_name(lin) << " filter " << layout_name(lf) << " out " << layout_name(lout)
           << " per_channel " << per_channel << " bias " << bias << " zps " << zps << (one_d ? " 1-D" : "")
           << " fidelity "
           << qdml::to_string(fidelity);
        return os.str();
    }

    /// Sizes every buffer and fills it with `byte()`; the output's buffer
    /// (between guards) holds the sentinel.
    template <class Byte>
    void fill(Byte&& byte) {
        const std::uint32_t si[4] = {batch, cin, H, W}, sf[4] = {cout, cin / groups, kH, kW},
                            so[4] = {batch, cout, out_size(0), out_size(1)};
        x.resize(*qdml::min_buffer_elements(tensor_desc(tin, si, lin)));
        f.resize(*qdml::min_buffer_elements(tensor_desc(tf, sf, lf)));
        out.assign(*qdml::min_buffer_elements(tensor_desc(tout, so, lout)));
        for (auto& v : x) v = byte();
        for (auto& v : f) v = byte();
        x_zp = {byte()};
        out_zp = {byte()};
        f_zp.resize(cout);
        for (auto& v : f_zp) v = byte();
        b.resize(cout);
        for (auto& v : b) {
            const std::uint32_t magnitude = std::uint32_t{byte()} * 0x01010101u;  // any int32, the extremes included
            v = static_cast<std::int32_t>(magnitude) >> (byte() % 24);
        }
    }

    void build() {
        const std::uint32_t si[4] = {batch, cin, H, W}, sf[4] = {cout, cin / groups, kH, kW},
                            so[4] = {batch, cout, out_size(0), out_size(1)};
        d = {};
        d.InputTensor = {tensor_desc(tin, si, lin), x.data()};
        d.FilterTensor = {tensor_desc(tf, sf, lf), f.data()};
        d.OutputTensor = {tensor_desc(tout, so, lout), out.data()};
        d.InputScaleTensor = {param_desc(DT::Float32, 1), x_scale.data()};
        d.FilterScaleTensor = {param_desc(DT::Float32, per_channel ? cout : 1), f_scale.data()};
        d.OutputScaleTensor = {param_desc(DT::Float32, 1), out_scale.data()};
        if (zps) {
            d.InputZeroPointTensor = qdml::Tensor{param_desc(tin, 1), x_zp.data()};
            d.FilterZeroPointTensor = qdml::Tensor{param_desc(tf, per_channel ? cout : 1), f_zp.data()};
            d.OutputZeroPointTensor = qdml::Tensor{param_desc(tout, 1), out_zp.data()};
        }
        if (bias) d.BiasTensor = qdml::Tensor{param_desc(DT::Int32, cout), b.data()};
        for (int i = 0; i < 2; ++i) {
            d.Strides[i] = stride[i];
            d.Dilations[i] = dilation[i];
            d.StartPadding[i] = start[i];
            d.EndPadding[i] = end[i];
        }
        d.GroupCount = groups;
        if (one_d) {
            for (qdml::Tensor* t : {&d.InputTensor, &d.FilterTensor, &d.OutputTensor, &d.FilterScaleTensor})
                t->Desc = drop_height(t->Desc);
            for (auto* t : {&d.FilterZeroPointTensor, &d.BiasTensor})
                if (*t) (*t)->Desc = drop_height((*t)->Desc);
            d.DimensionCount = 1;
            d.Strides = {stride[1], 0};
            d.Dilations = {dilation[1], 0};
            d.StartPadding = {start[1], 0};
            d.EndPadding = {end[1], 0};
        }
    }
};

/// Runs the reference, then every path, in both profiles (exact and
/// directml: docs/semantics.md section 10), every other run on a thread pool
/// (gemm_paths::run_executor; this program is built with
/// QDML_TEST_CONV_TASK_GRAIN, tuning.hpp: its small shapes are cut into
/// many tasks, row blocks and channel blocks); requires identical output buffers.
void check_all_paths(Problem& p) {
    p.build();
    INFO(p.describe());
    qdml::validate(p.d);
    qtest::gemm_paths::require_same_in_both_profiles(
        p.out,
        [&](qdml::Fidelity f) {
            qdml::visit_typed(p.d, [&](const auto& op) { qdml::reference::quantized_linear_convolution(op, f); });
        },
        [&](const qdml::simd::GemmOptions& o) {
            qdml::visit_typed(p.d, [&](const auto& op) { qdml::simd::quantized_linear_convolution(op, o); });
        });
}

/// CONVOLUTION_INTEGER on the built problem's input, filter and zero points,
/// its INT32 output (the output's sizes and layout) in `out`, sized here
/// (between guards, sentinel-filled).
qdml::ConvolutionIntegerDesc integer_desc(const Problem& p, qtest::GuardedBuffer& out) {
    qdml::ConvolutionIntegerDesc d;
    d.InputTensor = p.d.InputTensor;
    d.InputZeroPointTensor = p.d.InputZeroPointTensor;
    d.FilterTensor = p.d.FilterTensor;
    d.FilterZeroPointTensor = p.d.FilterZeroPointTensor;
    // (CONVOLUTION_INTEGER's zero points share a DimensionCount: a one-dimension problem's is 3-D.)
    if (d.InputZeroPointTensor && d.FilterZeroPointTensor &&
        d.InputZeroPointTensor->Desc.DimensionCount != d.FilterZeroPointTensor->Desc.DimensionCount)
        d.InputZeroPointTensor->Desc = drop_height(d.InputZeroPointTensor->Desc);
    TensorDesc od = p.d.OutputTensor.Desc;
    od.DataType = DT::Int32;
    od.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(od).value_or(0);
    out.assign(*qdml::min_buffer_elements(od) * sizeof(std::int32_t));
    d.OutputTensor = {od, out.data()};
    d.DimensionCount = p.d.DimensionCount;
    d.Strides = p.d.Strides;
    d.Dilations = p.d.Dilations;
    d.StartPadding = p.d.StartPadding;
    d.EndPadding = p.d.EndPadding;
    d.GroupCount = p.d.GroupCount;
    return d;
}

/// CONVOLUTION_INTEGER on the problem (integer_desc): the reference, then
/// every path in both profiles (the same sums), every other run on a thread
/// pool (simd/convolution_integer.hpp: the convolution forms with the
/// engine's int32 store); requires identical output buffers.
void check_integer_paths(Problem& p) {
    p.build();
    INFO("CONVOLUTION_INTEGER: " << p.describe());
    qtest::GuardedBuffer out;
    const qdml::ConvolutionIntegerDesc d = integer_desc(p, out);
    qdml::validate(d);
    qtest::gemm_paths::require_same_in_both_profiles(
        out,
        [&](qdml::Fidelity f) {
            qdml::visit_typed(d, [&](const auto& op) { qdml::reference::convolution_integer(op, f); });
        },
        [&](const qdml::simd::GemmOptions& o) {
            qdml::visit_typed(d, [&](const auto& op) { qdml::simd::convolution_integer(op, o); });
        });
}

constexpr DT kQ8[] = {DT::UInt8, DT::Int8};

/// Channel counts around the tile sizes (4, 6, 8, 16, 32, 64), at most max.
std::uint32_t channels(Rng& rng, std::uint32_t max) {
    static constexpr std::uint32_t around[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    const std::uint32_t v = rng.coin(2) ? around[rng.uniform(0, 15)] : rng.uniform(1, max);
    return v > max ? max : v;
}

/// Scales that keep outputs mostly unsaturated: OutputScale from the typical
/// accumulator magnitude (about sqrt(K) * 100 * 100).
void random_scales(Problem& p, Rng& rng) {
    auto scale = [&] {
        return std::ldexp(1.0f + static_cast<float>(rng.uniform(0, 1023)) / 1024.0f, -static_cast<int>(rng.uniform(0, 8)));
    };
    p.x_scale = {scale()};
    p.f_scale.resize(p.cout);
    for (auto& v : p.f_scale) v = scale();
    const float K = static_cast<float>(p.cin / p.groups * p.kH * p.kW);
    p.out_scale = {p.x_scale[0] * p.f_scale[0] * std::sqrt(K) * 10000.0f / 60.0f *
                   (0.5f + static_cast<float>(rng.uniform(0, 100)) / 100.0f)};
}

/// A random problem of type mix `mix` (bits: input, filter, output signed).
Problem random_problem(Rng& rng, int mix) {
    Problem p;
    p.tin = kQ8[mix & 1];
    p.tf = kQ8[(mix >> 1) & 1];
    p.tout = kQ8[(mix >> 2) & 1];
    // Groups: 1, 2, several, depthwise (x1, x2).
    const std::uint32_t kind = rng.uniform(0, 5);
    std::uint32_t g_in = channels(rng, 40), mult = 1;
    p.groups = 1;
    if (kind == 1) p.groups = 2;
    if (kind == 2) p.groups = rng.uniform(3, 6);
    if (kind >= 3) {
        p.groups = rng.uniform(1, 24);
        g_in = 1;
        mult = kind == 4 ? 2 : 1;
    }
    if (p.groups > 1 && kind < 3) g_in = std::min<std::uint32_t>(g_in, 12);
    p.cin = g_in * p.groups;
    p.cout = kind >= 3 ? p.groups * mult : p.groups * (p.groups > 1 ? rng.uniform(1, 12) : channels(rng, 70));
    p.batch = rng.coin(4) ? rng.uniform(2, 3) : 1;
    // Kernels 1x1..7x7, 1xK, Kx1.
    p.kH = rng.uniform(1, 7);
    p.kW = rng.coin(3) ? 1 : rng.coin(2) ? p.kH : rng.uniform(1, 7);
    if (rng.coin(6)) std::swap(p.kH, p.kW);
    for (int i = 0; i < 2; ++i) {
        p.stride[i] = rng.coin(2) ? 1 : rng.uniform(2, 3);
        p.dilation[i] = rng.coin(2) ? 1 : rng.uniform(2, 3);
        p.start[i] = rng.coin(3) ? 0 : rng.uniform(0, 4);
        p.end[i] = rng.coin(3) ? 0 : rng.uniform(0, 4);
    }
    p.H = rng.uniform(1, 24);
    p.W = rng.uniform(1, 40);
    if (rng.coin(8)) p.W = 1;
    if (rng.coin(8)) p.H = 1;
    // A kernel extent past the padded input has no output: pad the end so that it fits
    // (padding larger than the kernel included).
    for (int i = 0; i < 2; ++i) {
        const std::uint32_t extent = 1 + ((i ? p.kW : p.kH) - 1) * p.dilation[i];
        const std::uint32_t in = (i ? p.W : p.H) + p.start[i] + p.end[i];
        if (extent > in) p.end[i] += extent - in;
    }
    // Bound the reference's work (about 2e5 multiply-adds per image).
    while (std::uint64_t{p.out_size(0)} * p.out_size(1) * p.cout * (p.cin / p.groups) * p.kH * p.kW > 400000 &&
           p.H > 1) {
        p.H = (p.H + 1) / 2;
        for (int i = 0; i < 2; ++i) {
            const std::uint32_t extent = 1 + ((i ? p.kW : p.kH) - 1) * p.dilation[i];
            const std::uint32_t in = (i ? p.W : p.H) + p.start[i] + p.end[i];
            if (extent > in) p.end[i] += extent - in;
        }
    }
    constexpr Layout layouts[] = {Layout::Nchw, Layout::Nhwc, Layout::Padded};
    p.lin = layouts[rng.uniform(0, 2)];
    p.lf = layouts[rng.uniform(0, 2)];
    p.lout = rng.coin(2) ? p.lin : layouts[rng.uniform(0, 2)];
    p.per_channel = rng.coin(2);
    p.bias = !rng.coin(3);
    p.zps = !rng.coin(5);
    if (rng.coin(6)) {  // one spatial dimension
        p.one_d = true;
        p.H = p.kH = 1;
        p.stride[0] = p.dilation[0] = 1;
        p.start[0] = p.end[0] = 0;
    }
    p.fill([&] { return rng.byte(); });
    random_scales(p, rng);
    return p;
}

}  // namespace

TEST_CASE("simd conv: random kernels, strides, dilations, paddings, groups, layouts and type mixes equal the reference "
          "on every path",
          "[simd][conv]") {
    Rng rng(qtest::case_seed(9));
    for (int iter = 0; iter < 200; ++iter) {
        Problem p = random_problem(rng, iter);
        check_all_paths(p);
    }
}

TEST_CASE("simd conv integer: random kernels, strides, dilations, paddings, groups, layouts, one spatial dimension "
          "and type mixes equal the reference on every path",
          "[simd][conv][conv_integer]") {
    Rng rng(qtest::case_seed(19));
    for (int iter = 0; iter < 120; ++iter) {
        Problem p = random_problem(rng, iter);
        check_integer_paths(p);
    }
}

TEST_CASE("simd conv integer: sums that wrap modulo 2^32 on every path", "[simd][conv][conv_integer]") {
    // Input 255 with zero point 0 (u8) or 127 with -128 (s8): X - XZP = 255; Filter 0 with zero point 255
    // (u8) or -128 with 127 (s8): F - FZP = -255; 33100 taps (Cin 3310, 1x10 kernel; the last 2 taps of each
    // row in the padding add 0): about -2.15e9 past -2^31 in output column 0, fewer taps further right.
    for (int mix = 0; mix < 4; ++mix) {
        Problem p;
        p.tin = kQ8[mix & 1];
        p.tf = kQ8[(mix >> 1) & 1];
        p.cin = 3310;
        p.cout = 3;
        p.H = 1;
        p.W = 12;
        p.kH = 1;
        p.kW = 10;
        p.end[1] = 2;
        p.per_channel = mix % 2 == 1;
        p.lin = mix == 2 ? Layout::Nhwc : Layout::Nchw;
        const auto in = static_cast<std::uint8_t>(p.tin == DT::UInt8 ? 255 : 127);
        const auto in_zp = static_cast<std::uint8_t>(p.tin == DT::UInt8 ? 0 : 0x80);
        const auto f = static_cast<std::uint8_t>(p.tf == DT::UInt8 ? 0 : 0x80);
        const auto f_zp = static_cast<std::uint8_t>(p.tf == DT::UInt8 ? 255 : 127);
        p.fill([] { return std::uint8_t{0}; });
        std::fill(p.x.begin(), p.x.end(), in);
        std::fill(p.f.begin(), p.f.end(), f);
        p.x_zp = {in_zp};
        std::fill(p.f_zp.begin(), p.f_zp.end(), f_zp);
        p.x_scale = {1.0f};
        p.f_scale.assign(p.cout, 1.0f);
        p.out_scale = {1.0f};
        check_integer_paths(p);
    }
}

TEST_CASE("simd conv: the issue's shapes in small (1x1, 3x3 s1/s2, 7x7 s2 p3, depthwise) with every type mix",
          "[simd][conv]") {
    Rng rng(qtest::case_seed(9));
    struct Shape {
        std::uint32_t cin, cout, hw, k, s, pad, groups;
    };
    const Shape shapes[] = {{64, 64, 9, 3, 1, 1, 1},  {32, 16, 10, 1, 1, 0, 1}, {16, 16, 11, 3, 2, 1, 1},
                            {3, 64, 17, 7, 2, 3, 1},  {32, 32, 12, 3, 1, 1, 32}, {17, 33, 5, 1, 1, 0, 1}};
    for (const Shape& s : shapes)
        for (int mix = 0; mix < 8; ++mix)
            for (Layout l : {Layout::Nchw, Layout::Nhwc}) {
                Problem p;
                p.tin = kQ8[mix & 1];
                p.tf = kQ8[(mix >> 1) & 1];
                p.tout = kQ8[(mix >> 2) & 1];
                p.cin = s.cin;
                p.cout = s.cout;
                p.H = p.W = s.hw;
                p.kH = p.kW = s.k;
                p.stride[0] = p.stride[1] = s.s;
                p.start[0] = p.start[1] = p.end[0] = p.end[1] = s.pad;
                p.groups = s.groups;
                p.lin = p.lout = l;
                p.per_channel = mix % 2 == 0;
                p.fill([&] { return rng.byte(); });
                random_scales(p, rng);
                check_all_paths(p);
                if (mix < 4) check_integer_paths(p);  // (the output type aside, mixes 4-7 repeat 0-3)
            }
}

TEST_CASE("simd conv: the input-as-left-operand (NHWC) form: Cin around 4 and 64, groups, rows of 1-70 pixels, "
          "strides, dilations, NHWC / NCHW / padded layouts in and out, filter zero points",
          "[simd][conv]") {
    // The AMX path computes these with the input as the left operand, read in
    // 64-byte K steps from a padded NHWC copy (simd/conv/nhwc.hpp): channel
    // counts that leave part of a step to the next pixel, segments per filter
    // row (dx = 1) or per tap, pixel blocks of 32 split inside an output row,
    // and the zero-point terms (per-channel filter zero points: the patch sums).
    Rng rng(qtest::case_seed(91));
    constexpr std::uint32_t cins[] = {1, 3, 4, 5, 16, 63, 64, 65, 130};
    constexpr Layout layouts[] = {Layout::Nchw, Layout::Nhwc, Layout::Padded};
    for (int iter = 0; iter < 72; ++iter) {
        Problem p;
        p.tin = kQ8[iter & 1];
        p.tf = kQ8[(iter >> 1) & 1];
        p.tout = kQ8[(iter >> 2) & 1];
        p.groups = iter % 9 == 4 ? 3 : iter % 9 == 7 ? 2 : 1;
        p.cin = cins[rng.uniform(0, 8)] * p.groups;
        p.cout = p.groups * rng.uniform(1, 40);
        p.kH = rng.uniform(1, 5);
        p.kW = rng.uniform(1, 5);
        for (int i = 0; i < 2; ++i) {
            p.stride[i] = rng.coin(3) ? rng.uniform(2, 3) : 1;
            p.dilation[i] = rng.coin(4) ? 2 : 1;
            p.start[i] = rng.coin(2) ? 0 : rng.uniform(1, 3);
            p.end[i] = rng.coin(2) ? 0 : rng.uniform(1, 3);
        }
        p.W = rng.uniform(1, 70);
        p.H = rng.uniform(1, 6);
        for (int i = 0; i < 2; ++i) {
            const std::uint32_t extent = 1 + ((i ? p.kW : p.kH) - 1) * p.dilation[i];
            const std::uint32_t in = (i ? p.W : p.H) + p.start[i] + p.end[i];
            if (extent > in) p.end[i] += extent - in;
        }
        p.batch = iter % 5 == 0 ? 2 : 1;
        p.lin = layouts[iter % 3];
        p.lout = layouts[(iter / 3) % 3];
        p.lf = layouts[rng.uniform(0, 2)];
        p.per_channel = iter % 4 != 3;
        p.bias = iter % 6 != 5;
        p.fill([&] { return rng.byte(); });
        if (iter % 4 == 1) std::fill(p.f_zp.begin(), p.f_zp.end(), p.tf == DT::Int8 ? 0 : 128);  // no patch sums
        random_scales(p, rng);
        check_all_paths(p);
        check_integer_paths(p);  // the same forms with the int32 store
    }
}

TEST_CASE("simd conv: the vector NHWC form: 8-pixel blocks read in place with an overlapping last block, patch "
          "rows, pointwise rows from the input",
          "[simd][conv]") {
    // The vector paths' NHWC form (run_nhwc_vector): AVX-512 VNNI reads 8
    // pixels of an output row in place per block, the last block of a row
    // overlapping the one before it when oW % 8 != 0 (oW from 8 to 17 here),
    // its K cut into one run per filter row (dx = 1) or per tap (dx = 2);
    // channel counts whose segments are not whole k groups take the patch
    // rows; 1x1 stride-1 convolutions read the input's pixels as rows
    // (in place for UINT8 with Cin/G a multiple of 4); a UINT8 filter or
    // filter zero points bring in the patch sums.
    Rng rng(qtest::case_seed(2027));
    constexpr std::uint32_t cins[] = {4, 8, 3, 32, 64, 6};
    for (int iter = 0; iter < 48; ++iter) {
        Problem p;
        p.tin = kQ8[iter & 1];
        p.tf = kQ8[(iter >> 1) & 1];
        p.tout = kQ8[(iter >> 2) & 1];
        const bool pointwise = iter % 6 == 5;
        p.groups = iter % 7 == 3 ? 2 : 1;
        p.cin = cins[rng.uniform(0, 5)] * p.groups;
        p.cout = p.groups * (iter % 3 == 0 ? 64 : rng.uniform(1, 50));
        p.kH = pointwise ? 1 : rng.uniform(1, 3);
        p.kW = pointwise ? 1 : rng.uniform(1, 3);
        p.stride[1] = !pointwise && iter % 4 == 2 ? 2 : 1;
        p.dilation[1] = !pointwise && iter % 5 == 1 ? 2 : 1;
        if (!pointwise) p.start[0] = p.start[1] = p.end[0] = p.end[1] = rng.uniform(0, 1);
        const std::uint32_t ow = 8 + static_cast<std::uint32_t>(iter % 10);  // oW 8..17
        p.W = (ow - 1) * p.stride[1] + 1 + (p.kW - 1) * p.dilation[1] - p.start[1] - p.end[1];
        p.H = rng.uniform(p.kH, 4);
        p.batch = iter % 8 == 0 ? 2 : 1;
        p.lin = Layout::Nhwc;
        p.lout = iter % 3 == 1 ? Layout::Nchw : Layout::Nhwc;
        p.per_channel = iter % 2 == 0;
        p.bias = iter % 5 != 4;
        p.fill([&] { return rng.byte(); });
        if (iter % 4 == 1) std::fill(p.f_zp.begin(), p.f_zp.end(), p.tf == DT::Int8 ? 0 : 128);  // no patch sums
        random_scales(p, rng);
        REQUIRE(p.out_size(1) == ow);
        check_all_paths(p);
        check_integer_paths(p);  // the same forms with the int32 store
    }
}

TEST_CASE("simd conv: output size 1, padding larger than the kernel, one-pixel inputs", "[simd][conv]") {
    Rng rng(qtest::case_seed(9));
    for (int variant = 0; variant < 8; ++variant) {
        Problem p;
        p.tin = kQ8[variant & 1];
        p.tout = kQ8[(variant >> 1) & 1];
        p.cin = 5;
        p.cout = 18;
        p.H = variant < 4 ? 1 : 6;
        p.W = variant < 4 ? 1 : 7;
        p.kH = 3;
        p.kW = variant % 2 ? 1 : 5;
        // Padding 6 > kernel: whole output rows and columns see padding only (bias and zero points alone).
        p.start[0] = p.end[1] = 6;
        p.start[1] = p.end[0] = variant % 3;
        p.stride[0] = p.stride[1] = variant >= 6 ? 50 : 1;  // variant 6, 7: output 1x1
        p.bias = variant % 2 == 0;
        p.per_channel = true;
        p.fill([&] { return rng.byte(); });
        random_scales(p, rng);
        check_all_paths(p);
        check_integer_paths(p);
    }
}

TEST_CASE("simd conv: huge dilation and padding (a padded copy would be 10^10 elements: the gather form)",
          "[simd][conv]") {
    Rng rng(qtest::case_seed(9));
    for (int variant = 0; variant < 4; ++variant) {
        Problem p;
        p.tin = kQ8[variant & 1];
        p.cin = 3;
        p.cout = 5;
        p.H = 3;
        p.W = 4;
        p.kH = p.kW = 2;
        p.dilation[0] = p.dilation[1] = 100000;
        p.start[0] = p.start[1] = 50000;
        p.end[0] = p.end[1] = 50000 + static_cast<std::uint32_t>(variant);
        p.lin = variant >= 2 ? Layout::Nhwc : Layout::Nchw;
        p.fill([&] { return rng.byte(); });
        random_scales(p, rng);
        check_all_paths(p);
        check_integer_paths(p);
    }
}

TEST_CASE("simd conv: accumulators that wrap modulo 2^32", "[simd][conv]") {
    // X = 255, XZP = 0, F - FZP = -255 over Cin * 9 = 36864 taps, plus a bias of
    // -2^31 + 1: the sum is about -2.4e9 - 2.1e9, far below -2^31, so the
    // reference's accumulator wraps; every path must give the same bits.
    for (int variant = 0; variant < 2; ++variant) {
        Problem p;
        p.tin = DT::UInt8;
        p.tf = variant ? DT::Int8 : DT::UInt8;
        p.tout = DT::Int8;
        p.cin = 4096;
        p.cout = 3;
        p.H = p.W = 3;
        p.kH = p.kW = 3;
        p.start[0] = p.start[1] = p.end[0] = p.end[1] = 1;
        p.fill([] { return std::uint8_t{255}; });
        std::fill(p.f.begin(), p.f.end(), variant ? 0x80 : 0);
        p.f_zp.assign(p.cout, variant ? 0x7f : 0xff);
        p.x_zp = {0};
        p.out_zp = {0};
        p.b.assign(p.cout, -2147483647);
        p.x_scale = {1.0f};
        p.f_scale.assign(p.cout, 1.0f);
        p.out_scale = {4.0e7f};  // wrapped sums (about +-2^31) land inside -128..127
        check_all_paths(p);
    }
}

namespace {

/// FNV-1a over the packed filter of a prepared convolution (either operator's).
std::uint64_t packed_hash(const qdml::simd::conv::Filter& f) {
    qtest::gemm_paths::Fnv h;
    const auto mix = [&h](const void* p, std::size_t n) { h.mix(p, n); };
    for (const auto& left : f.left) {
        mix(left.data.data(), left.data.size());
        mix(left.row_sum.data(), left.row_sum.size() * 4);
    }
    mix(f.zp.data(), f.zp.size() * 4);
    mix(f.bias.data(), f.bias.size() * 4);
    for (const auto& right : f.input_left.right) {
        mix(right.data.data(), right.data.size());
        mix(right.col_sum.data(), right.col_sum.size() * 4);
    }
    mix(f.input_left.zp.data(), f.input_left.zp.size() * 4);
    mix(f.input_left.bias.data(), f.input_left.bias.size() * 4);
    return h.h;
}

}  // namespace

TEST_CASE("simd conv prepared: filter packed once, execute with new inputs and input/output parameters, same bits as "
          "the reference",
          "[simd][conv][prepared]") {
    Rng rng(qtest::case_seed(9));
    for (int iter = 0; iter < 24; ++iter) {
        Problem p = random_problem(rng, iter);
        for (Isa isa : runnable_isas()) {
            INFO(p.describe() << " path " << qdml::simd::isa_name(isa));
            p.fill([&] { return rng.byte(); });
            random_scales(p, rng);
            p.build();
            p.d.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            p.fidelity = (iter + static_cast<int>(isa)) % 2 ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
            const qdml::simd::PreparedQuantizedLinearConvolution prepared(p.d, qdml::simd::GemmOptions{isa, p.fidelity});
            REQUIRE(prepared.isa() == (prepared.depthwise() ? qdml::simd::conv::depthwise_isa(isa) : isa));
            const std::uint64_t packed_before = packed_hash(prepared.packed());
            const std::vector<std::uint8_t> f_at_initialize = p.f, f_zp_at_initialize = p.f_zp;
            const std::vector<std::int32_t> b_at_initialize = p.b;
            const std::vector<float> f_scale_at_initialize = p.f_scale;
            for (int run = 0; run < 3; ++run) {
                // New input, input / output zero points and scales; the weights' buffers changed and
                // unbound: execute must not read them.
                for (auto& v : p.x) v = rng.byte();
                p.x_zp = {rng.byte()};
                p.out_zp = {rng.byte()};
                p.x_scale[0] *= 0.75f;
                p.out_scale[0] *= 0.5f;
                p.f = f_at_initialize;
                p.f_zp = f_zp_at_initialize;
                p.b = b_at_initialize;
                p.f_scale = f_scale_at_initialize;
                p.out.reset();
                p.build();
                p.d.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
                qdml::visit_typed(p.d, [&](const auto& op) {
                    qdml::reference::quantized_linear_convolution(op, p.fidelity);
                });
                const std::vector<std::uint8_t> expected = p.out.with_guards();
                p.out.reset();
                std::fill(p.f.begin(), p.f.end(), std::uint8_t{0x5a});
                std::fill(p.f_zp.begin(), p.f_zp.end(), std::uint8_t{0x5a});
                std::fill(p.b.begin(), p.b.end(), 0x5a5a5a5a);
                std::fill(p.f_scale.begin(), p.f_scale.end(), 3.0f);
                auto d = p.d;
                d.FilterTensor.Data = nullptr;
                d.FilterScaleTensor.Data = nullptr;
                if (d.FilterZeroPointTensor) d.FilterZeroPointTensor->Data = nullptr;
                if (d.BiasTensor) d.BiasTensor->Data = nullptr;
                const auto& ex = run_executor(static_cast<std::size_t>(iter * 3 + run));
                INFO("executor " << ex.first);
                prepared.execute_unchecked(d, ex.second);
                REQUIRE(p.out.with_guards() == expected);
            }
            REQUIRE(packed_hash(prepared.packed()) == packed_before);
        }
    }
}

TEST_CASE("simd conv prepared: errors name the member and the rule; qdml::compile packs a constant filter once",
          "[simd][conv][prepared]") {
    Rng rng(qtest::case_seed(9));
    Problem p;
    p.cin = 4;
    p.cout = 6;
    p.H = p.W = 5;
    p.kH = p.kW = 3;
    p.fill([&] { return rng.byte(); });
    random_scales(p, rng);
    p.build();
    using qtest::gemm_paths::error_of;
    using Prepared = qdml::simd::PreparedQuantizedLinearConvolution;
    CHECK_THAT(error_of([&] { Prepared prepared(p.d); }),
               Catch::Matchers::Contains("FilterTensor: Flags must include DML_TENSOR_FLAG_OWNED_BY_DML"));
    p.d.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    p.out.reset();
    qdml::visit_typed(p.d, [](const auto& op) { qdml::reference::quantized_linear_convolution(op); });
    const std::vector<std::uint8_t> expected = p.out.with_guards();
    const auto compiled = qdml::compile(p.d);  // the filter side packed here
    // The filter, its parameters and the bias are not read again: unbound, same bits.
    auto d = p.d;
    d.FilterTensor.Data = nullptr;
    d.FilterScaleTensor.Data = nullptr;
    if (d.FilterZeroPointTensor) d.FilterZeroPointTensor->Data = nullptr;
    if (d.BiasTensor) d.BiasTensor->Data = nullptr;
    p.out.reset();
    compiled.execute(d);
    REQUIRE(p.out.with_guards() == expected);
    auto other = p.d;
    other.OutputTensor.Desc.DataType = DT::Int8;
    CHECK_THAT(error_of([&] { compiled.execute(other); }),
               Catch::Matchers::Contains("OutputTensor: differs from the compiled desc"));
    other = p.d;
    other.StartPadding = {1, 0};
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("StartPadding: differs"));
    other = p.d;
    other.BiasTensor = std::nullopt;
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("BiasTensor: differs"));
    other = p.d;
    other.InputTensor.Data = nullptr;
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("InputTensor: Data is null"));
    other = p.d;
    other.OutputTensor.Data = p.d.InputTensor.Data;  // output over the input
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("OutputTensor"));
}

TEST_CASE("simd conv integer prepared: filter packed once, execute with new inputs and input zero points, the "
          "filter's buffers overwritten and unbound, same bits as the reference on every path",
          "[simd][conv][conv_integer][prepared]") {
    Rng rng(qtest::case_seed(29));
    for (int iter = 0; iter < 30; ++iter) {
        Problem p = random_problem(rng, iter);
        for (Isa isa : runnable_isas()) {
            INFO("CONVOLUTION_INTEGER prepared: " << p.describe() << " path " << qdml::simd::isa_name(isa));
            p.fill([&] { return rng.byte(); });
            p.build();
            qtest::GuardedBuffer out;
            qdml::ConvolutionIntegerDesc d = integer_desc(p, out);
            d.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            const qdml::simd::PreparedConvolutionInteger prepared(d, qdml::simd::GemmOptions{isa});
            REQUIRE(prepared.isa() == isa);
            const std::uint64_t packed_before = packed_hash(prepared.packed());
            const std::vector<std::uint8_t> f_at_initialize = p.f, f_zp_at_initialize = p.f_zp;
            for (int run = 0; run < 3; ++run) {
                // New input and input zero point; the filter's buffers changed and unbound:
                // execute must not read them.
                for (auto& v : p.x) v = rng.byte();
                p.x_zp = {rng.byte()};
                p.f = f_at_initialize;
                p.f_zp = f_zp_at_initialize;
                out.reset();
                qdml::visit_typed(d, [&](const auto& op) { qdml::reference::convolution_integer(op); });
                const std::vector<std::uint8_t> expected = out.with_guards();
                out.reset();
                std::fill(p.f.begin(), p.f.end(), std::uint8_t{0x5a});
                std::fill(p.f_zp.begin(), p.f_zp.end(), std::uint8_t{0x5a});
                auto unbound = d;
                unbound.FilterTensor.Data = nullptr;
                if (unbound.FilterZeroPointTensor) unbound.FilterZeroPointTensor->Data = nullptr;
                const auto& ex = run_executor(static_cast<std::size_t>(iter * 3 + run));
                INFO("executor " << ex.first << " run " << run);
                prepared.execute_unchecked(unbound, ex.second);
                REQUIRE(out.with_guards() == expected);
            }
            REQUIRE(packed_hash(prepared.packed()) == packed_before);
        }
    }
}

TEST_CASE("simd conv integer prepared: errors name the member and the rule; qdml::compile packs a constant filter "
          "once",
          "[simd][conv][conv_integer][prepared]") {
    Rng rng(qtest::case_seed(29));
    Problem p;
    p.tf = DT::UInt8;
    p.cin = 8;
    p.cout = 6;
    p.H = p.W = 5;
    p.kH = p.kW = 3;
    p.start[0] = p.end[1] = 1;
    p.per_channel = true;
    p.fill([&] { return rng.byte(); });
    p.build();
    qtest::GuardedBuffer out;
    qdml::ConvolutionIntegerDesc d = integer_desc(p, out);
    using qtest::gemm_paths::error_of;
    using Prepared = qdml::simd::PreparedConvolutionInteger;
    CHECK_THAT(error_of([&] { Prepared prepared(d); }),
               Catch::Matchers::Contains("FilterTensor: Flags must include DML_TENSOR_FLAG_OWNED_BY_DML"));
    d.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    out.reset();
    qdml::visit_typed(d, [](const auto& op) { qdml::reference::convolution_integer(op); });
    const std::vector<std::uint8_t> expected = out.with_guards();
    const auto compiled = qdml::compile(d);  // the filter packed here
    // The filter and its zero point are not read again: overwritten and unbound, same bits.
    std::fill(p.f.begin(), p.f.end(), std::uint8_t{0x5a});
    std::fill(p.f_zp.begin(), p.f_zp.end(), std::uint8_t{0x5a});
    auto unbound = d;
    unbound.FilterTensor.Data = nullptr;
    unbound.FilterZeroPointTensor->Data = nullptr;
    out.reset();
    compiled.execute(unbound);
    REQUIRE(out.with_guards() == expected);
    auto other = d;
    other.FilterZeroPointTensor = std::nullopt;
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("FilterZeroPointTensor: differs"));
    other = d;
    other.StartPadding = {0, 0};
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("StartPadding: differs"));
    other = d;
    other.InputTensor.Data = nullptr;
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("InputTensor: Data is null"));
}
