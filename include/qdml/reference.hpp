// qdml/reference.hpp - the golden oracle alone: the descs and their
// validation per feature level, the typed scalar reference, the
// runtime-typed qdml::reference::run, and the exact checker. Includes
// nothing of the SIMD paths and needs no xsimd (qdml/qdml.hpp has the rest).
#pragma once

#include "qdml/check/exact.hpp"
#include "qdml/core/data_type.hpp"
#include "qdml/core/error.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/core/float16.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"
#include "qdml/operators/element_wise_clip.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/operators/fidelity.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/reference/element_wise_clip.hpp"
#include "qdml/reference/element_wise_dequantize_linear.hpp"
#include "qdml/reference/element_wise_quantize_linear.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/matrix_multiply_integer.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_matrix_multiply.hpp"
#include "qdml/reference/run.hpp"
