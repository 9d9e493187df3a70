// qdml/simd/conv/path.hpp - which form computes a QUANTIZED_LINEAR_CONVOLUTION,
// in one ordered list (oneDNN's implementation list): the first form whose
// condition holds computes the desc on that ISA path. The drivers dispatch on
// select_form(), and qdml::describe() names it (`qdml run --verbose`).
//
//   1. Depthwise   one input channel per group (is_depthwise) and an 8-bit
//                  output (CONVOLUTION_INTEGER's INT32 one takes the GEMM
//                  forms, its groups one channel each): the depthwise
//                  path (conv/depthwise.hpp), on depthwise_isa(cap), in the
//                  form select_depthwise_form() picks (conv/depthwise_form.hpp),
//                  in this order (describe() names them so):
//                    depthwise-nhwc-quads  NHWC in and out, channels across
//                                          lanes, byte quads (AVX-512 VNNI);
//                    depthwise-nhwc-pairs  the same with int16 pairs (AVX2, and
//                                          AVX-512 VNNI when F - FZP leaves int8);
//                    depthwise-planes-pairs channel planes with a stride above 1
//                                          or a horizontal dilation: the pairs
//                                          form between two transpositions;
//                    depthwise-reference   the word row over kMaxRowElements:
//                                          the reference's loop;
//                    depthwise-plane       unit strides and horizontal dilation
//                                          on a vector path: staged planes;
//                    depthwise-rows        everything else: word rows in a ring;
//                  plane and rows transpose an NHWC input / output into / out
//                  of channel planes (depthwise_transposes; the plane form with
//                  byte quads stages NHWC itself).
//   2. AmxNhwc     use_nhwc(op, Amx): AMX tiles on NHWC patch rows (conv/nhwc.hpp).
//   3. GemmNhwc    use_nhwc(op, isa) on a vector path: the input pixels as the
//                  left operand, the filter as the right one (conv/nhwc.hpp).
//   4. GemmNchw    everything else (the generic path always): the filter as the
//                  left operand, the input patches as the right one, stride-1
//                  "wide" pixels read in place or gathered tap rows
//                  (simd/quantized_linear_convolution.hpp, conv::run).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/conv/depthwise.hpp"
#include "qdml/simd/conv/depthwise_form.hpp"
#include "qdml/simd/conv/nhwc.hpp"
#include "qdml/simd/isa.hpp"

namespace qdml::simd::conv {

/// The forms, in the order select_form() tries them (Depthwise has its own
/// ordered sub-forms: DepthwiseForm, select_depthwise_form()).
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
    if (is_depthwise(op) && sizeof(TOut) == 1) return ConvForm::Depthwise;  // (its stores requantize: 8 bits only)
    if (use_nhwc(op, isa)) return isa == Isa::Amx ? ConvForm::AmxNhwc : ConvForm::GemmNhwc;
    return ConvForm::GemmNchw;
}

/// The depthwise path's form and ISA path for the validated depthwise `op`
/// under `cap`, as qdml::describe() prints them (e.g. "depthwise-plane
/// avx2"), read from the descs alone. The word form enters only on AVX-512
/// VNNI, where it depends on the filter's values (quads when every F - FZP
/// fits int8: always for an INT8 filter without zero point); where the two
/// word forms take different forms and the desc cannot tell, the pairs'
/// form is named too.
template <class TIn, class TFilter, class TOut>
std::string depthwise_path(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, Isa cap) {
    const Isa isa = depthwise_isa(cap);
    const DepthwiseForm quads = select_depthwise_form(op, true, isa), pairs = select_depthwise_form(op, false, isa);
    const bool surely_quads = std::is_same_v<TFilter, std::int8_t> && !op.FilterZeroPointTensor;
    std::string s(depthwise_form_name(quads));
    s += " ";
    s += isa_name(isa);
    if (pairs != quads && !surely_quads)
        s += " (" + std::string(depthwise_form_name(pairs)) + " if an F - FZP falls outside int8)";
    return s;
}

}  // namespace qdml::simd::conv
