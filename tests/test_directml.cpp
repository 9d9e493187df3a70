// qdml/directml.hpp: DirectML's own structs in, golden output out. Every
// operator through qdml::dml::execute with descs built the way DirectML code
// builds them (expected values derived by hand from docs/semantics.md, next to each
// case); DMLCalcBufferTensorSize's documented formula; and each rejection the
// DML entry adds (null member, Type tag, operator type, bindings, Flags,
// feature level) with the operator, member and rule in the message and the
// output left untouched.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "qdml/directml.hpp"
#include "support/buffers.hpp"

namespace {

using qdml::dml::Binding;
using qdml::dml::buffer;
using qdml::dml::calc_buffer_tensor_size;

/// One DML tensor as DirectML samples build it: sizes array, a
/// DML_BUFFER_TENSOR_DESC with DMLCalcBufferTensorSize's total, and the
/// DML_TENSOR_DESC pointing to it.
struct DmlTensor {
    std::vector<UINT> sizes, strides;
    DML_BUFFER_TENSOR_DESC buffer{};
    DML_TENSOR_DESC desc{};

    DmlTensor(DML_TENSOR_DATA_TYPE type, std::vector<UINT> s, std::vector<UINT> st = {})
        : sizes(std::move(s)), strides(std::move(st)) {
        buffer.DataType = type;
        buffer.Flags = DML_TENSOR_FLAG_NONE;
        buffer.DimensionCount = static_cast<UINT>(sizes.size());
        buffer.Sizes = sizes.data();
        buffer.Strides = strides.empty() ? nullptr : strides.data();
        buffer.TotalTensorSizeInBytes = calc_buffer_tensor_size(buffer);
        desc.Type = DML_TENSOR_TYPE_BUFFER;
        desc.Desc = &buffer;
    }
    DmlTensor(const DmlTensor&) = delete;
};

/// A buffer of T padded to TotalTensorSizeInBytes (a multiple of 4).
template <class T>
std::vector<T> padded(std::vector<T> v, const DmlTensor& t) {
    v.resize(t.buffer.TotalTensorSizeInBytes / sizeof(T));
    return v;
}

/// Output buffer prefilled with the sentinel (buffers.hpp).
template <class T>
std::vector<T> sentinel_buffer(const DmlTensor& t) {
    std::vector<T> v(t.buffer.TotalTensorSizeInBytes / sizeof(T));
    std::memset(v.data(), qtest::kSentinel, v.size() * sizeof(T));
    return v;
}

template <class T>
bool untouched(const std::vector<T>& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t i = 0; i < v.size() * sizeof(T); ++i)
        if (p[i] != qtest::kSentinel) return false;
    return true;
}

/// execute must throw qdml::Error containing every fragment, and
/// try_execute must return `hr` with the same message.
void require_rejected(const DML_OPERATOR_DESC& op, qdml::dml::Bindings b, std::int32_t hr,
                      const std::vector<std::string>& fragments, qdml::dml::ExecuteOptions o = {}) {
    std::string message;
    try {
        qdml::dml::execute(op, b, o);
        FAIL("execute accepted the desc");
    } catch (const qdml::Error& e) {
        message = e.what();
    }
    INFO(message);
    for (const auto& f : fragments) CHECK(message.find(f) != std::string::npos);
    const auto r = qdml::dml::try_execute(op, b, o);
    CHECK(r.hr == hr);
    CHECK_FALSE(r.ok());
    CHECK(r.message == message);
}

TEST_CASE("calc_buffer_tensor_size: DMLCalcBufferTensorSize's documented formula", "[directml]") {
    const UINT s23[] = {2, 3};
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_UINT8, 2, s23, nullptr) == 8);     // 6 bytes -> 8
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_FLOAT16, 2, s23, nullptr) == 12);  // 12 bytes
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_INT64, 2, s23, nullptr) == 48);
    const UINT s22[] = {2, 2}, padded_rows[] = {4, 1};
    // last index 1*4 + 1*1 = 5: (5 + 1) * 4 bytes = 24
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_FLOAT32, 2, s22, padded_rows) == 24);
    const UINT s1115[] = {1, 1, 1, 5}, zeros[] = {0, 0, 0, 0};
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_INT8, 4, s1115, zeros) == 4);  // one element -> 4
    // last index 65535*65536 + 65535 = 2^32 - 1: 2^32 elements of 4 bytes (64-bit arithmetic)
    const UINT big[] = {65536, 65536}, big_strides[] = {65536, 1};
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_UINT32, 2, big, big_strides) == (UINT64{1} << 34));
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_UNKNOWN, 2, s23, nullptr) == 0);
    CHECK(calc_buffer_tensor_size(static_cast<DML_TENSOR_DATA_TYPE>(99), 2, s23, nullptr) == 0);
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_UINT8, 2, nullptr, nullptr) == 0);
    CHECK(calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_UINT8, 0, s23, nullptr) == 0);
}

