// The core layer: qdml::float16 conversions, the quantize step Q (docs/semantics.md
// section 2), DMLCalcBufferTensorSize and the generic tensor rules of the
// Validator (sections 1 and 8), data type and feature level names.
//
// float16 is checked three ways: hand-written bit patterns (derived below and
// cross-checked with numpy.float16), an independent transcription written here
// (scale by the binary16 ulp, std::nearbyint, scale back: every step exact in
// binary64 except the one RNE rounding), and libfp16 (<fp16.h>) when present.
// Q is checked against clamp(rne(v) + zp, lo, hi) computed in binary64.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/buffers.hpp"

#ifdef QDML_HAVE_FP16_H
#include <fp16.h>
#endif

namespace {

using qdml::float16;
using DT = qdml::TensorDataType;

std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
float float_of(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// binary16 bits -> value, written independently: (-1)^s * m * 2^(e-25) with
/// the implicit bit for normals; infinities and NaN by the exponent field.
double half_value(std::uint16_t h) {
    const bool neg = (h & 0x8000u) != 0;
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    double v;
    if (e == 0x1f)
        v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    else if (e == 0)
        v = std::ldexp(static_cast<double>(m), -24);
    else
        v = std::ldexp(static_cast<double>(m + 1024), e - 25);
    return neg ? -v : v;
}

/// binary32 -> nearest binary16 value (ties to even), as a double; infinity
/// from 65520 up. ulp = 2^(max(exponent, -14) - 10); |f| / ulp and the
/// product back are exact, std::nearbyint does the one RNE rounding.
double nearest_half(float f) {
    const double a = std::fabs(static_cast<double>(f));
    if (std::isinf(a) || a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), f);
    if (a == 0) return static_cast<double>(f);
    int k;
    std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1): exponent k - 1
    const int e = std::max(k - 1, -14);
    const double ulp = std::ldexp(1.0, e - 10);
    const double q = std::nearbyint(a / ulp) * ulp;
    return std::copysign(q, f);
}

bool is_half_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

/// Whether float16(f) agrees with the transcription (and libfp16, if present);
/// NaN must give a NaN of the same sign.
bool from_float_ok(float f) {
    const std::uint16_t got = float16(f).bits;
    if ((got >> 15) != (bits_of(f) >> 31)) return false;  // also the sign of zero and NaN
    if (std::isnan(f)) {
#ifdef QDML_HAVE_FP16_H
        if (!is_half_nan(fp16_ieee_from_fp32_value(f))) return false;
#endif
        return is_half_nan(got);
    }
#ifdef QDML_HAVE_FP16_H
    if (got != fp16_ieee_from_fp32_value(f)) return false;
#endif
    return half_value(got) == nearest_half(f);
}

/// Checks float16(f); the (slow) Catch assertion only runs on a mismatch.
void check_from_float(float f) {
    if (from_float_ok(f)) return;
    const std::uint16_t got = float16(f).bits;
    INFO("f = " << f << " (bits 0x" << std::hex << bits_of(f) << "), float16 bits 0x" << got << std::dec
                << ", nearest binary16 value " << nearest_half(f));
#ifdef QDML_HAVE_FP16_H
    INFO("libfp16 bits 0x" << std::hex << fp16_ieee_from_fp32_value(f));
#endif
    FAIL("float16 conversion differs");
}

/// calc_buffer_tensor_size reads Sizes, Strides and DataType only.
qdml::TensorDesc raw_desc(DT t, std::initializer_list<std::uint32_t> sizes,
                          std::initializer_list<std::uint32_t> strides = {}) {
    return qdml::TensorDesc::make(t, sizes, strides);
}

}  // namespace

// ---------------------------------------------------------------------------
// float16

TEST_CASE("float16: every binary16 value widens exactly to binary32", "[core][float16]") {
    for (std::uint32_t h = 0; h <= 0xffff; ++h) {
        const auto b = static_cast<std::uint16_t>(h);
        const float got = static_cast<float>(float16::from_bits(b));
        INFO("half bits 0x" << std::hex << h);
        if (is_half_nan(b)) {
            REQUIRE(std::isnan(got));
            REQUIRE((bits_of(got) >> 31) == (h >> 15));
            // the payload moves up unchanged: binary32 mantissa bits 22..13 hold the 10 binary16 bits
            REQUIRE(((bits_of(got) >> 13) & 0x3ffu) == (h & 0x3ffu));
        } else {
            REQUIRE(static_cast<double>(got) == half_value(b));
            REQUIRE((bits_of(got) >> 31) == (h >> 15));  // -0 stays -0
        }
#ifdef QDML_HAVE_FP16_H
        if (is_half_nan(b)) {
            REQUIRE(std::isnan(fp16_ieee_to_fp32_value(b)));
        } else {
            REQUIRE(bits_of(got) == bits_of(fp16_ieee_to_fp32_value(b)));
        }
#endif
    }
}

TEST_CASE("float16: every non-NaN binary16 value survives float -> half -> float", "[core][float16]") {
    for (std::uint32_t h = 0; h <= 0xffff; ++h) {
        const auto b = static_cast<std::uint16_t>(h);
        if (is_half_nan(b)) continue;
        INFO("half bits 0x" << std::hex << h);
        REQUIRE(float16(static_cast<float>(float16::from_bits(b))).bits == b);
    }
}

TEST_CASE("float16: rounding of the floats around every binary16 value and midpoint", "[core][float16]") {
    // For each finite binary16 magnitude a (and its successor b; 65536 after 65504),
    // every binary32 within 16 ulps of a and of the midpoint (a + b) / 2 (exact in
    // binary32), both signs. This covers each tie, each exponent step, the
    // subnormal range (midpoints m * 2^-24 + 2^-25), 2^-25 itself and 65520.
    std::size_t checked = 0;
    for (std::uint32_t h = 0; h < 0x7c00; ++h) {
        const double a = half_value(static_cast<std::uint16_t>(h));
        const double b = h == 0x7bff ? 65536.0 : half_value(static_cast<std::uint16_t>(h + 1));
        for (double centre : {a, (a + b) / 2}) {
            const float c = static_cast<float>(centre);
            REQUIRE(static_cast<double>(c) == centre);
            const std::uint32_t cb = bits_of(c);
            for (std::int64_t k = -16; k <= 16; ++k) {
                const std::int64_t u = static_cast<std::int64_t>(cb) + k;
                if (u < 0) continue;
                const float f = float_of(static_cast<std::uint32_t>(u));
                check_from_float(f);
                check_from_float(-f);
                checked += 2;
            }
        }
    }
    CHECK(checked > 2000000);
}

