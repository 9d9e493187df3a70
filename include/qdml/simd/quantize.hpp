// qdml/simd/quantize.hpp - the Implementation::Simd entries of QUANTIZE and
// DEQUANTIZE (docs/semantics.md section 18). They have no vector path yet:
// they compute reference/quantize.hpp's scalar loops, and path() says so
// ("scalar").
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/quantize.hpp"
#include "qdml/reference/quantize.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// The bits of reference::quantize(op).
template <class TIn, class TOut>
void quantize(const Quantize<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    reference::quantize(op, o.fidelity);
}

/// The bits of reference::dequantize(op).
template <class TIn, class TOut>
void dequantize(const Dequantize<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;
    reference::dequantize(op, o.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class TIn, class TOut>
std::string path(const Quantize<TIn, TOut>&, const GemmOptions& = {}) {
    return "scalar";
}
template <class TIn, class TOut>
std::string path(const Dequantize<TIn, TOut>&, const GemmOptions& = {}) {
    return "scalar";
}

}  // namespace qdml::simd
