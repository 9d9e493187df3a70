// qdml/reference/quantized_linear_matrix_multiply.hpp - the oracle (docs/semantics.md section 5):
//   acc[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])     (int32, wraps mod 2^32)
//   mult      = fp32(AScale[m] * BScale[n]) / OutputScale[m]
//   Output    = Q(fp32(acc) * mult, OutputZP[m], OutputType)
// Fidelity DirectML (section 10): requantize_directml(acc, AScale[m], BScale[n], OutputScale[m], OutputZP[m]).
// for each of the Batch*Channel products. The k loop sits outside the n loop
// only so that rows of B are read in order; the sum is the same.
#pragma once

#include <cstdint>
#include <vector>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"

namespace qdml::reference {

template <class TA, class TB, class TOut>
void quantized_linear_matrix_multiply(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const auto& A = op.ATensor;
    const auto& B = op.BTensor;
    const auto& Out = op.OutputTensor;
    const std::uint32_t batches = Out.sizes[0], channels = Out.sizes[1];
    const std::uint32_t M = Out.sizes[2], N = Out.sizes[3], K = A.sizes[3];
    std::vector<std::int32_t> b_zp(N);
    std::vector<std::uint32_t> acc(N);  // uint32: wrapping is defined
    for (std::uint32_t b = 0; b < batches; ++b)
        for (std::uint32_t c = 0; c < channels; ++c) {
            for (std::uint32_t n = 0; n < N; ++n)
                b_zp[n] = op.BZeroPointTensor ? (*op.BZeroPointTensor)[{b, c, 0, n}] : 0;
            for (std::uint32_t m = 0; m < M; ++m) {
                const std::int32_t a_zp = op.AZeroPointTensor ? (*op.AZeroPointTensor)[{b, c, m, 0}] : 0;
                for (std::uint32_t n = 0; n < N; ++n) acc[n] = 0;
                for (std::uint32_t k = 0; k < K; ++k) {
                    const std::int32_t a = A[{b, c, m, k}] - a_zp;
                    const TB* b_row = &B[{b, c, k, 0}];
                    const std::uint64_t b_stride = B.strides[3];
                    for (std::uint32_t n = 0; n < N; ++n)
                        acc[n] += static_cast<std::uint32_t>(a * (b_row[n * b_stride] - b_zp[n]));
                }
                for (std::uint32_t n = 0; n < N; ++n) {
                    const float sa = op.AScaleTensor[{b, c, m, n}], sb = op.BScaleTensor[{b, c, m, n}];
                    const float so = op.OutputScaleTensor[{b, c, m, n}];
                    const std::int32_t out_zp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[{b, c, m, n}] : 0;
                    Out[{b, c, m, n}] = f == Fidelity::DirectML
                                            ? requantize_directml<TOut>(wrap_int32(acc[n]), sa, sb, so, out_zp)
                                            : requantize<TOut>(wrap_int32(acc[n]), requantize_multiplier(sa, sb, so), out_zp);
                }
            }
        }
}

}  // namespace qdml::reference
