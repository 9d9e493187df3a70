// qdml/core/quantize.hpp - the only rounding and (de/re)quantize primitives,
// written once and shared by every reference loop and every SIMD tail
// (docs/semantics.md sections 2-6).
//
//   dequantize(x, zp, scale) = fp32(x - zp) * scale          (x - zp exact in 64 bits)
//   quantize<T>(v, zp)       = Q(v, zp, T): clamp v to [lo-zp, hi-zp] (NaN -> lo-zp),
//                              then rne(v) + zp
//   requantize multiplier    = fp32(scale_a * scale_b) / scale_out
//   quantize_linear<T>(x, s, zp) = Q(x / s, zp, T)           (a true division)
//   DynamicQuantizeParams, dynamic_quantize<T>: DYNAMIC_QUANTIZE_LINEAR's scale,
//                              zero point and element (section 15)
// (The DirectML profile's forms of the steps that differ: quantize_directml.hpp.)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "qdml/core/data_type.hpp"
#include "qdml/core/float16.hpp"

#ifdef __FAST_MATH__
#error "qdml needs IEEE float semantics: do not build it with -ffast-math"
#endif
#ifdef _M_FP_FAST
#error "qdml needs IEEE float semantics: do not build it with /fp:fast (MSVC's default /fp:precise is right)"
#endif

/// On the generic steps and row kernels that the element-wise paths run
/// inside a target region (simd/x86/<isa>/elementwise.hpp's Rows): inlined
/// wherever they are called, so that the region's own operations are
/// called from (and inline into) the region's code, with every compiler
/// (clang 14's flatten inlines one level only).
#if defined(__GNUC__) || defined(__clang__)
#define QDML_ALWAYS_INLINE __attribute__((always_inline))
#else
#define QDML_ALWAYS_INLINE
#endif

namespace qdml {

/// Returns `v` unchanged, but hides it from the optimizer so that a product
/// computed before the call can never be fused with a later add into an FMA,
/// whatever -ffp-contract the user builds with (docs/semantics.md: no contraction).
template <class V>
inline V no_fuse(V v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
#if defined(__x86_64__) || defined(__i386__)
    if constexpr (sizeof(V) <= 64 && std::is_trivially_copyable_v<V> && !std::is_integral_v<V>)
        __asm__("" : "+v"(v));
    else
        __asm__("" : "+m"(v));
#else
    __asm__("" : "+m"(v));
#endif
#else
    volatile V keep = v;
    v = keep;
#endif
    return v;
}

/// fp32(x): an integer converted to binary32, round to nearest even.
inline float fp32(std::int64_t x) noexcept { return static_cast<float>(x); }

/// rne(v): nearest integer, ties to even (assumes the default FE_TONEAREST mode).
inline float round_half_even(float v) noexcept { return std::nearbyint(v); }

/// The int32 whose two's-complement bits are `u` (the spec's wrapping accumulator).
constexpr std::int32_t wrap_int32(std::uint32_t u) noexcept {
    return u <= 0x7fffffffu ? static_cast<std::int32_t>(u)
                            : static_cast<std::int32_t>(static_cast<std::int64_t>(u) - 0x100000000LL);
}

/// Dequantize step: fp32(x - zp) * scale, with x - zp formed exactly. The
/// product is rounded on its own: a caller's later add never fuses with it.
inline float dequantize(std::int64_t x, std::int64_t zp, float scale) noexcept {
    return no_fuse(fp32(x - zp) * scale);  // = dequantize_step(fp32(x - zp), scale) below
}

/// Requantize multiplier of matmul and convolution: fp32(a * b) / out, in that order.
inline float requantize_multiplier(float scale_a, float scale_b, float scale_out) noexcept {
    const float ab = no_fuse(scale_a * scale_b);
    return ab / scale_out;
}

/// The few operations whose spelling differs between a scalar `float` (or
/// integer) and an `xsimd::batch`: the element-wise steps below are written
/// once over `V` and call only these. This primary template serves
/// arithmetic scalars; simd/kernel/vec_ops.hpp specializes it for batches.
template <class V>
struct VecOps {
    static_assert(std::is_arithmetic_v<V>, "VecOps: a scalar here, batches in simd/kernel/vec_ops.hpp");
    using Int = std::int32_t;
    static V no_fuse(V v) noexcept { return qdml::no_fuse(v); }
    static V select(bool c, V a, V b) noexcept { return c ? a : b; }
    static V div(V a, V b) noexcept { return a / b; }
    /// The binary32 bits of `v` as an int32.
    static Int bits(float v) noexcept {
        std::uint32_t u;
        std::memcpy(&u, &v, sizeof u);
        return static_cast<Int>(u);
    }
};

/// The parameters of Q(v, zp, T) for one call: the float clamp bounds
/// lo - zp and hi - zp (exact in binary32 for 8/16-bit T) and zp.
struct QuantizeParams {
    float lo = 0.0f;
    float hi = 0.0f;
    std::int32_t zp = 0;

