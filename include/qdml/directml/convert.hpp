// qdml/directml/convert.hpp - DirectML's structs to qdml's descs: reads a
// DML_OPERATOR_DESC and its bindings, checks what DirectML checks before
// qdml's own validation can (null required members, tensor Type tags, null
// Sizes, DimensionCount, binding count and emptiness), and builds the
// operator's qdml desc bound to the caller's buffers. Reads nothing but the
// structs; writes nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "qdml/core/error.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/operators/dynamic_quantize_linear.hpp"
#include "qdml/operators/element_wise_clip.hpp"
#include "qdml/operators/element_wise_clip1.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/operators/matrix_multiply_integer_to_float.hpp"
#include "qdml/operators/quantized_linear_average_pooling.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"
#include "qdml/operators/quantize.hpp"
// Last: on Windows, DirectML.h brings in windows.h, whose min/max macros
// must not meet qdml's headers (define NOMINMAX if windows.h comes first).
#include "qdml/directml/types.hpp"

namespace qdml::dml {

/// One tensor member's buffer: a byte span (the CPU copy of what DirectML
/// binds with a DML_BUFFER_BINDING). Empty (null, 0) for an absent optional
/// tensor. It must hold at least the tensor's TotalTensorSizeInBytes.
struct Binding {
    void* Data = nullptr;
    std::uint64_t SizeInBytes = 0;
};

/// A read-only view of the bindings of one call (from a braced list, a
/// pointer and a count, or any contiguous container of Binding).
class Bindings {
public:
    /// The list's array lives until the end of the call's full-expression,
    /// which is as long as execute reads it.
    Bindings(std::initializer_list<Binding> l) noexcept {
        data_ = l.begin();
        size_ = l.size();
    }
    Bindings(const Binding* data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <class C, class = decltype(static_cast<const Binding*>(std::declval<const C&>().data()))>
    Bindings(const C& c) noexcept : data_(c.data()), size_(c.size()) {}
    const Binding* begin() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    const Binding& operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    const Binding* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Thrown for a DML_OPERATOR_TYPE that DirectML defines but qdml does not
/// implement (try_execute: E_NOTIMPL). Every other rejection is a plain
/// qdml::Error (E_INVALIDARG).
class NotImplemented : public Error {
public:
    using Error::Error;
};

namespace detail {

using qdml::detail::cat;

inline std::string hex(std::uint64_t v) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[v & 0xf]);
        v >>= 4;
    } while (v != 0);
    return "0x" + s;
}

/// The qdml level of a DML_FEATURE_LEVEL (same numbers); throws for a value
/// DirectML does not define.
inline FeatureLevel feature_level(DML_FEATURE_LEVEL l) {
    const auto v = static_cast<std::uint32_t>(l);
    const auto s = std::to_string(v >> 12) + "." + std::to_string((v >> 8) & 0xf);
    if ((v & 0xff) != 0 || !parse_feature_level(s))
        throw Error("ExecuteOptions", "feature_level", hex(v) + " is not a DML_FEATURE_LEVEL");
    return static_cast<FeatureLevel>(v);
}

/// Reads one operator desc's tensor members, in order, with their bindings.
class Reader {
public:
    Reader(std::string_view op, Bindings b, std::size_t members) : op_(op), bindings_(b) {
        if (b.size() != members)
            fail("bindings", cat(b.size(), " byte spans given; ", op, " has ", members,
                                 " tensor members (one span each, in member order; empty for an absent optional tensor)"));
    }

    [[noreturn]] void fail(std::string_view member, const std::string& rule) const {
        throw Error(std::string(op_), std::string(member), rule);
    }

    Tensor required(std::string_view member, const DML_TENSOR_DESC* t) {
        if (t == nullptr) fail(member, "is null; the member is required");
        return *optional(member, t);
    }

