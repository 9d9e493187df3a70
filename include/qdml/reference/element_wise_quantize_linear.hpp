// qdml/reference/element_wise_quantize_linear.hpp - the oracle (docs/semantics.md section 11):
//   Output[i] = Q(x(Input[i]) / Scale[i], ZeroPoint[i], OutputType)
// x: FLOAT16 widened, INT32 converted by fp32; one binary32 division; Q
// clamps (NaN to the low end), rounds ties to even and adds the zero point.
// Fidelity DirectML: a NaN quotient gives 0, except with a one-element scale
// and zero point on packed input and output (then the low end, as Q).
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"

namespace qdml::reference {

template <class TIn, class TOut>
void element_wise_quantize_linear(const ElementWiseQuantizeLinear<TIn, TOut>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const bool has_zp = op.ZeroPointTensor.has_value();
    const bool nan_to_low = f == Fidelity::Exact || quantize_nan_to_low_directml(op);
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const float x = quantize_input(op.InputTensor[i]);
        const float scale = to_float(op.ScaleTensor[i]);
        const std::int32_t zp = has_zp ? std::int32_t{(*op.ZeroPointTensor)[i]} : 0;
        op.OutputTensor[i] = nan_to_low ? quantize_linear<TOut>(x, scale, zp)
                                        : quantize_linear_directml<TOut>(x, scale, zp, false);
    });
}

}  // namespace qdml::reference
