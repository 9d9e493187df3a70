// QUANTIZE and DEQUANTIZE (docs/semantics.md section 18), with UINT4/INT4
// tensors. Every expected value below is derived by hand from
//   QUANTIZE:   Output[i] = Q(x / s, zp)   (one binary32 division, NaN to the low end, ties to even, saturated)
//   DEQUANTIZE: Output[i] = fp32(x - zp) * s
// with s and zp read at the element's block (Input size / scale size per
// dimension) and, for SCALE, zp = 2^(bits-1) for an unsigned type, 0 for a
// signed one; 4-bit elements two a byte, the first in the low nibble
// (INT4 two's complement in its nibble). The values are chosen so that no
// binary32 rounding decides anything (scales are powers of two).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "qdml/check/exact.hpp"
#include "qdml/directml.hpp"
#include "qdml/qdml.hpp"

namespace {

using qdml::TensorDataType;
using DT = TensorDataType;
using Bytes = std::vector<std::uint8_t>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

qdml::TensorDesc desc(DT t, std::vector<std::uint32_t> sizes, std::vector<std::uint32_t> strides = {}) {
    return qdml::TensorDesc::make(t, sizes, strides);
}

/// One QUANTIZE or DEQUANTIZE over caller-owned buffers.
template <class Desc>
struct Op {
    Desc d;
    Op(qdml::Tensor in, qdml::QuantizationType qt, qdml::Tensor scale, qdml::OptionalTensor zp, qdml::Tensor out) {
        d.InputTensor = in;
        d.QuantizationType = qt;
        d.QuantizationTensors = {scale, zp};
        d.OutputTensor = out;
    }
};

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("4-bit tensor sizes: half a byte an element, rounded up to 4 bytes", "[quantize][4bit]") {
    CHECK(qdml::element_bits(DT::UInt4) == 4);
    CHECK(qdml::element_bits(DT::Int4) == 4);
    CHECK(qdml::parse_data_type("UINT4") == DT::UInt4);
    CHECK(qdml::parse_data_type("INT4") == DT::Int4);
    CHECK(desc(DT::UInt4, {8}).TotalTensorSizeInBytes == 4);    // 8 nibbles: 4 bytes
    CHECK(desc(DT::UInt4, {9}).TotalTensorSizeInBytes == 8);    // 5 bytes, rounded up to 8
    CHECK(desc(DT::Int4, {3}, {3}).TotalTensorSizeInBytes == 4);  // span 7: 4 bytes
    CHECK(desc(DT::Int4, {17}).TotalTensorSizeInBytes == 12);   // 9 bytes: 12
    // DirectML's helper agrees (qdml::dml::calc_buffer_tensor_size).
    const UINT sizes[1] = {9};
    CHECK(qdml::dml::calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE_UINT4, 1, sizes, nullptr) == 8);
}

TEST_CASE("QUANTIZE to UINT4 with blocks and the implied zero point 8", "[quantize][4bit]") {
    // Scale {1, 0.5} over two blocks of four; SCALE: zero point 8.
    // Block 0: 0.5 -> 0 (tie to even) + 8 = 8; 1.5 -> 2 + 8 = 10; 2.5 -> 2 + 8 = 10; -2.5 -> -2 + 8 = 6.
    // Block 1 (x / 0.5): 100 -> 200, saturated 15; -100 -> 0; 7 -> 14 + 8 = 22, saturated 15; 3 -> 6 + 8 = 14.
    // Nibbles 8, A, A, 6, F, 0, F, E -> bytes 0xA8, 0x6A, 0x0F, 0xEF.
    const float x[8] = {0.5f, 1.5f, 2.5f, -2.5f, 100.f, -100.f, 7.f, 3.f};
    const float s[2] = {1.0f, 0.5f};
    for (auto impl : {qdml::Implementation::Reference, qdml::Implementation::Simd}) {
        Bytes out(4, 0x55);
        Op<qdml::QuantizeDesc> op({desc(DT::Float32, {8}), x}, qdml::QuantizationType::Scale, {desc(DT::Float32, {2}), s},
                                  std::nullopt, {desc(DT::UInt4, {8}), out.data()});
        qdml::RunOptions o;
        o.implementation = impl;
        qdml::run(op.d, o);
        CHECK(out == Bytes{0xA8, 0x6A, 0x0F, 0xEF});
    }
}

