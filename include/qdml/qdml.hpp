// qdml/qdml.hpp - umbrella header: DirectML's quantized operators on the CPU.
#pragma once

#include "qdml/reference.hpp"  // the oracle: descs, validation, reference, exact checker
#include "qdml/runtime/compiled.hpp"
#include "qdml/runtime/dispatch.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"
#include "qdml/simd/convolution_integer_prepared.hpp"
#include "qdml/simd/matrix_multiply_integer_prepared.hpp"
#include "qdml/simd/matrix_multiply_integer_to_float_prepared.hpp"
#include "qdml/simd/quantized_linear_convolution_prepared.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply_prepared.hpp"
