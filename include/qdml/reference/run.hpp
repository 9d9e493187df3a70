// qdml/reference/run.hpp - the runtime-typed oracle: validate a desc, switch
// once over its data types (operators/visit.hpp), compute it with the scalar
// reference. Needs nothing of the SIMD paths (and no xsimd).
#pragma once

#include <utility>

#include "qdml/core/feature_level.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/reference/element_wise_clip.hpp"
#include "qdml/reference/element_wise_dequantize_linear.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_matrix_multiply.hpp"

namespace qdml::reference {

namespace detail {
// compute(d): run() after validation (qdml::run's Reference implementation calls it too).

inline void compute(const ElementWiseDequantizeLinearDesc& d) {
    visit_typed(d, [](const auto& op) { element_wise_dequantize_linear(op); });
}
inline void compute(const ElementWiseQuantizedLinearAddDesc& d) {
    visit_typed(d, [](const auto& op) { element_wise_quantized_linear_add(op); });
}
inline void compute(const QuantizedLinearMatrixMultiplyDesc& d) {
    visit_typed(d, [](const auto& op) { quantized_linear_matrix_multiply(op); });
}
inline void compute(const QuantizedLinearConvolutionDesc& d) {
    visit_typed(d, [](const auto& op) { quantized_linear_convolution(op); });
}
inline void compute(const ElementWiseClipDesc& d) {
    visit_typed(d, [](const auto& op) { element_wise_clip(op); });
}

}  // namespace detail

/// Validates `d` against `level` (throws qdml::Error, touching no data), then
/// computes it with the reference (any of the five operator descs): what
/// qdml::run gives with Implementation::Reference.
template <class Desc, class = decltype(detail::compute(std::declval<const Desc&>()))>
void run(const Desc& d, FeatureLevel level = FeatureLevel::Latest) {
    validate(d, level);
    detail::compute(d);
}

}  // namespace qdml::reference
