// qdml/reference/element_wise_quantized_linear_add.hpp - the oracle (SPEC.md section 4):
//   va = fp32(A[i] - AZeroPoint) * AScale
//   vb = fp32(B[i] - BZeroPoint) * BScale
//   Output[i] = Q((va + vb) / OutputScale, OutputZeroPoint, OutputType)
#pragma once

#include <cstdint>

#include "qdml/core/quantize.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"

namespace qdml::reference {

template <class TA, class TB, class TOut>
void element_wise_quantized_linear_add(const ElementWiseQuantizedLinearAdd<TA, TB, TOut, kMaxDimensions>& op) {
    const float a_scale = op.AScaleTensor.scalar();
    const float b_scale = op.BScaleTensor.scalar();
    const float out_scale = op.OutputScaleTensor.scalar();
    const std::int32_t a_zp = op.AZeroPointTensor ? op.AZeroPointTensor->scalar() : 0;
    const std::int32_t b_zp = op.BZeroPointTensor ? op.BZeroPointTensor->scalar() : 0;
    const std::int32_t out_zp = op.OutputZeroPointTensor ? op.OutputZeroPointTensor->scalar() : 0;
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const float va = dequantize(op.ATensor[i], a_zp, a_scale);
        const float vb = dequantize(op.BTensor[i], b_zp, b_scale);
        op.OutputTensor[i] = quantize<TOut>((va + vb) / out_scale, out_zp);
    });
}

/// Every rank runs through the rank-8 loop above (leading sizes 1): one
/// instantiation per type combination instead of eight.
template <class TA, class TB, class TOut, std::size_t Rank>
void element_wise_quantized_linear_add(const ElementWiseQuantizedLinearAdd<TA, TB, TOut, Rank>& op) {
    element_wise_quantized_linear_add(op.template with_rank<kMaxDimensions>());
}

}  // namespace qdml::reference
