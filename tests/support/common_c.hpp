// tests/support/common_c.hpp - buffers, descs and error helpers shared by the
// add, matmul and convolution unit tests. Every buffer has guard bytes on
// both sides and starts filled with a sentinel, so tests can assert that
// nothing outside an output view was written.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"

namespace qtest {

using qdml::Tensor;
using qdml::TensorDesc;
using DT = qdml::TensorDataType;
using Dims = std::vector<std::uint32_t>;
using Values = std::vector<double>;

inline constexpr std::uint8_t kSentinel = 0xA5;
inline constexpr std::size_t kGuard = 16;  // bytes before and after every buffer

/// A desc with the minimum TotalTensorSizeInBytes (strides empty = packed).
inline TensorDesc desc(DT t, const Dims& sizes, const Dims& strides = {}) {
    TensorDesc d;
    d.DataType = t;
    d.DimensionCount = static_cast<std::uint32_t>(sizes.size());
    for (std::size_t i = 0; i < sizes.size() && i < qdml::kMaxDimensions; ++i) d.Sizes[i] = sizes[i];
    if (!strides.empty()) {
        d.Strides.emplace();
        for (std::size_t i = 0; i < strides.size() && i < qdml::kMaxDimensions; ++i) (*d.Strides)[i] = strides[i];
    }
    d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
    return d;
}

/// Element offsets of every logical element, row-major (last index fastest).
inline std::vector<std::uint64_t> logical_offsets(const TensorDesc& d) {
    const auto st = qdml::effective_strides(d);
    std::vector<std::uint64_t> offs{0};
    for (std::uint32_t dim = 0; dim < d.DimensionCount; ++dim) {
        std::vector<std::uint64_t> next;
        for (auto o : offs)
            for (std::uint32_t i = 0; i < d.Sizes[dim]; ++i) next.push_back(o + i * st[dim]);
        offs.swap(next);
    }
    return offs;
}

inline void store(DT t, void* base, std::uint64_t i, double v) {
    auto in_range = [&](double lo, double hi) {
        INFO("value " << v << " does not fit " << qdml::name(t));
        REQUIRE((v >= lo && v <= hi && v == static_cast<double>(static_cast<long long>(v))));
    };
    switch (t) {
        case DT::Int8: in_range(-128, 127); static_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(v); break;
        case DT::UInt8: in_range(0, 255); static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(v); break;
        case DT::Int16: in_range(-32768, 32767); static_cast<std::int16_t*>(base)[i] = static_cast<std::int16_t>(v); break;
        case DT::Int32:
            in_range(-2147483648.0, 2147483647.0);
            static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v);
            break;
        case DT::Float32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
        case DT::Float16: static_cast<std::uint16_t*>(base)[i] = 0x3c00; break;  // 1.0; only used to be rejected
        default: FAIL("store: unsupported type in test helper");
    }
}

inline long long load_int(DT t, const void* base, std::uint64_t i) {
    switch (t) {
        case DT::Int8: return static_cast<const std::int8_t*>(base)[i];
        case DT::UInt8: return static_cast<const std::uint8_t*>(base)[i];
        case DT::Int32: return static_cast<const std::int32_t*>(base)[i];
        default: FAIL("load_int: unsupported type in test helper"); return 0;
    }
}

/// Owns every buffer of one test. Addresses stay valid for its lifetime.
class Pool {
public:
    /// `values` are the buffer contents in buffer order (min_buffer_elements
    /// of them); strided gaps therefore get explicit values too.
    Tensor raw(DT t, const Dims& sizes, const Values& values, const Dims& strides = {}) {
        Tensor x = alloc(desc(t, sizes, strides));
        const auto n = qdml::min_buffer_elements(x.Desc).value_or(0);
        INFO("raw buffer for " << qdml::name(t) << " needs " << n << " values");
        REQUIRE(values.size() == n);
        for (std::uint64_t i = 0; i < n; ++i) store(t, x.Data, i, values[i]);
        return x;
    }

