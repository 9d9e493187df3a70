// qdml/simd/matrix_multiply_integer.hpp - MATRIX_MULTIPLY_INTEGER for
// Implementation::Simd (docs/semantics.md section 12). No fast path yet:
// the GEMM engine's int32 store (an epilogue without requantization) is
// issue 27's next step, so this computes the reference's loop, and path()
// says so ("simd scalar" in qdml::describe()).
#pragma once

#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/reference/matrix_multiply_integer.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

/// Computes a validated integer matmul; the reference's bits (its loop).
template <class TA, class TB>
void matrix_multiply_integer(const MatrixMultiplyInteger<TA, TB>& op, const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // (no float step; kept as every entry does)
    reference::matrix_multiply_integer(op, options.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints it.
template <class TA, class TB>
std::string path(const MatrixMultiplyInteger<TA, TB>&, const GemmOptions& = {}) {
    return "scalar (no GEMM path for MATRIX_MULTIPLY_INTEGER yet)";
}

}  // namespace qdml::simd
