// The runtime dispatch of QuantizedLinearConvolution and ConvolutionInteger,
// compiled once for qdml's own programs (built with QDML_EXTERN_DISPATCH:
// runtime/dispatch.hpp). In one translation unit because both run the
// convolution forms and the depthwise kernels (simd/conv/) with the same
// types (g++ 12 -O3: 58.6 + 23.5 s apart, 65.1 s here).
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_DISPATCH(qdml::QuantizedLinearConvolutionDesc)
QDML_INSTANTIATE_DISPATCH(qdml::ConvolutionIntegerDesc)
