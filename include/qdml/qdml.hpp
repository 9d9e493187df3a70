// qdml/qdml.hpp - umbrella header: DirectML's quantized operators on the CPU.
#pragma once

#include "qdml/core/data_type.hpp"
#include "qdml/core/error.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/core/float16.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/element_wise_clip.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"
#include "qdml/reference/element_wise_clip.hpp"
#include "qdml/reference/element_wise_dequantize_linear.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_matrix_multiply.hpp"
#include "qdml/runtime/dispatch.hpp"
#include "qdml/check/exact.hpp"  // above the runtime it checks
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"
