// qdml/core/float16.hpp - IEEE binary16 value type with round-to-nearest-even
// conversion from binary32 (subnormals, infinities and NaN handled).
#pragma once

#include "qdml/core/requires_cxx17.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace qdml {

namespace detail {
inline std::uint32_t float_bits(float f) noexcept {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float bits_float(std::uint32_t u) noexcept {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// binary32 -> binary16, round to nearest, ties to even.
inline std::uint16_t float_to_half_bits(float f) noexcept {
    const std::uint32_t x = float_bits(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)  // NaN: keep the top payload bits, force quiet
        return static_cast<std::uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u)  // >= 65520 (incl. inf): rounds to infinity
        return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (ax < 0x38800000u) {  // below 2^-14: a binary16 subnormal or zero
        const std::uint32_t e = ax >> 23;
        if (e < 102) return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to 0
        const std::uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        const std::uint32_t shift = 126 - e;  // value / 2^-24 = m >> shift
        std::uint32_t r = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return static_cast<std::uint16_t>(sign | r);
    }
    std::uint32_t r = (ax - 0x38000000u) >> 13;  // rebias 127 -> 15
    const std::uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // carry may bump the exponent
    return static_cast<std::uint16_t>(sign | r);
}

/// binary16 -> binary32 (exact).
inline float half_bits_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t e = (h >> 10) & 0x1fu;
    const std::uint32_t m = h & 0x3ffu;
    if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        const float mag = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
        return bits_float(sign | float_bits(mag));
    }
    return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}
}  // namespace detail

/// IEEE binary16 storage type (DML FLOAT16). Arithmetic is done in float.
struct float16 {
    std::uint16_t bits = 0;

    constexpr float16() noexcept = default;
    /// Rounds `f` to the nearest binary16, ties to even.
    explicit float16(float f) noexcept : bits(detail::float_to_half_bits(f)) {}
    static constexpr float16 from_bits(std::uint16_t b) noexcept {
        float16 h;
        h.bits = b;
        return h;
    }
    /// Rounds `d` to the nearest binary16, ties to even, with one rounding
    /// (not through binary32, which could round twice).
    static float16 from_double(double d) noexcept {
        if (std::isnan(d)) return from_bits(0x7e00);
        float16 h(static_cast<float>(d));
        if ((h.bits & 0x7c00u) == 0x7c00u)  // rounds to infinity from 65520 (the midpoint above 65504) up
            return std::fabs(d) >= 65520.0 ? h : from_bits(static_cast<std::uint16_t>((h.bits & 0x8000u) | 0x7bffu));
        // The binary32 detour may have rounded twice; pick the nearest of h
        // and its two neighbours, exactly in binary64 (halves are exact there).
        const std::uint16_t sign = h.bits & 0x8000u;
        float16 best = h;
        for (int step : {-1, 1}) {
            const int mag = static_cast<int>(h.bits & 0x7fffu) + step;
            if (mag < 0 || mag >= 0x7c00) continue;
            const float16 n = from_bits(static_cast<std::uint16_t>(sign | mag));
            const double dn = std::fabs(static_cast<double>(static_cast<float>(n)) - d);
            const double db = std::fabs(static_cast<double>(static_cast<float>(best)) - d);
            if (dn < db || (dn == db && (n.bits & 1u) == 0)) best = n;
        }
        return best;
    }
    explicit operator float() const noexcept { return detail::half_bits_to_float(bits); }
    friend constexpr bool operator==(float16 a, float16 b) noexcept { return a.bits == b.bits; }
    friend constexpr bool operator!=(float16 a, float16 b) noexcept { return a.bits != b.bits; }
};
static_assert(sizeof(float16) == 2, "float16 must be 2 bytes");

}  // namespace qdml
