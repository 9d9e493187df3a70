// qdml/simd/element_wise_quantize_linear.hpp - the fast-path entry of
// ELEMENT_WISE_QUANTIZE_LINEAR (docs/semantics.md section 11). For now it
// computes with the reference's scalar loop (the same bits, by
// construction); qdml::describe() names that path "element-wise scalar".
#pragma once

#include <string>

#include "qdml/core/fidelity.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"
#include "qdml/reference/element_wise_quantize_linear.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// The bits of reference::element_wise_quantize_linear(op, o.fidelity).
template <class TIn, class TOut>
void element_wise_quantize_linear(const ElementWiseQuantizeLinear<TIn, TOut>& op, const GemmOptions& o = {}) {
    reference::element_wise_quantize_linear(op, o.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class TIn, class TOut>
std::string path(const ElementWiseQuantizeLinear<TIn, TOut>&, const GemmOptions& = {}) {
    return "element-wise scalar";
}

}  // namespace qdml::simd
