// The runtime dispatch of MatrixMultiplyInteger, compiled once for qdml's own programs
// (built with QDML_EXTERN_DISPATCH: runtime/dispatch.hpp).
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_DISPATCH(qdml::MatrixMultiplyIntegerDesc)
// The engine's int32 driver, which MATRIX_MULTIPLY_INTEGER_TO_FLOAT calls too
// (QDML_EXTERN_INTEGER_MATMUL in qdml's programs: runtime/dispatch.hpp).
QDML_INSTANTIATE_INTEGER_MATMUL()
