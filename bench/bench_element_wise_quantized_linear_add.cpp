// ELEMENT_WISE_QUANTIZED_LINEAR_ADD rows of qdml-bench (issue 7):
// quantized_linear_add/<impl>/{i8,u8}/{65536,16777216} (A = B = Output),
// and i8 65536_bcast (B {1,1,32,32} over 64 channels) and 65536_strided
// (NHWC A); quantized_linear_add/simd/i8/16777216/threads:N (issue 26:
// RunOptions::executor over N threads, BENCH.md "Threads").
#include "problems.hpp"

namespace qdml_bench {
namespace {

template <class T>
void rows(const std::string& types, std::uint32_t n, Layout l = Layout::packed) {
    register_element_wise<AddProblem<T>>("quantized_linear_add", types, n, l);
}

[[maybe_unused]] const bool registered = [] {
    for (std::uint32_t n : {65536u, 16777216u}) {
        rows<std::int8_t>("i8", n);
        if (n == 16777216)  // issue 26: on N worker threads
            register_element_wise_threads<AddProblem<std::int8_t>>("quantized_linear_add", "i8", n);
        rows<std::uint8_t>("u8", n);
    }
    rows<std::int8_t>("i8", 65536, Layout::bcast);
    rows<std::int8_t>("i8", 65536, Layout::strided);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
