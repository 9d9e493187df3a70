// qdml/simd/options.hpp - the options of the typed SIMD calls.
#pragma once

#include "qdml/simd/isa.hpp"

namespace qdml::simd {

/// Options of the SIMD GEMM paths (matrix multiplication and convolution).
struct GemmOptions {
    /// Caps the ISA path (as QDML_ISA does); Best: QDML_ISA, else the best the CPU runs.
    Isa isa = Isa::Best;
};

}  // namespace qdml::simd
