// qdml/reference/element_wise_quantized_linear_add.hpp - the oracle (docs/semantics.md section 4):
//   va = fp32(A[i] - AZeroPoint) * AScale
//   vb = fp32(B[i] - BZeroPoint) * BScale
//   Output[i] = Q((va + vb) / OutputScale, OutputZeroPoint, OutputType)
// DirectML computes exactly this (section 10): both profiles are one.
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"

namespace qdml::reference {

template <class TA, class TB, class TOut>
void element_wise_quantized_linear_add(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op, Fidelity = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const AddParams p = AddParams::derive(op);  // scales and zero points: per tensor
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const float a_diff = fp32(std::int64_t{op.ATensor[i]} - p.a_zp);  // va = a_diff * AScale, ...
        const float b_diff = fp32(std::int64_t{op.BTensor[i]} - p.b_zp);
        op.OutputTensor[i] = static_cast<TOut>(quantize_int(add_step(a_diff, b_diff, p), p.out));
    });
}

}  // namespace qdml::reference