TEST_CASE("execute: ELEMENT_WISE_CLIP from DirectML structs", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 4}), out(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 4});
    DML_SCALE_BIAS scale_bias{2.0f, 0.5f};
    DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clip{};
    clip.InputTensor = &in.desc;
    clip.OutputTensor = &out.desc;
    clip.ScaleBias = &scale_bias;
    clip.Min = 0.0f;
    clip.Max = 2.5f;
    DML_OPERATOR_DESC op{DML_OPERATOR_ELEMENT_WISE_CLIP, &clip};
    std::vector<float> x = {-1.5f, 0.25f, 3.0f, 7.0f}, y = sentinel_buffer<float>(out);
    qdml::dml::execute(op, {buffer(x), buffer(y)});
    // g = 2x + 0.5: -2.5, 1.0, 6.5, 14.5; clipped to [0, 2.5]
    CHECK(y == std::vector<float>{0.0f, 1.0f, 2.5f, 2.5f});
    CHECK(qdml::dml::try_execute(op, {buffer(x), buffer(y)}).hr == qdml::dml::kOk);
}

TEST_CASE("execute: ELEMENT_WISE_DEQUANTIZE_LINEAR with per-tensor parameters by zero strides", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_UINT8, {1, 4});
    DmlTensor scale(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 4}, {0, 0});
    DmlTensor zero_point(DML_TENSOR_DATA_TYPE_UINT8, {1, 4}, {0, 0});
    DmlTensor out(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 4});
    DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC dq{&in.desc, &scale.desc, &zero_point.desc, &out.desc};
    DML_OPERATOR_DESC op{DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR, &dq};
    auto x = padded<std::uint8_t>({0, 128, 255, 10}, in);
    auto s = padded<float>({0.5f}, scale);
    auto zp = padded<std::uint8_t>({128}, zero_point);
    auto y = sentinel_buffer<float>(out);
    qdml::dml::execute(op, {buffer(x), buffer(s), buffer(zp), buffer(y)});
    CHECK(y == std::vector<float>{-64.0f, 0.0f, 63.5f, -59.0f});  // (x - 128) * 0.5

    // Without ZeroPoint (optional from 6.2): an empty binding in its place.
    dq.ZeroPointTensor = nullptr;
    qdml::dml::execute(op, {buffer(x), buffer(s), Binding{}, buffer(y)});
    CHECK(y == std::vector<float>{0.0f, 64.0f, 127.5f, 5.0f});
    // ... which feature level 6.1 rejects.
    qdml::dml::ExecuteOptions level_6_1;
    level_6_1.feature_level = DML_FEATURE_LEVEL_6_1;
    require_rejected(op, {buffer(x), buffer(s), Binding{}, buffer(y)}, qdml::dml::kInvalidArg,
                     {"ELEMENT_WISE_DEQUANTIZE_LINEAR: ZeroPointTensor: ", "6.2"}, level_6_1);
}

TEST_CASE("execute: ELEMENT_WISE_QUANTIZE_LINEAR, per-tensor scale, per-element zero point", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 4});
    DmlTensor scale(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 4}, {0, 0});
    DmlTensor zero_point(DML_TENSOR_DATA_TYPE_INT8, {1, 4});
    DmlTensor out(DML_TENSOR_DATA_TYPE_INT8, {1, 4});
    DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC q{&in.desc, &scale.desc, &zero_point.desc, &out.desc};
    DML_OPERATOR_DESC op{DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR, &q};
    auto x = padded<float>({2.25f, -1.25f, 100.0f, std::numeric_limits<float>::quiet_NaN()}, in);
    auto s = padded<float>({0.3f}, scale);
    auto zp = padded<std::int8_t>({1, 0, 100, 5}, zero_point);
    auto y = sentinel_buffer<std::int8_t>(out);
    qdml::dml::execute(op, {buffer(x), buffer(s), buffer(zp), buffer(y)});
    // 2.25 / 0.3f = 7.4999995 -> 7 + 1; -1.25 / 0.3f = -4.17 -> -4; 333.3 + 100 -> 127; NaN -> 0 in
    // the directml profile (a zero point per element: DirectML's strided form), -128 in the exact one.
    CHECK(y == std::vector<std::int8_t>{8, -4, 127, 0});
    qdml::dml::ExecuteOptions exact;
    exact.fidelity = qdml::Fidelity::Exact;
    qdml::dml::execute(op, {buffer(x), buffer(s), buffer(zp), buffer(y)}, exact);
    CHECK(y == std::vector<std::int8_t>{8, -4, 127, -128});

    // Without ZeroPoint (from 6.2): 0 for NaN in the directml profile, -128 in the exact one.
    q.ZeroPointTensor = nullptr;
    qdml::dml::execute(op, {buffer(x), buffer(s), Binding{}, buffer(y)});
    CHECK(y == std::vector<std::int8_t>{7, -4, 127, 0});
    qdml::dml::execute(op, {buffer(x), buffer(s), Binding{}, buffer(y)}, exact);
    CHECK(y == std::vector<std::int8_t>{7, -4, 127, -128});
    qdml::dml::ExecuteOptions level_6_1;
    level_6_1.feature_level = DML_FEATURE_LEVEL_6_1;
    require_rejected(op, {buffer(x), buffer(s), Binding{}, buffer(y)}, qdml::dml::kInvalidArg,
                     {"ELEMENT_WISE_QUANTIZE_LINEAR: ZeroPointTensor: ", "6.2"}, level_6_1);
}