TEST_CASE("QUANTIZE to INT4: NaN to -8, ties to even, saturation, a zero point", "[quantize][4bit]") {
    // zp -3: NaN -> -8; 2.5 -> 2 - 3 = -1; -2.5 -> -2 - 3 = -5; 100 -> 7; -100 -> -8; 0.5 -> 0 - 3 = -3;
    // 1.5 -> 2 - 3 = -1; -0.0 -> -3; +inf -> 7; -inf -> -8.
    // Nibbles 8, F, B, 7, 8, D, F, D, 7, 8 -> bytes 0xF8, 0x7B, 0xD8, 0xDF, 0x87.
    const float x[10] = {kNaN, 2.5f, -2.5f, 100.f, -100.f, 0.5f, 1.5f, -0.0f, kInf, -kInf};
    const float s = 1.0f;
    const std::uint8_t zp = 0x0D;  // -3 in the low nibble
    Bytes out(8, 0);
    Op<qdml::QuantizeDesc> op({desc(DT::Float32, {10}), x}, qdml::QuantizationType::ScaleZeroPoint,
                              {desc(DT::Float32, {1}), &s}, qdml::Tensor{desc(DT::Int4, {1}), &zp},
                              {desc(DT::Int4, {10}), out.data()});
    qdml::reference::run(op.d);
    CHECK(Bytes(out.begin(), out.begin() + 5) == Bytes{0xF8, 0x7B, 0xD8, 0xDF, 0x87});
    CHECK(qdml::exact::check_exact(op.d).differences.empty());
    // The same bits in the exact profile (one rule: section 18).
    Bytes again(8, 0);
    op.d.OutputTensor = {desc(DT::Int4, {10}), again.data()};
    qdml::reference::run(op.d, qdml::FeatureLevel::Latest, qdml::Fidelity::Exact);
    CHECK(again == out);
}

TEST_CASE("A strided 4-bit output writes its nibbles and keeps the others", "[quantize][4bit]") {
    // Sizes {4}, strides {2}: element k at nibble 2k, the low nibble of byte k. x / 1 + 0 = {1, 2, 3, 4};
    // every high nibble (0xA) stays.
    const float x[4] = {1.f, 2.f, 3.f, 4.f};
    const float s = 1.0f;
    Bytes out(4, 0xAA);
    Op<qdml::QuantizeDesc> op({desc(DT::Float32, {4}), x}, qdml::QuantizationType::Scale, {desc(DT::Float32, {1}), &s},
                              std::nullopt, {desc(DT::Int4, {4}, {2}), out.data()});
    qdml::run(op.d);
    CHECK(out == Bytes{0xA1, 0xA2, 0xA3, 0xA4});
    // A transposed 4-bit input: sizes {2, 3}, strides {1, 2}: element (i, j) at nibble i + 2j.
    // Nibbles 0..5 hold 1, -2, 3, -4, 5, -6 (bytes 0xE1, 0xC3, 0xA5); (i, j) reads nibble i + 2j:
    // row 0: 1, 3, 5; row 1: -2, -4, -6. DEQUANTIZE, scale 0.5, SCALE (INT4: zero point 0).
    const Bytes in = {0xE1, 0xC3, 0xA5, 0x00};
    const float h = 0.5f;
    float y[6] = {};
    Op<qdml::DequantizeDesc> dq({desc(DT::Int4, {2, 3}, {1, 2}), in.data()}, qdml::QuantizationType::Scale,
                                {desc(DT::Float32, {1, 1}), &h}, std::nullopt, {desc(DT::Float32, {2, 3}), y});
    qdml::run(dq.d);
    CHECK(std::vector<float>(y, y + 6) == std::vector<float>{0.5f, 1.5f, 2.5f, -1.f, -2.f, -3.f});
}

