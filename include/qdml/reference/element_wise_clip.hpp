// qdml/reference/element_wise_clip.hpp - the oracle (SPEC.md section 7):
//   Output[i] = max(Min, min(g(Input[i]), Max)),  g(x) = x * Scale + Bias or x.
// Float types compute in binary32 (FLOAT16 widened, Min/Max first rounded to
// binary16, result rounded once); NaN stays NaN. Integer types clamp exactly
// against Min/Max truncated and saturated to the type; with ScaleBias, g is
// computed in binary32 from fp32(x) and truncated/saturated back.
#pragma once

#include <type_traits>

#include "qdml/core/quantize.hpp"
#include "qdml/operators/element_wise_clip.hpp"

namespace qdml::reference {

namespace detail {
/// max(lo, min(v, hi)): a value equal to a bound passes unchanged, NaN
/// passes, and lo > hi gives lo.
template <class V>
V clamp_min_max(V v, V lo, V hi) {
    const V r = v > hi ? hi : v;
    return r < lo ? lo : r;
}
}  // namespace detail

template <class T>
void element_wise_clip(const ElementWiseClip<T, kMaxDimensions>& op) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, float16>) {
        const float lo = to_float(from_float<T>(op.Min));  // FLOAT16: Min/Max rounded to binary16 first
        const float hi = to_float(from_float<T>(op.Max));
        for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
            float v = to_float(op.InputTensor[i]);
            if (op.ScaleBias) v = no_fuse(v * op.ScaleBias->Scale) + op.ScaleBias->Bias;
            op.OutputTensor[i] = from_float<T>(detail::clamp_min_max(v, lo, hi));
        });
    } else {
        const T lo = truncate_saturate<T>(op.Min);
        const T hi = truncate_saturate<T>(op.Max);
        for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
            T v = op.InputTensor[i];
            if (op.ScaleBias)
                v = truncate_saturate<T>(no_fuse(static_cast<float>(v) * op.ScaleBias->Scale) + op.ScaleBias->Bias);
            op.OutputTensor[i] = detail::clamp_min_max(v, lo, hi);
        });
    }
}

/// Every rank runs through the rank-8 loop above (leading sizes 1): one
/// instantiation per type combination instead of eight.
template <class T, std::size_t Rank>
void element_wise_clip(const ElementWiseClip<T, Rank>& op) {
    element_wise_clip(op.template with_rank<kMaxDimensions>());
}

}  // namespace qdml::reference