TEST_CASE("float16: every binary32 exponent with edge mantissas, infinities and NaN", "[core][float16]") {
    // Mantissa patterns around the binary16 rounding bit (bit 12 for normals),
    // plus extremes; exponent 255 gives +-inf (mantissa 0) and NaNs.
    const std::uint32_t mantissas[] = {0,      1,      2,      0xfff,  0x1000, 0x1001, 0x1fff,   0x2000,
                                       0x3000, 0x5000, 0x7000, 0xefff, 0x400000, 0x400001, 0x7fe000,
                                       0x7fefff, 0x7ff000, 0x7ff001, 0x7fffff};
    for (std::uint32_t e = 0; e < 256; ++e)
        for (std::uint32_t m : mantissas)
            for (std::uint32_t s : {0u, 1u}) check_from_float(float_of((s << 31) | (e << 23) | m));
}

TEST_CASE("float16: one million random binary32 values", "[core][float16]") {
    qtest::Rng rng(20240611u);  // (a fixed sample: not --rng-seed's)
    for (int i = 0; i < 1000000; ++i) check_from_float(float_of(static_cast<std::uint32_t>(rng.bits())));
}

TEST_CASE("float16: hand-written cases", "[core][float16]") {
    auto bits = [](float f) { return float16(f).bits; };
    SECTION("exact values") {
        CHECK(bits(1.0f) == 0x3c00);
        CHECK(bits(-2.0f) == 0xc000);
        CHECK(bits(65504.0f) == 0x7bff);              // largest finite
        CHECK(bits(0x1p-14f) == 0x0400);              // smallest normal
        CHECK(bits(0x1p-24f) == 0x0001);              // smallest subnormal
        CHECK(bits(1023 * 0x1p-24f) == 0x03ff);       // largest subnormal
        CHECK(bits(0.0f) == 0x0000);
        CHECK(bits(-0.0f) == 0x8000);
        CHECK(static_cast<float>(float16::from_bits(0x0001)) == 5.9604644775390625e-8f);
        CHECK(static_cast<float>(float16::from_bits(0x8001)) == -5.9604644775390625e-8f);
        CHECK(static_cast<float>(float16::from_bits(0x7bff)) == 65504.0f);
        CHECK(static_cast<float>(float16::from_bits(0x3555)) == 0.333251953125f);
    }
    SECTION("ties to even") {
        // binary16 spacing is 2 in [2048, 4096): 2049 ties between 2048 (0x6800, even)
        // and 2050 (0x6801): -> 2048; 2051 ties between 2050 and 2052 (0x6802, even) -> 2052.
        CHECK(bits(2049.0f) == 0x6800);
        CHECK(bits(2051.0f) == 0x6802);
        CHECK(bits(-2049.0f) == 0xe800);
        CHECK(bits(std::nextafter(2049.0f, 3000.0f)) == 0x6801);  // just above the tie
        // spacing 2^-10 at 1: 1 + 2^-11 ties to 1; 1 + 3 * 2^-11 ties to 1 + 2^-9 (0x3c02)
        CHECK(bits(1.00048828125f) == 0x3c00);
        CHECK(bits(1.00146484375f) == 0x3c02);
        // the tie between the largest subnormal and the smallest normal goes to 0x0400 (even)
        CHECK(bits(2047 * 0x1p-25f) == 0x0400);
        CHECK(bits(1.0f / 3.0f) == 0x3555);
    }
    SECTION("underflow at 2^-25") {
        // 2^-25 is half the smallest subnormal: a tie between 0 and 0x0001 -> 0 (even).
        CHECK(bits(0x1p-25f) == 0x0000);
        CHECK(bits(-0x1p-25f) == 0x8000);
        CHECK(bits(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
        CHECK(bits(std::nextafter(0x1p-25f, 0.0f)) == 0x0000);
        CHECK(bits(3 * 0x1p-25f) == 0x0002);  // 1.5 ulps ties to 2 (even)
        CHECK(bits(FLT_TRUE_MIN) == 0x0000);
        CHECK(bits(-FLT_TRUE_MIN) == 0x8000);
    }
    SECTION("overflow at 65520") {
        // 65520 is the midpoint between 65504 and 2^16; it ties to 2^16 (even), i.e. infinity.
        CHECK(bits(65520.0f) == 0x7c00);
        CHECK(bits(-65520.0f) == 0xfc00);
        CHECK(bits(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
        CHECK(bits(65519.0f) == 0x7bff);
        CHECK(bits(FLT_MAX) == 0x7c00);
        CHECK(bits(std::numeric_limits<float>::infinity()) == 0x7c00);
        CHECK(bits(-std::numeric_limits<float>::infinity()) == 0xfc00);
    }
    SECTION("NaN stays NaN, with its sign") {
        CHECK(is_half_nan(bits(std::numeric_limits<float>::quiet_NaN())));
        CHECK(is_half_nan(bits(float_of(0x7f800001u))));  // signalling, payload only in low bits
        CHECK(is_half_nan(bits(float_of(0xffc00000u))));
        CHECK((bits(float_of(0xffc00000u)) & 0x8000u) != 0);
        CHECK(std::isnan(static_cast<float>(float16::from_bits(0x7c01))));
        CHECK(std::isnan(static_cast<float>(float16::from_bits(0xfe00))));
        CHECK(std::isinf(static_cast<float>(float16::from_bits(0x7c00))));
    }
}

TEST_CASE("float16: from_double rounds once, not through binary32", "[core][float16]") {
    // 1 + 2^-11 + 2^-40: binary32 would give 1 + 2^-11 (a tie, then -> 1.0);
    // rounded once it is just above the tie: 1 + 2^-10 = 0x3c01. (numpy.float16 agrees.)
    CHECK(float16::from_double(1.0 + 0x1p-11 + 0x1p-40).bits == 0x3c01);
    CHECK(float16::from_double(1.0 + 0x1p-11).bits == 0x3c00);
    CHECK(float16::from_double(-(1.0 + 0x1p-11 + 0x1p-40)).bits == 0xbc01);
    // just below 65520: binary32 rounds 65519.9999999 up to 65520.0f (-> inf); once: 65504
    CHECK(float16::from_double(65519.9999999).bits == 0x7bff);
    CHECK(float16::from_double(65520.0).bits == 0x7c00);
    CHECK(float16::from_double(-1e300).bits == 0xfc00);
    // just above 2^-25: binary32 rounds to 2^-25 (a tie -> 0); once: 0x0001
    CHECK(float16::from_double(0x1p-25 + 0x1p-60).bits == 0x0001);
    CHECK(float16::from_double(0x1p-25).bits == 0x0000);
    CHECK(is_half_nan(float16::from_double(std::nan("")).bits));
}

// ---------------------------------------------------------------------------
// Q, rne, requantize

TEST_CASE("Q: round_half_even", "[core][quantize]") {
    CHECK(qdml::round_half_even(0.5f) == 0.0f);
    CHECK(qdml::round_half_even(1.5f) == 2.0f);
    CHECK(qdml::round_half_even(2.5f) == 2.0f);
    CHECK(qdml::round_half_even(3.5f) == 4.0f);
    CHECK(qdml::round_half_even(-0.5f) == 0.0f);
    CHECK(qdml::round_half_even(-1.5f) == -2.0f);
    CHECK(qdml::round_half_even(-2.5f) == -2.0f);
    CHECK(qdml::round_half_even(2.4999998f) == 2.0f);
    CHECK(qdml::round_half_even(2.5000002f) == 3.0f);
    CHECK(qdml::round_half_even(8388607.5f) == 8388608.0f);  // 2^23 - 0.5: odd integer part -> up
    CHECK(qdml::round_half_even(8388606.5f) == 8388606.0f);
}

TEST_CASE("Q: ties with odd and even zero points: rne(v) + zp, not rne(v + zp)", "[core][quantize]") {
    using qdml::quantize;
    // v = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5} -> rne {0, 2, 2, 0, -2, -2}
    const float v[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f};
    const int rne[] = {0, 2, 2, 0, -2, -2};
    for (int zp : {3, 10, -7, 0}) {
        for (int i = 0; i < 6; ++i) {
            INFO("INT8 zp " << zp << " v " << v[i]);
            CHECK(quantize<std::int8_t>(v[i], zp) == rne[i] + zp);
        }
    }
    for (int zp : {101, 128, 3}) {
        for (int i = 0; i < 6; ++i) {
            INFO("UINT8 zp " << zp << " v " << v[i]);
            CHECK(quantize<std::uint8_t>(v[i], zp) == rne[i] + zp);
        }
    }
}

TEST_CASE("Q: saturation at both ends, clamp before rounding", "[core][quantize]") {
    using qdml::quantize;
    // INT8 zp 3: v clamped to [-131, 124]
    CHECK(quantize<std::int8_t>(123.5f, 3) == 127);   // rne 124 + 3
    CHECK(quantize<std::int8_t>(122.5f, 3) == 125);   // rne 122 + 3
    CHECK(quantize<std::int8_t>(124.5f, 3) == 127);   // clamp 124
    CHECK(quantize<std::int8_t>(1000.0f, 3) == 127);
    CHECK(quantize<std::int8_t>(-131.5f, 3) == -128);  // clamp -131
    CHECK(quantize<std::int8_t>(-130.5f, 3) == -127);  // rne -130 + 3
    CHECK(quantize<std::int8_t>(-1000.0f, 3) == -128);
    // UINT8 zp 0: clamp to [0, 255]
    CHECK(quantize<std::uint8_t>(-0.4f, 0) == 0);
    CHECK(quantize<std::uint8_t>(-0.6f, 0) == 0);
    CHECK(quantize<std::uint8_t>(254.5f, 0) == 254);
    CHECK(quantize<std::uint8_t>(255.5f, 0) == 255);
    CHECK(quantize<std::uint8_t>(300.0f, 0) == 255);
    // UINT8 zp 255: v in [-255, 0]
    CHECK(quantize<std::uint8_t>(1.0f, 255) == 255);
    CHECK(quantize<std::uint8_t>(-254.5f, 255) == 1);  // rne -254 + 255
    CHECK(quantize<std::uint8_t>(-300.0f, 255) == 0);
    // INT16
    CHECK(quantize<std::int16_t>(40000.0f, 0) == 32767);
    CHECK(quantize<std::int16_t>(-40000.0f, 0) == -32768);
    CHECK(quantize<std::int16_t>(32766.5f, 0) == 32766);
}

TEST_CASE("Q: NaN -> lo, infinities and huge values saturate without overflow", "[core][quantize]") {
    using qdml::quantize;
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int zp : {-128, -1, 0, 3, 127}) {
        INFO("INT8 zp " << zp);
        CHECK(quantize<std::int8_t>(nan, zp) == -128);
        CHECK(quantize<std::int8_t>(-nan, zp) == -128);
        CHECK(quantize<std::int8_t>(inf, zp) == 127);
        CHECK(quantize<std::int8_t>(-inf, zp) == -128);
    }
    for (int zp : {0, 128, 255}) {
        INFO("UINT8 zp " << zp);
        CHECK(quantize<std::uint8_t>(nan, zp) == 0);
        CHECK(quantize<std::uint8_t>(inf, zp) == 255);
        CHECK(quantize<std::uint8_t>(-inf, zp) == 0);
    }
    CHECK(quantize<std::int16_t>(nan, 5) == -32768);
    // Every zero point of the type against values beyond int32 and near it: the
    // result must be clamp(rne(v) + zp, lo, hi) computed in binary64.
    const float huge[] = {FLT_MAX, 1e30f, 1e10f, 4294967296.0f, 2147483648.0f, 2147483520.0f, 16777217.0f,
                          65536.5f, 256.5f, 127.5f, 0.0f, FLT_TRUE_MIN};
    auto expected = [](float v, int zp, double lo, double hi) {
        const double r = std::nearbyint(static_cast<double>(v)) + zp;
        return static_cast<long long>(std::min(std::max(r, lo), hi));
    };
    for (int zp = -128; zp <= 127; ++zp)
        for (float h : huge)
            for (float v : {h, -h}) {
                INFO("INT8 zp " << zp << " v " << v);
                REQUIRE(quantize<std::int8_t>(v, zp) == expected(v, zp, -128, 127));
            }
    for (int zp = 0; zp <= 255; ++zp)
        for (float h : huge)
            for (float v : {h, -h}) {
                INFO("UINT8 zp " << zp << " v " << v);
                REQUIRE(quantize<std::uint8_t>(v, zp) == expected(v, zp, 0, 255));
            }
    for (int zp : {-32768, -1, 0, 1, 32767})
        for (float h : huge)
            for (float v : {h, -h}) {
                INFO("INT16 zp " << zp << " v " << v);
                REQUIRE(quantize<std::int16_t>(v, zp) == expected(v, zp, -32768, 32767));
            }
}

TEST_CASE("Q: every half-integer in [-300, 300] and every zero point", "[core][quantize]") {
    // v = k / 2 (exact in binary32): Q(v, zp) = clamp(rne(v) + zp, lo, hi), rne in binary64.
    // Mismatches are counted (one Catch assertion per loop would be slow); the first is reported.
    std::size_t bad = 0;
    std::string first;
    for (int k = -600; k <= 600; ++k) {
        const float v = static_cast<float>(k) / 2;
        const double r = std::nearbyint(k / 2.0);
        for (int zp = -128; zp <= 255; ++zp) {
            if (zp <= 127 &&
                qdml::quantize<std::int8_t>(v, zp) != static_cast<int>(std::min(std::max(r + zp, -128.0), 127.0)) &&
                bad++ == 0)
                first = "INT8 v " + std::to_string(v) + " zp " + std::to_string(zp);
            if (zp >= 0 &&
                qdml::quantize<std::uint8_t>(v, zp) != static_cast<int>(std::min(std::max(r + zp, 0.0), 255.0)) &&
                bad++ == 0)
                first = "UINT8 v " + std::to_string(v) + " zp " + std::to_string(zp);
        }
    }
    INFO("first mismatch: " << first);
    CHECK(bad == 0);
}

TEST_CASE("Q: requantize, requantize_multiplier, dequantize, wrap_int32, fp32", "[core][quantize]") {
    SECTION("requantize = Q(fp32(acc) * multiplier)") {
        CHECK(qdml::requantize<std::uint8_t>(5, 0.5f, 0) == 2);  // 2.5 -> 2
        CHECK(qdml::requantize<std::uint8_t>(7, 0.5f, 0) == 4);  // 3.5 -> 4
        CHECK(qdml::requantize<std::int8_t>(-5, 0.5f, 3) == 1);  // -2.5 -> -2, + 3
        CHECK(qdml::requantize<std::int8_t>(std::numeric_limits<std::int32_t>::max(), 1.0f, 0) == 127);
        CHECK(qdml::requantize<std::int8_t>(std::numeric_limits<std::int32_t>::min(), 1.0f, 0) == -128);
        CHECK(qdml::requantize<std::uint8_t>(std::numeric_limits<std::int32_t>::min(), -1.0f, 0) == 255);
        // fp32(16777217) = 16777216 (RNE), * 2^-24 = 1 exactly; 16777219 -> 16777220 -> 1.0000002 -> 1
        CHECK(qdml::requantize<std::int8_t>(16777217, 0x1p-24f, 0) == 1);
        // fp32(25165825) = 25165824 = 1.5 * 2^24; * 2^-24 = 1.5 -> 2
        CHECK(qdml::requantize<std::int8_t>(25165825, 0x1p-24f, 0) == 2);
    }
    SECTION("multiplier = fp32(a * b) / out, in that order") {
        // fp32(0.02f * 0.1f) = 0x3B03126F; / 0.02f = 0x3DCCCCCE (numpy float32, same order);
        // the exact 0.1 rounded once would be 0x3DCCCCCD.
        CHECK(bits_of(qdml::requantize_multiplier(0.02f, 0.1f, 0.02f)) == 0x3DCCCCCEu);
        CHECK(qdml::requantize_multiplier(0.5f, 0.25f, 0.25f) == 0.5f);
    }
    SECTION("dequantize = fp32(x - zp) * scale, the difference exact in 64 bits") {
        // 2147483647 - (-2147483648) = 4294967295, fp32 -> 4294967296
        CHECK(qdml::dequantize(2147483647, -2147483648LL, 1.0f) == 4294967296.0f);
        CHECK(qdml::dequantize(4294967295LL, 0, 1.0f) == 4294967296.0f);
        CHECK(qdml::dequantize(16777217, 0, 1.0f) == 16777216.0f);  // RNE
        CHECK(qdml::dequantize(16777219, 0, 1.0f) == 16777220.0f);
        CHECK(qdml::dequantize(-128, 127, 0.5f) == -127.5f);
    }
    SECTION("wrap_int32 and fp32") {
        CHECK(qdml::wrap_int32(0x7fffffffu) == 2147483647);
        CHECK(qdml::wrap_int32(0x80000000u) == std::numeric_limits<std::int32_t>::min());
        CHECK(qdml::wrap_int32(0xffffffffu) == -1);
        CHECK(qdml::wrap_int32(0) == 0);
        CHECK(qdml::fp32(-2147483639) == -2147483648.0f);
        CHECK(qdml::fp32(2147483643) == 2147483648.0f);
        CHECK(qdml::fp32(-1693967296) == -1693967360.0f);
    }
    SECTION("truncate_saturate") {
        CHECK(qdml::truncate_saturate<std::int8_t>(-1.9f) == -1);
        CHECK(qdml::truncate_saturate<std::int8_t>(127.9f) == 127);
        CHECK(qdml::truncate_saturate<std::int8_t>(128.0f) == 127);
        CHECK(qdml::truncate_saturate<std::int8_t>(-129.0f) == -128);
        CHECK(qdml::truncate_saturate<std::uint8_t>(-0.9f) == 0);
        CHECK(qdml::truncate_saturate<std::uint32_t>(4294967296.0f) == 4294967295u);
        CHECK(qdml::truncate_saturate<std::int64_t>(-FLT_MAX) == std::numeric_limits<std::int64_t>::min());
        CHECK(qdml::truncate_saturate<std::int32_t>(std::numeric_limits<float>::quiet_NaN()) == 0);
    }
}

// ---------------------------------------------------------------------------
// DMLCalcBufferTensorSize

TEST_CASE("calc_buffer_tensor_size: (dot(Sizes - 1, Strides) + 1) * elementSize, rounded up to 4",
          "[core][tensor]") {
    using qdml::calc_buffer_tensor_size;
    SECTION("packed") {
        CHECK(calc_buffer_tensor_size(raw_desc(DT::UInt8, {2, 3})) == 8u);    // 6 -> 8
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Float32, {2, 3})) == 24u);
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int8, {1})) == 4u);        // 1 -> 4
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Float16, {3})) == 8u);     // 6 -> 8
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int16, {2, 2})) == 8u);
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int64, {5})) == 40u);
        CHECK(calc_buffer_tensor_size(raw_desc(DT::UInt8, {1, 1, 1, 1, 1, 1, 1, 9})) == 12u);
    }
    SECTION("strided") {
        // {2,3} strides {4,1}: 1*4 + 2*1 + 1 = 7 -> 8
        CHECK(calc_buffer_tensor_size(raw_desc(DT::UInt8, {2, 3}, {4, 1})) == 8u);
        // transposed {2,3} strides {1,2}: 1 + 4 + 1 = 6 elements * 4 = 24
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Float32, {2, 3}, {1, 2})) == 24u);
        // {3,3} strides {10,1}: 20 + 2 + 1 = 23 -> 24 (UINT8); * 2 = 46 -> 48 (FLOAT16)
        CHECK(calc_buffer_tensor_size(raw_desc(DT::UInt8, {3, 3}, {10, 1})) == 24u);
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Float16, {3, 3}, {10, 1})) == 48u);
    }
    SECTION("broadcast (stride 0)") {
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int32, {4, 5}, {0, 0})) == 4u);
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int8, {4, 5}, {0, 0})) == 4u);
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int16, {4, 5}, {0, 1})) == 12u);  // 5 * 2 = 10 -> 12
        CHECK(calc_buffer_tensor_size(raw_desc(DT::Int64, {4, 5}, {1, 0})) == 32u);
    }
    SECTION("64-bit overflow gives nullopt") {
        // (2^31) * 2^31 + 2^31 + 1 = 2^62 + 2^31 + 1 elements: fits for 1-byte elements
        // (rounded up to 2^62 + 2^31 + 4), overflows 64 bits at 8 bytes each.
        const auto d8 = raw_desc(DT::Int8, {0x80000001u, 0x80000001u}, {0x80000000u, 1});
        CHECK(calc_buffer_tensor_size(d8) == (std::uint64_t{1} << 62) + (std::uint64_t{1} << 31) + 4);
        const auto d64 = raw_desc(DT::Int64, {0x80000001u, 0x80000001u}, {0x80000000u, 1});
        CHECK_FALSE(calc_buffer_tensor_size(d64).has_value());
        // 8 dimensions of 2^32-1 with strides 2^32-1: 8 * (2^32-2) * (2^32-1) > 2^64
        const auto big = raw_desc(DT::UInt8, {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u},
                                  {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u});
        CHECK_FALSE(qdml::min_buffer_elements(big).has_value());
        CHECK_FALSE(calc_buffer_tensor_size(big).has_value());
    }
    SECTION("unknown data type gives nullopt") {
        CHECK_FALSE(calc_buffer_tensor_size(raw_desc(DT::Unknown, {2})).has_value());
        CHECK_FALSE(calc_buffer_tensor_size(raw_desc(static_cast<DT>(99), {2})).has_value());
    }
    SECTION("TensorDesc::make fills in the minimum; a strides count mismatch gives DimensionCount 0") {
        CHECK(qdml::TensorDesc::make(DT::UInt8, {2, 3}, {4, 1}).TotalTensorSizeInBytes == 8u);
        CHECK(qdml::TensorDesc::make(DT::UInt8, {2, 3}, {1}).DimensionCount == 0u);
        CHECK(qdml::TensorDesc::make(DT::UInt8, {1, 1, 1, 1, 1, 1, 1, 1, 1}).DimensionCount == 0u);
    }
}