    std::optional<Tensor> optional(std::string_view member, const DML_TENSOR_DESC* t) {
        const Binding& b = bindings_[next_++];
        const bool bound = b.Data != nullptr || b.SizeInBytes != 0;
        if (t == nullptr) {
            if (bound) fail(member, "is null (absent), but its binding is not empty");
            return std::nullopt;
        }
        if (t->Type != DML_TENSOR_TYPE_BUFFER)
            fail(member, cat("Type ", static_cast<long long>(t->Type), " is not DML_TENSOR_TYPE_BUFFER (1)"));
        if (t->Desc == nullptr) fail(member, "Desc is null (DML_TENSOR_TYPE_BUFFER needs a DML_BUFFER_TENSOR_DESC)");
        const auto& d = *static_cast<const DML_BUFFER_TENSOR_DESC*>(t->Desc);
        const auto type = static_cast<std::uint32_t>(d.DataType);
        if (d.DimensionCount < 1 || d.DimensionCount > kMaxDimensions)
            fail(member, cat("DimensionCount ", d.DimensionCount, " is outside 1..8"));
        if (d.Sizes == nullptr) fail(member, "Sizes is null");
        Tensor r;
        r.Desc.DataType = static_cast<TensorDataType>(type);
        r.Desc.DimensionCount = d.DimensionCount;
        for (std::uint32_t i = 0; i < d.DimensionCount; ++i) r.Desc.Sizes[i] = d.Sizes[i];
        if (d.Strides != nullptr) {
            r.Desc.Strides.emplace();
            for (std::uint32_t i = 0; i < d.DimensionCount; ++i) (*r.Desc.Strides)[i] = d.Strides[i];
        }
        r.Desc.TotalTensorSizeInBytes = d.TotalTensorSizeInBytes;
        r.Desc.GuaranteedBaseOffsetAlignment = d.GuaranteedBaseOffsetAlignment;
        r.Desc.Flags = static_cast<std::uint32_t>(d.Flags);  // validation: defined bits, inputs only
        if (b.Data == nullptr || b.SizeInBytes == 0)
            fail(member, cat("has no buffer bound (binding ", next_ - 1, " is empty)"));
        r.Data = b.Data;
        r.DataSizeInBytes = b.SizeInBytes;  // validation: >= TotalTensorSizeInBytes
        return r;
    }

