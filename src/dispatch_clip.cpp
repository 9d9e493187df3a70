// The runtime dispatch of ElementWiseClip and ElementWiseClip1, compiled once
// for qdml's own programs (built with QDML_EXTERN_DISPATCH:
// runtime/dispatch.hpp). In one translation unit because CLIP1 runs CLIP's
// row kernels (simd/element_wise_clip.hpp): about a megabyte of code that
// two files compiled twice (g++ 12 -O3: 52.9 + 53.6 s apart, 55.9 s here).
#include "qdml/qdml.hpp"

QDML_INSTANTIATE_DISPATCH(qdml::ElementWiseClipDesc)
QDML_INSTANTIATE_DISPATCH(qdml::ElementWiseClip1Desc)
