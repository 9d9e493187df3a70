// tests/support/tensors.hpp - tensors of the operator unit tests: descs,
// values stored and loaded by data type, the Pool that binds them to
// guarded buffers (buffers.hpp) and reads outputs back after checking that
// nothing outside an output view was written; validation error helpers.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/buffers.hpp"

namespace qtest {

/// RunOptions in the exact profile (docs/semantics.md sections 0-9, which
/// the operator tests' hand-derived values follow; the default profile is
/// directml, section 10, tested by test_fidelity.cpp and tests/data/directml).
inline qdml::RunOptions exact(qdml::Implementation impl = qdml::RunOptions{}.implementation,
                              qdml::FeatureLevel level = qdml::FeatureLevel::Latest) {
    qdml::RunOptions o;
    o.implementation = impl;
    o.feature_level = level;
    o.fidelity = qdml::Fidelity::Exact;
    return o;
}

using qdml::Tensor;
using qdml::TensorDesc;
using DT = qdml::TensorDataType;
using Dims = std::vector<std::uint32_t>;
using Values = std::vector<double>;

/// A scale, zero-point or bias tensor of a test desc: sizes, raw buffer
/// values, optional strides.
struct Param {
    Dims sizes;
    Values values;
    Dims strides{};
};
/// One value per channel of an NCHW tensor: Sizes {1, C, 1, 1}.
inline Param per_channel(const Values& v) { return {{1, static_cast<std::uint32_t>(v.size()), 1, 1}, v}; }

/// A desc with the minimum TotalTensorSizeInBytes (strides empty = packed).
inline TensorDesc desc(DT t, const Dims& sizes, const Dims& strides = {}) { return make_desc(t, sizes, strides); }

inline void store(DT t, void* base, std::uint64_t i, double v) {
    auto in_range = [&](double lo, double hi) {
        INFO("value " << v << " does not fit " << qdml::name(t));
        REQUIRE((v >= lo && v <= hi && v == static_cast<double>(static_cast<long long>(v))));
    };
    switch (t) {
        case DT::Int8: in_range(-128, 127); static_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(v); break;
        case DT::UInt8: in_range(0, 255); static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(v); break;
        case DT::Int16: in_range(-32768, 32767); static_cast<std::int16_t*>(base)[i] = static_cast<std::int16_t>(v); break;
        case DT::UInt16: in_range(0, 65535); static_cast<std::uint16_t*>(base)[i] = static_cast<std::uint16_t>(v); break;
        case DT::UInt32:
            in_range(0, 4294967295.0);
            static_cast<std::uint32_t*>(base)[i] = static_cast<std::uint32_t>(v);
            break;
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

/// Owns every buffer of one test (guarded, sentinel-filled: buffers.hpp).
/// Two forms of contents: `Values` (doubles, stored as the tensor's type,
/// for the integer operators) and typed vectors (any element type, bit for
/// bit, for dequantize and clip). Reading an output back checks that no
/// byte outside it changed and that every guard of the pool holds.
class Pool : public GuardedPool {
public:
    /// `values` are the buffer contents in buffer order (min_buffer_elements
    /// of them); strided gaps therefore get explicit values too.
    Tensor raw(DT t, const Dims& sizes, const Values& values, const Dims& strides = {}) {
        Tensor x = output(t, sizes, strides);
        const auto n = qdml::min_buffer_elements(x.Desc).value_or(0);
        INFO("raw buffer for " << qdml::name(t) << " needs " << n << " values");
        REQUIRE(values.size() == n);
        for (std::uint64_t i = 0; i < n; ++i) store(t, x.Data, i, values[i]);
        return x;
    }
    /// The same with typed elements (T: the C++ type of the DML data type).
    template <class T>
    Tensor raw(const Dims& sizes, const std::vector<T>& buf, const Dims& strides = {}) {
        Tensor x = output(qdml::data_type_of<T>, sizes, strides);
        REQUIRE(buf.size() == qdml::min_buffer_elements(x.Desc).value_or(0));
        std::memcpy(x.Data, buf.data(), buf.size() * sizeof(T));
        return x;
    }

    /// `values` in logical row-major order, written through the strides;
    /// buffer positions no element addresses hold `filler`.
    Tensor logical(DT t, const Dims& sizes, const Values& values, const Dims& strides = {}, double filler = 0) {
        Tensor x = output(t, sizes, strides);
        const auto n = qdml::min_buffer_elements(x.Desc).value_or(0);
        for (std::uint64_t i = 0; i < n; ++i) store(t, x.Data, i, filler);
        const auto offs = logical_offsets(x.Desc);
        REQUIRE(values.size() == offs.size());
        for (std::size_t i = 0; i < offs.size(); ++i) store(t, x.Data, offs[i], values[i]);
        return x;
    }
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

    /// One element (per-tensor parameter) with `dims` dimensions of size 1.
    Tensor scalar(DT t, double v, std::size_t dims = 1) { return raw(t, Dims(dims, 1u), {v}); }

    /// An output: a sentinel-filled buffer with the minimum size of the desc.
    Tensor output(DT t, const Dims& sizes, const Dims& strides = {}) {
        Tensor x = tensor(desc(t, sizes, strides));
        REQUIRE(reinterpret_cast<std::uintptr_t>(x.Data) % 8 == 0);  // any element type's alignment
        return x;
    }

    /// A tensor aliasing `base`'s buffer at element offset `elem_offset`.
    static Tensor alias(const Tensor& base, DT t, const Dims& sizes, std::uint64_t elem_offset = 0,
                        const Dims& strides = {}) {
        Tensor x{desc(t, sizes, strides), static_cast<std::uint8_t*>(base.Data) + elem_offset * qdml::element_size(t)};
        return x;
    }

    /// Logical values of an integer tensor of this pool, after the checks.
    std::vector<long long> read(const Tensor& x) const {
        check_after_call(x);
        std::vector<long long> v;
        for (auto o : logical_offsets(x.Desc)) v.push_back(load_int(x.Desc.DataType, x.Data, o));
        return v;
    }
    /// Logical values (row-major) of a tensor of element type T, after the checks.
    template <class T>
    std::vector<T> read(const Tensor& x) const {
        REQUIRE(x.Desc.DataType == qdml::data_type_of<T>);
        check_after_call(x);
        std::vector<T> v;
        for (auto o : logical_offsets(x.Desc)) v.push_back(static_cast<const T*>(x.Data)[o]);
        return v;
    }

private:
    /// No byte of x's buffer outside the addressed elements (gaps, guards)
    /// changed, and every guard of the pool holds.
    void check_after_call(const Tensor& x) const {
        std::ptrdiff_t first = 0;
        const std::size_t changed = changed_outside(x, &first);
        INFO(changed << " bytes outside the output view changed, the first at byte " << first << " from its start");
        CHECK(changed == 0);
        check_guards();
    }
};

/// The member named by the first validation error of the directml profile
/// (docs/semantics.md section 10: DirectML's own refusals too), or "<valid>".
template <class Desc>
std::string rejected_member_directml(const Desc& d) {
    try {
        qdml::validate(d, qdml::FeatureLevel::Latest, qdml::Fidelity::DirectML);
    } catch (const qdml::Error& e) {
        UNSCOPED_INFO("error: " << e.what());
        return e.member();
    }
    return "<valid>";
}

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
