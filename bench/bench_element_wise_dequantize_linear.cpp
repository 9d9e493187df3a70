// ELEMENT_WISE_DEQUANTIZE_LINEAR rows of qdml-bench (issue 7):
// dequantize_linear/<impl>/{i8_f32,u8_f32,i8_f16,i16_f32}/{65536,16777216},
// and i8_f32 65536_bcast (per-channel scale and zero point) and
// 65536_strided (NHWC input); dequantize_linear/simd/i8_f32/16777216/threads:N
// (issue 26: RunOptions::executor over N threads, BENCH.md "Threads").
#include "problems.hpp"

namespace qdml_bench {
namespace {

template <class TIn, class TOut>
void rows(const std::string& types, std::uint32_t n, Layout l = Layout::packed) {
    register_element_wise<DequantizeProblem<TIn, TOut>>("dequantize_linear", types, n, l);
}

[[maybe_unused]] const bool registered = [] {
    for (std::uint32_t n : {65536u, 16777216u}) {
        rows<std::int8_t, float>("i8_f32", n);
        if (n == 16777216)  // issue 26: on N worker threads
            register_element_wise_threads<DequantizeProblem<std::int8_t, float>>("dequantize_linear", "i8_f32", n);
        rows<std::uint8_t, float>("u8_f32", n);
        rows<std::int8_t, qdml::float16>("i8_f16", n);
        rows<std::int16_t, float>("i16_f32", n);
    }
    rows<std::int8_t, float>("i8_f32", 65536, Layout::bcast);
    rows<std::int8_t, float>("i8_f32", 65536, Layout::strided);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
