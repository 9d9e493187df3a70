// The two profiles (docs/semantics.md section 10): where Fidelity::DirectML
// differs from Fidelity::Exact, each step with one hand-derived element, the
// DirectML profile's refusals, and that every entry (run with both
// implementations, compile, reference::run, dml::execute) honours the
// option. The binary32 values in the comments were worked out by hand from
// section 10's formulas; DirectML's own outputs are the cases of
// tests/data/directml.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "qdml/directml.hpp"
#include "qdml/qdml.hpp"

namespace {

using qdml::Fidelity;
using qdml::TensorDesc;
using DT = qdml::TensorDataType;

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "<no error>";
}

std::uint32_t bits(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

qdml::RunOptions options(qdml::Implementation impl, Fidelity f) {
    qdml::RunOptions o;
    o.implementation = impl;
    o.fidelity = f;
    return o;
}

constexpr qdml::Implementation kImpls[] = {qdml::Implementation::Reference, qdml::Implementation::Simd};

/// {1,1} x {1,1} INT8 matmul: acc = A * B, per-tensor scales, INT8 output.
struct Matmul {
    std::int8_t a = -20, b = 25, out = 0, out_zp = 0;
    float sa = 0.15f, sb = 0.105f, so = 0.09f;
    qdml::QuantizedLinearMatrixMultiplyDesc d;
    Matmul() {
        const auto one = TensorDesc::make(DT::Float32, {1, 1});
        d.ATensor = {TensorDesc::make(DT::Int8, {1, 1}), &a};
        d.AScaleTensor = {one, &sa};
        d.BTensor = {TensorDesc::make(DT::Int8, {1, 1}), &b};
        d.BScaleTensor = {one, &sb};
        d.OutputScaleTensor = {one, &so};
        d.OutputZeroPointTensor = {TensorDesc::make(DT::Int8, {1, 1}), &out_zp};
        d.OutputTensor = {TensorDesc::make(DT::Int8, {1, 1}), &out};
    }
};

/// A 1x1 convolution of one input element equal to its zero point: acc = Bias.
struct Conv {
    std::uint8_t x = 7, x_zp = 7, w = 3, out = 0;
    std::int32_t bias = 12375;
    float sx = 0.04f, sw = 0.014f, so = 0.42f;
    qdml::QuantizedLinearConvolutionDesc d;
    Conv() {
        const auto one = TensorDesc::make(DT::Float32, {1, 1, 1, 1});
        d.InputTensor = {TensorDesc::make(DT::UInt8, {1, 1, 1, 1}), &x};
        d.InputScaleTensor = {one, &sx};
        d.InputZeroPointTensor = {TensorDesc::make(DT::UInt8, {1, 1, 1, 1}), &x_zp};
        d.FilterTensor = {TensorDesc::make(DT::UInt8, {1, 1, 1, 1}), &w};
        d.FilterScaleTensor = {one, &sw};
        d.BiasTensor = {TensorDesc::make(DT::Int32, {1, 1, 1, 1}), &bias};
        d.OutputScaleTensor = {one, &so};
        d.OutputTensor = {TensorDesc::make(DT::UInt8, {1, 1, 1, 1}), &out};
    }
};

}  // namespace

TEST_CASE("fidelity: the DirectML profile's steps, one hand-derived element each", "[fidelity]") {
    // Dequantize: fp32(16777217) - fp32(1) = 16777216 - 1 = 16777215; exact: fp32(16777216) = 16777216.
    CHECK(qdml::dequantize_directml(16777217, 1, 1.0f) == 16777215.0f);
    CHECK(qdml::dequantize(16777217, 1, 1.0f) == 16777216.0f);
    CHECK(qdml::dequantize_directml(-128, 3, 0.5f) == qdml::dequantize(-128, 3, 0.5f));  // 8-bit: the same

    // Quantize step: int32 saturating (NaN -> 0), + zp wrapping, then clamp.
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(qdml::quantize_directml<std::uint8_t>(inf, 1) == 0);      // INT32_MAX + 1 wraps to INT32_MIN -> 0
    CHECK(qdml::quantize<std::uint8_t>(inf, 1) == 255);
    CHECK(qdml::quantize_directml<std::uint8_t>(inf, 0) == 255);    // INT32_MAX -> 255
    CHECK(qdml::quantize_directml<std::int8_t>(-inf, -1) == 127);   // INT32_MIN - 1 wraps to INT32_MAX -> 127
    CHECK(qdml::quantize_directml<std::uint8_t>(nan, 100) == 100);  // NaN -> 0, + 100
    CHECK(qdml::quantize<std::uint8_t>(nan, 100) == 0);
    CHECK(qdml::quantize_directml<std::uint8_t>(3e9f, 200) == 0);   // finite above 2^31: as +inf
    CHECK(qdml::quantize_directml<std::int8_t>(-2.5f, 3) == 1);     // rne(-2.5) = -2, + 3

    // Matmul: ((fp32(-500) * 0.15) * 0.105) / 0.09 = -87.49999 -> -87; exact: -500 * (0.01575 / 0.09) = -87.5 -> -88.
    CHECK(qdml::requantize_directml<std::int8_t>(-500, 0.15f, 0.105f, 0.09f, 0) == -87);
    CHECK(qdml::requantize<std::int8_t>(-500, qdml::requantize_multiplier(0.15f, 0.105f, 0.09f), 0) == -88);

    // Clip: NaN becomes Max, then max(Min, Max); a value equal to a bound becomes the bound.
    CHECK(qdml::clamp_min_max_directml(nan, 0.0f, 6.0f) == 6.0f);
    CHECK(qdml::clamp_min_max_directml(nan, 2.0f, -2.0f) == 2.0f);
    CHECK(bits(qdml::clamp_min_max_directml(-0.0f, 0.0f, 6.0f)) == 0u);  // +0.0: Min itself
    CHECK(bits(qdml::clamp_min_max(-0.0f, 0.0f, 6.0f)) == 0x80000000u);  // exact: -0.0 passes
    CHECK(bits(qdml::clamp_min_max_directml(0.0f, -0.0f, -0.0f)) == 0x80000000u);
    CHECK(qdml::clamp_min_max_directml(1e-40f, -1.0f, 1.0f) == 1e-40f);  // subnormals kept
}

