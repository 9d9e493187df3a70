// qdml/simd/convolution_integer.hpp - CONVOLUTION_INTEGER for
// Implementation::Simd (docs/semantics.md section 14). No fast path yet:
// the convolution engine with the GEMM's int32 store is issue 27's next
// step, so this computes the reference's loop, and path() says so
// ("simd scalar" in qdml::describe()).
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/reference/convolution_integer.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// Computes a validated integer convolution; the reference's bits (its loop).
template <class TIn, class TFilter>
void convolution_integer(const ConvolutionInteger<TIn, TFilter>& op, const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // (no float step; kept as every entry does)
    reference::convolution_integer(op, options.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class TIn, class TFilter>
std::string path(const ConvolutionInteger<TIn, TFilter>&, const GemmOptions& = {}) {
    return "scalar (no convolution path for CONVOLUTION_INTEGER yet)";
}

}  // namespace qdml::simd
