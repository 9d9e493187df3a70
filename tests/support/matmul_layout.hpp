// tests/support/matmul_layout.hpp - what the matmul differential tests
// (simd-gemm's QUANTIZED_LINEAR_MATRIX_MULTIPLY and MATRIX_MULTIPLY_INTEGER)
// share: operand layouts (transposed, padded, broadcast through zero
// strides) as tensor descs, and parameter tensors per tensor / row / column.
#pragma once

#include <cstdint>

#include "qdml/qdml.hpp"
#include "support/buffers.hpp"

namespace qtest::matmul_layout {

using qdml::TensorDesc;
using DT = qdml::TensorDataType;

/// A 4-D layout (right-aligned to `rank` dims): transposed (the two matrix
/// dimensions swapped in memory), padded rows, broadcast batch / channel,
/// every row the first one (a row stride of 0; not with `transposed`).
struct Layout {
    bool transposed = false;
    std::uint32_t pad = 0;
    bool bcast_batch = false, bcast_channel = false, bcast_rows = false;
};

inline TensorDesc make_desc(DT t, std::uint32_t rank, const std::uint32_t (&s)[4], const Layout& l) {
    const std::uint64_t rows = s[2], cols = s[3];
    std::uint64_t st[4];
    if (l.transposed) {
        st[2] = 1;
        st[3] = rows + l.pad;
    } else {
        st[3] = 1;
        st[2] = l.bcast_rows ? 0 : cols + l.pad;
    }
    const std::uint64_t matrix = (rows - 1) * st[2] + (cols - 1) * st[3] + 1 + l.pad;
    st[1] = l.bcast_channel ? 0 : matrix;
    st[0] = l.bcast_batch ? 0 : matrix * (l.bcast_channel ? 1 : s[1]);
    TensorDesc d;
    d.DataType = t;
    d.DimensionCount = rank;
    d.Strides.emplace();
    for (std::uint32_t i = 0; i < rank; ++i) {
        d.Sizes[i] = s[4 - rank + i];
        (*d.Strides)[i] = static_cast<std::uint32_t>(st[4 - rank + i]);
    }
    d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
    return d;
}

inline TensorDesc param_desc(DT t, std::uint32_t rank, std::uint32_t axis, std::uint32_t extent) {
    TensorDesc d;
    d.DataType = t;
    d.DimensionCount = rank;
    for (std::uint32_t i = 0; i < rank; ++i) d.Sizes[i] = 1;
    if (extent > 1) d.Sizes[rank - 4 + axis] = extent;
    d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
    return d;
}

inline Layout random_layout(Rng& rng, bool output) {
    Layout l;
    l.transposed = rng.coin(3);
    l.pad = rng.coin(3) ? rng.uniform(1, 9) : 0;
    if (!output) {
        l.bcast_batch = rng.coin(3);
        l.bcast_channel = rng.coin(3);
        l.bcast_rows = !l.transposed && rng.coin(8);
    }
    return l;
}

}  // namespace qtest::matmul_layout