TEST_CASE("fidelity: matmul and convolution through every entry, both implementations", "[fidelity]") {
    for (const auto impl : kImpls) {
        Matmul m;
        qdml::run(m.d, options(impl, Fidelity::DirectML));
        CHECK(m.out == -87);
        qdml::run(m.d, options(impl, Fidelity::Exact));
        CHECK(m.out == -88);
        m.out = 0;
        qdml::compile(m.d, options(impl, Fidelity::DirectML)).execute(m.d);
        CHECK(m.out == -87);

        // Convolution: ((fp32(12375) * 0.014) * 0.04) / 0.42 = 16.5 -> 16; exact: 12375 * (0.00056 / 0.42) = 16.500002 -> 17.
        Conv c;
        qdml::run(c.d, options(impl, Fidelity::DirectML));
        CHECK(c.out == 16);
        qdml::run(c.d, options(impl, Fidelity::Exact));
        CHECK(c.out == 17);
        c.out = 0;
        qdml::compile(c.d, options(impl, Fidelity::DirectML)).execute(c.d);
        CHECK(c.out == 16);
    }
    Matmul m;
    qdml::reference::run(m.d, qdml::FeatureLevel::Latest, Fidelity::DirectML);
    CHECK(m.out == -87);
    CHECK(qdml::describe(m.d, options(qdml::Implementation::Simd, Fidelity::DirectML)).rfind("simd gemm", 0) == 0);
    CHECK(qdml::describe(m.d, options(qdml::Implementation::Simd, Fidelity::Exact)).rfind("simd gemm", 0) == 0);
}

TEST_CASE("fidelity: dequantize and clip through qdml::run, both implementations", "[fidelity]") {
    for (const auto impl : kImpls) {
        std::int32_t x[2] = {16777217, -16777217};
        std::int32_t zp = 1;
        float scale = 1.0f, out[2] = {};
        qdml::ElementWiseDequantizeLinearDesc d;
        d.InputTensor = {TensorDesc::make(DT::Int32, {2}), x};
        d.ScaleTensor = {TensorDesc::make(DT::Float32, {2}, {0}), &scale};
        d.ZeroPointTensor = {TensorDesc::make(DT::Int32, {2}, {0}), &zp};
        d.OutputTensor = {TensorDesc::make(DT::Float32, {2}), out};
        qdml::run(d, options(impl, Fidelity::DirectML));
        CHECK(out[0] == 16777215.0f);   // 16777216 - 1
        CHECK(out[1] == -16777216.0f);  // fp32(-16777217) = -16777216, - 1 = -16777217 -> rounds to -16777216
        qdml::run(d, options(impl, Fidelity::Exact));
        CHECK(out[0] == 16777216.0f);   // fp32(16777216)
        CHECK(out[1] == -16777218.0f);  // fp32(-16777218)

        float in[4] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, 7.0f, -1.0f}, o[4] = {};
        qdml::ElementWiseClipDesc c;
        c.InputTensor = {TensorDesc::make(DT::Float32, {4}), in};
        c.OutputTensor = {TensorDesc::make(DT::Float32, {4}), o};
        c.Min = 0.0f;
        c.Max = 6.0f;
        qdml::run(c, options(impl, Fidelity::DirectML));
        CHECK(o[0] == 6.0f);
        CHECK(bits(o[1]) == 0u);
        CHECK(o[2] == 6.0f);
        CHECK(o[3] == 0.0f);
        qdml::run(c, options(impl, Fidelity::Exact));
        CHECK(std::isnan(o[0]));
        CHECK(bits(o[1]) == 0x80000000u);
    }
}

