// qdml/core/quantize_directml.hpp - the DirectML profile's forms of the steps
// in which DirectML 1.15.4 differs from the exact rules (docs/semantics.md
// section 10), as measured with DirectML itself
// (tools/directml/probe_arithmetic.py on tests/data/directml):
//   dequantize_directml      = (fp32(x) - fp32(zp)) * scale
//   requantize_directml<T>   = quantize_directml<T>(((fp32(acc) * s1) * s2) / scale_out, zp)
//   quantize_directml<T>     = clamp(wrap32(int32_saturate(rne(v)) + zp), lo, hi), NaN -> 0 + zp
//   clamp_min_max_directml   = t = v < hi ? v : hi; t > lo ? t : lo
//   quantize_linear_directml<T> = quantize_linear<T>, but a NaN quotient -> 0 without a zero point
// Every other step is the exact profile's (core/quantize.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "qdml/core/quantize.hpp"

namespace qdml {

/// DirectML's dequantize: input and zero point each converted to binary32
/// (rounded beyond 2^24), then subtracted and multiplied. For 8- and 16-bit
/// inputs this equals dequantize() bit for bit.
inline float dequantize_directml(std::int64_t x, std::int64_t zp, float scale) noexcept {
    const float d = no_fuse(fp32(x) - fp32(zp));
    return no_fuse(d * scale);
}

/// Whether dequantize_directml can differ from dequantize for input type T
/// (only where |x| or |zp| may exceed 2^24: INT32 and UINT32).
template <class T>
inline constexpr bool dequantize_directml_differs = sizeof(T) >= 4;

/// DirectML's quantize step of matmul and convolution: rne(v) converted to
/// int32 saturating (NaN -> 0), plus zp in wrapping int32 arithmetic, then
/// clamped to T's range. Differs from quantize() for infinite, NaN and huge
/// values only (+inf with zp 1 gives T's low end: INT32_MAX + 1 wraps).
template <class T>
inline T quantize_directml(float v, std::int32_t zp) noexcept {
    std::int32_t i = 0;
    if (v == v) {
        const float r = round_half_even(v);
        i = r >= 2147483648.0f ? std::numeric_limits<std::int32_t>::max()
            : r < -2147483648.0f ? std::numeric_limits<std::int32_t>::min()
                                 : static_cast<std::int32_t>(r);
    }
    const std::int32_t s = wrap_int32(static_cast<std::uint32_t>(i) + static_cast<std::uint32_t>(zp));
    const std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    return static_cast<T>(s < lo ? lo : s > hi ? hi : s);
}

/// DirectML's requantize of matmul and convolution: ((fp32(acc) * s1) * s2)
/// / scale_out, three roundings in that order, then quantize_directml. Matmul:
/// s1 = AScale, s2 = BScale; convolution: s1 = FilterScale, s2 = InputScale.
template <class T>
inline T requantize_directml(std::int32_t acc, float s1, float s2, float scale_out, std::int32_t zp) noexcept {
    const float v1 = no_fuse(fp32(acc) * s1);
    const float v2 = no_fuse(v1 * s2);
    return quantize_directml<T>(v2 / scale_out, zp);
}

/// DirectML's ELEMENT_WISE_QUANTIZE_LINEAR (docs/semantics.md section 11):
/// Q(x / s, zp, T) as quantize_linear, except that a NaN quotient gives 0
/// unless `nan_to_low` (quantize_nan_to_low_directml: T's low end, as Q).
template <class T>
inline T quantize_linear_directml(float x, float s, std::int32_t zp, bool nan_to_low) noexcept {
    const float v = x / s;
    if (v != v && !nan_to_low) return T{0};
    return quantize<T>(v, zp);
}

/// Whether a view addresses one element (stride 0 on every dimension of size > 1).
template <class View>
bool one_element_view(const View& v) noexcept {
    for (std::size_t d = 0; d < v.sizes.size(); ++d)
        if (v.sizes[d] > 1 && v.strides[d] != 0) return false;
    return true;
}

/// Whether a view is packed row-major (dimensions of size 1 aside).
template <class View>
bool packed_view(const View& v) noexcept {
    std::uint64_t expect = 1;
    for (std::size_t d = v.sizes.size(); d-- > 0;) {
        if (v.sizes[d] > 1 && v.strides[d] != expect) return false;
        expect *= v.sizes[d];
    }
    return true;
}

/// Which of DirectML's two forms a QUANTIZE_LINEAR desc takes for a NaN
/// quotient (docs/semantics.md section 11, measured): T's low end when it has
/// a zero point, Scale and ZeroPoint each address one element, and Input and
/// Output are packed row-major; 0 otherwise.
template <class Op>
bool quantize_nan_to_low_directml(const Op& op) noexcept {
    return op.ZeroPointTensor && one_element_view(op.ScaleTensor) && one_element_view(*op.ZeroPointTensor) &&
           packed_view(op.InputTensor) && packed_view(op.OutputTensor);
}

/// Clip's comparisons as DirectML makes them: min(v, hi) is v only when
/// v < hi, max(., lo) the value only when it is > lo. So NaN becomes the
/// bound (Max, then max(Min, Max)), and a value equal to a bound becomes
/// the bound itself (-0.0 with Min = +0.0 gives +0.0).
template <class V>
QDML_ALWAYS_INLINE inline V clamp_min_max_directml(const V& v, const V& lo, const V& hi) noexcept {
    using O = VecOps<V>;
    const V t = O::select(v < hi, v, hi);
    return O::select(t > lo, t, lo);
}

/// One element of ELEMENT_WISE_CLIP in the DirectML profile: float types
/// compare as clamp_min_max_directml; integer types as clip_element.
template <class T>
T clip_element_directml(T x, const ClipParams<T>& p) noexcept {
    if constexpr (ClipParams<T>::is_float)
        return clip_element_with(x, p, [](float v, float lo, float hi) { return clamp_min_max_directml(v, lo, hi); });
    else
        return clip_element(x, p);
}

/// CLIP1's comparisons as DirectML makes them (docs/semantics.md section 13):
/// clamp_min_max_directml's, but a NaN bound is ignored (no bound); the
/// bounds' NaN-ness given (derived once per call). V = any scalar or batch.
template <class V>
QDML_ALWAYS_INLINE inline V clamp1_directml_with(const V& v, const V& lo, const V& hi, bool lo_nan, bool hi_nan) noexcept {
    using O = VecOps<V>;
    const V t = hi_nan ? v : O::select(v < hi, v, hi);
    return lo_nan ? t : O::select(t > lo, t, lo);
}
inline float clamp1_directml(float v, float lo, float hi) noexcept {
    return clamp1_directml_with(v, lo, hi, lo != lo, hi != hi);
}

/// One element of ELEMENT_WISE_CLIP1 in the DirectML profile: float types
/// compare as clamp1_directml; integer types in CLIP's order (Min > Max gives
/// Min), as clip_element. `p` comes from ClipParams::derive_clip1(op, true).
template <class T>
T clip1_element_directml(T x, const ClipParams<T>& p) noexcept {
    if constexpr (ClipParams<T>::is_float)
        return clip_element_with(x, p, clamp1_directml);
    else
        return clip_element(x, p);
}

}  // namespace qdml
