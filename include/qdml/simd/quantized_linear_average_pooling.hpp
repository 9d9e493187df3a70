// qdml/simd/quantized_linear_average_pooling.hpp - the Implementation::Simd
// entry of QUANTIZED_LINEAR_AVERAGE_POOLING (docs/semantics.md section 17).
// It has no vector path yet: it computes
// reference/quantized_linear_average_pooling.hpp's scalar loops, and path()
// says so ("scalar").
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/quantized_linear_average_pooling.hpp"
#include "qdml/reference/quantized_linear_average_pooling.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// The bits of reference::quantized_linear_average_pooling(op, o.fidelity).
template <class T>
void quantized_linear_average_pooling(const QuantizedLinearAveragePooling<T>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    reference::quantized_linear_average_pooling(op, o.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class T>
std::string path(const QuantizedLinearAveragePooling<T>&, const GemmOptions& = {}) {
    return "scalar";
}

}  // namespace qdml::simd
