// qdml/directml/types.hpp - DirectML's own structs and enums for the subset qdml
// implements: the SDK's DirectML.h where it is available (Windows, or when
// QDML_USE_DIRECTML_H is defined), else layout-identical declarations here.
//
// Every value and member order below is DirectML's, from DirectML.h as
// published in microsoft/DirectX-Headers (include/directx/DirectML.h, the
// DML_TARGET_VERSION 0x6400 header; 443ff511) and the API reference on
// learn.microsoft.com (windows/win32/api/directml/). Enum values that the
// header leaves implicit (it counts them) are written out; they agree with
// the Win32 metadata (win32metadata's DirectML projection, which lists them
// explicitly). Compile-time asserts pin sizes and member offsets for the two
// 64-bit data models DirectML ships on, LP64 (Linux, WSL) and LLP64 (Windows).
// Checked against that DirectML.h on Linux (DirectX-Headers' include/wsl
// stubs, -DQDML_USE_DIRECTML_H): the asserts hold there too, and the DML
// tests and example pass built either way (tools/check_directml_h.sh).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(QDML_USE_DIRECTML_H) || (defined(_WIN32) && defined(__has_include) && __has_include(<DirectML.h>))
#include <DirectML.h>
#define QDML_DIRECTML_H_INCLUDED 1
#elif defined(DIRECTML_H)  // the caller already included a DirectML.h
#define QDML_DIRECTML_H_INCLUDED 1
#else
#define QDML_DIRECTML_H_INCLUDED 0

// Windows' basic types as DirectML.h spells them (windef.h / basetsd.h).
// The enums below get the fixed underlying type MSVC gives DirectML.h's
// enums (int), so a value DirectML does not define is still a valid value
// (qdml rejects it with a message) rather than undefined behaviour.
typedef unsigned int UINT;
typedef std::uint64_t UINT64;
typedef float FLOAT;
typedef double DOUBLE;
typedef std::uint8_t BYTE;
typedef std::int8_t INT8;
typedef std::uint8_t UINT8;
typedef std::int16_t INT16;
typedef std::uint16_t UINT16;
typedef std::int32_t INT32;
typedef std::uint32_t UINT32;
typedef std::int64_t INT64;
typedef int BOOL;

/// DirectML.h "Tensor descriptions": values 0..11 in declaration order.
enum DML_TENSOR_DATA_TYPE : int {
    DML_TENSOR_DATA_TYPE_UNKNOWN = 0,
    DML_TENSOR_DATA_TYPE_FLOAT32 = 1,
    DML_TENSOR_DATA_TYPE_FLOAT16 = 2,
    DML_TENSOR_DATA_TYPE_UINT32 = 3,
    DML_TENSOR_DATA_TYPE_UINT16 = 4,
    DML_TENSOR_DATA_TYPE_UINT8 = 5,
    DML_TENSOR_DATA_TYPE_INT32 = 6,
    DML_TENSOR_DATA_TYPE_INT16 = 7,
    DML_TENSOR_DATA_TYPE_INT8 = 8,
    DML_TENSOR_DATA_TYPE_FLOAT64 = 9,
    DML_TENSOR_DATA_TYPE_UINT64 = 10,
    DML_TENSOR_DATA_TYPE_INT64 = 11,
    DML_TENSOR_DATA_TYPE_UINT4 = 12,  // DML_TARGET_VERSION >= 0x6300 (QUANTIZE, DEQUANTIZE)
    DML_TENSOR_DATA_TYPE_INT4 = 13,   // DML_TARGET_VERSION >= 0x6300
};

/// DirectML.h: INVALID = 0, BUFFER = 1.
enum DML_TENSOR_TYPE : int {
    DML_TENSOR_TYPE_INVALID = 0,
    DML_TENSOR_TYPE_BUFFER = 1,
};

