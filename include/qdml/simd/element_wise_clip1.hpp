// qdml/simd/element_wise_clip1.hpp - the fast path of ELEMENT_WISE_CLIP1,
// bit-identical to reference/element_wise_clip1.hpp (docs/semantics.md section 13):
// CLIP's rows (simd/element_wise_clip.hpp) with CLIP1's parameters
// (ClipParams::derive_clip1: the typed bounds; DirectML: ScaleBias (1, +-0)
// none), taking CLIP1's own comparisons where they differ from CLIP's:
// Min > Max in the exact profile, a NaN bound in the DirectML profile.
#pragma once

#include <string>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/operators/element_wise_clip1.hpp"
#include "qdml/reference/element_wise_clip1.hpp"
#include "qdml/simd/element_wise_clip.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// The bits of reference::element_wise_clip1(op, o.fidelity); may run in
/// place; `o.isa` caps the path (select_elementwise_isa).
template <class T>
void element_wise_clip1(const ElementWiseClip1<T>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::element_wise_clip1(op, o.fidelity);
    } else {
        detail::clip_rows<T>(detail::clip_plan(op),
                             {reinterpret_cast<char*>(op.OutputTensor.data),
                              const_cast<char*>(reinterpret_cast<const char*>(op.InputTensor.data))},
                             ClipParams<T>::derive_clip1(op, o.fidelity == Fidelity::DirectML),
                             select_elementwise_isa(o.isa), o.fidelity, o.executor, /*clip1=*/true);
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`.
template <class T>
std::string path(const ElementWiseClip1<T>&, const GemmOptions& o = {}) {
    return std::string("element-wise ") + (kAvailable ? arch_name(o.isa) : "scalar");
}

}  // namespace qdml::simd
