// qdml/simd/gemm/kernel_generic.hpp - the portable micro-kernel (every CPU,
// AArch64 included): the same packed panels and epilogue constants as the
// vector kernels, in plain C++ with a wrapping uint32 accumulator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"

namespace qdml::simd::gemm::generic {

inline constexpr int kRows = 4;  ///< rows per block (Groups4 layout)
inline constexpr LeftLayout kLayout = LeftLayout::Groups4;

/// Rows m0..m0+mr-1 times panel p, requantized into the output.
template <class TOut>
void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
          std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    std::uint32_t acc[kRows][kPanel] = {};
    for (std::size_t g = 0; g < b.groups; ++g, pa += 4 * mr, pb += 64)
        for (std::size_t r = 0; r < mr; ++r)
            for (std::size_t j = 0; j < kPanel; ++j)
                for (std::size_t t = 0; t < 4; ++t)
                    acc[r][j] += static_cast<std::uint32_t>(std::int32_t{pa[4 * r + t]} * std::int32_t{pb[4 * j + t]});
    const std::size_t n0 = p * kPanel, nc = e.N - n0 < kPanel ? e.N - n0 : kPanel;
    for (std::size_t r = 0; r < mr; ++r)
        for (std::size_t j = 0; j < nc; ++j) store_one<TOut>(e, m0 + r, n0 + j, acc[r][j]);
}

}  // namespace qdml::simd::gemm::generic
