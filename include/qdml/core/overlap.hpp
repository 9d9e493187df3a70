// qdml/core/overlap.hpp - whether a strided layout maps two indices to one
// address (docs/semantics.md section 1: an output must not), decided exactly.
#pragma once

#include <array>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "qdml/core/tensor.hpp"

namespace qdml::detail {

/// One dimension of a layout: element stride and size.
struct StridedDim {
    std::uint64_t stride = 0;
    std::uint64_t size = 1;
};

/// True when the offsets dot(i, stride) of all indices i are pairwise
/// distinct. Precondition: every size >= 2 and stride >= 1, at most 8
/// dimensions, and the layout's span dot(size-1, stride) fits 64 bits
/// (what tensor validation checks).
///
/// Two indices collide exactly when some d != 0 with |d_k| < size_k has
/// sum d_k * stride_k == 0. Sort by stride; let k be the highest dimension
/// with d_k != 0. If stride_k exceeds the span of the dimensions below it,
/// |d_k * stride_k| is more than they can cancel. So only a dimension that
/// fails that classic test can top a collision, and the layout is
/// injective exactly when its prefix up to the last such dimension is. That
/// prefix is decided by two cheap rules and, if they do not settle it, by
/// visiting its offsets once with a bitmap over its span: at most one bit
/// per element of the bound buffer, and only for layouts this tangled.
inline bool offsets_distinct(std::array<StridedDim, kMaxDimensions> dims, std::uint32_t n) {
    for (std::uint32_t i = 1; i < n; ++i)  // insertion sort by stride (n <= 8)
        for (std::uint32_t j = i; j > 0 && dims[j].stride < dims[j - 1].stride; --j) std::swap(dims[j], dims[j - 1]);
    std::uint32_t prefix = 0;  // dimensions [0, prefix) hold every possible collision
    std::uint64_t span = 0;
    for (std::uint32_t k = 0; k < n; ++k) {
        if (dims[k].stride <= span) prefix = k + 1;
        span += (dims[k].size - 1) * dims[k].stride;
    }
    if (prefix == 0) return true;

    // Two dimensions alone collide when d_a = stride_b / g, d_b = -stride_a / g fit (g = gcd).
    for (std::uint32_t a = 0; a < prefix; ++a)
        for (std::uint32_t b = a + 1; b < prefix; ++b) {
            const std::uint64_t g = std::gcd(dims[a].stride, dims[b].stride);
            if (dims[b].stride / g < dims[a].size && dims[a].stride / g < dims[b].size) return false;
        }

    // More indices than addresses in the prefix's span: two must share one.
    std::uint64_t count = 1, prefix_span = 0;
    for (std::uint32_t k = 0; k < prefix; ++k) {
        count *= dims[k].size;  // <= the tensor's element count (< 2^32)
        prefix_span += (dims[k].size - 1) * dims[k].stride;
    }
    if (count > prefix_span + 1) return false;

    // Visit every offset of the prefix (odometer) and mark it.
    std::vector<std::uint64_t> seen(prefix_span / 64 + 1, 0);
    std::array<std::uint64_t, kMaxDimensions> i{};
    std::uint64_t offset = 0;
    for (;;) {
        std::uint64_t& word = seen[offset / 64];
        const std::uint64_t bit = std::uint64_t{1} << (offset % 64);
        if (word & bit) return false;
        word |= bit;
        std::uint32_t k = 0;
        for (; k < prefix; ++k) {
            if (++i[k] < dims[k].size) {
                offset += dims[k].stride;
                break;
            }
            offset -= (dims[k].size - 1) * dims[k].stride;
            i[k] = 0;
        }
        if (k == prefix) return true;
    }
}

}  // namespace qdml::detail