TEST_CASE("DEQUANTIZE: blocks in two dimensions, INT4 zero points", "[quantize][4bit]") {
    // Input {2,4} INT4: row 0 {-8, 7, 0, 1}, row 1 {3, -1, -8, 7} (nibbles 8,7,0,1,3,F,8,7: 0x78 0x10 0xF3 0x78).
    // Scale and zero point {1,2}: columns 0-1 s 0.5 zp 1, columns 2-3 s 2 zp -2 (zp nibbles 1, E: 0xE1).
    // (x - zp) * s: row 0: -4.5, 3, 4, 6; row 1: 1, -1, -12, 18.
    const Bytes in = {0x78, 0x10, 0xF3, 0x78};
    const float s[2] = {0.5f, 2.0f};
    const std::uint8_t zp = 0xE1;
    float y[8] = {};
    Op<qdml::DequantizeDesc> op({desc(DT::Int4, {2, 4}), in.data()}, qdml::QuantizationType::ScaleZeroPoint,
                                {desc(DT::Float32, {1, 2}), s}, qdml::Tensor{desc(DT::Int4, {1, 2}), &zp},
                                {desc(DT::Float32, {2, 4}), y});
    qdml::run(op.d);
    CHECK(std::vector<float>(y, y + 8) == std::vector<float>{-4.5f, 3.f, 4.f, 6.f, 1.f, -1.f, -12.f, 18.f});
    CHECK(qdml::exact::check_exact(op.d).differences.empty());
}

TEST_CASE("SCALE implies 2^(bits-1) for unsigned types and 0 for signed ones", "[quantize]") {
    const float half = 0.5f;
    {  // UINT8: (x - 128) * 0.5
        const std::uint8_t x[3] = {0, 128, 255};
        float y[3] = {};
        Op<qdml::DequantizeDesc> op({desc(DT::UInt8, {3}), x}, qdml::QuantizationType::Scale,
                                    {desc(DT::Float32, {1}), &half}, std::nullopt, {desc(DT::Float32, {3}), y});
        qdml::run(op.d);
        CHECK(std::vector<float>(y, y + 3) == std::vector<float>{-64.f, 0.f, 63.5f});
    }
    {  // UINT4: (x - 8) * 0.5 for 0, 8, 15 (nibbles 0, 8 | F: 0x80, 0x0F)
        const Bytes x = {0x80, 0x0F, 0, 0};
        float y[3] = {};
        Op<qdml::DequantizeDesc> op({desc(DT::UInt4, {3}), x.data()}, qdml::QuantizationType::Scale,
                                    {desc(DT::Float32, {1}), &half}, std::nullopt, {desc(DT::Float32, {3}), y});
        qdml::run(op.d);
        CHECK(std::vector<float>(y, y + 3) == std::vector<float>{-4.f, 0.f, 3.5f});
    }
    {  // INT8 quantize, SCALE: 0 stays 0, 1 / 0.5 = 2, -100 / 0.5 = -200 saturated to -128
        const float x[3] = {0.f, 1.f, -100.f};
        std::int8_t y[4] = {};
        Op<qdml::QuantizeDesc> op({desc(DT::Float32, {3}), x}, qdml::QuantizationType::Scale,
                                  {desc(DT::Float32, {1}), &half}, std::nullopt, {desc(DT::Int8, {3}), y});
        qdml::run(op.d);
        CHECK(std::vector<int>(y, y + 3) == std::vector<int>{0, 2, -128});
    }
}

