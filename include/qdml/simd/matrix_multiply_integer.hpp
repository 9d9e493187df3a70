// qdml/simd/matrix_multiply_integer.hpp - MATRIX_MULTIPLY_INTEGER on the
// int8 GEMM engine (simd/gemm/), bit-identical to
// qdml::reference::matrix_multiply_integer (docs/semantics.md section 12):
//   Output[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])     (INT32, wraps mod 2^32)
// QUANTIZED_LINEAR_MATRIX_MULTIPLY's products and driver
// (simd/quantized_linear_matrix_multiply.hpp: packing, zero points folded
// through row and column sums, batch broadcast, threads) with the engine's
// int32 store (gemm::RequantSpec::int32_out) in place of the requantize.
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/simd/options.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"

namespace qdml::simd {

/// Computes a validated integer matmul on the GEMM engine; same bits as the
/// reference in both profiles (there is no float step).
template <class TA, class TB>
void matrix_multiply_integer(const MatrixMultiplyInteger<TA, TB>& op, const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // (no float step; kept as every entry does)
    gemm::RequantSpec s;
    detail::a_zero_points(op, s);
    detail::b_zero_points(op, s);
    s.int32_out = true;
    detail::run_matmul(op, simd::select_isa(options.isa), s, options.executor);
}

/// The implementation path that computes `op` under `options`, as
/// qdml::describe() prints it: the GEMM engine on its ISA path.
template <class TA, class TB>
std::string path(const MatrixMultiplyInteger<TA, TB>&, const GemmOptions& options = {}) {
    return "gemm " + std::string(isa_name(simd::select_isa(options.isa)));
}

}  // namespace qdml::simd
