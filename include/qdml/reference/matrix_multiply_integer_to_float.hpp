// qdml/reference/matrix_multiply_integer_to_float.hpp - the oracle (docs/semantics.md section 16),
// for each of the Batch*Channel products:
//   exact:    acc = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])        (int32, wraps mod 2^32)
//             Output[m][n] = fp32(acc) * fp32(AScale[m] * BScale[n])  (+ Bias[m][n])
//   directml: a = (fp32(A[m][k]) - fp32(AZP[m])) * AScale[m],  b = (fp32(B[k][n]) - fp32(BZP[n])) * BScale[n]
//             s = 0; for k in order: s = s + a * b;   Output[m][n] = s  (+ Bias[m][n])
// Every step one binary32 rounding, no FMA; FLOAT16 scales and bias are
// widened to binary32 and the result is rounded once to FLOAT16.
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/matrix_multiply_integer_to_float.hpp"

namespace qdml::reference {

template <class TA, class TB, class TF>
void matrix_multiply_integer_to_float(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op,
                                      Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const auto& A = op.ATensor;
    const auto& B = op.BTensor;
    const auto& Out = op.OutputTensor;
    const std::uint32_t batches = Out.sizes[0], channels = Out.sizes[1];
    const std::uint32_t M = Out.sizes[2], N = Out.sizes[3], K = A.sizes[3];
    for (std::uint32_t b = 0; b < batches; ++b)
        for (std::uint32_t c = 0; c < channels; ++c)
            for (std::uint32_t m = 0; m < M; ++m)
                for (std::uint32_t n = 0; n < N; ++n) {
                    const std::int64_t a_zp = op.AZeroPointTensor ? std::int64_t{(*op.AZeroPointTensor)[{b, c, m, n}]} : 0;
                    const std::int64_t b_zp = op.BZeroPointTensor ? std::int64_t{(*op.BZeroPointTensor)[{b, c, m, n}]} : 0;
                    const float a_scale = to_float(op.AScaleTensor[{b, c, m, n}]);
                    const float b_scale = to_float(op.BScaleTensor[{b, c, m, n}]);
                    float y;
                    if (f == Fidelity::DirectML) {
                        float s = 0.0f;
                        for (std::uint32_t k = 0; k < K; ++k) {
                            const float a = dequantize_directml(A[{b, c, m, k}], a_zp, a_scale);
                            const float bk = dequantize_directml(B[{b, c, k, n}], b_zp, b_scale);
                            s = no_fuse(s + no_fuse(a * bk));
                        }
                        y = s;
                    } else {
                        std::uint32_t acc = 0;  // uint32: wrapping is defined, and equals the exact sum mod 2^32
                        for (std::uint32_t k = 0; k < K; ++k)
                            acc += static_cast<std::uint32_t>(A[{b, c, m, k}] - a_zp) *
                                   static_cast<std::uint32_t>(B[{b, c, k, n}] - b_zp);
                        y = no_fuse(fp32(wrap_int32(acc)) * no_fuse(a_scale * b_scale));
                    }
                    if (op.BiasTensor) y = no_fuse(y + to_float((*op.BiasTensor)[{b, c, m, n}]));
                    Out[{b, c, m, n}] = from_float<TF>(y);
                }
}

}  // namespace qdml::reference
