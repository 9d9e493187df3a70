// The GEMM engine's x86 tiles, compiled once for qdml's own programs (built
// with QDML_EXTERN_GEMM_KERNELS: runtime/dispatch.hpp), which every GEMM
// operator's dispatch file calls.
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_GEMM_KERNELS()