TEST_CASE("QUANTIZE and DEQUANTIZE refuse what DirectML refuses, naming member and rule", "[quantize][validate]") {
    const float x[8] = {};
    const float s[2] = {1.f, 1.f};
    const std::uint8_t zp[8] = {};
    const std::int8_t i8s = 1;
    std::uint8_t out[8] = {};
    auto make = [&] {
        return Op<qdml::QuantizeDesc>({desc(DT::Float32, {8}), x}, qdml::QuantizationType::ScaleZeroPoint,
                                      {desc(DT::Float32, {2}), s}, qdml::Tensor{desc(DT::UInt8, {2}), zp},
                                      {desc(DT::UInt8, {8}), out});
    };
    auto err = [&](auto edit) {
        auto op = make();
        edit(op.d);
        return error_of([&] { qdml::validate(op.d); });
    };
    CHECK(err([](auto&) {}) == "(no error)");
    CHECK_THAT(err([](auto& d) { d.QuantizationType = qdml::QuantizationType::None; }),
               Catch::Contains("QUANTIZE: QuantizationType: NONE (0) is not supported"));
    CHECK_THAT(err([](auto& d) { d.QuantizationType = qdml::QuantizationType::Scale; }),
               Catch::Contains("QuantizationTensorCount: 2 must be 1 for QuantizationType SCALE"));
    CHECK_THAT(err([](auto& d) { d.QuantizationTensors[1].reset(); }),
               Catch::Contains("QuantizationTensorCount: 1 must be 2 for QuantizationType SCALE_ZERO_POINT"));
    CHECK_THAT(err([](auto& d) { d.QuantizationTensors[0].reset(); }),
               Catch::Contains("QuantizationTensors: [1] is given without [0]"));
    CHECK_THAT(err([&](auto& d) { d.QuantizationTensors[0] = qdml::Tensor{desc(DT::Int8, {1}), &i8s}; }),
               Catch::Contains("QuantizationTensors[0]: DataType INT8 is not supported"));
    CHECK_THAT(err([&](auto& d) { d.QuantizationTensors[0] = qdml::Tensor{desc(DT::Float16, {2}), s}; }),
               Catch::Contains("QuantizationTensors[0]: DataType FLOAT16 must equal InputTensor's DataType FLOAT32"));
    CHECK_THAT(err([&](auto& d) {
                   d.QuantizationTensors[0] = qdml::Tensor{desc(DT::Float32, {3}), s};  // 3 does not divide 8
                   d.QuantizationTensors[1] = qdml::Tensor{desc(DT::UInt8, {3}), zp};
               }),
               Catch::Contains("QuantizationTensors[0]: Sizes {3} must divide InputTensor's Sizes {8}"));
    CHECK_THAT(err([&](auto& d) { d.QuantizationTensors[1] = qdml::Tensor{desc(DT::Int8, {2}), zp}; }),
               Catch::Contains("QuantizationTensors[1]: DataType INT8 must equal OutputTensor's DataType UINT8"));
    CHECK_THAT(err([&](auto& d) { d.QuantizationTensors[1] = qdml::Tensor{desc(DT::UInt8, {4}), zp}; }),
               Catch::Contains("QuantizationTensors[1]: Sizes {4} must equal QuantizationTensors[0]'s Sizes {2}"));
    CHECK_THAT(err([&](auto& d) { d.QuantizationTensors[1] = qdml::Tensor{desc(DT::UInt8, {1, 2}), zp}; }),
               Catch::Contains("QuantizationTensors[1]: DimensionCount 2 must equal QuantizationTensors[0]'s"));
    CHECK_THAT(err([&](auto& d) { d.OutputTensor = qdml::Tensor{desc(DT::Float32, {8}), out}; }),
               Catch::Contains("OutputTensor: DataType FLOAT32 is not supported"));
    CHECK_THAT(err([&](auto& d) {
                   auto t = desc(DT::UInt4, {9});
                   t.TotalTensorSizeInBytes = 4;  // 9 nibbles need 5 bytes: 8
                   d.OutputTensor = qdml::Tensor{t, out};
               }),
               Catch::Contains("TotalTensorSizeInBytes 4 is below the minimum DMLCalcBufferTensorSize gives (8)"));
    auto op = make();
    CHECK_THAT(error_of([&] { qdml::validate(op.d, qdml::FeatureLevel::L6_2); }),
               Catch::Contains("QUANTIZE: operator: requires DML_FEATURE_LEVEL 6.3"));
    // 4-bit types stay refused by the operators that do not take them.
    qdml::ElementWiseQuantizeLinearDesc ql{{desc(DT::Float32, {8}), x}, {desc(DT::Float32, {8}, {0}), s}, std::nullopt,
                                           {desc(DT::UInt4, {8}), out}};
    CHECK_THAT(error_of([&] { qdml::validate(ql); }), Catch::Contains("OutputTensor: DataType UINT4 is not supported"));
}