    /// `values` in logical row-major order, written through the strides;
    /// buffer positions no element addresses hold `filler`.
    Tensor logical(DT t, const Dims& sizes, const Values& values, const Dims& strides = {}, double filler = 0) {
        Tensor x = alloc(desc(t, sizes, strides));
        const auto n = qdml::min_buffer_elements(x.Desc).value_or(0);
        for (std::uint64_t i = 0; i < n; ++i) store(t, x.Data, i, filler);
        const auto offs = logical_offsets(x.Desc);
        REQUIRE(values.size() == offs.size());
        for (std::size_t i = 0; i < offs.size(); ++i) store(t, x.Data, offs[i], values[i]);
        return x;
    }

    /// One element (per-tensor parameter) with `dims` dimensions of size 1.
    Tensor scalar(DT t, double v, std::size_t dims = 1) { return raw(t, Dims(dims, 1u), {v}); }

    /// An output: sentinel-filled buffer.
    Tensor output(DT t, const Dims& sizes, const Dims& strides = {}) { return alloc(desc(t, sizes, strides)); }

    /// A tensor aliasing `base`'s buffer at element offset `elem_offset`.
    static Tensor alias(const Tensor& base, DT t, const Dims& sizes, std::uint64_t elem_offset = 0,
                        const Dims& strides = {}) {
        Tensor x{desc(t, sizes, strides), static_cast<std::uint8_t*>(base.Data) + elem_offset * qdml::element_size(t)};
        return x;
    }

    /// Logical values of an integer tensor; also asserts that no byte of its
    /// allocation outside the addressed elements (gaps, guards) changed.
    std::vector<long long> read(const Tensor& x) const {
        const Buf* b = find(x.Data);
        REQUIRE(b != nullptr);
        const auto offs = logical_offsets(x.Desc);
        const std::uint32_t es = qdml::element_size(x.Desc.DataType);
        std::vector<bool> addressed(b->bytes.size(), false);
        for (auto o : offs)
            for (std::uint32_t k = 0; k < es; ++k) addressed[kGuard + o * es + k] = true;
        std::size_t changed = 0, first = 0;
        for (std::size_t i = 0; i < b->bytes.size(); ++i)
            if (!addressed[i] && b->bytes[i] != kSentinel && changed++ == 0) first = i;
        INFO("first changed byte outside the output view at buffer byte " << static_cast<long long>(first) -
                                                                                 static_cast<long long>(kGuard));
        CHECK(changed == 0);
        std::vector<long long> v;
        for (auto o : offs) v.push_back(load_int(x.Desc.DataType, x.Data, o));
        return v;
    }

private:
    struct Buf {
        std::vector<std::uint8_t> bytes;
    };
    std::deque<Buf> bufs_;

    Tensor alloc(const TensorDesc& d) {
        bufs_.emplace_back();
        auto& b = bufs_.back().bytes;
        // over-allocate so that Data can be 16-byte aligned
        b.assign(kGuard + d.TotalTensorSizeInBytes + kGuard, kSentinel);
        REQUIRE(reinterpret_cast<std::uintptr_t>(b.data()) % 8 == 0);
        return Tensor{d, b.data() + kGuard};
    }
    const Buf* find(const void* p) const {
        for (const auto& b : bufs_)
            if (b.bytes.data() + kGuard == p) return &b;
        return nullptr;
    }
};

/// The member named by the first validation error, or "<valid>".
template <class Desc>
std::string rejected_member(const Desc& d, qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
    try {
        qdml::validate(d, level);
    } catch (const qdml::Error& e) {
        UNSCOPED_INFO("error: " << e.what());
        CHECK(e.operator_name() == std::string(Desc::OperatorName));
        return e.member();
    }
    return "<valid>";
}

/// 128 for UINT8, 0 for INT8: the same quantized value in the other type.
inline int shift(DT t) { return t == DT::UInt8 ? 128 : 0; }

inline Values shifted(Values v, DT t) {
    for (auto& x : v) x += shift(t);
    return v;
}

inline std::vector<long long> shifted(std::vector<long long> v, DT t) {
    for (auto& x : v) x += shift(t);
    return v;
}

inline const DT kQ8[2] = {DT::Int8, DT::UInt8};

}  // namespace qtest
