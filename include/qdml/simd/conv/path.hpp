// qdml/simd/conv/path.hpp - which form computes a QUANTIZED_LINEAR_CONVOLUTION,
// in one ordered list (oneDNN's implementation list): the first form whose
// condition holds computes the desc on that ISA path. The drivers dispatch on
// select_form(), and qdml::describe() names it (`qdml run --verbose`).
//
//   1. Depthwise   one input channel per group (is_depthwise): the depthwise
//                  path (conv/depthwise.hpp), on depthwise_isa(cap); it picks
//                  among its own forms in this order: NHWC quads direct
//                  (AVX-512 VNNI), NHWC pairs direct (AVX2), then the channel
//                  forms on planes (input and output transposed when NHWC):
//                  plane (stride 1, no horizontal dilation), rows, and the
//                  reference's loop for rows over kMaxRowElements.
//   2. AmxNhwc     use_nhwc(op, Amx): AMX tiles on NHWC patch rows (conv/nhwc.hpp).
//   3. GemmNhwc    use_nhwc(op, isa) on a vector path: the input pixels as the
//                  left operand, the filter as the right one (conv/nhwc.hpp).
//   4. GemmNchw    everything else (the generic path always): the filter as the
//                  left operand, the input patches as the right one, stride-1
//                  "wide" pixels read in place or gathered tap rows
//                  (simd/quantized_linear_convolution.hpp, conv::run).
#pragma once

#include <cstdint>
#include <string_view>

#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/conv/depthwise.hpp"
#include "qdml/simd/conv/nhwc.hpp"
#include "qdml/simd/isa.hpp"

namespace qdml::simd::conv {

/// The forms, in the order select_form() tries them.
enum class ConvForm : std::uint8_t { Depthwise, AmxNhwc, GemmNhwc, GemmNchw };

constexpr std::string_view form_name(ConvForm f) noexcept {
    switch (f) {
        case ConvForm::Depthwise: return "depthwise";
        case ConvForm::AmxNhwc: return "amx-nhwc";
        case ConvForm::GemmNhwc: return "gemm-nhwc";
        case ConvForm::GemmNchw: return "gemm-nchw";
    }
    return "?";
}

/// The form that computes the validated `op` on ISA path `isa` (a path the
/// CPU runs, select_isa's result).
template <class TIn, class TFilter, class TOut>
ConvForm select_form(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, Isa isa) noexcept {
    if (is_depthwise(op)) return ConvForm::Depthwise;
    if (use_nhwc(op, isa)) return isa == Isa::Amx ? ConvForm::AmxNhwc : ConvForm::GemmNhwc;
    return ConvForm::GemmNchw;
}

}  // namespace qdml::simd::conv