    template <class T>
    static QuantizeParams make(std::int32_t zp) noexcept {
        static_assert((std::is_integral_v<T> && sizeof(T) <= 2) || is_nibble_v<T>,
                      "Q is defined for 4/8/16-bit outputs");
        return {static_cast<float>(static_cast<std::int32_t>(value_range<T>::lo) - zp),
                static_cast<float>(static_cast<std::int32_t>(value_range<T>::hi) - zp), zp};
    }
};

/// 1.5 * 2^23: adding it to a binary32 |v| <= 2^22 rounds v to an integer
/// (ties to even, in the default rounding mode) in the low mantissa bits.
inline constexpr float kRoundMagic = 12582912.0f;
inline constexpr std::int32_t kRoundMagicBits = 0x4B400000;

/// Q's step 2 on a v already clamped to [lo - zp, hi - zp] (|v| <= 2^16):
/// rne(v) + zp as int32, the zero point given as the integer
/// kRoundMagicBits - zp (`zp_magic`: a scalar, or per lane), since the bits
/// of v + 1.5 * 2^23 are kRoundMagicBits + rne(v). (A caller whose clamp is
/// its own, e.g. min/max where NaN is already gone, ends with this.)
template <class V, class I>
QDML_ALWAYS_INLINE inline auto quantize_round_clamped(const V& v, const I& zp_magic) noexcept {
    using O = VecOps<V>;
    return O::bits(O::no_fuse(v + V(kRoundMagic))) - zp_magic;
}

/// Q(v, zp, T) of docs/semantics.md section 2 as an int32 (always within T's range),
/// over V = float or a vector (operands by reference: a vector of a target
/// region passed by value to these generic functions would make GCC note
/// its ABI; they are always inlined there):
///   1. clamp v to [lo - zp, hi - zp] in float, NaN becoming lo - zp;
///   2. rne(v) + zp, rne by the magic-number addition (|v| <= 2^16 after
///      the clamp), so every arch rounds ties to even the same way.
template <class V>
QDML_ALWAYS_INLINE inline auto quantize_int(const V& x, const QuantizeParams& q) noexcept {
    using O = VecOps<V>;
    const V lo(q.lo), hi(q.hi);
    V v = O::select(x >= lo, x, lo);  // !(x >= lo), NaN included, -> lo
    v = O::select(v > hi, hi, v);
    return quantize_round_clamped(v, typename O::Int(kRoundMagicBits - q.zp));
}

/// quantize_int with a zero point per lane (`zp`, exact integers as float;
/// `lo_z`, `hi_z` = T's bounds minus zp, exact): the same two steps, the
/// zero point added in float to the rounded value (exact) before the
/// magic number takes the integer out (ELEMENT_WISE_QUANTIZE_LINEAR's
/// per-element zero points, simd/element_wise_quantize_linear.hpp).
template <class V>
QDML_ALWAYS_INLINE inline auto quantize_int_lanes(const V& x, const V& lo_z, const V& hi_z, const V& zp) noexcept {
    using O = VecOps<V>;
    V v = O::select(x >= lo_z, x, lo_z);  // !(x >= lo - zp), NaN included, -> lo - zp
    v = O::select(v > hi_z, hi_z, v);
    const V r = O::no_fuse(O::no_fuse(v + V(kRoundMagic)) - V(kRoundMagic));  // rne(v), exact
    return O::bits(O::no_fuse(O::no_fuse(r + zp) + V(kRoundMagic))) - typename O::Int(kRoundMagicBits);
}

/// Q(v, zp, T) of docs/semantics.md section 2 for an 8-bit (or any up-to-16-bit) T.
template <class T>
inline T quantize(float v, std::int32_t zp) noexcept {
    return static_cast<T>(quantize_int(v, QuantizeParams::make<T>(zp)));
}

/// Q(v, zp, T) as an int32 within T's range, for any T QuantizeParams
/// takes (the 4-bit types too, which have no C++ value type).
template <class T>
inline std::int32_t quantize_value(float v, std::int32_t zp) noexcept {
    return static_cast<std::int32_t>(quantize_int(v, QuantizeParams::make<T>(zp)));
}

/// The dequantize step's product, fp32(x - zp) * scale, given the exact
/// difference already converted (`diff` = fp32(x - zp)); V = float or batch.
template <class V>
QDML_ALWAYS_INLINE inline V dequantize_step(const V& diff, const V& scale) noexcept {
    return VecOps<V>::no_fuse(diff * scale);
}

/// The per-call parameters of ELEMENT_WISE_QUANTIZED_LINEAR_ADD (docs/semantics.md
/// section 4), read once from the one-element scale and zero-point tensors:
/// the scales as given (no reciprocal: the spec divides by OutputScale).
struct AddParams {
    float a_scale = 1.0f, b_scale = 1.0f, out_scale = 1.0f;
    std::int32_t a_zp = 0, b_zp = 0;
    QuantizeParams out;  ///< Q's bounds and OutputZeroPoint