TEST_CASE("fidelity: the DirectML profile refuses what DirectML refuses", "[fidelity]") {
    // A per-tensor BScale {1,1} with a per-column BZeroPoint {1,2}: exact accepts, DirectML refuses.
    std::uint8_t a[2] = {1, 2}, b[4] = {1, 2, 3, 4}, bzp[2] = {1, 2}, out[2];
    float s = 0.5f;
    qdml::QuantizedLinearMatrixMultiplyDesc d;
    const auto one = TensorDesc::make(DT::Float32, {1, 1});
    d.ATensor = {TensorDesc::make(DT::UInt8, {1, 2}), a};
    d.AScaleTensor = {one, &s};
    d.BTensor = {TensorDesc::make(DT::UInt8, {2, 2}), b};
    d.BScaleTensor = {one, &s};
    d.BZeroPointTensor = {TensorDesc::make(DT::UInt8, {1, 2}), bzp};
    d.OutputScaleTensor = {one, &s};
    d.OutputTensor = {TensorDesc::make(DT::UInt8, {1, 2}), out};
    CHECK(error_of([&] { qdml::validate(d, qdml::FeatureLevel::Latest, Fidelity::Exact); }) == "<no error>");
    CHECK(error_of([&] { qdml::run(d, options(qdml::Implementation::Simd, Fidelity::DirectML)); }) ==
          "QUANTIZED_LINEAR_MATRIX_MULTIPLY: BZeroPointTensor: DimensionCount and Sizes {1,2} must equal "
          "BScaleTensor's {1,1} (DirectML refuses a zero point shaped unlike its scale; fidelity exact allows it)");
    d.BScaleTensor = {TensorDesc::make(DT::Float32, {1, 2}, {0, 0}), &s};  // equal Sizes through stride 0: accepted
    CHECK(error_of([&] { qdml::validate(d, qdml::FeatureLevel::Latest, Fidelity::DirectML); }) == "<no error>");

    std::int64_t x[2] = {1, 2}, y[2];
    qdml::ElementWiseClipDesc c;
    c.InputTensor = {TensorDesc::make(DT::Int64, {2}), x};
    c.OutputTensor = {TensorDesc::make(DT::Int64, {2}), y};
    c.Min = -10.0f;
    c.Max = 10.0f;
    c.ScaleBias = qdml::ScaleBiasDesc{2.0f, 1.0f};
    CHECK(error_of([&] { qdml::run(c, options(qdml::Implementation::Reference, Fidelity::Exact)); }) == "<no error>");
    CHECK(error_of([&] { qdml::compile(c, options(qdml::Implementation::Simd, Fidelity::DirectML)); }) ==
          "ELEMENT_WISE_CLIP: ScaleBias: must be absent for INT64 tensors (DirectML refuses it; fidelity exact allows "
          "it)");

    // The same through DirectML's own structs: E_INVALIDARG with ExecuteOptions::fidelity.
    UINT sizes[1] = {2};
    DML_BUFFER_TENSOR_DESC bd = {};
    bd.DataType = DML_TENSOR_DATA_TYPE_INT64;
    bd.DimensionCount = 1;
    bd.Sizes = sizes;
    bd.TotalTensorSizeInBytes = 16;
    DML_TENSOR_DESC td = {DML_TENSOR_TYPE_BUFFER, &bd};
    DML_SCALE_BIAS sb = {2.0f, 1.0f};
    DML_ELEMENT_WISE_CLIP_OPERATOR_DESC cd = {&td, &td, &sb, -10.0f, 10.0f};
    DML_OPERATOR_DESC od = {DML_OPERATOR_ELEMENT_WISE_CLIP, &cd};
    qdml::dml::ExecuteOptions eo;
    eo.fidelity = Fidelity::Exact;
    CHECK(qdml::dml::try_execute(od, {qdml::dml::Binding{x, sizeof x}, qdml::dml::Binding{y, sizeof y}}, eo).hr == qdml::dml::kOk);
    eo.fidelity = Fidelity::DirectML;
    CHECK(qdml::dml::try_execute(od, {qdml::dml::Binding{x, sizeof x}, qdml::dml::Binding{y, sizeof y}}, eo).hr == qdml::dml::kInvalidArg);
    CHECK(qdml::kDefaultFidelity == Fidelity::DirectML);  // DirectML's answer unless told otherwise
    CHECK(qdml::RunOptions{}.fidelity == qdml::kDefaultFidelity);
    CHECK(qdml::simd::GemmOptions{}.fidelity == qdml::kDefaultFidelity);
    CHECK(qdml::dml::ExecuteOptions{}.fidelity == qdml::RunOptions{}.fidelity);
    CHECK(qdml::to_string(Fidelity::DirectML) == "directml");
    CHECK(qdml::parse_fidelity("exact") == Fidelity::Exact);
    CHECK(!qdml::parse_fidelity("DirectML"));
}