// ---------------------------------------------------------------------------
// The generic tensor rules, through ELEMENT_WISE_CLIP (1-8 dimensions, any type)

namespace {

struct ClipCase {
    alignas(64) std::array<float, 64> in{};
    alignas(64) std::array<float, 64> out{};
    qdml::ElementWiseClipDesc d;
    ClipCase() {
        d.InputTensor = {qdml::TensorDesc::make(DT::Float32, {2, 3}), in.data()};
        d.OutputTensor = {qdml::TensorDesc::make(DT::Float32, {2, 3}), out.data()};
        d.Min = -1;
        d.Max = 1;
    }
    /// "member: rule" of the first error, or "<valid>".
    std::string error() const {
        try {
            qdml::validate(d);
        } catch (const qdml::Error& e) {
            CHECK(e.operator_name() == "ELEMENT_WISE_CLIP");
            return e.member() + ": " + e.rule();
        }
        return "<valid>";
    }
};

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

}  // namespace

TEST_CASE("right_align: a rank-N view as rank M, leading sizes 1, the same elements", "[core][tensor]") {
    int data[12];
    for (int i = 0; i < 12; ++i) data[i] = i;
    // {2, 3} with strides {1, 4} (column-major in a 4-row buffer): element [r][c] is data[r + 4c].
    qdml::TensorView<const int, 2> v{data, {2, 3}, {1, 4}};
    const auto w = qdml::right_align<5>(v);
    CHECK(w.data == data);
    CHECK(w.sizes == std::array<std::uint32_t, 5>{1, 1, 1, 2, 3});
    CHECK(w.strides == std::array<std::uint64_t, 5>{0, 0, 0, 1, 4});
    for (std::uint32_t r = 0; r < 2; ++r)
        for (std::uint32_t c = 0; c < 3; ++c) CHECK(w[{0, 0, 0, r, c}] == static_cast<int>(r + 4 * c));
    const auto same = qdml::right_align<2>(v);
    CHECK((same.sizes == v.sizes && same.strides == v.strides));
    CHECK_FALSE(qdml::right_align<8>(std::optional<qdml::TensorView<const int, 2>>{}).has_value());
    CHECK(qdml::right_align<8>(std::optional<qdml::TensorView<const int, 2>>{v})->sizes[7] == 3u);
}

