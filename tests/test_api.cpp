// The public API's safety and convenience: visitors and bind() refuse what
// does not match instead of reinterpreting it, const input buffers, descs
// from any range of sizes, optional members from braces. Expectations by
// hand from docs/semantics.md.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"

namespace {

using qdml::TensorDataType;
using qdml::TensorDesc;
using DT = qdml::TensorDataType;

/// The message of the qdml::Error `f` throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "<no error>";
}

/// A valid {2, 3} INT8 -> FLOAT32 dequantize: (x - 1) * 0.5.
struct Dequantize {
    std::int8_t in[6] = {1, 3, 5, -1, 2, 9};
    float scale = 0.5f;
    std::int8_t zp = 1;
    float out[6] = {};
    qdml::ElementWiseDequantizeLinearDesc d;
    Dequantize() {
        d.InputTensor = {TensorDesc::make(DT::Int8, {2, 3}), in};
        d.ScaleTensor = {TensorDesc::make(DT::Float32, {2, 3}, {0, 0}), &scale};
        d.ZeroPointTensor = {TensorDesc::make(DT::Int8, {2, 3}, {0, 0}), &zp};
        d.OutputTensor = {TensorDesc::make(DT::Float32, {2, 3}), out};
    }
};

}  // namespace

TEST_CASE("api: visit_one_of and visit_rank refuse what none of their cases matches", "[api]") {
    int hit = 0;
    const auto f = [&](auto) { ++hit; };
    CHECK(error_of([&] { qdml::visit_one_of<std::int8_t, std::uint8_t>(DT::UInt8, f); }) == "<no error>");
    CHECK(hit == 1);
    CHECK(error_of([&] { qdml::visit_one_of<std::int8_t, std::uint8_t>(DT::Int16, f); }) ==
          "qdml: DataType: INT16 (7) is none of INT8, UINT8; validate the desc first");
    CHECK(error_of([&] { qdml::visit_data_type(static_cast<DT>(42), f); }) ==
          "qdml: DataType: UNKNOWN (42) is none of FLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, "
          "UINT64, FLOAT32; validate the desc first");
    CHECK(error_of([&] { qdml::visit_data_type(DT::Float64, f); }) != "<no error>");
    CHECK(hit == 1);  // nothing was called for a refused type

    std::size_t rank = 0;
    const auto g = [&](auto r) { rank = decltype(r)::value; };
    for (std::size_t n = 2; n <= 4; ++n) {
        qdml::visit_rank<2, 4>(n, g);
        CHECK(rank == n);
    }
    rank = 0;
    CHECK(error_of([&] { qdml::visit_rank<2, 4>(1, g); }) ==
          "qdml: DimensionCount: 1 is outside 2..4; validate the desc first");
    CHECK(error_of([&] { qdml::visit_rank<2, 4>(5, g); }) ==
          "qdml: DimensionCount: 5 is outside 2..4; validate the desc first");
    CHECK(error_of([&] { qdml::visit_rank<1, 8>(0, g); }) ==
          "qdml: DimensionCount: 0 is outside 1..8; validate the desc first");
    CHECK(rank == 0);
}

TEST_CASE("api: visit_typed of an unvalidated desc refuses a type it has no instantiation for", "[api]") {
    Dequantize t;
    t.d.InputTensor.Desc.DataType = DT::Int64;  // not a dequantize input type
    CHECK(error_of([&] { qdml::visit_typed(t.d, [](const auto&) {}); }) ==
          "qdml: DataType: INT64 (11) is none of INT8, UINT8, INT16, UINT16, INT32, UINT32; validate the desc first");
    t.d.InputTensor.Desc.DataType = DT::Int8;
    t.d.InputTensor.Desc.DimensionCount = 9;
    CHECK(error_of([&] { qdml::visit_typed(t.d, [](const auto&) {}); }) ==
          "ELEMENT_WISE_DEQUANTIZE_LINEAR: InputTensor: DimensionCount 9 does not fit the typed operator's rank 8 "
          "(1..8, right-aligned)");
}