/// DirectML.h (explicit values there); DEFINE_ENUM_FLAG_OPERATORS gives | and &.
enum DML_TENSOR_FLAGS : unsigned int {
    DML_TENSOR_FLAG_NONE = 0x0,
    DML_TENSOR_FLAG_OWNED_BY_DML = 0x1,
};
constexpr DML_TENSOR_FLAGS operator|(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) noexcept {
    return static_cast<DML_TENSOR_FLAGS>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr DML_TENSOR_FLAGS operator&(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) noexcept {
    return static_cast<DML_TENSOR_FLAGS>(static_cast<unsigned>(a) & static_cast<unsigned>(b));
}

/// DirectML.h, member for member.
struct DML_BUFFER_TENSOR_DESC {
    DML_TENSOR_DATA_TYPE DataType;
    DML_TENSOR_FLAGS Flags;
    UINT DimensionCount;
    const UINT* Sizes;    // _Field_size_(DimensionCount)
    const UINT* Strides;  // _Field_size_opt_(DimensionCount): null = packed
    UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment;
};

struct DML_TENSOR_DESC {
    DML_TENSOR_TYPE Type;
    const void* Desc;  // a DML_BUFFER_TENSOR_DESC for DML_TENSOR_TYPE_BUFFER
};

/// The operators qdml implements. DirectML.h
/// numbers DML_OPERATOR_TYPE implicitly from DML_OPERATOR_INVALID = 0; these
/// are the counted values (win32metadata lists the same numbers).
enum DML_OPERATOR_TYPE : int {
    DML_OPERATOR_INVALID = 0,
    DML_OPERATOR_ELEMENT_WISE_CLIP = 8,
    DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR = 33,
    DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR = 34,
    DML_OPERATOR_MATRIX_MULTIPLY_INTEGER = 117,             // DML_TARGET_VERSION >= 0x2100
    DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY = 118,    // DML_TARGET_VERSION >= 0x2100
    DML_OPERATOR_CONVOLUTION_INTEGER = 119,                 // DML_TARGET_VERSION >= 0x2100
    DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION = 120,        // DML_TARGET_VERSION >= 0x2100
    DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD = 147,  // DML_TARGET_VERSION >= 0x4000
    DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR = 148,             // DML_TARGET_VERSION >= 0x4000
    DML_OPERATOR_ELEMENT_WISE_CLIP1 = 153,                  // DML_TARGET_VERSION >= 0x5000
    DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING = 169,    // DML_TARGET_VERSION >= 0x6200
    DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT = 170,    // DML_TARGET_VERSION >= 0x6200
    DML_OPERATOR_QUANTIZE = 173,                            // DML_TARGET_VERSION >= 0x6300
    DML_OPERATOR_DEQUANTIZE = 174,                          // DML_TARGET_VERSION >= 0x6300
};

/// DirectML.h (DML_TARGET_VERSION >= 0x6300): NONE = 0, SCALE = 1, SCALE_ZERO_POINT = 2.
enum DML_QUANTIZATION_TYPE : int {
    DML_QUANTIZATION_TYPE_NONE = 0,
    DML_QUANTIZATION_TYPE_SCALE = 1,
    DML_QUANTIZATION_TYPE_SCALE_ZERO_POINT = 2,
};

/// DML_QUANTIZE_OPERATOR_DESC and DML_DEQUANTIZE_OPERATOR_DESC (the same
/// members): QuantizationTensors points to QuantizationTensorCount descs.
struct DML_QUANTIZE_OPERATOR_DESC {  // DML_TARGET_VERSION >= 0x6300
    const DML_TENSOR_DESC* InputTensor;
    DML_QUANTIZATION_TYPE QuantizationType;
    UINT QuantizationTensorCount;
    const DML_TENSOR_DESC* QuantizationTensors;  // _Field_size_(QuantizationTensorCount)
    const DML_TENSOR_DESC* OutputTensor;
};
struct DML_DEQUANTIZE_OPERATOR_DESC {  // DML_TARGET_VERSION >= 0x6300
    const DML_TENSOR_DESC* InputTensor;
    DML_QUANTIZATION_TYPE QuantizationType;
    UINT QuantizationTensorCount;
    const DML_TENSOR_DESC* QuantizationTensors;  // _Field_size_(QuantizationTensorCount)
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_SCALE_BIAS {
    FLOAT Scale;
    FLOAT Bias;
};

/// One value of a DML_TENSOR_DATA_TYPE (ELEMENT_WISE_CLIP1's Min and Max).
union DML_SCALAR_UNION {
    BYTE Bytes[8];
    INT8 Int8;
    UINT8 UInt8;
    INT16 Int16;
    UINT16 UInt16;
    INT32 Int32;
    UINT32 UInt32;
    INT64 Int64;
    UINT64 UInt64;
    FLOAT Float32;
    DOUBLE Float64;
};

struct DML_OPERATOR_DESC {
    DML_OPERATOR_TYPE Type;
    const void* Desc;  // the operator's DML_*_OPERATOR_DESC
};

struct DML_ELEMENT_WISE_CLIP_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_SCALE_BIAS* ScaleBias;  // _Maybenull_
    FLOAT Min;
    FLOAT Max;
};

struct DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC {  // DML_TARGET_VERSION >= 0x5000
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_SCALE_BIAS* ScaleBias;  // _Maybenull_
    DML_TENSOR_DATA_TYPE MinMaxDataType;
    DML_SCALAR_UNION Min;
    DML_SCALAR_UNION Max;
};

struct DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC {  // DML_TARGET_VERSION >= 0x4000
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_TENSOR_DESC* OutputScaleTensor;      // an output
    const DML_TENSOR_DESC* OutputZeroPointTensor;  // an output
};

struct DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* ZeroPointTensor;  // _Maybenull_ (from feature level 6.2)
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* ZeroPointTensor;  // _Maybenull_ (from feature level 6.2)
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* AZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* BZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* AScaleTensor;
    const DML_TENSOR_DESC* AZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* BScaleTensor;
    const DML_TENSOR_DESC* BZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputScaleTensor;
    const DML_TENSOR_DESC* OutputZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC {  // DML_TARGET_VERSION >= 0x6200
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* AScaleTensor;
    const DML_TENSOR_DESC* AZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* BScaleTensor;
    const DML_TENSOR_DESC* BZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* BiasTensor;        // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC {  // DML_TARGET_VERSION >= 0x6200
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputScaleTensor;
    const DML_TENSOR_DESC* InputZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputScaleTensor;
    const DML_TENSOR_DESC* OutputZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* WindowSize;
    const UINT* StartPadding;
    const UINT* EndPadding;
    const UINT* Dilations;
    BOOL IncludePadding;
};

struct DML_CONVOLUTION_INTEGER_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputZeroPointTensor;   // _Maybenull_
    const DML_TENSOR_DESC* FilterTensor;
    const DML_TENSOR_DESC* FilterZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* Dilations;
    const UINT* StartPadding;
    const UINT* EndPadding;
    UINT GroupCount;
};

