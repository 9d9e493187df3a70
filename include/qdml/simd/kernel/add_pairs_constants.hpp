// qdml/simd/kernel/add_pairs_constants.hpp - the per-call constants of the
// quantized add's integer decision (kernel/add_pairs.hpp has the portable
// block, x86/<isa>/elementwise.hpp the AVX2 and AVX-512 ones;
// simd/element_wise_quantized_linear_add.hpp derives them and proves it).
#pragma once

#include <cstdint>

namespace qdml::simd::kernel {

/// The per-call constants of add_pairs_block (see the add's AddPairs).
struct AddPairsConstants {
    std::int32_t k_hi = 0;  ///< word pair (KA >> 12, KB >> 12): low word multiplies A, high word B
    std::int32_t k_lo = 0;  ///< word pair (KA & 4095, KB & 4095)
    std::int32_t c = 0;     ///< C
    std::int32_t mask = 0;  ///< a lane with N & mask == 0 is uncertain
    int shift = 0;          ///< a certain lane's result is N >> shift
};

}  // namespace qdml::simd::kernel