TEST_CASE("execute: ELEMENT_WISE_CLIP1, INT64 bounds beyond 2^53, Min > Max, ScaleBias", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_INT64, {4}), out(DML_TENSOR_DATA_TYPE_INT64, {4});
    DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC clip{&in.desc, &out.desc, nullptr, DML_TENSOR_DATA_TYPE_INT64, {}, {}};
    constexpr std::int64_t k2p53 = std::int64_t{1} << 53;
    clip.Min.Int64 = -k2p53 - 1;
    clip.Max.Int64 = k2p53 + 1;  // not binary32 (nor binary64: 2^53 + 1) values
    DML_OPERATOR_DESC op{DML_OPERATOR_ELEMENT_WISE_CLIP1, &clip};
    auto x = padded<std::int64_t>({std::numeric_limits<std::int64_t>::min(), -5, k2p53 + 2, k2p53}, in);
    auto y = sentinel_buffer<std::int64_t>(out);
    qdml::dml::execute(op, {buffer(x), buffer(y)});
    CHECK(y == std::vector<std::int64_t>{-k2p53 - 1, -5, k2p53 + 1, k2p53});
    // Min > Max: Max in the exact profile (ONNX's order), Min in the directml one (DirectML's)
    clip.Min.Int64 = 10;
    clip.Max.Int64 = -10;
    qdml::dml::execute(op, {buffer(x), buffer(y)});
    CHECK(y == std::vector<std::int64_t>(4, 10));
    qdml::dml::ExecuteOptions exact;
    exact.fidelity = qdml::Fidelity::Exact;
    qdml::dml::execute(op, {buffer(x), buffer(y)}, exact);
    CHECK(y == std::vector<std::int64_t>(4, -10));
    // MinMaxDataType other than the output's, ScaleBias on INT64 (directml), feature level 4.1
    clip.MinMaxDataType = DML_TENSOR_DATA_TYPE_INT32;
    require_rejected(op, {buffer(x), buffer(y)}, qdml::dml::kInvalidArg, {"ELEMENT_WISE_CLIP1: MinMaxDataType: "});
    clip.MinMaxDataType = DML_TENSOR_DATA_TYPE_INT64;
    DML_SCALE_BIAS sb{0.5f, 0.0f};
    clip.ScaleBias = &sb;
    require_rejected(op, {buffer(x), buffer(y)}, qdml::dml::kInvalidArg, {"ELEMENT_WISE_CLIP1: ScaleBias: ", "INT64"});
    clip.ScaleBias = nullptr;
    qdml::dml::ExecuteOptions level_4_1;
    level_4_1.feature_level = DML_FEATURE_LEVEL_4_1;
    require_rejected(op, {buffer(x), buffer(y)}, qdml::dml::kInvalidArg, {"ELEMENT_WISE_CLIP1: operator: ", "5.0"},
                     level_4_1);
}

TEST_CASE("execute: ELEMENT_WISE_QUANTIZED_LINEAR_ADD, INT8", "[directml]") {
    DmlTensor a(DML_TENSOR_DATA_TYPE_INT8, {2}), b(DML_TENSOR_DATA_TYPE_INT8, {2}), out(DML_TENSOR_DATA_TYPE_INT8, {2});
    DmlTensor a_scale(DML_TENSOR_DATA_TYPE_FLOAT32, {1}), b_scale(DML_TENSOR_DATA_TYPE_FLOAT32, {1});
    DmlTensor b_zp(DML_TENSOR_DATA_TYPE_INT8, {1}), out_scale(DML_TENSOR_DATA_TYPE_FLOAT32, {1});
    DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC add{};
    add.ATensor = &a.desc;
    add.AScaleTensor = &a_scale.desc;
    add.BTensor = &b.desc;
    add.BScaleTensor = &b_scale.desc;
    add.BZeroPointTensor = &b_zp.desc;
    add.OutputScaleTensor = &out_scale.desc;
    add.OutputTensor = &out.desc;
    DML_OPERATOR_DESC op{DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD, &add};
    auto av = padded<std::int8_t>({10, -20}, a), bv = padded<std::int8_t>({4, 6}, b);
    std::vector<float> as{0.5f}, bs{0.25f}, os{1.0f};
    auto bzp = padded<std::int8_t>({2}, b_zp);
    auto y = sentinel_buffer<std::int8_t>(out);
    const std::vector<Binding> bindings = {buffer(av), buffer(as), Binding{},  buffer(bv), buffer(bs),
                                           buffer(bzp), buffer(os), Binding{}, buffer(y)};
    qdml::dml::execute(op, bindings);
    // 10*0.5 + (4-2)*0.25 = 5.5 -> 6 (ties to even); -20*0.5 + (6-2)*0.25 = -9
    CHECK(y[0] == 6);
    CHECK(y[1] == -9);
    // ADD exists from feature level 4.0.
    qdml::dml::ExecuteOptions level_3_1;
    level_3_1.feature_level = DML_FEATURE_LEVEL_3_1;
    require_rejected(op, bindings, qdml::dml::kInvalidArg,
                     {"ELEMENT_WISE_QUANTIZED_LINEAR_ADD: operator: requires DML_FEATURE_LEVEL 4.0"}, level_3_1);
}

