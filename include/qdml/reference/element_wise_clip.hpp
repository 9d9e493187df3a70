// qdml/reference/element_wise_clip.hpp - the oracle (docs/semantics.md section 7):
//   Output[i] = max(Min, min(g(Input[i]), Max)),  g(x) = x * Scale + Bias or x.
// Float types compute in binary32 (FLOAT16 widened, Min/Max first rounded to
// binary16, result rounded once); NaN stays NaN. Integer types clamp exactly
// against Min/Max truncated and saturated to the type; with ScaleBias, g is
// computed in binary32 from fp32(x) and truncated/saturated back. Fidelity
// DirectML (section 10): float comparisons as DirectML makes them (NaN and a
// value equal to a bound become the bound).
#pragma once

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_clip.hpp"

namespace qdml::reference {

template <class T>
void element_wise_clip(const ElementWiseClip<T>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const auto p = ClipParams<T>::derive(op);  // bounds as T (FLOAT16: rounded to binary16 first)
    if (f == Fidelity::DirectML)
        for_each_index(op.OutputTensor.sizes,
                       [&](const auto& i) { op.OutputTensor[i] = clip_element_directml(op.InputTensor[i], p); });
    else
        for_each_index(op.OutputTensor.sizes, [&](const auto& i) { op.OutputTensor[i] = clip_element(op.InputTensor[i], p); });
}

}  // namespace qdml::reference