    /// DimensionCount values of a required UINT array (convolution params);
    /// qdml keeps two, validation rejects any other DimensionCount.
    /// The first `count` values of an array member (at most N; the rest 0).
    template <std::size_t N = 2>
    std::array<std::uint32_t, N> pair(std::string_view member, const UINT* p, UINT count) const {
        if (p == nullptr) fail(member, cat("is null; DimensionCount (", count, ") values are required"));
        std::array<std::uint32_t, N> r{};
        for (UINT i = 0; i < count && i < N; ++i) r[i] = p[i];
        return r;
    }

private:
    std::string_view op_;
    Bindings bindings_;
    std::size_t next_ = 0;
};

template <class Desc>
const Desc& operator_desc(const DML_OPERATOR_DESC& op, std::string_view name) {
    if (op.Desc == nullptr) throw Error(std::string(name), "Desc", "is null (DML_OPERATOR_DESC.Desc must point to the operator desc)");
    return *static_cast<const Desc*>(op.Desc);
}

/// DirectML's name of an operator type qdml does not implement, where it is
/// a quantized neighbour of qdml's operators (DirectML.h's counted values), else "".
inline std::string_view unimplemented_name(std::uint32_t type) {
    switch (type) {
#if !QDML_DML_HAS_QUANTIZED_LINEAR_AVERAGE_POOLING
        case 169: return "QUANTIZED_LINEAR_AVERAGE_POOLING (with this DirectML.h: its DML_TARGET_VERSION is below 0x6200)";
#endif
#if !QDML_DML_HAS_MATRIX_MULTIPLY_INTEGER_TO_FLOAT
        case 170: return "MATRIX_MULTIPLY_INTEGER_TO_FLOAT (with this DirectML.h: its DML_TARGET_VERSION is below 0x6200)";
#endif
#if !QDML_DML_HAS_QUANTIZE
        case 173: return "QUANTIZE (with this DirectML.h: its DML_TARGET_VERSION is below 0x6300)";
        case 174: return "DEQUANTIZE (with this DirectML.h: its DML_TARGET_VERSION is below 0x6300)";
#endif
        default: return "";
    }
}

/// Converts `op` with its bindings and calls f(desc) with the qdml desc.
template <class F>
void visit_converted(const DML_OPERATOR_DESC& op, Bindings b, F&& f) {
    switch (static_cast<std::uint32_t>(op.Type)) {
        case DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR:
        case DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR: {
            // Both descs have the same four members in the same order.
            using DmlDequantize = DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC;
            using DmlQuantize = DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC;
            auto convert = [&](auto desc, const auto& s) {
                using D = decltype(desc);
                Reader r(D::OperatorName, b, 4);
                desc.InputTensor = r.required("InputTensor", s.InputTensor);
                desc.ScaleTensor = r.required("ScaleTensor", s.ScaleTensor);
                desc.ZeroPointTensor = r.optional("ZeroPointTensor", s.ZeroPointTensor);
                desc.OutputTensor = r.required("OutputTensor", s.OutputTensor);
                return f(desc);
            };
            using Dequantize = ElementWiseDequantizeLinearDesc;
            using Quantize = ElementWiseQuantizeLinearDesc;
            if (op.Type == DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR)
                return convert(Dequantize{}, operator_desc<DmlDequantize>(op, Dequantize::OperatorName));
            return convert(Quantize{}, operator_desc<DmlQuantize>(op, Quantize::OperatorName));
        }
        case DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD:
        case DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY: {
            // Both descs have the same nine members in the same order.
            using DmlAdd = DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC;
            using DmlMatmul = DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC;
            const bool add = op.Type == DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD;
            auto convert = [&](auto desc, const auto& s) {
                using D = decltype(desc);
                Reader r(D::OperatorName, b, 9);
                desc.ATensor = r.required("ATensor", s.ATensor);
                desc.AScaleTensor = r.required("AScaleTensor", s.AScaleTensor);
                desc.AZeroPointTensor = r.optional("AZeroPointTensor", s.AZeroPointTensor);
                desc.BTensor = r.required("BTensor", s.BTensor);
                desc.BScaleTensor = r.required("BScaleTensor", s.BScaleTensor);
                desc.BZeroPointTensor = r.optional("BZeroPointTensor", s.BZeroPointTensor);
                desc.OutputScaleTensor = r.required("OutputScaleTensor", s.OutputScaleTensor);
                desc.OutputZeroPointTensor = r.optional("OutputZeroPointTensor", s.OutputZeroPointTensor);
                desc.OutputTensor = r.required("OutputTensor", s.OutputTensor);
                return f(desc);
            };
            using Add = ElementWiseQuantizedLinearAddDesc;
            using Matmul = QuantizedLinearMatrixMultiplyDesc;
            if (add) return convert(Add{}, operator_desc<DmlAdd>(op, Add::OperatorName));
            return convert(Matmul{}, operator_desc<DmlMatmul>(op, Matmul::OperatorName));
        }
        case DML_OPERATOR_MATRIX_MULTIPLY_INTEGER: {
            using D = MatrixMultiplyIntegerDesc;
            const auto& s = operator_desc<DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 5);
            D d;
            d.ATensor = r.required("ATensor", s.ATensor);
            d.AZeroPointTensor = r.optional("AZeroPointTensor", s.AZeroPointTensor);
            d.BTensor = r.required("BTensor", s.BTensor);
            d.BZeroPointTensor = r.optional("BZeroPointTensor", s.BZeroPointTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            return f(d);
        }
#if QDML_DML_HAS_QUANTIZE
        case DML_OPERATOR_QUANTIZE:
        case DML_OPERATOR_DEQUANTIZE: {
            // The same members: InputTensor, QuantizationType, QuantizationTensorCount
            // descs at QuantizationTensors (bound after InputTensor, in order), OutputTensor.
            auto convert = [&](auto desc, const auto& s) {
                using D = decltype(desc);
                const UINT count = s.QuantizationTensorCount;
                if (count > 2)
                    throw Error(std::string(D::OperatorName), "QuantizationTensorCount",
                                cat(count, " is above 2 (the scale, then the zero point)"));
                if (count > 0 && s.QuantizationTensors == nullptr)
                    throw Error(std::string(D::OperatorName), "QuantizationTensors",
                                cat("is null; QuantizationTensorCount (", count, ") descs are required"));
                Reader r(D::OperatorName, b, 2 + count);
                desc.InputTensor = r.required("InputTensor", s.InputTensor);
                desc.QuantizationType = static_cast<QuantizationType>(static_cast<std::uint32_t>(s.QuantizationType));
                if (count > 0) desc.QuantizationTensors[0] = r.required("QuantizationTensors[0]", &s.QuantizationTensors[0]);
                if (count > 1) desc.QuantizationTensors[1] = r.required("QuantizationTensors[1]", &s.QuantizationTensors[1]);
                desc.OutputTensor = r.required("OutputTensor", s.OutputTensor);
                return f(desc);
            };
            if (op.Type == DML_OPERATOR_QUANTIZE)
                return convert(QuantizeDesc{}, operator_desc<DML_QUANTIZE_OPERATOR_DESC>(op, QuantizeDesc::OperatorName));
            return convert(DequantizeDesc{}, operator_desc<DML_DEQUANTIZE_OPERATOR_DESC>(op, DequantizeDesc::OperatorName));
        }
#endif
#if QDML_DML_HAS_MATRIX_MULTIPLY_INTEGER_TO_FLOAT
        case DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT: {
            using D = MatrixMultiplyIntegerToFloatDesc;
            const auto& s = operator_desc<DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 8);
            D d;
            d.ATensor = r.required("ATensor", s.ATensor);
            d.AScaleTensor = r.required("AScaleTensor", s.AScaleTensor);
            d.AZeroPointTensor = r.optional("AZeroPointTensor", s.AZeroPointTensor);
            d.BTensor = r.required("BTensor", s.BTensor);
            d.BScaleTensor = r.required("BScaleTensor", s.BScaleTensor);
            d.BZeroPointTensor = r.optional("BZeroPointTensor", s.BZeroPointTensor);
            d.BiasTensor = r.optional("BiasTensor", s.BiasTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            return f(d);
        }
#endif
        case DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION: {
            using D = QuantizedLinearConvolutionDesc;
            const auto& s = operator_desc<DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 10);
            D d;
            d.InputTensor = r.required("InputTensor", s.InputTensor);
            d.InputScaleTensor = r.required("InputScaleTensor", s.InputScaleTensor);
            d.InputZeroPointTensor = r.optional("InputZeroPointTensor", s.InputZeroPointTensor);
            d.FilterTensor = r.required("FilterTensor", s.FilterTensor);
            d.FilterScaleTensor = r.required("FilterScaleTensor", s.FilterScaleTensor);
            d.FilterZeroPointTensor = r.optional("FilterZeroPointTensor", s.FilterZeroPointTensor);
            d.BiasTensor = r.optional("BiasTensor", s.BiasTensor);
            d.OutputScaleTensor = r.required("OutputScaleTensor", s.OutputScaleTensor);
            d.OutputZeroPointTensor = r.optional("OutputZeroPointTensor", s.OutputZeroPointTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            d.DimensionCount = s.DimensionCount;
            d.Strides = r.pair("Strides", s.Strides, s.DimensionCount);
            d.Dilations = r.pair("Dilations", s.Dilations, s.DimensionCount);
            d.StartPadding = r.pair("StartPadding", s.StartPadding, s.DimensionCount);
            d.EndPadding = r.pair("EndPadding", s.EndPadding, s.DimensionCount);
            d.GroupCount = s.GroupCount;
            return f(d);
        }
#if QDML_DML_HAS_QUANTIZED_LINEAR_AVERAGE_POOLING
        case DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING: {
            using D = QuantizedLinearAveragePoolingDesc;
            const auto& s = operator_desc<DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 6);
            D d;
            d.InputTensor = r.required("InputTensor", s.InputTensor);
            d.InputScaleTensor = r.required("InputScaleTensor", s.InputScaleTensor);
            d.InputZeroPointTensor = r.optional("InputZeroPointTensor", s.InputZeroPointTensor);
            d.OutputScaleTensor = r.required("OutputScaleTensor", s.OutputScaleTensor);
            d.OutputZeroPointTensor = r.optional("OutputZeroPointTensor", s.OutputZeroPointTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            d.DimensionCount = s.DimensionCount;
            d.Strides = r.pair<3>("Strides", s.Strides, s.DimensionCount);
            d.WindowSize = r.pair<3>("WindowSize", s.WindowSize, s.DimensionCount);
            d.StartPadding = r.pair<3>("StartPadding", s.StartPadding, s.DimensionCount);
            d.EndPadding = r.pair<3>("EndPadding", s.EndPadding, s.DimensionCount);
            d.Dilations = r.pair<3>("Dilations", s.Dilations, s.DimensionCount);
            d.IncludePadding = s.IncludePadding != 0;
            return f(d);
        }
#endif
        case DML_OPERATOR_CONVOLUTION_INTEGER: {
            using D = ConvolutionIntegerDesc;
            const auto& s = operator_desc<DML_CONVOLUTION_INTEGER_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 5);
            D d;
            d.InputTensor = r.required("InputTensor", s.InputTensor);
            d.InputZeroPointTensor = r.optional("InputZeroPointTensor", s.InputZeroPointTensor);
            d.FilterTensor = r.required("FilterTensor", s.FilterTensor);
            d.FilterZeroPointTensor = r.optional("FilterZeroPointTensor", s.FilterZeroPointTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            d.DimensionCount = s.DimensionCount;
            d.Strides = r.pair("Strides", s.Strides, s.DimensionCount);
            d.Dilations = r.pair("Dilations", s.Dilations, s.DimensionCount);
            d.StartPadding = r.pair("StartPadding", s.StartPadding, s.DimensionCount);
            d.EndPadding = r.pair("EndPadding", s.EndPadding, s.DimensionCount);
            d.GroupCount = s.GroupCount;
            return f(d);
        }
        case DML_OPERATOR_ELEMENT_WISE_CLIP: {
            using D = ElementWiseClipDesc;
            const auto& s = operator_desc<DML_ELEMENT_WISE_CLIP_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 2);
            D d;
            d.InputTensor = r.required("InputTensor", s.InputTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            if (s.ScaleBias != nullptr) d.ScaleBias = ScaleBiasDesc{s.ScaleBias->Scale, s.ScaleBias->Bias};
            d.Min = s.Min;
            d.Max = s.Max;
            return f(d);
        }
        case DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR: {
            using D = DynamicQuantizeLinearDesc;
            const auto& s = operator_desc<DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 4);
            D d;
            d.InputTensor = r.required("InputTensor", s.InputTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            d.OutputScaleTensor = r.required("OutputScaleTensor", s.OutputScaleTensor);
            d.OutputZeroPointTensor = r.required("OutputZeroPointTensor", s.OutputZeroPointTensor);
            return f(d);
        }
        case DML_OPERATOR_ELEMENT_WISE_CLIP1: {
            using D = ElementWiseClip1Desc;
            const auto& s = operator_desc<DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC>(op, D::OperatorName);
            Reader r(D::OperatorName, b, 2);
            D d;
            d.InputTensor = r.required("InputTensor", s.InputTensor);
            d.OutputTensor = r.required("OutputTensor", s.OutputTensor);
            if (s.ScaleBias != nullptr) d.ScaleBias = ScaleBiasDesc{s.ScaleBias->Scale, s.ScaleBias->Bias};
            d.MinMaxDataType = static_cast<TensorDataType>(static_cast<std::uint32_t>(s.MinMaxDataType));
            static_assert(sizeof s.Min == sizeof d.Min, "DML_SCALAR_UNION is 8 bytes");
            std::memcpy(d.Min.Bytes, &s.Min, sizeof d.Min);
            std::memcpy(d.Max.Bytes, &s.Max, sizeof d.Max);
            return f(d);
        }
        default: break;
    }
    const auto type = static_cast<std::uint32_t>(op.Type);
    const std::string_view known = unimplemented_name(type);
    if (!known.empty())
        throw NotImplemented("DML_OPERATOR_DESC", "Type",
                             cat("DML_OPERATOR_", known, " (", type, ") is not implemented by qdml"));
    if (type >= 1 && type <= 177)  // DML_OPERATOR_ELEMENT_WISE_IDENTITY .. DML_OPERATOR_UNFOLD
        throw NotImplemented("DML_OPERATOR_DESC", "Type",
                             cat("DML_OPERATOR_TYPE ", type, " is not implemented by qdml (it implements ",
                                 "ELEMENT_WISE_DEQUANTIZE_LINEAR, ELEMENT_WISE_QUANTIZE_LINEAR, ELEMENT_WISE_QUANTIZED_LINEAR_ADD, ",
                                 "QUANTIZED_LINEAR_MATRIX_MULTIPLY, QUANTIZED_LINEAR_CONVOLUTION, ELEMENT_WISE_CLIP, ELEMENT_WISE_CLIP1, ",
                                 "MATRIX_MULTIPLY_INTEGER, CONVOLUTION_INTEGER, MATRIX_MULTIPLY_INTEGER_TO_FLOAT, ",
                                 "DYNAMIC_QUANTIZE_LINEAR, QUANTIZED_LINEAR_AVERAGE_POOLING, QUANTIZE, DEQUANTIZE)"));
    throw Error("DML_OPERATOR_DESC", "Type", cat(type, " is not a DML_OPERATOR_TYPE"));
}

}  // namespace detail
}  // namespace qdml::dml
