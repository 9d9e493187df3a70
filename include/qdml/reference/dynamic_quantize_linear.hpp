// qdml/reference/dynamic_quantize_linear.hpp - the oracle (docs/semantics.md section 15):
//   m = min(0, min x), M = max(0, max x)   (NaN skipped; FLOAT16 widened)
//   exact:    s = (M - m) / 255,            z = Z(lo - m / s), Output = Q(x / s, z)
//   directml: s = (M - m) * fp32(1/255), r = 1 / s, z = Z(lo - m * r), Output = Q(x * r, z)
//   OutputScale = s, OutputZeroPoint = z
#pragma once

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/dynamic_quantize_linear.hpp"

namespace qdml::reference {

template <class TIn, class TOut>
void dynamic_quantize_linear(const DynamicQuantizeLinear<TIn, TOut>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    DynamicRange range;
    for_each_index(op.InputTensor.sizes, [&](const auto& i) { range.add(quantize_input(op.InputTensor[i])); });
    const auto p = DynamicQuantizeParams::make<TOut>(range, f == Fidelity::DirectML);
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        op.OutputTensor[i] = dynamic_quantize<TOut>(quantize_input(op.InputTensor[i]), p);
    });
    op.OutputScaleTensor.scalar() = p.scale;
    op.OutputZeroPointTensor.scalar() = static_cast<TOut>(p.zp);
}

}  // namespace qdml::reference
