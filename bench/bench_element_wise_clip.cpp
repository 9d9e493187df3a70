// ELEMENT_WISE_CLIP rows of qdml-bench (issue 7), no ScaleBias:
// clip/<impl>/{f32,i8,f16}/{65536,16777216}, and f32 65536_bcast (input
// {1,1,32,32} over 64 channels) and 65536_strided (NHWC input);
// clip/simd/f32/{65536,16777216}/threads:N (issue 26: RunOptions::executor
// over N threads, BENCH.md "Threads"); ELEMENT_WISE_CLIP1 (issue 28):
// clip1/<impl>/i8/16777216, the same clip with typed bounds.
#include "problems.hpp"

namespace qdml_bench {
namespace {

template <class T>
void rows(const std::string& types, std::uint32_t n, Layout l = Layout::packed) {
    register_element_wise<ClipProblem<T>>("clip", types, n, l);
}

[[maybe_unused]] const bool registered = [] {
    for (std::uint32_t n : {65536u, 16777216u}) {
        rows<float>("f32", n);
        register_element_wise_threads<ClipProblem<float>>("clip", "f32", n);  // issue 26: on N worker threads
        rows<std::int8_t>("i8", n);
        rows<qdml::float16>("f16", n);
    }
    register_element_wise<ClipProblem<std::int8_t, qdml::ElementWiseClip1Desc>>("clip1", "i8", 16777216, Layout::packed);
    rows<float>("f32", 65536, Layout::bcast);
    rows<float>("f32", 65536, Layout::strided);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
