// The runtime dispatch of ElementWiseQuantizeLinear and Quantize, compiled
// once for qdml's own programs (built with QDML_EXTERN_DISPATCH:
// runtime/dispatch.hpp). In one translation unit because QUANTIZE's 8-bit
// forms run QUANTIZE_LINEAR's row kernels (g++ 12 -O3: 36.3 + 43.3 s apart,
// 55.4 s here). (DYNAMIC_QUANTIZE_LINEAR shares some of them too, but stays
// apart: the ThreadSanitizer build compiles it alone, tests/meson.build.)
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_DISPATCH(qdml::ElementWiseQuantizeLinearDesc)
QDML_INSTANTIATE_DISPATCH(qdml::QuantizeDesc)
