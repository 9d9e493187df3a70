// tests/support/float_bits.hpp - float results compared and printed bit for
// bit (dequantize and clip unit tests): binary32 and binary16 values as
// "value (0xBITS)" strings, so that == compares bits (-0.0 differs from 0.0)
// and a failure shows them; FLOAT16 elements from bit patterns; integers
// widened for printing.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/core/float16.hpp"

namespace qtest {

using qdml::float16;

/// Float results as strings "value (0xBITS)", so that == compares bits
/// (-0.0 differs from 0.0); every NaN prints as "NaN" (payloads not compared).
inline std::vector<std::string> bits(const std::vector<float>& v) {
    std::vector<std::string> s;
    for (float f : v) {
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.9g (0x%08X)", static_cast<double>(f), static_cast<unsigned>(u));
        s.push_back(std::isnan(f) ? "NaN" : buf);
    }
    return s;
}

/// binary16 bit patterns as "0xHHHH"; every NaN prints as "NaN".
inline std::vector<std::string> bits16(const std::vector<std::uint16_t>& v) {
    std::vector<std::string> s;
    for (auto h : v) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%04X", static_cast<unsigned>(h));
        s.push_back((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0 ? "NaN" : buf);
    }
    return s;
}
inline std::vector<std::string> bits16(const std::vector<float16>& v) {
    std::vector<std::uint16_t> b;
    for (auto h : v) b.push_back(h.bits);
    return bits16(b);
}

/// FLOAT16 elements from bit patterns.
inline std::vector<float16> halves(const std::vector<std::uint16_t>& b) {
    std::vector<float16> v;
    for (auto x : b) v.push_back(float16::from_bits(x));
    return v;
}

/// Integer elements widened for printing and comparison (int8 would print as chars).
template <class T>
auto widen(const std::vector<T>& v) {
    using W = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    return std::vector<W>(v.begin(), v.end());
}

}  // namespace qtest
