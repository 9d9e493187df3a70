// qdml/simd/element_wise_clip1.hpp - the fast-path entry of ELEMENT_WISE_CLIP1
// (docs/semantics.md section 13). For now it computes with the reference's
// scalar loop (the same bits, by construction); qdml::describe() names that
// path "element-wise scalar".
#pragma once

#include <string>

#include "qdml/core/fidelity.hpp"
#include "qdml/operators/element_wise_clip1.hpp"
#include "qdml/reference/element_wise_clip1.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// The bits of reference::element_wise_clip1(op, o.fidelity); may run in place.
template <class T>
void element_wise_clip1(const ElementWiseClip1<T>& op, const GemmOptions& o = {}) {
    reference::element_wise_clip1(op, o.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class T>
std::string path(const ElementWiseClip1<T>&, const GemmOptions& = {}) {
    return "element-wise scalar";
}

}  // namespace qdml::simd