struct DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputScaleTensor;
    const DML_TENSOR_DESC* InputZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* FilterTensor;
    const DML_TENSOR_DESC* FilterScaleTensor;
    const DML_TENSOR_DESC* FilterZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* BiasTensor;             // _Maybenull_
    const DML_TENSOR_DESC* OutputScaleTensor;
    const DML_TENSOR_DESC* OutputZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;   // spatial dimensions
    const UINT* Strides;   // _Field_size_(DimensionCount)
    const UINT* Dilations;
    const UINT* StartPadding;
    const UINT* EndPadding;
    UINT GroupCount;
};

struct DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* AScaleTensor;
    const DML_TENSOR_DESC* AZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* BScaleTensor;
    const DML_TENSOR_DESC* BZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputScaleTensor;
    const DML_TENSOR_DESC* OutputZeroPointTensor;  // _Maybenull_
    const DML_TENSOR_DESC* OutputTensor;
};

/// DirectML.h (explicit values there): 0xMm00 for feature level M.m.
enum DML_FEATURE_LEVEL : int {
    DML_FEATURE_LEVEL_1_0 = 0x1000,
    DML_FEATURE_LEVEL_2_0 = 0x2000,
    DML_FEATURE_LEVEL_2_1 = 0x2100,
    DML_FEATURE_LEVEL_3_0 = 0x3000,
    DML_FEATURE_LEVEL_3_1 = 0x3100,
    DML_FEATURE_LEVEL_4_0 = 0x4000,
    DML_FEATURE_LEVEL_4_1 = 0x4100,
    DML_FEATURE_LEVEL_5_0 = 0x5000,
    DML_FEATURE_LEVEL_5_1 = 0x5100,
    DML_FEATURE_LEVEL_5_2 = 0x5200,
    DML_FEATURE_LEVEL_6_0 = 0x6000,
    DML_FEATURE_LEVEL_6_1 = 0x6100,
    DML_FEATURE_LEVEL_6_2 = 0x6200,
    DML_FEATURE_LEVEL_6_3 = 0x6300,
    DML_FEATURE_LEVEL_6_4 = 0x6400,
};

