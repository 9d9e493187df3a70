// qdml/reference/element_wise_clip.hpp - the oracle (docs/semantics.md section 7):
//   Output[i] = max(Min, min(g(Input[i]), Max)),  g(x) = x * Scale + Bias or x.
// Float types compute in binary32 (FLOAT16 widened, Min/Max first rounded to
// binary16, result rounded once); NaN stays NaN. Integer types clamp exactly
// against Min/Max truncated and saturated to the type; with ScaleBias, g is
// computed in binary32 from fp32(x) and truncated/saturated back.
#pragma once

#include "qdml/core/quantize.hpp"
#include "qdml/operators/element_wise_clip.hpp"

namespace qdml::reference {

template <class T>
void element_wise_clip(const ElementWiseClip<T>& op) {
    const auto p = ClipParams<T>::derive(op);  // bounds as T (FLOAT16: rounded to binary16 first)
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) { op.OutputTensor[i] = clip_element(op.InputTensor[i], p); });
}

}  // namespace qdml::reference