TEST_CASE("Validator: generic tensor rules, one at a time", "[core][validation]") {
    ClipCase c;
    REQUIRE(c.error() == "<valid>");
    auto& in = c.d.InputTensor;
    auto rejects = [&](const std::string& member_and_rule) {
        const std::string e = c.error();
        INFO("error: " << e);
        CHECK(starts_with(e, member_and_rule));
    };

    SECTION("DimensionCount 0 and 9") {
        in.Desc.DimensionCount = 0;
        rejects("InputTensor: DimensionCount 0 is outside 1..8");
        in.Desc.DimensionCount = 9;
        rejects("InputTensor: DimensionCount 9 is outside 1..8");
    }
    SECTION("1 to 8 dimensions are accepted") {
        for (std::uint32_t n = 1; n <= 8; ++n) {
            qdml::TensorDesc d;
            d.DataType = DT::Float32;
            d.DimensionCount = n;
            for (std::uint32_t i = 0; i < n; ++i) d.Sizes[i] = 1;
            d.Sizes[0] = 6;
            d.TotalTensorSizeInBytes = 24;
            in.Desc = d;
            c.d.OutputTensor.Desc = d;
            INFO("DimensionCount " << n);
            CHECK(c.error() == "<valid>");
        }
    }
    SECTION("a strides count that differs from the sizes (TensorDesc::make keeps DimensionCount 0)") {
        in.Desc = qdml::TensorDesc::make(DT::Float32, {2, 3}, {3});
        rejects("InputTensor: DimensionCount 0 is outside 1..8");
    }
    SECTION("a size of 0") {
        in.Desc.Sizes[1] = 0;
        rejects("InputTensor: Sizes[1] is 0");
    }
    SECTION("more than 2^32-1 elements") {
        // {65536, 65536} through zero strides: a 4-byte buffer, 2^32 elements
        c.d.OutputTensor.Desc = in.Desc = qdml::TensorDesc::make(DT::Float32, {65536, 65536}, {0, 0});
        rejects("InputTensor: Sizes {65536,65536} hold more than 2^32-1 elements");
        // a product that overflows 64 bits
        in.Desc = qdml::TensorDesc::make(DT::Float32, {~0u, ~0u, ~0u, ~0u}, {0, 0, 0, 0});
        rejects("InputTensor: Sizes {4294967295,4294967295,4294967295,4294967295} hold more than 2^32-1");
    }
    SECTION("unknown data type") {
        in.Desc.DataType = static_cast<DT>(99);
        rejects("InputTensor: DataType 99 is not a DML_TENSOR_DATA_TYPE");
        in.Desc.DataType = DT::Unknown;
        rejects("InputTensor: DataType 0 is not a DML_TENSOR_DATA_TYPE");
    }
    SECTION("strides that make the buffer size overflow 64 bits") {
        // {2^32-1} with stride 2^32-1: (2^32-2) * (2^32-1) + 1 elements (just below 2^64)
        // fit, but times 4 bytes they do not; the element count itself is fine.
        in.Desc = qdml::TensorDesc::make(DT::Float32, {~0u}, {~0u});
        rejects("InputTensor: Strides make the buffer size overflow 64 bits");
    }
    SECTION("TotalTensorSizeInBytes below the minimum; rounding up to 4 counts") {
        in.Desc.TotalTensorSizeInBytes = 23;
        rejects("InputTensor: TotalTensorSizeInBytes 23 is below the minimum DMLCalcBufferTensorSize gives (24)");
        in.Desc.TotalTensorSizeInBytes = 24;
        CHECK(c.error() == "<valid>");
        in.Desc.TotalTensorSizeInBytes = 1000;  // larger is fine
        CHECK(c.error() == "<valid>");
    }
    SECTION("GuaranteedBaseOffsetAlignment: 0 or a power of two >= the element size") {
        in.Desc.GuaranteedBaseOffsetAlignment = 3;
        rejects("InputTensor: GuaranteedBaseOffsetAlignment 3 must be 0 or a power of two >= 4");
        in.Desc.GuaranteedBaseOffsetAlignment = 2;  // a power of two below sizeof(float)
        rejects("InputTensor: GuaranteedBaseOffsetAlignment 2 must be 0 or a power of two >= 4");
        in.Desc.GuaranteedBaseOffsetAlignment = 12;
        rejects("InputTensor: GuaranteedBaseOffsetAlignment 12");
        in.Desc.GuaranteedBaseOffsetAlignment = 4;
        CHECK(c.error() == "<valid>");
        in.Desc.GuaranteedBaseOffsetAlignment = 64;
        CHECK(c.error() == "<valid>");
    }
    SECTION("Data misaligned") {
        in.Data = reinterpret_cast<std::uint8_t*>(c.in.data()) + 2;
        rejects("InputTensor: Data is not aligned to the element size (4 bytes)");
        in.Data = c.in.data() + 2;  // 8 bytes past a 64-byte boundary
        in.Desc.GuaranteedBaseOffsetAlignment = 16;
        rejects("InputTensor: Data is not aligned to GuaranteedBaseOffsetAlignment 16");
        in.Desc.GuaranteedBaseOffsetAlignment = 8;
        CHECK(c.error() == "<valid>");
    }
    SECTION("null Data") {
        c.d.OutputTensor.Data = nullptr;
        rejects("OutputTensor: Data is null");
    }
    SECTION("DataSizeInBytes below TotalTensorSizeInBytes") {
        in.DataSizeInBytes = 20;
        rejects("InputTensor: the bound buffer holds 20 bytes, fewer than TotalTensorSizeInBytes 24");
        in.DataSizeInBytes = 24;
        CHECK(c.error() == "<valid>");
        in.DataSizeInBytes = 0;  // 0 = not given
        CHECK(c.error() == "<valid>");
    }
    SECTION("output strides that map two elements to one address, or broadcast") {
        c.d.OutputTensor.Desc = qdml::TensorDesc::make(DT::Float32, {2, 3}, {1, 1});
        rejects("OutputTensor: Strides make two output elements share one address");
        c.d.OutputTensor.Desc = qdml::TensorDesc::make(DT::Float32, {2, 3}, {3, 0});
        rejects("OutputTensor: Strides[1] is 0");
        c.d.OutputTensor.Desc = qdml::TensorDesc::make(DT::Float32, {2, 3}, {1, 2});  // transposed: fine
        CHECK(c.error() == "<valid>");
    }
}