#endif  // QDML_DIRECTML_H_INCLUDED

#if QDML_DIRECTML_H_INCLUDED && DML_TARGET_VERSION < 0x4000
#error "qdml needs DirectML.h with DML_TARGET_VERSION >= 0x4000 (define DML_TARGET_VERSION_USE_LATEST)"
#endif
// Operators of later feature levels than 4.0, which a DirectML.h of a lower
// DML_TARGET_VERSION does not declare: qdml::dml::execute answers E_NOTIMPL
// for them there (qdml::run computes them whatever the header).
#if !QDML_DIRECTML_H_INCLUDED || DML_TARGET_VERSION >= 0x6200
#define QDML_DML_HAS_MATRIX_MULTIPLY_INTEGER_TO_FLOAT 1
#define QDML_DML_HAS_QUANTIZED_LINEAR_AVERAGE_POOLING 1
#else
#define QDML_DML_HAS_MATRIX_MULTIPLY_INTEGER_TO_FLOAT 0
#define QDML_DML_HAS_QUANTIZED_LINEAR_AVERAGE_POOLING 0
#endif
#if !QDML_DIRECTML_H_INCLUDED || DML_TARGET_VERSION >= 0x6300
#define QDML_DML_HAS_QUANTIZE 1
#else
#define QDML_DML_HAS_QUANTIZE 0
#endif

// The layout of DirectML's binary interface: with the SDK's header these
// asserts check it, without it they check the declarations above. Pointers
// and UINT64 are 8 bytes and 8-aligned in both LP64 and LLP64; enums, UINT
// and FLOAT are 4 bytes in every model.
static_assert(sizeof(DML_TENSOR_DATA_TYPE) == 4 && sizeof(DML_TENSOR_FLAGS) == 4 && sizeof(DML_TENSOR_TYPE) == 4 &&
                  sizeof(DML_OPERATOR_TYPE) == 4 && sizeof(DML_FEATURE_LEVEL) == 4 && sizeof(UINT) == 4,
              "DirectML enums and UINT are 4 bytes");
static_assert(sizeof(DML_SCALE_BIAS) == 8 && offsetof(DML_SCALE_BIAS, Bias) == 4, "DML_SCALE_BIAS");
static_assert(DML_TENSOR_DATA_TYPE_INT64 == 11 && DML_TENSOR_TYPE_BUFFER == 1 && DML_TENSOR_FLAG_OWNED_BY_DML == 1 &&
                  DML_OPERATOR_ELEMENT_WISE_CLIP == 8 && DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR == 33 &&
                  DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR == 34 &&
                  DML_OPERATOR_MATRIX_MULTIPLY_INTEGER == 117 && DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY == 118 &&
                  DML_OPERATOR_CONVOLUTION_INTEGER == 119 && DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION == 120 &&
                  DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD == 147 && DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR == 148 &&
                  DML_OPERATOR_ELEMENT_WISE_CLIP1 == 153 &&
                  DML_FEATURE_LEVEL_6_2 == 0x6200,
              "DirectML enum values");

