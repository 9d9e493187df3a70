// qdml/simd/conv/interleave.hpp - one k group of four implicit-GEMM rows into
// the engine's panels, in portable C++ (conv/patches.hpp; the vector forms
// in simd/x86/<isa>/patches.hpp finish their edges with it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/gemm/types.hpp"

namespace qdml::simd::conv::detail {

/// One k group of a right operand into its panels: rows r0..r3 (`width`
/// bytes each, a multiple of 16, as in the tensor) become b' bytes (xor
/// `flip`), column j's four bytes one 32-bit word of its panel's group g,
/// and the column sums (mod 2^32) take the four b' values.
inline void interleave_group(const std::uint8_t* r0, const std::uint8_t* r1, const std::uint8_t* r2,
                             const std::uint8_t* r3, std::size_t width, std::uint8_t flip, std::int8_t* panels,
                             std::size_t groups, std::size_t g, std::uint32_t* sum) noexcept {
    for (std::size_t n0 = 0; n0 < width; n0 += gemm::kPanel) {
        std::uint32_t words[gemm::kPanel];
        for (std::size_t j = 0; j < gemm::kPanel; ++j) {
            const std::size_t n = n0 + j;
            const std::uint8_t b0 = r0[n] ^ flip, b1 = r1[n] ^ flip, b2 = r2[n] ^ flip, b3 = r3[n] ^ flip;
            words[j] = std::uint32_t{b0} | std::uint32_t{b1} << 8 | std::uint32_t{b2} << 16 | std::uint32_t{b3} << 24;
            sum[n] += static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(b0)} + static_cast<std::int8_t>(b1) +
                                                 static_cast<std::int8_t>(b2) + static_cast<std::int8_t>(b3));
        }
        std::memcpy(panels + (n0 / gemm::kPanel * groups + g) * 64, words, 64);
    }
}

}  // namespace qdml::simd::conv::detail
