// qdml/operators/visit.hpp - from a runtime-typed desc to its typed operator
// struct: one switch over the desc's data types (every entry that computes a
// desc goes through it: qdml::run, qdml::reference::run, the compiled and
// prepared forms, the exact checker).
#pragma once

#include <cstdint>

#include "qdml/core/data_type.hpp"
#include "qdml/core/float16.hpp"
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

namespace qdml {

// visit_typed(desc, f) switches once over the desc's data types and calls
// f(op) with the typed operator struct bound to the desc, e.g.
// ElementWiseClip<float> (one instantiation per type combination: the
// element-wise views have rank 8, and the SIMD path's loop plan takes the
// dimensions apart at run time). Precondition: `desc` passed validate().

template <class F>
void visit_typed(const ElementWiseDequantizeLinearDesc& d, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t>(
        d.InputTensor.Desc.DataType, [&](auto in) {
            visit_one_of<float16, float>(d.OutputTensor.Desc.DataType, [&](auto out) {
                f(ElementWiseDequantizeLinear<typename decltype(in)::type, typename decltype(out)::type>::bind_validated(d));
            });
        });
}

template <class F>
void visit_typed(const ElementWiseQuantizeLinearDesc& d, F&& f) {
    visit_one_of<float, float16, std::int32_t>(d.InputTensor.Desc.DataType, [&](auto in) {
        visit_one_of<std::int8_t, std::uint8_t>(d.OutputTensor.Desc.DataType, [&](auto out) {
            f(ElementWiseQuantizeLinear<typename decltype(in)::type, typename decltype(out)::type>::bind_validated(d));
        });
    });
}

/// Calls f(type_tag<A>, type_tag<B>, type_tag<Out>) for the three int8/uint8
/// types of a quantized operator.
template <class F>
void visit_q8_types(TensorDataType a, TensorDataType b, TensorDataType out, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t>(a, [&](auto ta) {
        visit_one_of<std::int8_t, std::uint8_t>(b, [&](auto tb) {
            visit_one_of<std::int8_t, std::uint8_t>(out, [&](auto to) { f(ta, tb, to); });
        });
    });
}

template <class F>
void visit_typed(const ElementWiseQuantizedLinearAddDesc& d, F&& f) {
    visit_q8_types(d.ATensor.Desc.DataType, d.BTensor.Desc.DataType, d.OutputTensor.Desc.DataType,
                   [&](auto a, auto b, auto out) {
                       f(ElementWiseQuantizedLinearAdd<typename decltype(a)::type, typename decltype(b)::type,
                                                       typename decltype(out)::type>::bind_validated(d));
                   });
}

template <class F>
void visit_typed(const QuantizedLinearMatrixMultiplyDesc& d, F&& f) {
    visit_q8_types(d.ATensor.Desc.DataType, d.BTensor.Desc.DataType, d.OutputTensor.Desc.DataType,
                   [&](auto a, auto b, auto out) {
                       f(QuantizedLinearMatrixMultiply<typename decltype(a)::type, typename decltype(b)::type,
                                                       typename decltype(out)::type>::bind_validated(d));
                   });
}

template <class F>
void visit_typed(const QuantizedLinearConvolutionDesc& d, F&& f) {
    visit_q8_types(d.InputTensor.Desc.DataType, d.FilterTensor.Desc.DataType, d.OutputTensor.Desc.DataType,
                   [&](auto in, auto filter, auto out) {
                       f(QuantizedLinearConvolution<typename decltype(in)::type, typename decltype(filter)::type,
                                                    typename decltype(out)::type>::bind_validated(d));
                   });
}

template <class F>
void visit_typed(const MatrixMultiplyIntegerDesc& d, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t>(d.ATensor.Desc.DataType, [&](auto a) {
        visit_one_of<std::int8_t, std::uint8_t>(d.BTensor.Desc.DataType, [&](auto b) {
            f(MatrixMultiplyInteger<typename decltype(a)::type, typename decltype(b)::type>::bind_validated(d));
        });
    });
}

/// The integer types of MATRIX_MULTIPLY_INTEGER_TO_FLOAT's operands.
template <class F>
void visit_integer_operand(TensorDataType t, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t>(t, f);
}

template <class F>
void visit_typed(const MatrixMultiplyIntegerToFloatDesc& d, F&& f) {
    visit_integer_operand(d.ATensor.Desc.DataType, [&](auto a) {
        visit_integer_operand(d.BTensor.Desc.DataType, [&](auto b) {
            visit_one_of<float, float16>(d.OutputTensor.Desc.DataType, [&](auto out) {
                f(MatrixMultiplyIntegerToFloat<typename decltype(a)::type, typename decltype(b)::type,
                                               typename decltype(out)::type>::bind_validated(d));
            });
        });
    });
}

template <class F>
void visit_typed(const QuantizedLinearAveragePoolingDesc& d, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t>(d.InputTensor.Desc.DataType, [&](auto t) {
        f(QuantizedLinearAveragePooling<typename decltype(t)::type>::bind_validated(d));
    });
}

template <class F>
void visit_typed(const ConvolutionIntegerDesc& d, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t>(d.InputTensor.Desc.DataType, [&](auto in) {
        visit_one_of<std::int8_t, std::uint8_t>(d.FilterTensor.Desc.DataType, [&](auto filter) {
            f(ConvolutionInteger<typename decltype(in)::type, typename decltype(filter)::type>::bind_validated(d));
        });
    });
}

template <class F>
void visit_typed(const ElementWiseClipDesc& d, F&& f) {
    visit_data_type(d.InputTensor.Desc.DataType, [&](auto t) {
        f(ElementWiseClip<typename decltype(t)::type>::bind_validated(d));
    });
}

template <class F>
void visit_typed(const ElementWiseClip1Desc& d, F&& f) {
    visit_data_type(d.InputTensor.Desc.DataType, [&](auto t) {
        f(ElementWiseClip1<typename decltype(t)::type>::bind_validated(d));
    });
}

template <class F>
void visit_typed(const DynamicQuantizeLinearDesc& d, F&& f) {
    visit_one_of<float, float16>(d.InputTensor.Desc.DataType, [&](auto in) {
        visit_one_of<std::int8_t, std::uint8_t>(d.OutputTensor.Desc.DataType, [&](auto out) {
            f(DynamicQuantizeLinear<typename decltype(in)::type, typename decltype(out)::type>::bind_validated(d));
        });
    });
}

/// Calls f(type_tag<T>) for the quantized types of QUANTIZE and DEQUANTIZE.
template <class F>
void visit_quantized_type(TensorDataType t, F&& f) {
    visit_one_of<std::int8_t, std::uint8_t, int4, uint4>(t, f);
}

template <class F>
void visit_typed(const QuantizeDesc& d, F&& f) {
    visit_one_of<float, float16>(d.InputTensor.Desc.DataType, [&](auto in) {
        visit_quantized_type(d.OutputTensor.Desc.DataType, [&](auto out) {
            f(Quantize<typename decltype(in)::type, typename decltype(out)::type>::bind_validated(d));
        });
    });
}

template <class F>
void visit_typed(const DequantizeDesc& d, F&& f) {
    visit_quantized_type(d.InputTensor.Desc.DataType, [&](auto in) {
        visit_one_of<float, float16>(d.OutputTensor.Desc.DataType, [&](auto out) {
            f(Dequantize<typename decltype(in)::type, typename decltype(out)::type>::bind_validated(d));
        });
    });
}

}  // namespace qdml

