// The runtime dispatch of ElementWiseDequantizeLinear and Dequantize,
// compiled once for qdml's own programs (built with QDML_EXTERN_DISPATCH:
// runtime/dispatch.hpp). In one translation unit because DEQUANTIZE's 8-bit
// forms run ELEMENT_WISE_DEQUANTIZE_LINEAR's row kernels (g++ 12 -O3: 55.8 +
// 46.6 s apart, 84.2 s here).
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_DISPATCH(qdml::ElementWiseDequantizeLinearDesc)
QDML_INSTANTIATE_DISPATCH(qdml::DequantizeDesc)