TEST_CASE("execute: QUANTIZED_LINEAR_MATRIX_MULTIPLY, UINT8", "[directml]") {
    DmlTensor a(DML_TENSOR_DATA_TYPE_UINT8, {2, 2}), b(DML_TENSOR_DATA_TYPE_UINT8, {2, 1});
    DmlTensor one(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 1}), out(DML_TENSOR_DATA_TYPE_UINT8, {2, 1});
    DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC mm{};
    mm.ATensor = &a.desc;
    mm.AScaleTensor = &one.desc;
    mm.BTensor = &b.desc;
    mm.BScaleTensor = &one.desc;
    mm.OutputScaleTensor = &one.desc;
    mm.OutputTensor = &out.desc;
    DML_OPERATOR_DESC op{DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY, &mm};
    auto av = padded<std::uint8_t>({1, 2, 3, 4}, a), bv = padded<std::uint8_t>({5, 6}, b);
    std::vector<float> a_scale{1.0f}, b_scale{1.0f}, out_scale{2.0f};
    auto y = sentinel_buffer<std::uint8_t>(out);
    qdml::dml::execute(op, {buffer(av), buffer(a_scale), Binding{}, buffer(bv), buffer(b_scale), Binding{},
                            buffer(out_scale), Binding{}, buffer(y)});
    // [1 2; 3 4] x [5; 6] = [17; 39]; / 2 = 8.5 -> 8, 19.5 -> 20 (ties to even)
    CHECK(y[0] == 8);
    CHECK(y[1] == 20);
}

TEST_CASE("execute: MATRIX_MULTIPLY_INTEGER, UINT8 x INT8 with zero points", "[directml]") {
    DmlTensor a(DML_TENSOR_DATA_TYPE_UINT8, {2, 2}), azp(DML_TENSOR_DATA_TYPE_UINT8, {2, 1});
    DmlTensor b(DML_TENSOR_DATA_TYPE_INT8, {2, 1}), bzp(DML_TENSOR_DATA_TYPE_INT8, {1, 1});
    DmlTensor out(DML_TENSOR_DATA_TYPE_INT32, {2, 1});
    DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC mm{};
    mm.ATensor = &a.desc;
    mm.AZeroPointTensor = &azp.desc;
    mm.BTensor = &b.desc;
    mm.BZeroPointTensor = &bzp.desc;
    mm.OutputTensor = &out.desc;
    DML_OPERATOR_DESC op{DML_OPERATOR_MATRIX_MULTIPLY_INTEGER, &mm};
    auto av = padded<std::uint8_t>({1, 2, 255, 0}, a), azv = padded<std::uint8_t>({0, 255}, azp);
    auto bv = padded<std::int8_t>({5, -128}, b), bzv = padded<std::int8_t>({127}, bzp);
    auto y = sentinel_buffer<std::int32_t>(out);
    qdml::dml::execute(op, {buffer(av), buffer(azv), buffer(bv), buffer(bzv), buffer(y)});
    // A - AZP = [1 2; 0 -255], B - BZP = [-122; -255]: [1*-122 + 2*-255; 0 + -255*-255] = [-632; 65025]
    CHECK(y[0] == -632);
    CHECK(y[1] == 65025);
    // Without the zero points: [1*5 + 2*-128; 255*5 + 0] = [-251; 1275]
    mm.AZeroPointTensor = nullptr;
    mm.BZeroPointTensor = nullptr;
    qdml::dml::execute(op, {buffer(av), Binding{}, buffer(bv), Binding{}, buffer(y)});
    CHECK(y[0] == -251);
    CHECK(y[1] == 1275);
}

