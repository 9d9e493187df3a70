// qdml/reference/matrix_multiply_integer.hpp - the oracle (docs/semantics.md section 12):
//   Output[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])     (int32, wraps mod 2^32)
// for each of the Batch*Channel products; the same in both profiles (no float step).
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"

namespace qdml::reference {

template <class TA, class TB>
void matrix_multiply_integer(const MatrixMultiplyInteger<TA, TB>& op, Fidelity = kDefaultFidelity) {
    const auto& A = op.ATensor;
    const auto& B = op.BTensor;
    const auto& Out = op.OutputTensor;
    const std::uint32_t batches = Out.sizes[0], channels = Out.sizes[1];
    const std::uint32_t M = Out.sizes[2], N = Out.sizes[3], K = A.sizes[3];
    for (std::uint32_t b = 0; b < batches; ++b)
        for (std::uint32_t c = 0; c < channels; ++c)
            for (std::uint32_t m = 0; m < M; ++m)
                for (std::uint32_t n = 0; n < N; ++n) {
                    const std::int32_t a_zp = op.AZeroPointTensor ? (*op.AZeroPointTensor)[{b, c, m, n}] : 0;
                    const std::int32_t b_zp = op.BZeroPointTensor ? (*op.BZeroPointTensor)[{b, c, m, n}] : 0;
                    std::uint32_t acc = 0;  // uint32: wrapping is defined
                    for (std::uint32_t k = 0; k < K; ++k)
                        acc += static_cast<std::uint32_t>((A[{b, c, m, k}] - a_zp) * (B[{b, c, k, n}] - b_zp));
                    Out[{b, c, m, n}] = wrap_int32(acc);
                }
}

}  // namespace qdml::reference
