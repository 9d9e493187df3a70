// qdml/core/shape.hpp - shape rules the 4-D operators share (matmul and
// convolution): tensors seen right-aligned to 4-D, and the allowed shapes of
// a scale, zero-point or bias tensor (docs/semantics.md sections 5 and 6).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "qdml/core/error.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml::detail {

/// Sizes of `d` right-aligned to 4-D, with the strides that go with them
/// (leading dimensions of size 1, stride 0). A desc of more than 4
/// dimensions gives all ones: callers reject it first.
inline void aligned4(const TensorDesc& d, std::uint32_t (&sizes)[4], std::uint64_t (&strides)[4]) {
    const auto st = effective_strides(d);
    for (std::uint32_t i = 0; i < 4; ++i) {
        sizes[i] = 1;
        strides[i] = 0;
    }
    if (d.DimensionCount > 4) return;
    for (std::uint32_t i = 0; i < d.DimensionCount; ++i) {
        sizes[4 - d.DimensionCount + i] = d.Sizes[i];
        strides[4 - d.DimensionCount + i] = st[i];
    }
}

/// A scale or zero-point tensor of matmul/convolution: right-aligned to 4-D,
/// every dimension is 1, except `axis`, which may also be `extent`
/// (per row / column / channel); a dimension with Strides 0 may instead
/// have the size of `full` there (the same value repeated).
inline void quantization_param_shape(const Validator& v, std::string_view m, const Tensor& t, std::uint32_t axis,
                                     std::uint32_t extent, const std::uint32_t (&full)[4], const char* form) {
    v.require(t.Desc.DimensionCount <= 4, m,
              [&] { return detail::cat("DimensionCount ", t.Desc.DimensionCount, " must be at most 4"); });
    std::uint32_t sizes[4];
    std::uint64_t strides[4];
    aligned4(t.Desc, sizes, strides);
    for (std::uint32_t i = 0; i < 4; ++i) {
        const bool ok = sizes[i] == 1 || (i == axis && sizes[i] == extent) || (strides[i] == 0 && sizes[i] == full[i]);
        v.require(ok, m, [&] { return "Sizes " + sizes_str(t.Desc) + " must be {1,1,1,1} (per tensor) or " + form; });
    }
}

/// The A {.., M, K}, B {.., K, N} and Output {.., M, N} rules of the matrix
/// multiplications (docs/semantics.md sections 5 and 12): one
/// DimensionCount, B's K equal to A's, the output's last two sizes {M, N},
/// batch and channel sizes equal to the output's (a shared operand is
/// expressed through zero strides). Sets `o` to the output's sizes
/// right-aligned to 4-D; returns {M, N}.
inline std::pair<std::uint32_t, std::uint32_t> matmul_shapes(const Validator& v, const Tensor& A, const Tensor& B,
                                                             const Tensor& Out, std::uint32_t (&o)[4]) {
    v.same_dimension_count("BTensor", B, "ATensor", A);
    v.same_dimension_count("OutputTensor", Out, "ATensor", A);
    std::uint32_t a[4], b[4];
    std::uint64_t unused[4];
    aligned4(A.Desc, a, unused);
    aligned4(B.Desc, b, unused);
    aligned4(Out.Desc, o, unused);
    const std::uint32_t M = a[2], K = a[3], N = b[3];
    v.require(b[2] == K, "BTensor", [&] {
        return cat("Sizes ", sizes_str(B.Desc), ": rows (K) ", b[2], " must equal ATensor's columns (K) ", K);
    });
    v.require(o[2] == M && o[3] == N, "OutputTensor", [&] {
        return cat("Sizes ", sizes_str(Out.Desc), " must end in {M, N} = {", M, ", ", N, "}");
    });
    for (std::uint32_t i = 0; i < 2; ++i) {
        v.require(a[i] == o[i], "ATensor", [&] {
            return cat("Sizes ", sizes_str(A.Desc), ": batch dimension ", a[i], " must equal OutputTensor's ", o[i],
                       " (broadcast through zero Strides)");
        });
        v.require(b[i] == o[i], "BTensor", [&] {
            return cat("Sizes ", sizes_str(B.Desc), ": batch dimension ", b[i], " must equal OutputTensor's ", o[i],
                       " (broadcast through zero Strides)");
        });
    }
    return {M, N};
}

}  // namespace qdml::detail
