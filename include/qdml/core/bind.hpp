// qdml/core/bind.hpp - what a typed operator's bind() checks before it makes
// a view: the member's data type is the template's element type, and its
// DimensionCount fits the template's rank (views are right-aligned).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "qdml/core/data_type.hpp"
#include "qdml/core/error.hpp"
#include "qdml/core/tensor.hpp"

namespace qdml::detail {

/// A rank-N view of member `m` of operator `op` with element type T (const
/// for inputs); throws qdml::Error when the member's DataType is not T's or
/// its DimensionCount is not in 1..N. Precondition: the desc was validated.
template <class T, std::size_t N>
TensorView<T, N> bind_view(std::string_view op, std::string_view m, const Tensor& t) {
    constexpr TensorDataType want = data_type_of<std::remove_const_t<T>>;
    if (t.Desc.DataType != want)
        throw Error(std::string(op), std::string(m),
                    cat("DataType ", name(t.Desc.DataType), " does not match the typed operator's element type ",
                        name(want)));
    if (t.Desc.DimensionCount < 1 || t.Desc.DimensionCount > N)
        throw Error(std::string(op), std::string(m),
                    cat("DimensionCount ", t.Desc.DimensionCount, " does not fit the typed operator's rank ", N,
                        " (1..", N, ", right-aligned)"));
    return make_view<T, N>(t);
}

/// The same for an optional member: nullopt when it is absent.
template <class T, std::size_t N>
std::optional<TensorView<T, N>> bind_view(std::string_view op, std::string_view m, const OptionalTensor& t) {
    if (!t) return std::nullopt;
    return bind_view<T, N>(op, m, *t);
}

/// A scale, zero-point or bias view, broadcast to the output's `sizes`
/// (matmul and convolution: a dimension of size 1 gets stride 0).
template <class T, std::size_t N>
TensorView<T, N> bind_param(std::string_view op, std::string_view m, const Tensor& t,
                            const std::array<std::uint32_t, N>& sizes) {
    return broadcast_to(bind_view<T, N>(op, m, t), sizes);
}

template <class T, std::size_t N>
std::optional<TensorView<T, N>> bind_param(std::string_view op, std::string_view m, const OptionalTensor& t,
                                           const std::array<std::uint32_t, N>& sizes) {
    if (!t) return std::nullopt;
    return bind_param<T, N>(op, m, *t, sizes);
}

}  // namespace qdml::detail
