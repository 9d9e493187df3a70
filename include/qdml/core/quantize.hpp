// qdml/core/quantize.hpp - the only rounding and (de/re)quantize primitives,
// written once and shared by every reference loop and every SIMD tail
// (SPEC.md sections 2-6).
//
//   dequantize(x, zp, scale) = fp32(x - zp) * scale          (x - zp exact in 64 bits)
//   quantize<T>(v, zp)       = Q(v, zp, T): clamp v to [lo-zp, hi-zp] (NaN -> lo-zp),
//                              then rne(v) + zp
//   requantize multiplier    = fp32(scale_a * scale_b) / scale_out
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "qdml/core/float16.hpp"

#ifdef __FAST_MATH__
#error "qdml needs IEEE float semantics: do not build it with -ffast-math"
#endif

namespace qdml {

/// Returns `v` unchanged, but hides it from the optimizer so that a product
/// computed before the call can never be fused with a later add into an FMA,
/// whatever -ffp-contract the user builds with (SPEC.md: no contraction).
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
    return no_fuse(fp32(x - zp) * scale);
}

/// Requantize multiplier of matmul and convolution: fp32(a * b) / out, in that order.
inline float requantize_multiplier(float scale_a, float scale_b, float scale_out) noexcept {
    const float ab = no_fuse(scale_a * scale_b);
    return ab / scale_out;
}

/// Q(v, zp, T) of SPEC.md section 2 for an 8-bit (or any up-to-16-bit) T.
template <class T>
inline T quantize(float v, std::int32_t zp) noexcept {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 2, "Q is defined for 8/16-bit outputs");
    const float lo = static_cast<float>(std::int32_t{std::numeric_limits<T>::min()} - zp);
    const float hi = static_cast<float>(std::int32_t{std::numeric_limits<T>::max()} - zp);
    if (!(v >= lo)) v = lo;  // also maps NaN to lo - zp
    if (v > hi) v = hi;
    return static_cast<T>(static_cast<std::int32_t>(round_half_even(v)) + zp);
}

/// Requantize epilogue of matmul and convolution: Q(fp32(acc) * multiplier, zp, T).
template <class T>
inline T requantize(std::int32_t acc, float multiplier, std::int32_t zp) noexcept {
    return quantize<T>(fp32(acc) * multiplier, zp);
}

/// Widens a float tensor element to binary32 (exact).
inline float to_float(float x) noexcept { return x; }
inline float to_float(float16 x) noexcept { return static_cast<float>(x); }

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

}  // namespace qdml