namespace {
/// Whether two indices of `sizes` x `strides` share an offset, by listing
/// every offset (the brute-force oracle for offsets_distinct).
bool brute_force_distinct(const std::vector<std::uint64_t>& sizes, const std::vector<std::uint64_t>& strides) {
    std::vector<std::uint64_t> offs{0};
    for (std::size_t d = 0; d < sizes.size(); ++d) {
        std::vector<std::uint64_t> next;
        for (auto o : offs)
            for (std::uint64_t i = 0; i < sizes[d]; ++i) next.push_back(o + i * strides[d]);
        offs.swap(next);
    }
    std::sort(offs.begin(), offs.end());
    return std::adjacent_find(offs.begin(), offs.end()) == offs.end();
}

bool distinct(const std::vector<std::uint64_t>& sizes, const std::vector<std::uint64_t>& strides) {
    std::array<qdml::detail::StridedDim, qdml::kMaxDimensions> dims{};
    for (std::size_t d = 0; d < sizes.size(); ++d) dims[d] = {strides[d], sizes[d]};
    return qdml::detail::offsets_distinct(dims, static_cast<std::uint32_t>(sizes.size()));
}
}  // namespace

TEST_CASE("Validator: output overlap is decided exactly", "[core][validation]") {
    ClipCase c;
    auto out_error = [&](std::initializer_list<std::uint32_t> sizes, std::initializer_list<std::uint32_t> strides) {
        c.d.InputTensor.Desc = qdml::TensorDesc::make(DT::Float32, sizes);
        c.d.OutputTensor.Desc = qdml::TensorDesc::make(DT::Float32, sizes, strides);
        return c.error();
    };
    const std::string shared = "OutputTensor: Strides make two output elements share one address";
    // The layout: {3,2} with strides {2,3} addresses 0,3, 2,5, 4,7: all distinct.
    CHECK(out_error({3, 2}, {2, 3}) == "<valid>");
    // {4,3} with strides {3,5}: 0,5,10, 3,8,13, 6,11,16, 9,14,19: distinct (decided by visiting them).
    CHECK(out_error({4, 3}, {3, 5}) == "<valid>");
    // {2,2,2} with strides {2,3,5}: 2 + 3 = 5, index {1,1,0} and {0,0,1} share address 5.
    CHECK(starts_with(out_error({2, 2, 2}, {2, 3, 5}), shared));
    // {3,2} with strides {1,2}: {2,0} and {0,1} share address 2.
    CHECK(starts_with(out_error({3, 2}, {1, 2}), shared));
    // {2,3} with strides {1,1}: {1,0} and {0,1} share address 1.
    CHECK(starts_with(out_error({2, 3}, {1, 1}), shared));

    // Against the brute-force listing: every layout of 1-4 dimensions with
    // sizes 2..5 and strides 1..12 drawn at random.
    qtest::Rng rng(qtest::case_seed(66));
    INFO("seed " << rng.seed());
    int accepted = 0, rejected = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        const auto n = static_cast<std::size_t>(rng.range(1, 4));
        std::vector<std::uint64_t> sizes(n), strides(n);
        for (std::size_t d = 0; d < n; ++d) {
            sizes[d] = static_cast<std::uint64_t>(rng.range(2, 5));
            strides[d] = static_cast<std::uint64_t>(rng.range(1, 12));
        }
        const bool expect = brute_force_distinct(sizes, strides);
        INFO("layout " << iter);
        REQUIRE(distinct(sizes, strides) == expect);
        (expect ? accepted : rejected) += 1;
    }
    CHECK(accepted > 1000);  // both answers were exercised
    CHECK(rejected > 1000);
    // Large strides (no bitmap over a huge span is needed when the classic test decides).
    CHECK(distinct({65536, 65536}, {1, 65536}));
    CHECK(distinct({2, 2}, {1ull << 40, 1}));
    CHECK_FALSE(distinct({3, 2}, {1ull << 40, 1ull << 41}));  // 2 * 2^40 == 2^41
}

