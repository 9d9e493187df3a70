// tests/support/common_dq.hpp - typed buffers for the dequantize and clip unit
// tests, which need every element type (FLOAT16, 16/32/64-bit integers) and
// bit-exact float comparison. Like qtest::Pool (common_c.hpp): every buffer has
// guard bytes on both sides and starts filled with kSentinel, and read()
// asserts that nothing outside the tensor's addressed elements was written.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/common_c.hpp"

namespace qtest {

using qdml::float16;

/// Owns the typed buffers of one test; element type T is the C++ type of the
/// DML data type (float, qdml::float16, std::int8_t, ..., std::uint64_t).
class TypedPool {
public:
    /// `buf` holds the buffer in memory order (min_buffer_elements values).
    template <class T>
    Tensor raw(const Dims& sizes, const std::vector<T>& buf, const Dims& strides = {}) {
        Tensor x = output(qdml::data_type_of<T>, sizes, strides);
        REQUIRE(buf.size() == qdml::min_buffer_elements(x.Desc).value_or(0));
        std::memcpy(x.Data, buf.data(), buf.size() * sizeof(T));
        return x;
    }

    /// `vals` in logical row-major order, written through the strides; gaps
    /// between addressed elements hold `filler`.
    template <class T>
    Tensor logical(const Dims& sizes, const std::vector<T>& vals, const Dims& strides = {}, T filler = T{}) {
        Tensor x = output(qdml::data_type_of<T>, sizes, strides);
        const auto n = qdml::min_buffer_elements(x.Desc).value_or(0);
        T* p = static_cast<T*>(x.Data);
        for (std::uint64_t i = 0; i < n; ++i) p[i] = filler;
        const auto offs = logical_offsets(x.Desc);
        REQUIRE(vals.size() == offs.size());
        for (std::size_t i = 0; i < offs.size(); ++i) p[offs[i]] = vals[i];
        return x;
    }

    /// A sentinel-filled buffer with the minimum size of the desc.
    Tensor output(DT t, const Dims& sizes, const Dims& strides = {}) {
        const TensorDesc d = desc(t, sizes, strides);
        bufs_.emplace_back(kGuard + d.TotalTensorSizeInBytes + kGuard + 8, kSentinel);
        auto& b = bufs_.back();
        const auto a = reinterpret_cast<std::uintptr_t>(b.data() + kGuard);
        const std::size_t pad = (8 - a % 8) % 8;  // Data 8-byte aligned (any element size)
        starts_.push_back(b.data() + pad);
        return Tensor{d, b.data() + pad + kGuard};
    }

    /// Logical values (row-major) of `x`, which must live in this pool;
    /// also checks that no byte outside the addressed elements changed.
    template <class T>
    std::vector<T> read(const Tensor& x) const {
        REQUIRE(x.Desc.DataType == qdml::data_type_of<T>);
        std::size_t k = 0;
        while (k < starts_.size() && starts_[k] + kGuard != x.Data) ++k;
        REQUIRE(k < starts_.size());
        const std::uint8_t* start = starts_[k];
        const std::size_t total = kGuard + x.Desc.TotalTensorSizeInBytes + kGuard;
        const auto offs = logical_offsets(x.Desc);
        std::vector<bool> addressed(total, false);
        for (auto o : offs)
            for (std::size_t j = 0; j < sizeof(T); ++j) addressed[kGuard + o * sizeof(T) + j] = true;
        std::size_t changed = 0;
        for (std::size_t i = 0; i < total; ++i)
            if (!addressed[i] && start[i] != kSentinel) ++changed;
        INFO(changed << " bytes outside the output view changed");
        CHECK(changed == 0);
        std::vector<T> v;
        for (auto o : offs) v.push_back(static_cast<const T*>(x.Data)[o]);
        return v;
    }

private:
    std::deque<std::vector<std::uint8_t>> bufs_;
    std::vector<const std::uint8_t*> starts_;
};

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
