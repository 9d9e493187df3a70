// qdml/simd/convolution_integer.hpp - CONVOLUTION_INTEGER for
// Implementation::Simd, bit-identical to qdml::reference::convolution_integer
// (docs/semantics.md section 14):
//   Output = sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])   (INT32, wraps mod 2^32)
// QUANTIZED_LINEAR_CONVOLUTION's sum without its bias and requantize: the
// same forms on the GEMM engine (conv/path.hpp's list: the NHWC forms with
// the input's tap rows read in place on AMX / AVX-512 VNNI / AVX-VNNI /
// AVX2, the NCHW form on the generic path and for 1x1 on channel planes),
// run on the desc viewed as a QUANTIZED_LINEAR_CONVOLUTION with an INT32
// output (conv::linear_form): the output type selects the engine's int32
// store (conv::out_spec), which writes the wrapped sums; the zero points
// enter through the row and column sums as there. The sum is an integer sum
// mod 2^32 in any order: the engine's is the reference's. Depthwise descs
// take the GEMM forms too (one input channel per group; the depthwise
// path's stores requantize).
#pragma once

#include <cstdint>
#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/options.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"

namespace qdml::simd {

namespace conv {

/// `op` as the convolution forms read it: a QUANTIZED_LINEAR_CONVOLUTION
/// with the same input, filter, zero points and attributes, no bias, no
/// output zero point and an INT32 output (out_spec: the int32 store, so the
/// scales, 1.0 here, are never read into the result).
template <class TIn, class TFilter>
QuantizedLinearConvolution<TIn, TFilter, std::int32_t> linear_form(const ConvolutionInteger<TIn, TFilter>& op) noexcept {
    static constexpr float kOne = 1.0f;
    const TensorView<const float, 4> one{&kOne, {1, 1, 1, 1}, {0, 0, 0, 0}};
    QuantizedLinearConvolution<TIn, TFilter, std::int32_t> l;
    l.InputTensor = op.InputTensor;
    l.InputScaleTensor = one;
    l.InputZeroPointTensor = op.InputZeroPointTensor;
    l.FilterTensor = op.FilterTensor;
    l.FilterScaleTensor = TensorView<const float, 4>{&kOne, op.OutputTensor.sizes, {0, 0, 0, 0}};
    l.FilterZeroPointTensor = op.FilterZeroPointTensor;
    l.OutputScaleTensor = one;
    l.OutputTensor = op.OutputTensor;
    l.Strides = op.Strides;
    l.Dilations = op.Dilations;
    l.StartPadding = op.StartPadding;
    l.EndPadding = op.EndPadding;
    l.GroupCount = op.GroupCount;
    return l;
}

}  // namespace conv

/// Computes a validated integer convolution on the GEMM engine, in the form
/// conv::select_form() picks for its linear_form; the reference's bits
/// (there is no float step, so in both profiles).
template <class TIn, class TFilter>
void convolution_integer(const ConvolutionInteger<TIn, TFilter>& op, const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // (no float step; kept as every entry does)
    const auto linear = conv::linear_form(op);
    conv::Filter f;
    conv::prepare_filter(linear, simd::select_isa(options.isa), f);
    conv::run(linear, f, options.executor);
}

/// The implementation path that computes `op` under `options`, as
/// qdml::describe() prints it: the form (conv/path.hpp) and its ISA path.
template <class TIn, class TFilter>
std::string path(const ConvolutionInteger<TIn, TFilter>& op, const GemmOptions& options = {}) {
    return path(conv::linear_form(op), options);
}

}  // namespace qdml::simd
