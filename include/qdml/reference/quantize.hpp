// qdml/reference/quantize.hpp - the oracle of QUANTIZE and DEQUANTIZE
// (docs/semantics.md section 18), with b = i / block (each dimension's block
// = InputTensor's size / the scale's) and zp the zero point tensor's value
// at b, or, for SCALE, 2^(bits-1) for an unsigned quantized type and 0 for a
// signed one:
//   QUANTIZE:   Output[i] = Q(x(Input[i]) / s(Scale[b]), zp, OutputType)
//   DEQUANTIZE: Output[i] = fp32(Input[i] - zp) * s(Scale[b]), rounded once to the output type
// Q is section 2's (NaN to the low end, ties to even, saturating); the
// division is one binary32 division. DirectML 1.15.4 computes the same: one
// rule for both profiles.
#pragma once

#include <cstdint>
#include <type_traits>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/quantize.hpp"

namespace qdml::reference {

template <class TIn, class TOut>
void quantize(const Quantize<TIn, TOut>& op, Fidelity = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const auto b = op.block_of(i);
        const float x = quantize_input(op.InputTensor[i]);
        const float scale = to_float(op.ScaleTensor[b]);
        using Value = std::conditional_t<is_nibble_v<TOut>, std::int32_t, TOut>;  // a nibble's reference takes an int32
        op.OutputTensor[i] = static_cast<Value>(quantize_value<TOut>(x / scale, op.zero_point(b)));
    });
}

template <class TIn, class TOut>
void dequantize(const Dequantize<TIn, TOut>& op, Fidelity = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const auto b = op.block_of(i);
        const std::int64_t x = op.InputTensor[i];
        const float scale = to_float(op.ScaleTensor[b]);
        op.OutputTensor[i] = from_float<TOut>(qdml::dequantize(x, op.zero_point(b), scale));
    });
}

}  // namespace qdml::reference
