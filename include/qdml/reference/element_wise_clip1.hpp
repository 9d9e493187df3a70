// qdml/reference/element_wise_clip1.hpp - the oracle (docs/semantics.md section 13):
//   Output[i] = min(Max, max(Min, g(Input[i]))),  g(x) = x * Scale + Bias or x.
// Min and Max are values of the tensor's type, used as they are. Float types
// compute in binary32 (FLOAT16 widened, result rounded once); integer types
// compare exactly; with ScaleBias, g is computed in binary32 from fp32(x)
// and truncated/saturated back (NaN to 0). Fidelity DirectML: CLIP's order
// and comparisons (Min > Max gives Min, NaN and a value equal to a bound
// become the bound), a NaN bound ignored, ScaleBias (1, +-0) none.
#pragma once

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_clip1.hpp"

namespace qdml::reference {

template <class T>
void element_wise_clip1(const ElementWiseClip1<T>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const bool directml = f == Fidelity::DirectML;
    const auto p = ClipParams<T>::derive_clip1(op, /*unit_is_none=*/directml);
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        op.OutputTensor[i] = directml ? clip1_element_directml(op.InputTensor[i], p) : clip1_element(op.InputTensor[i], p);
    });
}

}  // namespace qdml::reference