TEST_CASE("Validator: the 2^32-1 element boundary; the error names operator, member and rule", "[core][validation]") {
    const qdml::Validator v("TEST", qdml::FeatureLevel::Latest);
    const qdml::MemberSupport any{1, 8, {DT::Float32}};
    alignas(64) static float buf[4];
    qdml::Tensor t{qdml::TensorDesc::make(DT::Float32, {65535, 65537}, {0, 0}), buf};  // 2^32 - 1 elements
    CHECK_NOTHROW(v.tensor("X", t, any));
    t.Desc = qdml::TensorDesc::make(DT::Float32, {65536, 65536}, {0, 0});
    CHECK_THROWS_WITH(v.tensor("X", t, any), Catch::Contains("more than 2^32-1 elements"));
    try {
        v.tensor("X", qdml::Tensor{qdml::TensorDesc::make(DT::Float32, {1}), nullptr}, any);
        FAIL("null Data accepted");
    } catch (const qdml::Error& e) {
        CHECK(e.operator_name() == "TEST");
        CHECK(e.member() == "X");
        CHECK(std::string(e.what()) == "TEST: X: Data is null (no buffer bound)");
    }
}

TEST_CASE("Validator: a type or rank outside the member's table", "[core][validation]") {
    const qdml::Validator v("TEST", qdml::FeatureLevel::L5_0);
    alignas(64) static std::int32_t buf[4];
    const qdml::Tensor t{qdml::TensorDesc::make(DT::Int32, {2, 2}), buf};
    CHECK_NOTHROW(v.tensor("X", t, {2, 4, {DT::Int32, DT::Int8}}));
    CHECK_THROWS_WITH(v.tensor("X", t, {2, 4, {DT::Float32, DT::Int8}}),
                      "TEST: X: DataType INT32 is not supported; allowed: FLOAT32, INT8 (DML_FEATURE_LEVEL 5.0)");
    CHECK_THROWS_WITH(v.tensor("X", t, {3, 4, {DT::Int32}}),
                      "TEST: X: DimensionCount 2 is not supported; allowed: 3..4 (DML_FEATURE_LEVEL 5.0)");
    CHECK_THROWS_WITH(v.available_since(qdml::FeatureLevel::L6_2),
                      "TEST: operator: requires DML_FEATURE_LEVEL 6.2 (target is 5.0)");
    CHECK_NOTHROW(v.available_since(qdml::FeatureLevel::L5_0));
}

