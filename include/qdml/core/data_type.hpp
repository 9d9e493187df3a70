// qdml/core/data_type.hpp - DML_TENSOR_DATA_TYPE mirror, type traits and
// compile-time visitors over the runtime data type (docs/semantics.md section 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "qdml/core/error.hpp"
#include "qdml/core/float16.hpp"

namespace qdml {

/// Mirrors DML_TENSOR_DATA_TYPE, with DirectML's numeric values.
enum class TensorDataType : std::uint32_t {
    Unknown = 0,
    Float32 = 1,
    Float16 = 2,
    UInt32 = 3,
    UInt16 = 4,
    UInt8 = 5,
    Int32 = 6,
    Int16 = 7,
    Int8 = 8,
    Float64 = 9,
    UInt64 = 10,
    Int64 = 11,
    UInt4 = 12,  // DML_TARGET_VERSION >= 0x6300: two elements a byte, the first in the low nibble
    Int4 = 13,   // DML_TARGET_VERSION >= 0x6300
};

/// The DML name without its prefix ("UINT8"), or "UNKNOWN".
constexpr std::string_view name(TensorDataType t) noexcept {
    switch (t) {
        case TensorDataType::Float32: return "FLOAT32";
        case TensorDataType::Float16: return "FLOAT16";
        case TensorDataType::UInt32: return "UINT32";
        case TensorDataType::UInt16: return "UINT16";
        case TensorDataType::UInt8: return "UINT8";
        case TensorDataType::Int32: return "INT32";
        case TensorDataType::Int16: return "INT16";
        case TensorDataType::Int8: return "INT8";
        case TensorDataType::Float64: return "FLOAT64";
        case TensorDataType::UInt64: return "UINT64";
        case TensorDataType::Int64: return "INT64";
        case TensorDataType::UInt4: return "UINT4";
        case TensorDataType::Int4: return "INT4";
        default: return "UNKNOWN";
    }
}

/// Parses a DML data type name without prefix; nullopt when unknown.
inline std::optional<TensorDataType> parse_data_type(std::string_view s) noexcept {
    for (std::uint32_t v = 1; v <= 13; ++v) {
        auto t = static_cast<TensorDataType>(v);
        if (name(t) == s) return t;
    }
    return std::nullopt;
}

/// Element size in bits; 0 for Unknown or an out-of-range value.
constexpr std::uint32_t element_bits(TensorDataType t) noexcept {
    switch (t) {
        case TensorDataType::Int4:
        case TensorDataType::UInt4: return 4;
        case TensorDataType::Int8:
        case TensorDataType::UInt8: return 8;
        case TensorDataType::Float16:
        case TensorDataType::Int16:
        case TensorDataType::UInt16: return 16;
        case TensorDataType::Float32:
        case TensorDataType::Int32:
        case TensorDataType::UInt32: return 32;
        case TensorDataType::Float64:
        case TensorDataType::Int64:
        case TensorDataType::UInt64: return 64;
        default: return 0;
    }
}

/// Whether `t` packs two elements a byte (UINT4, INT4).
constexpr bool is_4bit(TensorDataType t) noexcept { return element_bits(t) == 4; }

/// Element size in whole bytes; 0 for Unknown, an out-of-range value and the
/// 4-bit types (which have no byte of their own: element_bits, byte_count).
constexpr std::uint32_t element_size(TensorDataType t) noexcept {
    switch (t) {
        case TensorDataType::Int8:
        case TensorDataType::UInt8: return 1;
        case TensorDataType::Float16:
        case TensorDataType::Int16:
        case TensorDataType::UInt16: return 2;
        case TensorDataType::Float32:
        case TensorDataType::Int32:
        case TensorDataType::UInt32: return 4;
        case TensorDataType::Float64:
        case TensorDataType::Int64:
        case TensorDataType::UInt64: return 8;
        default: return 0;
    }
}

constexpr bool is_float(TensorDataType t) noexcept {
    return t == TensorDataType::Float32 || t == TensorDataType::Float16 ||
           t == TensorDataType::Float64;
}

/// The bytes `elements` elements of `t` take: half a byte an element for the
/// 4-bit types (rounded up), element_size(t) each otherwise.
constexpr std::uint64_t byte_count(TensorDataType t, std::uint64_t elements) noexcept {
    return is_4bit(t) ? elements / 2 + (elements & 1) : elements * element_size(t);
}

/// The alignment a buffer of `t` needs: its element size, 1 byte for the 4-bit types.
constexpr std::uint32_t element_alignment(TensorDataType t) noexcept { return is_4bit(t) ? 1 : element_size(t); }

/// The element types of DML_TENSOR_DATA_TYPE_INT4 and UINT4, as template
/// arguments only: a tensor of them is bytes, two elements each (the first
/// in the low nibble), read and written through TensorView's 4-bit form.
template <bool Signed>
struct nibble {
    std::uint8_t byte;  // never an element of its own: the type of TensorView<nibble>::data
};
using int4 = nibble<true>;
using uint4 = nibble<false>;

template <class T> struct is_nibble : std::false_type {};
template <bool S> struct is_nibble<nibble<S>> : std::true_type {};
template <class T> inline constexpr bool is_nibble_v = is_nibble<std::remove_cv_t<T>>::value;

/// The range of an integer element type as int64: numeric_limits for the
/// built-in ones, -8..7 (INT4) and 0..15 (UINT4).
template <class T>
struct value_range {
    static constexpr std::int64_t lo = static_cast<std::int64_t>(std::numeric_limits<T>::min());
    static constexpr std::int64_t hi = static_cast<std::int64_t>(std::numeric_limits<T>::max());
};
template <>
struct value_range<int4> {
    static constexpr std::int64_t lo = -8, hi = 7;
};
template <>
struct value_range<uint4> {
    static constexpr std::int64_t lo = 0, hi = 15;
};

template <class T> struct type_tag { using type = T; };

namespace detail {
template <class T> struct data_type_of_impl;
#define QDML_DATA_TYPE_OF(T, V) \
    template <> struct data_type_of_impl<T> { static constexpr TensorDataType value = TensorDataType::V; }
QDML_DATA_TYPE_OF(float, Float32);
QDML_DATA_TYPE_OF(float16, Float16);
QDML_DATA_TYPE_OF(std::int8_t, Int8);
QDML_DATA_TYPE_OF(std::uint8_t, UInt8);
QDML_DATA_TYPE_OF(std::int16_t, Int16);
QDML_DATA_TYPE_OF(std::uint16_t, UInt16);
QDML_DATA_TYPE_OF(std::int32_t, Int32);
QDML_DATA_TYPE_OF(std::uint32_t, UInt32);
QDML_DATA_TYPE_OF(std::int64_t, Int64);
QDML_DATA_TYPE_OF(std::uint64_t, UInt64);
QDML_DATA_TYPE_OF(int4, Int4);
QDML_DATA_TYPE_OF(uint4, UInt4);
#undef QDML_DATA_TYPE_OF
}  // namespace detail

/// The TensorDataType of a C++ element type.
template <class T>
inline constexpr TensorDataType data_type_of = detail::data_type_of_impl<std::remove_cv_t<T>>::value;

namespace detail {
template <class T, class... Rest, class F>
decltype(auto) visit_one_of_matching(TensorDataType t, F&& f) {
    if constexpr (sizeof...(Rest) == 0) {
        return f(type_tag<T>{});
    } else {
        if (t == data_type_of<T>) return f(type_tag<T>{});
        return visit_one_of_matching<Rest...>(t, static_cast<F&&>(f));
    }
}
}  // namespace detail

/// Calls f(type_tag<T>{}) for the T among Ts whose data type is `t`; throws
/// qdml::Error when none is (a desc that did not pass validation).
template <class... Ts, class F>
decltype(auto) visit_one_of(TensorDataType t, F&& f) {
    static_assert(sizeof...(Ts) > 0, "visit_one_of: no types");
    if (!((t == data_type_of<Ts>) || ...)) {
        std::string allowed;
        for (auto a : {data_type_of<Ts>...}) (allowed += allowed.empty() ? "" : ", ") += name(a);
        throw Error("qdml", "DataType",
                    detail::cat(name(t), " (", static_cast<std::uint32_t>(t), ") is none of ", allowed,
                                "; validate the desc first"));
    }
    return detail::visit_one_of_matching<Ts...>(t, static_cast<F&&>(f));
}

/// Calls f(type_tag<T>{}) for any of the ten supported data types.
template <class F>
decltype(auto) visit_data_type(TensorDataType t, F&& f) {
    return visit_one_of<float16, std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t,
                        std::uint32_t, std::int64_t, std::uint64_t, float>(t, static_cast<F&&>(f));
}

namespace detail {
template <std::size_t N, std::size_t Hi, class F>
decltype(auto) visit_rank_from(std::size_t n, F&& f) {
    if constexpr (N == Hi) {
        return f(std::integral_constant<std::size_t, N>{});
    } else {
        if (n == N) return f(std::integral_constant<std::size_t, N>{});
        return visit_rank_from<N + 1, Hi>(n, static_cast<F&&>(f));
    }
}
}  // namespace detail

/// Calls f(std::integral_constant<std::size_t, N>{}) for N = n in [Lo, Hi];
/// throws qdml::Error for an n outside that range.
template <std::size_t Lo, std::size_t Hi, class F>
decltype(auto) visit_rank(std::size_t n, F&& f) {
    static_assert(Lo <= Hi, "visit_rank: empty range");
    if (n < Lo || n > Hi)
        throw Error("qdml", "DimensionCount", detail::cat(n, " is outside ", Lo, "..", Hi, "; validate the desc first"));
    return detail::visit_rank_from<Lo, Hi>(n, static_cast<F&&>(f));
}

}  // namespace qdml
