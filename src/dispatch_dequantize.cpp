// The runtime dispatch of DequantizeDesc, compiled once for qdml's own programs
// (built with QDML_EXTERN_DISPATCH: runtime/dispatch.hpp).
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_DISPATCH(qdml::DequantizeDesc)