TEST_CASE("execute: MATRIX_MULTIPLY_INTEGER_TO_FLOAT, UINT8 x INT8 with zero points, scales and a bias",
          "[directml]") {
    DmlTensor a(DML_TENSOR_DATA_TYPE_UINT8, {2, 2}), as(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 1}),
        azp(DML_TENSOR_DATA_TYPE_UINT8, {2, 1});
    DmlTensor b(DML_TENSOR_DATA_TYPE_INT8, {2, 1}), bs(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 1}),
        bzp(DML_TENSOR_DATA_TYPE_INT8, {1, 1});
    DmlTensor bias(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 1}), out(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 1});
    DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC mm{};
    mm.ATensor = &a.desc;
    mm.AScaleTensor = &as.desc;
    mm.AZeroPointTensor = &azp.desc;
    mm.BTensor = &b.desc;
    mm.BScaleTensor = &bs.desc;
    mm.BZeroPointTensor = &bzp.desc;
    mm.BiasTensor = &bias.desc;
    mm.OutputTensor = &out.desc;
    DML_OPERATOR_DESC op{DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT, &mm};
    auto av = padded<std::uint8_t>({1, 2, 255, 0}, a), azv = padded<std::uint8_t>({0, 255}, azp);
    auto bv = padded<std::int8_t>({5, -128}, b), bzv = padded<std::int8_t>({127}, bzp);
    auto asv = padded<float>({0.5f, 0.25f}, as), bsv = padded<float>({2.0f}, bs), biasv = padded<float>({1.0f, -1.0f}, bias);
    auto y = sentinel_buffer<float>(out);
    // A - AZP = [1 2; 0 -255], B - BZP = [-122; -255]: acc [-632; 65025] (as MATRIX_MULTIPLY_INTEGER's
    // test); times AScale[m] * BScale = [1; 0.5]: [-632; 32512.5]; + Bias [1; -1]: [-631; 32511.5]. Every
    // step is exact in binary32, so both profiles give these.
    for (auto f : {qdml::Fidelity::DirectML, qdml::Fidelity::Exact}) {
        qdml::dml::ExecuteOptions o;
        o.fidelity = f;
        qdml::dml::execute(op, {buffer(av), buffer(asv), buffer(azv), buffer(bv), buffer(bsv), buffer(bzv),
                                buffer(biasv), buffer(y)}, o);
        CHECK(y[0] == -631.0f);
        CHECK(y[1] == 32511.5f);
    }
    // Without the zero points and the bias: [1*5 + 2*-128; 255*5 + 0] = [-251; 1275], times [1; 0.5].
    mm.AZeroPointTensor = nullptr;
    mm.BZeroPointTensor = nullptr;
    mm.BiasTensor = nullptr;
    qdml::dml::execute(op, {buffer(av), buffer(asv), Binding{}, buffer(bv), buffer(bsv), Binding{}, Binding{}, buffer(y)});
    CHECK(y[0] == -251.0f);
    CHECK(y[1] == 637.5f);
}

TEST_CASE("execute: DYNAMIC_QUANTIZE_LINEAR, FLOAT32 to UINT8 with its three outputs", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 2}), out(DML_TENSOR_DATA_TYPE_UINT8, {2, 2});
    DmlTensor scale(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 1}), zp(DML_TENSOR_DATA_TYPE_UINT8, {1, 1});
    DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC dq{&in.desc, &out.desc, &scale.desc, &zp.desc};
    DML_OPERATOR_DESC op{DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR, &dq};
    auto x = padded<float>({-1.0f, 0.0f, 2.0f, 1.0f}, in);
    // m = -1, M = 2 (numpy, binary32): exact s = 3 / 255 = 0.011764706, 1 / s = 85 (x / s exact here):
    // z = Z(0 + 85) = 85, outputs Q(-85, 85) = 0, 85, Q(170, 85) = 255, Q(85, 85) = 170; directml
    // s = 3 * fp32(1/255) = 0.011764707, r = 1 / s = 84.99999: z = Z(0 + 84.99999) = 85, outputs
    // Q(-84.99999, 85) = 0, 85, Q(169.99998, 85) = 255, Q(84.99999, 85) = 170: the same but the scale.
    for (auto f : {qdml::Fidelity::DirectML, qdml::Fidelity::Exact}) {
        auto y = sentinel_buffer<std::uint8_t>(out);
        auto s = sentinel_buffer<float>(scale);
        auto z = sentinel_buffer<std::uint8_t>(zp);
        qdml::dml::ExecuteOptions o;
        o.fidelity = f;
        qdml::dml::execute(op, {buffer(x), buffer(y), buffer(s), buffer(z)}, o);
        CHECK(y[0] == 0);
        CHECK(y[1] == 85);
        CHECK(y[2] == 255);
        CHECK(y[3] == 170);
        CHECK(s[0] == (f == qdml::Fidelity::Exact ? 3.0f / 255.0f : 3.0f * qdml::kOneOver255));
        CHECK(z[0] == 85);
    }
    SECTION("an output that overlaps another output is rejected") {
        auto y = sentinel_buffer<std::uint8_t>(out);
        auto s = sentinel_buffer<float>(scale);
        require_rejected(op, {buffer(x), buffer(y), buffer(s), Binding{y.data(), 4}}, qdml::dml::kInvalidArg,
                         {"DYNAMIC_QUANTIZE_LINEAR: OutputZeroPointTensor:", "OutputTensor"});
    }
}