TEST_CASE("QUANTIZE through qdml::dml::execute and qdml::compile", "[quantize][dml]") {
    // The UINT4 case above, as DirectML code builds it.
    const float x[8] = {0.5f, 1.5f, 2.5f, -2.5f, 100.f, -100.f, 7.f, 3.f};
    const float s[2] = {1.0f, 0.5f};
    const UINT in_sizes[1] = {8}, s_sizes[1] = {2};
    DML_BUFFER_TENSOR_DESC bi{DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_FLAG_NONE, 1, in_sizes, nullptr, 32, 0};
    DML_BUFFER_TENSOR_DESC bs{DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_FLAG_NONE, 1, s_sizes, nullptr, 8, 0};
    DML_BUFFER_TENSOR_DESC bo{DML_TENSOR_DATA_TYPE_UINT4, DML_TENSOR_FLAG_NONE, 1, in_sizes, nullptr, 4, 0};
    DML_TENSOR_DESC ti{DML_TENSOR_TYPE_BUFFER, &bi}, to{DML_TENSOR_TYPE_BUFFER, &bo};
    DML_TENSOR_DESC qt[3] = {{DML_TENSOR_TYPE_BUFFER, &bs}, {DML_TENSOR_TYPE_BUFFER, &bs}, {DML_TENSOR_TYPE_BUFFER, &bs}};
    DML_QUANTIZE_OPERATOR_DESC q{&ti, DML_QUANTIZATION_TYPE_SCALE, 1, qt, &to};
    const DML_OPERATOR_DESC od{DML_OPERATOR_QUANTIZE, &q};
    Bytes out(4, 0);
    qdml::dml::execute(od, {{const_cast<float*>(x), 32}, {const_cast<float*>(s), 8}, {out.data(), 4}});
    CHECK(out == Bytes{0xA8, 0x6A, 0x0F, 0xEF});
    CHECK_THAT(error_of([&] { qdml::dml::execute(od, {{const_cast<float*>(x), 32}, {out.data(), 4}}); }),
               Catch::Contains("QUANTIZE: bindings: 2 byte spans given; QUANTIZE has 3 tensor members"));
    q.QuantizationTensorCount = 3;
    CHECK_THAT(error_of([&] { qdml::dml::execute(od, {{const_cast<float*>(x), 32}, {out.data(), 4}}); }),
               Catch::Contains("QUANTIZE: QuantizationTensorCount: 3 is above 2"));
    q.QuantizationTensorCount = 1;
    q.QuantizationTensors = nullptr;
    CHECK_THAT(error_of([&] { qdml::dml::execute(od, {{const_cast<float*>(x), 32}, {out.data(), 4}}); }),
               Catch::Contains("QuantizationTensors: is null"));
    CHECK(qdml::dml::try_execute(od, {{const_cast<float*>(x), 32}, {const_cast<float*>(s), 8}, {out.data(), 4}}).hr ==
          qdml::dml::kInvalidArg);

    // Compiled once, executed on new buffers; the QuantizationType is part of the compiled desc.
    Op<qdml::QuantizeDesc> op({desc(DT::Float32, {8}), x}, qdml::QuantizationType::Scale, {desc(DT::Float32, {2}), s},
                              std::nullopt, {desc(DT::UInt4, {8}), out.data()});
    const auto c = qdml::compile(op.d);
    CHECK_THAT(qdml::describe(op.d), Catch::Contains("element-wise"));  // (packed: the vector path)
    Op<qdml::QuantizeDesc> strided({desc(DT::Float32, {4}), x}, qdml::QuantizationType::Scale, {desc(DT::Float32, {1}), s},
                                   std::nullopt, {desc(DT::UInt4, {4}, {2}), out.data()});
    CHECK_THAT(qdml::describe(strided.d), Catch::Contains("scalar"));  // (a strided 4-bit tensor: the reference's loop)
    Bytes out2(4, 0);
    op.d.OutputTensor.Data = out2.data();
    c.execute(op.d);
    CHECK(out2 == Bytes{0xA8, 0x6A, 0x0F, 0xEF});
    op.d.QuantizationType = qdml::QuantizationType::ScaleZeroPoint;
    CHECK_THAT(error_of([&] { c.execute(op.d); }), Catch::Contains("QuantizationType"));
}
