// ELEMENT_WISE_QUANTIZED_LINEAR_ADD rows of qdml-bench (issue 7):
// quantized_linear_add/<impl>/{i8,u8}/{65536,16777216} (A = B = Output),
// and i8 65536_bcast (B {1,1,32,32} over 64 channels) and 65536_strided
// (NHWC A).
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
        rows<std::uint8_t>("u8", n);
    }
    rows<std::int8_t>("i8", 65536, Layout::bcast);
    rows<std::int8_t>("i8", 65536, Layout::strided);
    return true;
}();

}  // namespace
}  // namespace qdml_bench
