// qdml/simd/options.hpp - the options of the typed SIMD calls.
#pragma once

#include "qdml/core/executor.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/simd/isa.hpp"

namespace qdml::simd {

/// Options of the typed SIMD calls (the GEMM paths of matrix multiplication
/// and convolution, and the element-wise loops).
struct GemmOptions {
    /// Caps the ISA path (as QDML_ISA does); Best: QDML_ISA, else the best
    /// the CPU runs. The element-wise loops map it with select_elementwise_isa.
    Isa isa = Isa::Best;
    /// The profile (docs/semantics.md section 10): every path computes both.
    Fidelity fidelity = kDefaultFidelity;
    /// The caller's thread pool (core/executor.hpp); default: the calling
    /// thread only. The bits do not depend on it.
    Executor executor = {};
};

}  // namespace qdml::simd