TEST_CASE("api: bind checks the template's types against the desc, and validates it", "[api]") {
    Dequantize t;
    using Good = qdml::ElementWiseDequantizeLinear<std::int8_t, float>;  // rank-8 views of the 2-D desc
    qdml::reference::element_wise_dequantize_linear(Good::bind(t.d));
    CHECK(std::vector<float>(t.out, t.out + 6) == std::vector<float>{0, 1, 2, -1, 0.5f, 4});

    // An earlier crash: an INT32 binding of INT8 data read 4 bytes per element
    // (out of bounds). (The other, a rank-1 binding of a 2-D desc, cannot
    // happen any more: the element-wise views always have rank 8.)
    CHECK(error_of([&] { qdml::ElementWiseDequantizeLinear<std::int32_t, float>::bind(t.d); }) ==
          "ELEMENT_WISE_DEQUANTIZE_LINEAR: InputTensor: DataType INT8 does not match the typed operator's element "
          "type INT32");
    CHECK(error_of([&] { qdml::ElementWiseDequantizeLinear<std::int8_t, qdml::float16>::bind(t.d); }) ==
          "ELEMENT_WISE_DEQUANTIZE_LINEAR: ScaleTensor: DataType FLOAT32 does not match the typed operator's "
          "element type FLOAT16");
    // bind_validated (what visit_typed uses after validation) checks the same,
    // and the dimension count (validation's rule, for a desc that skipped it).
    CHECK(error_of([&] { qdml::ElementWiseDequantizeLinear<std::int32_t, float>::bind_validated(t.d); }) !=
          "<no error>");
    auto nine = t.d;
    nine.InputTensor.Desc.DimensionCount = 9;
    CHECK(error_of([&] { Good::bind_validated(nine); }) ==
          "ELEMENT_WISE_DEQUANTIZE_LINEAR: InputTensor: DimensionCount 9 does not fit the typed operator's rank 8 "
          "(1..8, right-aligned)");
    static_assert(std::is_same_v<decltype(Good::InputTensor), qdml::TensorView<const std::int8_t, qdml::kMaxDimensions>>);
    // bind validates: an output of the wrong sizes is refused before any view is made.
    t.d.OutputTensor.Desc = TensorDesc::make(DT::Float32, {3, 2});
    CHECK(error_of([&] { Good::bind(t.d); }) ==
          "ELEMENT_WISE_DEQUANTIZE_LINEAR: OutputTensor: Sizes {3,2} must equal InputTensor's Sizes {2,3} "
          "(broadcast through zero Strides)");
}

TEST_CASE("api: bind of matmul, convolution, add and clip refuses other types", "[api]") {
    std::uint8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, out[4] = {};
    float one = 1.0f;
    qdml::QuantizedLinearMatrixMultiplyDesc m;
    m.ATensor = {TensorDesc::make(DT::UInt8, {2, 2}), a};
    m.AScaleTensor = {TensorDesc::make(DT::Float32, {1, 1}), &one};
    m.BTensor = {TensorDesc::make(DT::UInt8, {2, 2}), b};
    m.BScaleTensor = m.AScaleTensor;
    m.OutputScaleTensor = m.AScaleTensor;
    m.OutputTensor = {TensorDesc::make(DT::UInt8, {2, 2}), out};
    using U8 = std::uint8_t;
    qdml::reference::quantized_linear_matrix_multiply(qdml::QuantizedLinearMatrixMultiply<U8, U8, U8>::bind(m));
    CHECK(std::vector<int>(out, out + 4) == std::vector<int>{1, 2, 3, 4});  // A times the identity
    CHECK(error_of([&] { qdml::QuantizedLinearMatrixMultiply<U8, std::int8_t, U8>::bind(m); }) ==
          "QUANTIZED_LINEAR_MATRIX_MULTIPLY: BTensor: DataType UINT8 does not match the typed operator's element "
          "type INT8");

    qdml::ElementWiseClipDesc c;
    c.InputTensor = {TensorDesc::make(DT::UInt8, {4}), a};
    c.OutputTensor = {TensorDesc::make(DT::UInt8, {4}), out};
    c.Max = 2;
    CHECK(error_of([&] { qdml::ElementWiseClip<std::int8_t>::bind(c); }) ==
          "ELEMENT_WISE_CLIP: InputTensor: DataType UINT8 does not match the typed operator's element type INT8");
    qdml::reference::element_wise_clip(qdml::ElementWiseClip<U8>::bind(c));
    CHECK(std::vector<int>(out, out + 4) == std::vector<int>{1, 2, 2, 2});
}