TEST_CASE("execute: QUANTIZED_LINEAR_AVERAGE_POOLING, UINT8 with padding, both profiles", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 1, 2}), out(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 1, 3});
    DmlTensor xs(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 1, 1, 1}), ys(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 1, 1, 1});
    DmlTensor xzp(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 1, 1}), yzp(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 1, 1});
    const UINT strides[] = {1, 1}, window[] = {1, 2}, start[] = {0, 2}, end[] = {0, 0}, dilations[] = {1, 1};
    DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC pool{};
    pool.InputTensor = &in.desc;
    pool.InputScaleTensor = &xs.desc;
    pool.InputZeroPointTensor = &xzp.desc;
    pool.OutputScaleTensor = &ys.desc;
    pool.OutputZeroPointTensor = &yzp.desc;
    pool.OutputTensor = &out.desc;
    pool.DimensionCount = 2;
    pool.Strides = strides;
    pool.WindowSize = window;
    pool.StartPadding = start;
    pool.EndPadding = end;
    pool.Dilations = dilations;
    pool.IncludePadding = 0;
    DML_OPERATOR_DESC op{DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING, &pool};
    auto x = padded<std::uint8_t>({3, 6}, in), xz = padded<std::uint8_t>({1}, xzp), yz = padded<std::uint8_t>({4}, yzp);
    auto s1 = padded<float>({1.0f}, xs), s2 = padded<float>({1.0f}, ys);
    // X - XZP = {2, 5}; WindowSize 2 with StartPadding 2: oW = 1 + (2 + 2 - 2) = 3; windows
    // {pad, pad}: 0/0 = NaN -> the low end 0 (both profiles: a one-element zero point);
    // {pad, 2}: 2/1 = 2 + 4 = 6; {2, 5}: 7/2 = 3.5 -> 4 + 4 = 8 (DirectML's nan_both_zp_UINT8)
    for (auto f : {qdml::Fidelity::DirectML, qdml::Fidelity::Exact}) {
        auto y = sentinel_buffer<std::uint8_t>(out);
        qdml::dml::ExecuteOptions o;
        o.fidelity = f;
        qdml::dml::execute(op, {buffer(x), buffer(s1), buffer(xz), buffer(s2), buffer(yz), buffer(y)}, o);
        CHECK(y[0] == 0);
        CHECK(y[1] == 6);
        CHECK(y[2] == 8);
    }
    // Without the zero points: {pad, 3} = 3, {3, 6} = 4.5 -> 4; the NaN window gives 255 in the
    // directml profile (no OutputZeroPointTensor), 0 in the exact one (DirectML's nan_no_zp_UINT8).
    pool.InputZeroPointTensor = nullptr;
    pool.OutputZeroPointTensor = nullptr;
    pool.IncludePadding = 1;  // count 2: {pad, pad} = 0, {pad, 3} = 1.5 -> 2, {3, 6} = 4.5 -> 4
    auto y = sentinel_buffer<std::uint8_t>(out);
    qdml::dml::execute(op, {buffer(x), buffer(s1), Binding{}, buffer(s2), Binding{}, buffer(y)});
    CHECK(y[0] == 0);
    CHECK(y[1] == 2);
    CHECK(y[2] == 4);
    pool.IncludePadding = 0;
    qdml::dml::execute(op, {buffer(x), buffer(s1), Binding{}, buffer(s2), Binding{}, buffer(y)});
    CHECK(y[0] == 255);
    CHECK(y[1] == 3);
    CHECK(y[2] == 4);
}

TEST_CASE("execute: CONVOLUTION_INTEGER, UINT8 x INT8 with zero points and padding", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 2, 2}), xzp(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 1, 1});
    DmlTensor filter(DML_TENSOR_DATA_TYPE_INT8, {1, 1, 2, 2}), fzp(DML_TENSOR_DATA_TYPE_INT8, {1, 1, 1, 1});
    DmlTensor out(DML_TENSOR_DATA_TYPE_INT32, {1, 1, 2, 1});
    const UINT strides[] = {1, 1}, dilations[] = {1, 1}, start[] = {0, 0}, end[] = {1, 0};
    DML_CONVOLUTION_INTEGER_OPERATOR_DESC conv{};
    conv.InputTensor = &in.desc;
    conv.InputZeroPointTensor = &xzp.desc;
    conv.FilterTensor = &filter.desc;
    conv.FilterZeroPointTensor = &fzp.desc;
    conv.OutputTensor = &out.desc;
    conv.DimensionCount = 2;
    conv.Strides = strides;
    conv.Dilations = dilations;
    conv.StartPadding = start;
    conv.EndPadding = end;
    conv.GroupCount = 1;
    DML_OPERATOR_DESC op{DML_OPERATOR_CONVOLUTION_INTEGER, &conv};
    auto x = padded<std::uint8_t>({1, 2, 3, 255}, in), xz = padded<std::uint8_t>({1}, xzp);
    auto f = padded<std::int8_t>({1, 1, 1, -128}, filter), fz = padded<std::int8_t>({127}, fzp);
    auto y = sentinel_buffer<std::int32_t>(out);
    qdml::dml::execute(op, {buffer(x), buffer(xz), buffer(f), buffer(fz), buffer(y)});
    // X - XZP = [0 1; 2 254], F - FZP = [-126 -126; -126 -255]; oH = 1 + (2 + 1 - 2) = 2, oW = 1
    // row 0: 0 + 1*-126 + 2*-126 + 254*-255 = -65148; row 1 (bottom padding): 2*-126 + 254*-126 = -32256
    CHECK(y[0] == -65148);
    CHECK(y[1] == -32256);
    // Without the zero points: row 0: 1 + 2 + 3 - 128*255 = -32634; row 1: 3 + 255 = 258
    conv.InputZeroPointTensor = nullptr;
    conv.FilterZeroPointTensor = nullptr;
    qdml::dml::execute(op, {buffer(x), Binding{}, buffer(f), Binding{}, buffer(y)});
    CHECK(y[0] == -32634);
    CHECK(y[1] == 258);
}