/// X(EXT, Desc) for every operator desc, in one list: the explicit
/// instantiations that programs make once (runtime/dispatch.hpp's dispatch,
/// runtime/compiled.hpp's executors, check/exact.hpp's checker) are
/// declared and defined for each operator from it. EXT: `extern` or empty.
#define QDML_DETAIL_FOR_EACH_DESC(X, EXT) \
    X(EXT, qdml::ElementWiseDequantizeLinearDesc) \
    X(EXT, qdml::ElementWiseQuantizeLinearDesc) \
    X(EXT, qdml::ElementWiseQuantizedLinearAddDesc) \
    X(EXT, qdml::QuantizedLinearMatrixMultiplyDesc) \
    X(EXT, qdml::QuantizedLinearConvolutionDesc) \
    X(EXT, qdml::ElementWiseClipDesc) \
    X(EXT, qdml::ElementWiseClip1Desc) \
    X(EXT, qdml::MatrixMultiplyIntegerDesc) \
    X(EXT, qdml::MatrixMultiplyIntegerToFloatDesc) \
    X(EXT, qdml::ConvolutionIntegerDesc) \
    X(EXT, qdml::DynamicQuantizeLinearDesc) \
    X(EXT, qdml::QuantizedLinearAveragePoolingDesc) \
    X(EXT, qdml::QuantizeDesc) \
    X(EXT, qdml::DequantizeDesc)