    /// From a typed add (any rank; absent zero points are 0).
    template <class Op>
    static AddParams derive(const Op& op) noexcept {
        using TOut = std::remove_const_t<std::remove_reference_t<decltype(op.OutputTensor.scalar())>>;
        AddParams p;
        p.a_scale = op.AScaleTensor.scalar();
        p.b_scale = op.BScaleTensor.scalar();
        p.out_scale = op.OutputScaleTensor.scalar();
        p.a_zp = op.AZeroPointTensor ? op.AZeroPointTensor->scalar() : 0;
        p.b_zp = op.BZeroPointTensor ? op.BZeroPointTensor->scalar() : 0;
        p.out = QuantizeParams::make<TOut>(op.OutputZeroPointTensor ? op.OutputZeroPointTensor->scalar() : 0);
        return p;
    }
};

/// The add's last float steps, (va + vb) / OutputScale, from the two
/// dequantized operands va and vb; V = float or batch.
template <class V>
QDML_ALWAYS_INLINE inline V add_sum(const V& va, const V& vb, const AddParams& p) noexcept {
    return VecOps<V>::div(va + vb, V(p.out_scale));  // a true division
}

/// The add's float part in docs/semantics.md's order, (va + vb) / OutputScale, from
/// the two exact differences fp32(A - AZP) and fp32(B - BZP); V = float or batch.
template <class V>
QDML_ALWAYS_INLINE inline V add_step(const V& a_diff, const V& b_diff, const AddParams& p) noexcept {
    return add_sum(dequantize_step(a_diff, V(p.a_scale)), dequantize_step(b_diff, V(p.b_scale)), p);
}

/// Clip's g(x) = x * Scale + Bias: two binary32 roundings, never fused.
template <class V>
QDML_ALWAYS_INLINE inline V scale_bias_step(const V& x, float scale, float bias) noexcept {
    return VecOps<V>::no_fuse(x * V(scale)) + V(bias);
}

/// max(lo, min(v, hi)) as docs/semantics.md section 7 orders it: a value equal to a
/// bound passes unchanged, NaN passes, lo > hi gives lo. V = any scalar or batch.
template <class V>
QDML_ALWAYS_INLINE inline V clamp_min_max(const V& v, const V& lo, const V& hi) noexcept {
    using O = VecOps<V>;
    const V r = O::select(v > hi, hi, v);
    return O::select(r < lo, lo, r);
}

/// min(hi, max(lo, v)) as docs/semantics.md section 13 orders it (ELEMENT_WISE_CLIP1,
/// exact profile): a value equal to a bound passes unchanged, NaN passes, a NaN
/// bound bounds nothing, lo > hi gives hi. V = any scalar or batch.
template <class V>
QDML_ALWAYS_INLINE inline V clamp_max_min(const V& v, const V& lo, const V& hi) noexcept {
    using O = VecOps<V>;
    const V r = O::select(v < lo, lo, v);
    return O::select(r > hi, hi, r);
}

/// Whether |fp32(acc) * multiplier| < 2^31 for every int32 acc: |multiplier|
/// < 1 (false for NaN and inf). |fp32(acc)| <= 2^31, so the product is below
/// 2^31 and, rounding being monotonic, at most 2^31 - 128. A vector
/// requantize may then convert to int32 before Q's upper clamp (the
/// conversion is exact and the int16/int8 saturations clamp), where a larger
/// product would convert to INT_MIN (the low bound) where Q gives the high
/// one. The one rule of the matmul, convolution and depthwise epilogues.
inline bool requantize_fits_int32(float multiplier) noexcept { return std::fabs(multiplier) < 1.0f; }

/// Requantize epilogue of matmul and convolution: Q(fp32(acc) * multiplier, zp, T).
template <class T>
inline T requantize(std::int32_t acc, float multiplier, std::int32_t zp) noexcept {
    return quantize<T>(fp32(acc) * multiplier, zp);
}

/// Widens a float tensor element to binary32 (exact).
inline float to_float(float x) noexcept { return x; }
inline float to_float(float16 x) noexcept { return static_cast<float>(x); }

/// ELEMENT_WISE_QUANTIZE_LINEAR's x(Input) (docs/semantics.md section 11):
/// FLOAT32 as it is, FLOAT16 widened (exact), INT32 by fp32 (rounded beyond 2^24).
inline float quantize_input(float x) noexcept { return x; }
inline float quantize_input(float16 x) noexcept { return static_cast<float>(x); }
inline float quantize_input(std::int32_t x) noexcept { return fp32(x); }

/// One element of ELEMENT_WISE_QUANTIZE_LINEAR (docs/semantics.md section 11):
/// Q(x / s, zp, T), the quotient one true binary32 division.
template <class T>
inline T quantize_linear(float x, float s, std::int32_t zp) noexcept {
    return quantize<T>(x / s, zp);
}

/// Q(x * r, zp, T), the product rounded on its own (DYNAMIC_QUANTIZE_LINEAR's
/// directml profile, section 15: r = 1 / s).
template <class T>
inline T quantize_multiplied(float x, float r, std::int32_t zp) noexcept {
    return quantize<T>(no_fuse(x * r), zp);
}

/// DYNAMIC_QUANTIZE_LINEAR's range (docs/semantics.md section 15): the
/// input's minimum and maximum widened to include 0 (lo <= 0 <= hi), NaN
/// elements skipped (every comparison with NaN is false), -0.0 counted as 0.
struct DynamicRange {
    float lo = 0.0f;
    float hi = 0.0f;
    void add(float x) noexcept {
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    void add(const DynamicRange& r) noexcept {
        add(r.lo);
        add(r.hi);
    }
};

/// 1/255 rounded to binary32 (0x3B808081): DirectML's scale factor (section 15).
inline constexpr float kOneOver255 = 0.0039215688593685627f;

/// DYNAMIC_QUANTIZE_LINEAR's outputs' parameters from the range (section 15):
/// the scale s, the zero point z, and how the input is quantized, x / s
/// (exact profile) or x * r with r = 1 / s (directml profile).
struct DynamicQuantizeParams {
    float scale = 0.0f;
    float factor = 0.0f;  // s to divide by (exact), r to multiply by (directml)
    bool multiply = false;
    std::int32_t zp = 0;

