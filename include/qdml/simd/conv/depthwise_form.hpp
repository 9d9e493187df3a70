// qdml/simd/conv/depthwise_form.hpp - which form of the depthwise path
// (conv/depthwise.hpp) computes a depthwise QUANTIZED_LINEAR_CONVOLUTION, in
// one ordered list: the first form whose condition holds runs. The driver
// dispatches on select_depthwise_form(), and qdml::describe() names it
// (conv/path.hpp, `qdml run --verbose`). The choice reads the descs (sizes,
// strides, attributes), the ISA path and the filter's word form, never data.
//
//   1. NhwcQuads   input and output NHWC by strides (channels_inner), the
//                  NHWC direct geometry with C a multiple of 16 (nhwc_geometry)
//                  and unit strides, AVX-512 VNNI with byte quads: channels
//                  across lanes, no transposition.
//   2. NhwcPairs   the same geometry with C a multiple of 8, any strides (a
//                  vertical stride above 1: one output row per pass), AVX2 or
//                  AVX-512 VNNI with int16 pairs, and AVX-512 VNNI with byte
//                  quads where NhwcQuads does not apply (strides above 1).
//   3. PlanesPairs input and output channel planes (NCHW by strides, each
//                  plane's rows packed), a stride above 1 or a horizontal
//                  dilation (the Plane form's unit strides do not hold), and
//                  NhwcPairs' geometry once in NHWC: the input transposed
//                  into NHWC, NhwcPairs, its output transposed back into the
//                  planes (MobileNetV2's stride-2 layers in NCHW took Rows).
//   4. Reference   the word row the channel forms build is longer than
//                  kMaxRowElements (a width or dilation in the millions): the
//                  reference's loop, on the tensors as they are.
//   5. Plane       unit strides and horizontal dilation on a vector path, the
//                  staged plane within kMaxRowElements * 16 (plane_length).
//   6. Rows        everything else: word rows in a ring.
// Plane and Rows compute channel planes: an NHWC-by-strides input or output
// (channels_inner) is transposed into / out of planes around them, except
// that the plane form with byte quads stages and stores NHWC itself
// (depthwise_transposes says which).
//
// The word form: byte quads (G = 4) on AVX-512 VNNI when every F - FZP of the
// filter fits int8 (DepthwiseFilter::quads, which prepare_depthwise derives
// from the filter's values), int16 pairs (G = 2) otherwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/isa.hpp"
#include "qdml/simd/tuning.hpp"

