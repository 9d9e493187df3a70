// qdml/reference/run.hpp - the runtime-typed oracle: validate a desc, switch
// once over its data types (operators/visit.hpp), compute it with the scalar
// reference. Needs nothing of the SIMD paths (and no xsimd).
#pragma once

#include <utility>

#include "qdml/core/feature_level.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/operators/fidelity.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/reference/convolution_integer.hpp"
#include "qdml/reference/dynamic_quantize_linear.hpp"
#include "qdml/reference/element_wise_clip.hpp"
#include "qdml/reference/element_wise_clip1.hpp"
#include "qdml/reference/element_wise_dequantize_linear.hpp"
#include "qdml/reference/element_wise_quantize_linear.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/matrix_multiply_integer.hpp"
#include "qdml/reference/matrix_multiply_integer_to_float.hpp"
#include "qdml/reference/quantized_linear_average_pooling.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_matrix_multiply.hpp"
#include "qdml/reference/quantize.hpp"

namespace qdml::reference {

namespace detail {
// compute(d, f): run() after validation (qdml::run's Reference implementation calls it too).

inline void compute(const ElementWiseDequantizeLinearDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { element_wise_dequantize_linear(op, f); });
}
inline void compute(const ElementWiseQuantizeLinearDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { element_wise_quantize_linear(op, f); });
}
inline void compute(const ElementWiseQuantizedLinearAddDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { element_wise_quantized_linear_add(op, f); });
}
inline void compute(const QuantizedLinearMatrixMultiplyDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { quantized_linear_matrix_multiply(op, f); });
}
inline void compute(const QuantizedLinearConvolutionDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { quantized_linear_convolution(op, f); });
}
inline void compute(const MatrixMultiplyIntegerDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { matrix_multiply_integer(op, f); });
}
inline void compute(const MatrixMultiplyIntegerToFloatDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { matrix_multiply_integer_to_float(op, f); });
}
inline void compute(const QuantizedLinearAveragePoolingDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { quantized_linear_average_pooling(op, f); });
}
inline void compute(const ConvolutionIntegerDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { convolution_integer(op, f); });
}
inline void compute(const ElementWiseClipDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { element_wise_clip(op, f); });
}
inline void compute(const ElementWiseClip1Desc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { element_wise_clip1(op, f); });
}
inline void compute(const DynamicQuantizeLinearDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { dynamic_quantize_linear(op, f); });
}
inline void compute(const QuantizeDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { quantize(op, f); });
}
inline void compute(const DequantizeDesc& d, Fidelity f = kDefaultFidelity) {
    visit_typed(d, [f](const auto& op) { dequantize(op, f); });
}

}  // namespace detail

/// Validates `d` against `level` and `fidelity`'s rules (throws qdml::Error,
/// touching no data), then computes it with the reference in that profile
/// (any operator desc): what qdml::run gives with
/// Implementation::Reference.
template <class Desc, class = decltype(detail::compute(std::declval<const Desc&>()))>
void run(const Desc& d, FeatureLevel level = FeatureLevel::Latest, Fidelity fidelity = kDefaultFidelity) {
    validate(d, level, fidelity);
    detail::compute(d, fidelity);
}

}  // namespace qdml::reference
