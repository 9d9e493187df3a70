// qdml/reference/element_wise_dequantize_linear.hpp - the oracle (docs/semantics.md section 3):
//   Output[i] = fp32(Input[i] - ZeroPoint[i]) * Scale[i]
// computed in binary32 and rounded once to the output type. Fidelity DirectML
// (section 10): (fp32(Input) - fp32(ZeroPoint)) * Scale.
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"

namespace qdml::reference {

template <class TIn, class TOut>
void element_wise_dequantize_linear(const ElementWiseDequantizeLinear<TIn, TOut>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const std::int64_t x = op.InputTensor[i];
        const std::int64_t zp = op.ZeroPointTensor ? std::int64_t{(*op.ZeroPointTensor)[i]} : 0;
        const float scale = to_float(op.ScaleTensor[i]);
        op.OutputTensor[i] =
            from_float<TOut>(f == Fidelity::DirectML ? dequantize_directml(x, zp, scale) : qdml::dequantize(x, zp, scale));
    });
}

}  // namespace qdml::reference