    template <class T>
    static DynamicQuantizeParams make(const DynamicRange& r, bool directml) noexcept {
        const float lo = static_cast<float>(std::numeric_limits<T>::min());
        const float range = r.hi - r.lo;
        DynamicQuantizeParams p;
        p.multiply = directml;
        if (directml) {
            p.scale = range * kOneOver255;
            p.factor = 1.0f / p.scale;
            p.zp = quantize<T>(lo - no_fuse(r.lo * p.factor), 0);  // Z(v) = Q(v, 0, T): NaN to lo
        } else {
            p.scale = range / 255.0f;
            p.factor = p.scale;
            p.zp = quantize<T>(lo - r.lo / p.scale, 0);
        }
        return p;
    }
};

/// One element of DYNAMIC_QUANTIZE_LINEAR (section 15): Q(x / s, z, T) or Q(x * r, z, T).
template <class T>
inline T dynamic_quantize(float x, const DynamicQuantizeParams& p) noexcept {
    return p.multiply ? quantize_multiplied<T>(x, p.factor, p.zp) : quantize_linear<T>(x, p.factor, p.zp);
}

/// Rounds a binary32 result to the float element type T (once, RNE).
template <class T>
inline T from_float(float v) noexcept {
    if constexpr (std::is_same_v<T, float16>)
        return float16(v);
    else
        return v;
}

/// Truncates `v` toward zero and saturates to T's range; NaN gives 0.
template <class T>
inline T truncate_saturate(float v) noexcept {
    static_assert(std::is_integral_v<T>, "integer target");
    if (v != v) return T{0};
    const double t = std::trunc(static_cast<double>(v));
    const double lo = static_cast<double>(std::numeric_limits<T>::min());  // exact: 0 or -2^(bits-1)
    const double hi_excl = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^digits, exact
    if (t < lo) return std::numeric_limits<T>::min();
    if (t >= hi_excl) return std::numeric_limits<T>::max();
    return static_cast<T>(t);
}

/// The per-call parameters of ELEMENT_WISE_CLIP on element type T (docs/semantics.md
/// section 7): float types compare in binary32 against Min/Max rounded to T
/// first (FLOAT16: to binary16); integer types against Min/Max truncated and
/// saturated to T. `scale_bias` says whether g(x) = x * scale + bias applies.
template <class T>
struct ClipParams {
    static constexpr bool is_float = std::is_same_v<T, float> || std::is_same_v<T, float16>;
    using Bound = std::conditional_t<is_float, float, T>;
    Bound lo{}, hi{};
    bool scale_bias = false;
    float scale = 1.0f, bias = 0.0f;