TEST_CASE("execute: QUANTIZED_LINEAR_CONVOLUTION with Bias, padding and parameter arrays", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 2, 2}), filter(DML_TENSOR_DATA_TYPE_INT8, {1, 1, 2, 2});
    DmlTensor one(DML_TENSOR_DATA_TYPE_FLOAT32, {1, 1, 1, 1}), bias(DML_TENSOR_DATA_TYPE_INT32, {1, 1, 1, 1});
    DmlTensor out(DML_TENSOR_DATA_TYPE_UINT8, {1, 1, 2, 1});
    const UINT strides[] = {1, 1}, dilations[] = {1, 1}, start[] = {0, 0}, end[] = {1, 0};
    DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC conv{};
    conv.InputTensor = &in.desc;
    conv.InputScaleTensor = &one.desc;
    conv.FilterTensor = &filter.desc;
    conv.FilterScaleTensor = &one.desc;
    conv.BiasTensor = &bias.desc;
    conv.OutputScaleTensor = &one.desc;
    conv.OutputTensor = &out.desc;
    conv.DimensionCount = 2;
    conv.Strides = strides;
    conv.Dilations = dilations;
    conv.StartPadding = start;
    conv.EndPadding = end;
    conv.GroupCount = 1;
    DML_OPERATOR_DESC op{DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION, &conv};
    auto x = padded<std::uint8_t>({1, 2, 3, 4}, in);
    auto f = padded<std::int8_t>({1, 1, 1, 1}, filter);
    std::vector<float> s{1.0f};
    std::vector<std::int32_t> bv{-3};
    auto y = sentinel_buffer<std::uint8_t>(out);
    const std::vector<Binding> bindings = {buffer(x), buffer(s), Binding{}, buffer(f), buffer(s),
                                           Binding{}, buffer(bv), buffer(s), Binding{}, buffer(y)};
    qdml::dml::execute(op, bindings);
    // oH = 1 + (2 + 0 + 1 - 2) / 1 = 2, oW = 1; row 0: 1+2+3+4 - 3 = 7; row 1 (bottom padding): 3+4 - 3 = 4
    CHECK(y[0] == 7);
    CHECK(y[1] == 4);

    SECTION("a null parameter array is rejected") {
        conv.Dilations = nullptr;
        y = sentinel_buffer<std::uint8_t>(out);
        const std::vector<Binding> b2 = {buffer(x), buffer(s), Binding{}, buffer(f), buffer(s),
                                         Binding{}, buffer(bv), buffer(s), Binding{}, buffer(y)};
        require_rejected(op, b2, qdml::dml::kInvalidArg, {"QUANTIZED_LINEAR_CONVOLUTION: Dilations: is null"});
        CHECK(untouched(y));
    }
}