#if UINTPTR_MAX == UINT64_MAX  // LP64 and LLP64 (the 64-bit models DirectML ships for)
#define QDML_DML_SIZE(S, N) static_assert(sizeof(S) == (N), #S " is " #N " bytes")
#define QDML_DML_AT(S, M, O) static_assert(offsetof(S, M) == (O), #S "::" #M " is at offset " #O)
// ADD and MATRIX_MULTIPLY: the same nine tensor pointers, in the same order.
#define QDML_DML_BINARY_LAYOUT(S)                                                             \
    QDML_DML_SIZE(S, 72);                                                                     \
    QDML_DML_AT(S, ATensor, 0);                                                               \
    QDML_DML_AT(S, AScaleTensor, 8);                                                          \
    QDML_DML_AT(S, AZeroPointTensor, 16);                                                     \
    QDML_DML_AT(S, BTensor, 24);                                                              \
    QDML_DML_AT(S, BScaleTensor, 32);                                                         \
    QDML_DML_AT(S, BZeroPointTensor, 40);                                                     \
    QDML_DML_AT(S, OutputScaleTensor, 48);                                                    \
    QDML_DML_AT(S, OutputZeroPointTensor, 56);                                                \
    QDML_DML_AT(S, OutputTensor, 64)
QDML_DML_SIZE(DML_BUFFER_TENSOR_DESC, 48);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, DataType, 0);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, Flags, 4);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, DimensionCount, 8);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, Sizes, 16);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, Strides, 24);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, TotalTensorSizeInBytes, 32);
QDML_DML_AT(DML_BUFFER_TENSOR_DESC, GuaranteedBaseOffsetAlignment, 40);
QDML_DML_SIZE(DML_TENSOR_DESC, 16);
QDML_DML_AT(DML_TENSOR_DESC, Type, 0);
QDML_DML_AT(DML_TENSOR_DESC, Desc, 8);
QDML_DML_SIZE(DML_OPERATOR_DESC, 16);
QDML_DML_AT(DML_OPERATOR_DESC, Type, 0);
QDML_DML_AT(DML_OPERATOR_DESC, Desc, 8);
QDML_DML_SIZE(DML_ELEMENT_WISE_CLIP_OPERATOR_DESC, 32);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP_OPERATOR_DESC, OutputTensor, 8);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP_OPERATOR_DESC, ScaleBias, 16);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP_OPERATOR_DESC, Min, 24);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP_OPERATOR_DESC, Max, 28);
QDML_DML_SIZE(DML_SCALAR_UNION, 8);
QDML_DML_SIZE(DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC, 32);
QDML_DML_AT(DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC, OutputTensor, 8);
QDML_DML_AT(DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC, OutputScaleTensor, 16);
QDML_DML_AT(DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC, OutputZeroPointTensor, 24);
QDML_DML_SIZE(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, 48);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, OutputTensor, 8);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, ScaleBias, 16);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, MinMaxDataType, 24);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, Min, 32);
QDML_DML_AT(DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC, Max, 40);
QDML_DML_SIZE(DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC, 32);
QDML_DML_AT(DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC, ScaleTensor, 8);
QDML_DML_AT(DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC, ZeroPointTensor, 16);
QDML_DML_AT(DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC, OutputTensor, 24);
QDML_DML_SIZE(DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC, 32);
QDML_DML_AT(DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC, ScaleTensor, 8);
QDML_DML_AT(DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC, ZeroPointTensor, 16);
QDML_DML_AT(DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC, OutputTensor, 24);
QDML_DML_BINARY_LAYOUT(DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC);
QDML_DML_BINARY_LAYOUT(DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC);
QDML_DML_SIZE(DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC, 40);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC, ATensor, 0);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC, AZeroPointTensor, 8);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC, BTensor, 16);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC, BZeroPointTensor, 24);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC, OutputTensor, 32);
QDML_DML_SIZE(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, 88);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, InputZeroPointTensor, 8);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, FilterTensor, 16);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, FilterZeroPointTensor, 24);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, OutputTensor, 32);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, DimensionCount, 40);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, Strides, 48);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, Dilations, 56);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, StartPadding, 64);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, EndPadding, 72);
QDML_DML_AT(DML_CONVOLUTION_INTEGER_OPERATOR_DESC, GroupCount, 80);
QDML_DML_SIZE(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, 128);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, InputScaleTensor, 8);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, InputZeroPointTensor, 16);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, FilterTensor, 24);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, FilterScaleTensor, 32);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, FilterZeroPointTensor, 40);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, BiasTensor, 48);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, OutputScaleTensor, 56);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, OutputZeroPointTensor, 64);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, OutputTensor, 72);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, DimensionCount, 80);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, Strides, 88);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, Dilations, 96);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, StartPadding, 104);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, EndPadding, 112);
QDML_DML_AT(DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC, GroupCount, 120);
#if QDML_DML_HAS_MATRIX_MULTIPLY_INTEGER_TO_FLOAT
static_assert(DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT == 170, "DirectML enum values");
QDML_DML_SIZE(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, 64);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, ATensor, 0);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, AScaleTensor, 8);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, AZeroPointTensor, 16);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, BTensor, 24);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, BScaleTensor, 32);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, BZeroPointTensor, 40);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, BiasTensor, 48);
QDML_DML_AT(DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC, OutputTensor, 56);
#endif
#if QDML_DML_HAS_QUANTIZED_LINEAR_AVERAGE_POOLING
static_assert(DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING == 169, "DirectML enum values");
QDML_DML_SIZE(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, 104);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, InputTensor, 0);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, InputScaleTensor, 8);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, InputZeroPointTensor, 16);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, OutputScaleTensor, 24);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, OutputZeroPointTensor, 32);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, OutputTensor, 40);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, DimensionCount, 48);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, Strides, 56);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, WindowSize, 64);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, StartPadding, 72);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, EndPadding, 80);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, Dilations, 88);
QDML_DML_AT(DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC, IncludePadding, 96);
#endif
#if QDML_DML_HAS_QUANTIZE
static_assert(DML_OPERATOR_QUANTIZE == 173 && DML_OPERATOR_DEQUANTIZE == 174 && DML_QUANTIZATION_TYPE_SCALE == 1 &&
                  DML_QUANTIZATION_TYPE_SCALE_ZERO_POINT == 2 && DML_TENSOR_DATA_TYPE_UINT4 == 12 &&
                  DML_TENSOR_DATA_TYPE_INT4 == 13,
              "DirectML enum values");
#define QDML_DML_QUANTIZE_LAYOUT(S)                  \
    QDML_DML_SIZE(S, 32);                            \
    QDML_DML_AT(S, InputTensor, 0);                  \
    QDML_DML_AT(S, QuantizationType, 8);             \
    QDML_DML_AT(S, QuantizationTensorCount, 12);     \
    QDML_DML_AT(S, QuantizationTensors, 16);         \
    QDML_DML_AT(S, OutputTensor, 24)
QDML_DML_QUANTIZE_LAYOUT(DML_QUANTIZE_OPERATOR_DESC);
QDML_DML_QUANTIZE_LAYOUT(DML_DEQUANTIZE_OPERATOR_DESC);
#undef QDML_DML_QUANTIZE_LAYOUT
#endif
#undef QDML_DML_BINARY_LAYOUT
#undef QDML_DML_AT
#undef QDML_DML_SIZE
#endif