    template <class Op>
    static ClipParams derive(const Op& op) noexcept {
        ClipParams p;
        if constexpr (is_float) {
            p.lo = to_float(from_float<T>(op.Min));
            p.hi = to_float(from_float<T>(op.Max));
        } else {
            p.lo = truncate_saturate<T>(op.Min);
            p.hi = truncate_saturate<T>(op.Max);
        }
        p.set_scale_bias(op.ScaleBias);
        return p;
    }

    /// ELEMENT_WISE_CLIP1's (docs/semantics.md section 13): the typed bounds as they
    /// are (FLOAT16 widened); `unit_is_none`: ScaleBias (1, +-0) counts as
    /// absent (the DirectML profile).
    template <class Op>
    static ClipParams derive_clip1(const Op& op, bool unit_is_none) noexcept {
        ClipParams p;
        if constexpr (is_float) {
            p.lo = to_float(op.Min);
            p.hi = to_float(op.Max);
        } else {
            p.lo = op.Min;
            p.hi = op.Max;
        }
        p.set_scale_bias(op.ScaleBias);
        if (unit_is_none && p.scale_bias && p.scale == 1.0f && p.bias == 0.0f) p.scale_bias = false;
        return p;
    }

    template <class ScaleBias>
    void set_scale_bias(const ScaleBias& sb) noexcept {
        scale_bias = sb.has_value();
        if (sb) {
            scale = sb->Scale;
            bias = sb->Bias;
        }
    }
};

/// g(x) of a clip element (docs/semantics.md sections 7 and 13), then `clamp(v, lo,
/// hi)` in binary32 (float types, rounded back to T) or in T (integer types).
template <class T, class Clamp>
T clip_element_with(T x, const ClipParams<T>& p, Clamp clamp) noexcept {
    if constexpr (ClipParams<T>::is_float) {
        float v = to_float(x);
        if (p.scale_bias) v = scale_bias_step(v, p.scale, p.bias);
        return from_float<T>(clamp(v, p.lo, p.hi));
    } else {
        if (p.scale_bias) x = truncate_saturate<T>(scale_bias_step(static_cast<float>(x), p.scale, p.bias));
        return clamp(x, p.lo, p.hi);
    }
}

/// One element of ELEMENT_WISE_CLIP (docs/semantics.md section 7), as the reference
/// computes it and the SIMD tails finish a row.
template <class T>
T clip_element(T x, const ClipParams<T>& p) noexcept {
    return clip_element_with(x, p, [](auto v, auto lo, auto hi) { return clamp_min_max(v, lo, hi); });
}

/// One element of ELEMENT_WISE_CLIP1 (docs/semantics.md section 13, exact profile).
template <class T>
T clip1_element(T x, const ClipParams<T>& p) noexcept {
    return clip_element_with(x, p, [](auto v, auto lo, auto hi) { return clamp_max_min(v, lo, hi); });
}

}  // namespace qdml