// ---------------------------------------------------------------------------
// names

TEST_CASE("data types: name, parse_data_type, element_size", "[core][names]") {
    struct Row {
        DT t;
        const char* name;
        std::uint32_t size;
    };
    const Row rows[] = {{DT::Float32, "FLOAT32", 4}, {DT::Float16, "FLOAT16", 2}, {DT::UInt32, "UINT32", 4},
                        {DT::UInt16, "UINT16", 2},   {DT::UInt8, "UINT8", 1},     {DT::Int32, "INT32", 4},
                        {DT::Int16, "INT16", 2},     {DT::Int8, "INT8", 1},       {DT::Float64, "FLOAT64", 8},
                        {DT::UInt64, "UINT64", 8},   {DT::Int64, "INT64", 8}};
    for (const auto& r : rows) {
        INFO(r.name);
        CHECK(qdml::name(r.t) == r.name);
        CHECK(qdml::parse_data_type(r.name) == r.t);
        CHECK(qdml::element_size(r.t) == r.size);
    }
    CHECK(static_cast<std::uint32_t>(DT::Float32) == 1);  // DML_TENSOR_DATA_TYPE values
    CHECK(static_cast<std::uint32_t>(DT::Int8) == 8);
    CHECK(static_cast<std::uint32_t>(DT::Int64) == 11);
    CHECK(qdml::name(DT::Unknown) == "UNKNOWN");
    CHECK(qdml::name(static_cast<DT>(12)) == "UINT4");  // DML_TENSOR_DATA_TYPE_UINT4 (FL 6.3)
    CHECK(qdml::name(static_cast<DT>(13)) == "INT4");
    CHECK(qdml::name(static_cast<DT>(14)) == "UNKNOWN");
    CHECK(qdml::element_size(DT::UInt4) == 0);  // no byte of its own: element_bits 4
    CHECK(qdml::element_bits(DT::Int4) == 4);
    CHECK(qdml::element_size(DT::Unknown) == 0);
    for (const char* bad : {"", "UNKNOWN", "uint8", "Int8", "INT2", "uint4", "UINT8 ", " UINT8", "FLOAT", "BOOL", "DML_TENSOR_DATA_TYPE_INT8"}) {
        INFO("'" << bad << "'");
        CHECK_FALSE(qdml::parse_data_type(bad).has_value());
    }
    CHECK(qdml::data_type_of<float> == DT::Float32);
    CHECK(qdml::data_type_of<const std::uint8_t> == DT::UInt8);
    CHECK(qdml::data_type_of<qdml::float16> == DT::Float16);
}

