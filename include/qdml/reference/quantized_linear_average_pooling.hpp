// qdml/reference/quantized_linear_average_pooling.hpp - the oracle (docs/semantics.md section 17):
//   sum    = +0.0; for each window tap t (row-major over t) whose position
//            p = o * Strides + t * Dilations - StartPadding lies in the input:
//            sum = sum + fp32(X[n][c][p] - InputZP[c]) * InputScale[c]
//   count  = WindowSize's product (IncludePadding) or the taps in the input
//   Output = Q((sum / fp32(count)) / OutputScale[c], OutputZP[c], OutputType)
// Every step one binary32 operation. Fidelity DirectML: a NaN average gives
// the type's high end without an output zero point, its low end with a
// one-element one, 0 with a per-channel one (Q gives the low end).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/quantized_linear_average_pooling.hpp"

namespace qdml::reference {

namespace detail {
/// The average of the window at output index `i` = {n, c, oz, oy, ox}, in
/// binary32, before the division by OutputScale (docs/semantics.md section 17).
template <class T, class Index>
float average_pooling_window(const QuantizedLinearAveragePooling<T>& op, const Index& i, std::int32_t x_zp,
                             float x_scale) {
    const auto& X = op.InputTensor;
    const auto& W = op.WindowSize;
    float sum = 0.0f;
    std::uint64_t taps = 0;
    for (std::uint32_t t0 = 0; t0 < W[0]; ++t0)
        for (std::uint32_t t1 = 0; t1 < W[1]; ++t1)
            for (std::uint32_t t2 = 0; t2 < W[2]; ++t2) {
                const std::uint32_t t[3] = {t0, t1, t2};
                std::uint32_t p[3];
                bool inside = true;
                for (int k = 0; k < 3; ++k) {
                    const std::int64_t pk = std::int64_t{i[2 + k]} * op.Strides[k] +
                                            std::int64_t{t[k]} * op.Dilations[k] - op.StartPadding[k];
                    inside = inside && pk >= 0 && pk < X.sizes[2 + k];
                    p[k] = static_cast<std::uint32_t>(pk);
                }
                if (!inside) continue;  // padding: adds nothing
                sum = sum + qdml::dequantize(X[{i[0], i[1], p[0], p[1], p[2]}], x_zp, x_scale);
                ++taps;
            }
    const std::uint64_t count =
        op.IncludePadding ? std::uint64_t{W[0]} * W[1] * W[2] : taps;
    return sum / fp32(static_cast<std::int64_t>(count));
}

/// The directml profile's output for a NaN average (docs/semantics.md section 17).
template <class T>
T average_pooling_nan_directml(const QuantizedLinearAveragePooling<T>& op) {
    if (!op.OutputZeroPointTensor) return std::numeric_limits<T>::max();
    return op.OutputZeroPointOneElement ? std::numeric_limits<T>::min() : T{0};
}
}  // namespace detail

template <class T>
void quantized_linear_average_pooling(const QuantizedLinearAveragePooling<T>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const T nan_out = detail::average_pooling_nan_directml(op);
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const std::int32_t x_zp = op.InputZeroPointTensor ? std::int32_t{(*op.InputZeroPointTensor)[i]} : 0;
        const std::int32_t y_zp = op.OutputZeroPointTensor ? std::int32_t{(*op.OutputZeroPointTensor)[i]} : 0;
        const float v = detail::average_pooling_window(op, i, x_zp, op.InputScaleTensor[i]) / op.OutputScaleTensor[i];
        op.OutputTensor[i] = f == Fidelity::DirectML && std::isnan(v) ? nan_out : qdml::quantize<T>(v, y_zp);
    });
}

}  // namespace qdml::reference