TEST_CASE("execute rejects without writing: null member, Type tag, operator type, bindings", "[directml]") {
    DmlTensor in(DML_TENSOR_DATA_TYPE_INT16, {3}), out(DML_TENSOR_DATA_TYPE_INT16, {3});
    DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clip{&in.desc, &out.desc, nullptr, -1.0f, 1.0f};
    DML_OPERATOR_DESC op{DML_OPERATOR_ELEMENT_WISE_CLIP, &clip};
    auto x = padded<std::int16_t>({-5, 0, 5}, in);
    auto y = sentinel_buffer<std::int16_t>(out);
    const auto E = qdml::dml::kInvalidArg;

    SECTION("null required tensor") {
        clip.InputTensor = nullptr;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"ELEMENT_WISE_CLIP: InputTensor: is null"});
    }
    SECTION("wrong Type tag") {
        in.desc.Type = DML_TENSOR_TYPE_INVALID;
        require_rejected(op, {buffer(x), buffer(y)}, E,
                         {"ELEMENT_WISE_CLIP: InputTensor: Type 0 is not DML_TENSOR_TYPE_BUFFER"});
    }
    SECTION("null buffer desc") {
        out.desc.Desc = nullptr;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"ELEMENT_WISE_CLIP: OutputTensor: Desc is null"});
    }
    SECTION("unsupported operator type") {
        op.Type = static_cast<DML_OPERATOR_TYPE>(149);  // DML_OPERATOR_ROI_ALIGN1
        require_rejected(op, {buffer(x), buffer(y)}, qdml::dml::kNotImpl, {"DML_OPERATOR_TYPE 149 is not implemented"});
        op.Type = static_cast<DML_OPERATOR_TYPE>(4);  // DML_OPERATOR_ELEMENT_WISE_ADD
        require_rejected(op, {buffer(x), buffer(y)}, qdml::dml::kNotImpl, {"DML_OPERATOR_TYPE 4 is not implemented"});
        op.Type = static_cast<DML_OPERATOR_TYPE>(100000);
        require_rejected(op, {buffer(x), buffer(y)}, E, {"Type: 100000 is not a DML_OPERATOR_TYPE"});
        op.Type = DML_OPERATOR_INVALID;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"Type: 0 is not a DML_OPERATOR_TYPE"});
    }
    SECTION("null operator desc") {
        op.Desc = nullptr;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"ELEMENT_WISE_CLIP: Desc: is null"});
    }
    SECTION("too-small binding") {
        // TotalTensorSizeInBytes of 3 INT16 is 8; a 6-byte span is too small.
        require_rejected(op, {buffer(x), Binding{y.data(), 6}}, E,
                         {"ELEMENT_WISE_CLIP: OutputTensor: the bound buffer holds 6 bytes, fewer than "
                          "TotalTensorSizeInBytes 8"});
    }
    SECTION("TotalTensorSizeInBytes below DMLCalcBufferTensorSize") {
        in.buffer.TotalTensorSizeInBytes = 6;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"ELEMENT_WISE_CLIP: InputTensor: TotalTensorSizeInBytes 6"});
    }
    SECTION("binding count, empty binding, binding for an absent tensor") {
        require_rejected(op, {buffer(x)}, E, {"ELEMENT_WISE_CLIP: bindings: 1 byte spans given", "has 2 tensor members"});
        require_rejected(op, {buffer(x), Binding{}}, E, {"ELEMENT_WISE_CLIP: OutputTensor: has no buffer bound"});
        DmlTensor u8(DML_TENSOR_DATA_TYPE_UINT8, {3}), scale(DML_TENSOR_DATA_TYPE_FLOAT32, {3}, {0});
        DmlTensor f32(DML_TENSOR_DATA_TYPE_FLOAT32, {3});
        DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC dq{&u8.desc, &scale.desc, nullptr, &f32.desc};
        DML_OPERATOR_DESC dq_op{DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR, &dq};
        std::vector<float> s{1.0f}, fy(3);
        require_rejected(dq_op, {buffer(x), buffer(s), buffer(s), buffer(fy)}, E,
                         {"ELEMENT_WISE_DEQUANTIZE_LINEAR: ZeroPointTensor: is null (absent), but its binding is not empty"});
    }
    SECTION("Flags, DimensionCount, Sizes, data types DirectML defines but qdml lacks") {
        in.buffer.Flags = static_cast<DML_TENSOR_FLAGS>(0x6);
        require_rejected(op, {buffer(x), buffer(y)}, E, {"InputTensor: Flags 6 has bits DML_TENSOR_FLAGS does not define"});
        in.buffer.Flags = DML_TENSOR_FLAG_OWNED_BY_DML;  // accepted: the data is still in the binding
        CHECK(qdml::dml::try_execute(op, {buffer(x), buffer(y)}).ok());
        CHECK(y[0] == -1);
        CHECK(y[2] == 1);
        y = sentinel_buffer<std::int16_t>(out);
        out.buffer.Flags = DML_TENSOR_FLAG_OWNED_BY_DML;  // "can only be used on input tensors"
        require_rejected(op, {buffer(x), buffer(y)}, E,
                         {"ELEMENT_WISE_CLIP: OutputTensor: Flags has DML_TENSOR_FLAG_OWNED_BY_DML, which only input"});
        out.buffer.Flags = DML_TENSOR_FLAG_NONE;
        in.buffer.DimensionCount = 9;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"InputTensor: DimensionCount 9 is outside 1..8"});
        in.buffer.DimensionCount = 1;
        in.buffer.Sizes = nullptr;
        require_rejected(op, {buffer(x), buffer(y)}, E, {"InputTensor: Sizes is null"});
        in.buffer.Sizes = in.sizes.data();
        in.buffer.DataType = static_cast<DML_TENSOR_DATA_TYPE>(13);
        require_rejected(op, {buffer(x), buffer(y)}, E, {"InputTensor: DataType INT4 is not supported"});
    }
    SECTION("an undefined feature level") {
        qdml::dml::ExecuteOptions o;
        o.feature_level = static_cast<DML_FEATURE_LEVEL>(0x6500);
        require_rejected(op, {buffer(x), buffer(y)}, E, {"ExecuteOptions: feature_level: 0x6500 is not a DML_FEATURE_LEVEL"}, o);
    }
    CHECK(untouched(y));
}

}  // namespace