TEST_CASE("api: const input buffers bind without a cast; an output must be writable", "[api]") {
    const float in[4] = {-2.0f, -0.5f, 0.5f, 2.0f};
    float out[4] = {};
    qdml::ElementWiseClipDesc c;
    c.InputTensor = {TensorDesc::make(DT::Float32, {4}), in};  // const float*
    c.OutputTensor = {TensorDesc::make(DT::Float32, {4}), out};
    c.Min = -1;
    c.Max = 1;
    CHECK(c.InputTensor.ReadOnly);
    CHECK_FALSE(c.OutputTensor.ReadOnly);
    qdml::run(c);
    CHECK(std::vector<float>(out, out + 4) == std::vector<float>{-1, -0.5f, 0.5f, 1});

    const float const_out[4] = {};
    c.OutputTensor = {TensorDesc::make(DT::Float32, {4}), const_out};
    CHECK(error_of([&] { qdml::run(c); }) ==
          "ELEMENT_WISE_CLIP: OutputTensor: Data was bound through a const pointer; an output needs writable memory");
    c.OutputTensor = {TensorDesc::make(DT::Float32, {4}), nullptr};
    CHECK(error_of([&] { qdml::run(c); }) == "ELEMENT_WISE_CLIP: OutputTensor: Data is null (no buffer bound)");
}

namespace {
/// A range with begin()/end() only, as a span would be.
struct SpanLike {
    const long* first;
    const long* last;
    const long* begin() const { return first; }
    const long* end() const { return last; }
};
}  // namespace

TEST_CASE("api: TensorDesc::make takes sizes and strides from any range of integers", "[api]") {
    const std::vector<int> sizes{2, 3};
    const std::array<std::size_t, 2> strides{1, 2};
    const long raw[3] = {4, 1, 5};
    const auto a = TensorDesc::make(DT::UInt8, sizes, strides);
    CHECK(a.DimensionCount == 2u);
    CHECK(a.Sizes[0] == 2u);
    CHECK(a.Sizes[1] == 3u);
    REQUIRE(a.Strides.has_value());
    CHECK((*a.Strides)[1] == 2u);
    CHECK(a.TotalTensorSizeInBytes == 8u);  // (1*1 + 2*2 + 1) = 6 bytes, rounded up to 4
    const auto b = TensorDesc::make(DT::Int16, SpanLike{raw, raw + 3});
    CHECK(b.DimensionCount == 3u);
    CHECK(b.TotalTensorSizeInBytes == 40u);  // 20 elements * 2 bytes
    CHECK_FALSE(b.Strides.has_value());
    CHECK(TensorDesc::make(DT::UInt8, sizes, {3, 1}).TotalTensorSizeInBytes == 8u);  // braces mix with a range
    CHECK(TensorDesc::make(DT::UInt8, {2, 3}, strides).Strides.has_value());
    // values that are not sizes: kept as DimensionCount 0, which validation rejects
    CHECK(TensorDesc::make(DT::UInt8, std::vector<int>{2, -1}).DimensionCount == 0u);
    CHECK(TensorDesc::make(DT::UInt8, std::vector<std::uint64_t>{1ull << 32}).DimensionCount == 0u);
    CHECK(TensorDesc::make(DT::UInt8, std::vector<int>(9, 1)).DimensionCount == 0u);
    CHECK(TensorDesc::make(DT::UInt8, sizes, std::vector<int>{1}).DimensionCount == 0u);
}

TEST_CASE("api: optional members take braces or a plain Tensor, also in aggregate initialization", "[api]") {
    const std::int8_t in[2] = {5, 7};
    const float scale = 2.0f;
    const std::int8_t zp = 3;
    float out[2] = {};
    const qdml::Tensor input{TensorDesc::make(DT::Int8, {2}), in};
    const qdml::Tensor scale_t{TensorDesc::make(DT::Float32, {2}, {0}), &scale};
    const qdml::Tensor output{TensorDesc::make(DT::Float32, {2}), out};
    qdml::ElementWiseDequantizeLinearDesc d{input, scale_t, {TensorDesc::make(DT::Int8, {2}, {0}), &zp}, output};
    qdml::run(d);
    CHECK(out[0] == 4.0f);  // (5 - 3) * 2
    CHECK(out[1] == 8.0f);  // (7 - 3) * 2
    d.ZeroPointTensor = std::nullopt;
    qdml::run(d);
    CHECK(out[0] == 10.0f);
    d.ZeroPointTensor = qdml::Tensor{TensorDesc::make(DT::Int8, {2}, {0}), &zp};
    d.ZeroPointTensor = {TensorDesc::make(DT::Int8, {2}, {0}), &zp};
    qdml::ElementWiseDequantizeLinearDesc e{input, scale_t, {}, output};
    CHECK_FALSE(e.ZeroPointTensor.has_value());
    const qdml::Tensor zp_t{TensorDesc::make(DT::Int8, {2}, {0}), &zp};
    e.ZeroPointTensor = zp_t;
    qdml::run(e);
    CHECK(out[1] == 8.0f);
}
