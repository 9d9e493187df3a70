// qdml/simd/dynamic_quantize_linear.hpp - the Implementation::Simd entry of
// DYNAMIC_QUANTIZE_LINEAR (docs/semantics.md section 15). It has no vector
// path yet: it computes reference/dynamic_quantize_linear.hpp's scalar loops,
// and path() says so ("scalar").
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/dynamic_quantize_linear.hpp"
#include "qdml/reference/dynamic_quantize_linear.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// The bits of reference::dynamic_quantize_linear(op, o.fidelity).
template <class TIn, class TOut>
void dynamic_quantize_linear(const DynamicQuantizeLinear<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    reference::dynamic_quantize_linear(op, o.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class TIn, class TOut>
std::string path(const DynamicQuantizeLinear<TIn, TOut>&, const GemmOptions& = {}) {
    return "scalar";
}

}  // namespace qdml::simd