TEST_CASE("feature levels: ordering, to_string, parse_feature_level", "[core][names]") {
    using L = qdml::FeatureLevel;
    const L all[] = {L::L1_0, L::L2_0, L::L2_1, L::L3_0, L::L3_1, L::L4_0, L::L4_1, L::L5_0,
                     L::L5_1, L::L5_2, L::L6_0, L::L6_1, L::L6_2, L::L6_3, L::L6_4};
    const char* names[] = {"1.0", "2.0", "2.1", "3.0", "3.1", "4.0", "4.1", "5.0",
                           "5.1", "5.2", "6.0", "6.1", "6.2", "6.3", "6.4"};
    for (std::size_t i = 0; i < 15; ++i) {
        INFO(names[i]);
        CHECK(qdml::to_string(all[i]) == names[i]);
        CHECK(qdml::parse_feature_level(names[i]) == all[i]);
        std::string underscore = names[i];
        underscore[1] = '_';
        CHECK(qdml::parse_feature_level(underscore) == all[i]);
        if (i > 0) {
            CHECK(all[i - 1] < all[i]);
            CHECK_FALSE(all[i] < all[i - 1]);
        }
    }
    CHECK(L::Latest == L::L6_4);
    CHECK(static_cast<std::uint32_t>(L::L6_2) == 0x6200);  // DML_FEATURE_LEVEL_6_2
    CHECK(L::L4_0 >= L::L4_0);
    for (const char* bad : {"", "6", "6.", "62", "6.20", "06.2", "1.1", "2.2", "6.5", "7.0", "0.0", "9.9", "a.b",
                            "6-2", " 6.2", "6.2 "}) {
        INFO("'" << bad << "'");
        CHECK_FALSE(qdml::parse_feature_level(bad).has_value());
    }
}