namespace qdml::simd::conv {

/// The depthwise path's forms, in the order select_depthwise_form() tries them.
enum class DepthwiseForm : std::uint8_t { NhwcQuads, NhwcPairs, PlanesPairs, Reference, Plane, Rows };

/// The name qdml::describe() prints for `f`.
constexpr std::string_view depthwise_form_name(DepthwiseForm f) noexcept {
    switch (f) {
        case DepthwiseForm::NhwcQuads: return "depthwise-nhwc-quads";
        case DepthwiseForm::NhwcPairs: return "depthwise-nhwc-pairs";
        case DepthwiseForm::PlanesPairs: return "depthwise-planes-pairs";
        case DepthwiseForm::Reference: return "depthwise-reference";
        case DepthwiseForm::Plane: return "depthwise-plane";
        case DepthwiseForm::Rows: return "depthwise-rows";
    }
    return "?";
}

/// The ISA path the depthwise path runs under `cap` (as QDML_ISA): Generic,
/// Avx2 (AVX-VNNI too) or Avx512Vnni (AMX too: AMX has nothing for depthwise).
inline simd::Isa depthwise_isa(simd::Isa cap = simd::Isa::Best) noexcept {
#if defined(QDML_GEMM_TEST_AMX_EMULATION)  // (testing aid: AMX emulated without AVX-512, isa.hpp)
    cap = simd::below_emulated_amx(cap);
#endif
    const simd::Isa isa = simd::select_isa(cap);
#if QDML_X86
    if (isa >= simd::Isa::Avx512Vnni) return simd::Isa::Avx512Vnni;
    if (isa >= simd::Isa::Avx2) return simd::Isa::Avx2;
#endif
    (void)isa;
    return simd::Isa::Generic;
}

/// Input elements per word on depthwise path `isa` (depthwise_isa's result):
/// 4 (byte quads) on AVX-512 VNNI when the filter's F - FZP all fit int8
/// (`quads`), else 2 (int16 pairs).
constexpr std::size_t depthwise_word_size(simd::Isa isa, bool quads) noexcept {
    return isa == simd::Isa::Avx512Vnni && quads ? 4 : 2;
}

namespace detail {

inline std::size_t round_up(std::size_t n, std::size_t m) noexcept { return (n + m - 1) / m * m; }

/// Whether a {N, C, H, W} view holds channel-inner pixels (NHWC through
/// strides: channel stride 1, each image's pixels one strided run) worth
/// transposing into channel planes.
template <class T>
bool channels_inner(const TensorView<T, 4>& t) noexcept {
    return t.sizes[1] > 1 && t.strides[1] == 1 && t.strides[3] >= t.sizes[1] &&
           (t.sizes[2] == 1 || t.strides[2] == std::uint64_t{t.sizes[3]} * t.strides[3]);
}

/// The geometry the NHWC direct forms take: input and output NHWC with
/// pixel stride C (any row and image strides), C a multiple of `lanes`,
/// channel multiplier 1, kH <= 3, unit vertical dilation (any horizontal
/// dilation, any strides: the quads form takes unit strides only,
/// select_depthwise_form), rows within kMaxRowElements.
struct NhwcGeometry {
    std::size_t N = 0, C = 0, H = 0, W = 0, oH = 0, oW = 0, kh = 0, kw = 0, dx = 0, pt = 0, pl = 0, sy = 1, sx = 1;
    std::size_t Wp = 0;  ///< padded pixels the outputs read: (oW - 1) sx + (kW - 1) dx + 1
    std::size_t Wi = 0;  ///< input pixels among them
};

/// Fills `g` and says whether `op` has the NHWC direct geometry.
template <class TIn, class TFilter, class TOut>
bool nhwc_geometry(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, std::size_t lanes,
                   NhwcGeometry& g) noexcept {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    g.N = X.sizes[0], g.C = X.sizes[1], g.H = X.sizes[2], g.W = X.sizes[3];
    g.oH = Out.sizes[2], g.oW = Out.sizes[3], g.kh = op.FilterTensor.sizes[2], g.kw = op.FilterTensor.sizes[3];
    g.dx = op.Dilations[1];
    g.sy = op.Strides[0], g.sx = op.Strides[1];
    if (Out.sizes[1] != g.C || g.C % lanes != 0 || g.kh > 3 || op.Dilations[0] != 1 || X.strides[1] != 1 ||
        X.strides[3] != g.C || Out.strides[1] != 1 || Out.strides[3] != g.C)
        return false;
    g.pt = op.StartPadding[0], g.pl = op.StartPadding[1];
    g.Wp = (g.oW - 1) * g.sx + (g.kw - 1) * g.dx + 1;
    g.Wi = g.pl >= g.Wp ? 0 : std::min(g.W, g.Wp - g.pl);
    return (g.Wp + g.W) * g.C <= kMaxRowElements;
}

/// Whether a {N, C, H, W} view holds channel planes whose rows are packed
/// (NCHW by strides: element stride 1, rows W apart; any plane and image
/// strides), which transpose into NHWC pixels as they are.
template <class T>
bool packed_planes(const TensorView<T, 4>& t) noexcept {
    return t.strides[3] == 1 && (t.sizes[2] == 1 || t.strides[2] == t.sizes[3]);
}

/// A view of `t`'s sizes as packed NHWC pixels at `data` (pixel stride C).
template <class T>
TensorView<T, 4> packed_pixels(const TensorView<T, 4>& t, T* data) noexcept {
    TensorView<T, 4> v;
    v.data = data;
    v.sizes = t.sizes;
    const std::uint64_t C = t.sizes[1], W = t.sizes[3];
    v.strides = {C * t.sizes[2] * W, 1, W * C, C};
    return v;
}

/// `op` with its input and output as packed NHWC pixels at `in` and `out`:
/// what the PlanesPairs form computes after transposing the planes.
template <class TIn, class TFilter, class TOut>
QuantizedLinearConvolution<TIn, TFilter, TOut> as_packed_pixels(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op,
                                                                const TIn* in, TOut* out) noexcept {
    auto v = op;
    v.InputTensor = packed_pixels(op.InputTensor, in);
    v.OutputTensor = packed_pixels(op.OutputTensor, out);
    return v;
}

/// The word rows of the rows form for word size G: `groups` words per filter
/// row, rows computed `width` outputs wide; one shared row when sx == 1
/// (group t reads it at +t*G*dx), else one row per group; `row_len` input
/// elements of the row buffer (the Reference form past kMaxRowElements).
struct WordRows {
    std::size_t groups = 0, width = 0, slot_len = 0, row_len = 0;
    bool shared = false;
};

template <class TIn, class TFilter, class TOut>
WordRows word_rows(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, std::size_t G) noexcept {
    const std::size_t kw = op.FilterTensor.sizes[3], oW = op.OutputTensor.sizes[3];
    const std::size_t sx = op.Strides[1], dx = op.Dilations[1];
    WordRows r;
    r.groups = (kw + G - 1) / G;
    r.width = round_up(oW, 16);
    r.shared = sx == 1;
    r.slot_len = r.shared ? round_up(r.width + (r.groups - 1) * G * dx, 16) : r.groups * r.width;
    r.row_len = r.shared ? r.slot_len + (G - 1) * dx : (r.width - 1) * sx + (r.groups * G - 1) * dx + 1;
    return r;
}

/// The plane form's staged plane length (elements) for word size G, or 0 when too large.
template <class TIn, class TFilter, class TOut>
std::size_t plane_length(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, std::size_t G) noexcept {
    const std::size_t kh = op.FilterTensor.sizes[2], kw = op.FilterTensor.sizes[3];
    const std::size_t oH = op.OutputTensor.sizes[2], P = op.OutputTensor.sizes[3] + kw - 1;
    const std::size_t last = (kh - 1) * op.Dilations[0] * P + G * ((kw - 1) / G);  // the largest tap offset
    const std::size_t len = round_up(oH * P, 128) + last + 128;
    return len > kMaxRowElements * 16 ? 0 : len;
}

}  // namespace detail

/// The form that computes the validated depthwise `op` (is_depthwise) on
/// depthwise path `isa` (depthwise_isa's result) with a filter whose F - FZP
/// all fit int8 or not (`quads`: DepthwiseFilter::quads). Reads the descs
/// only (every form computes both profiles).
template <class TIn, class TFilter, class TOut>
DepthwiseForm select_depthwise_form(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, bool quads,
                                    simd::Isa isa) noexcept {
    const std::size_t G = depthwise_word_size(isa, quads);
    detail::NhwcGeometry g;
    if (detail::channels_inner(op.InputTensor) && detail::channels_inner(op.OutputTensor)) {
        if (G == 4 && op.Strides[0] == 1 && op.Strides[1] == 1 && detail::nhwc_geometry(op, 16, g))
            return DepthwiseForm::NhwcQuads;
        // (Also with byte quads where the quads form cannot: a stride above 1.
        // The pairs form's AVX2 kernels run on every AVX-512 VNNI CPU, and
        // every filter has its pair words: MobileNetV2's stride-2 layers,
        // Zen 5, 3x3 96ch 112^2 s2: 1499 us in the rows form, oneDNN 68.)
        if (isa != simd::Isa::Generic && (G == 2 || op.Strides[0] != 1 || op.Strides[1] != 1) &&
            detail::nhwc_geometry(op, 8, g))
            return DepthwiseForm::NhwcPairs;
    }
    // Channel planes with a stride above 1 or a horizontal dilation, which
    // the plane form does not take: the pairs form in NHWC between two
    // transpositions (MobileNetV2's stride-2 layers in NCHW, Zen 2: 3x3 96ch
    // 112^2 s2 3357 us in the rows form, oneDNN's reorders and its own 754).
    if (isa != simd::Isa::Generic && (op.Strides[0] != 1 || op.Strides[1] != 1 || op.Dilations[1] != 1) &&
        detail::packed_planes(op.InputTensor) && detail::packed_planes(op.OutputTensor) &&
        detail::nhwc_geometry(detail::as_packed_pixels<TIn, TFilter, TOut>(op, nullptr, nullptr), 8, g))
        return DepthwiseForm::PlanesPairs;
    if (detail::word_rows(op, G).row_len > kMaxRowElements) return DepthwiseForm::Reference;
    if (isa != simd::Isa::Generic && op.Dilations[1] == 1 && op.Strides[0] == 1 && op.Strides[1] == 1 &&
        detail::plane_length(op, G) != 0)
        return DepthwiseForm::Plane;
    return DepthwiseForm::Rows;
}

/// Around the Plane and Rows forms: whether the input is transposed into
/// channel planes first, and whether the output is computed into planes and
/// transposed out (NHWC by strides, channels_inner); the plane form with byte
/// quads does neither (it stages every channel's plane from NHWC rows and
/// stores NHWC in bands itself).
struct DepthwiseTransposes {
    bool input = false, output = false;
};

template <class TIn, class TFilter, class TOut>
DepthwiseTransposes depthwise_transposes(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, DepthwiseForm form,
                                         bool quads, simd::Isa isa) noexcept {
    if (form != DepthwiseForm::Plane && form != DepthwiseForm::Rows) return {};
    if (form == DepthwiseForm::Plane && depthwise_word_size(isa, quads) == 4) return {};
    return {detail::channels_inner(op.InputTensor), detail::channels_inner(op.OutputTensor)};
}

}  // namespace qdml::simd::conv
