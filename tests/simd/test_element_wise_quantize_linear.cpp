// Differential test of ELEMENT_WISE_QUANTIZE_LINEAR: random cases in both
// profiles (exact and directml: docs/semantics.md section 11) through the
// reference and the SIMD path (stateless and compiled), identical bits
// required (tests/support/differential.hpp). Special values (NaN,
// infinities, subnormals, any bit pattern) reach the input and the scale;
// the quotient spans the output range and beyond, with ties.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

template <class TIn, class TOut>
void one_case(Rng& r, std::uint64_t seed) {
    using TScale = typename qdml::ElementWiseQuantizeLinear<TIn, TOut>::TScale;
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    std::string l_in, l_scale, l_zp = "absent", l_out;
    qdml::ElementWiseQuantizeLinearDesc d;
    // (a packed input and output now and then: DirectML's per-tensor NaN form needs both)
    const bool packed = r.chance(30);
    d.InputTensor = pool.tensor(qdml::data_type_of<TIn>, sizes,
                                packed ? (l_in = "packed", std::vector<std::uint32_t>{}) : random_strides(r, sizes, true, l_in),
                                r.range(0, 7));
    d.ScaleTensor = pool.tensor(qdml::data_type_of<TScale>, sizes, param_strides(r, sizes, l_scale), r.range(0, 7));
    if (r.chance(80))
        d.ZeroPointTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, param_strides(r, sizes, l_zp), r.range(0, 7));
    d.OutputTensor = pool.tensor(qdml::data_type_of<TOut>, sizes,
                                 packed ? (l_out = "packed", std::vector<std::uint32_t>{}) : random_strides(r, sizes, false, l_out),
                                 r.range(0, 7));
    // Scales about 2^k; inputs about the scale (ties: (j + 1/2) * scale) or 300 times it (saturation).
    const float mag = std::ldexp(1.0f, static_cast<int>(r.range(std::is_same_v<TIn, std::int32_t> ? -4 : -20, 
                                                                 std::is_same_v<TIn, std::int32_t> ? 30 : 10)));
    fill<TScale>(d.ScaleTensor, [&] { return r.value<TScale>(r.chance(50) ? mag : mag * 0.3f); });
    const float in_mag = r.chance(50) ? mag : mag * 300.0f;
    fill<TIn>(d.InputTensor, [&] { return r.value<TIn>(in_mag); });
    if (d.ZeroPointTensor) fill<TOut>(*d.ZeroPointTensor, [&] { return r.value<TOut>(); });

    qdml::ElementWiseQuantizeLinearDesc s = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::ElementWiseQuantizeLinearDesc c = d;  // the compiled form: compiled on d, executed with its own output
    c.OutputTensor = pool.clone(d.OutputTensor);
    const auto fidelity = r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    std::string path_s, path_c;  // the element-wise paths of the two runs (each path in turn, case by case)
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    std::ostringstream ctx;
    ctx << "seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; input " << l_in << ", scale " << l_scale
        << ", zero point " << l_zp << ", output " << l_out << "\n"
        << describe("InputTensor", d.InputTensor) << describe("ScaleTensor", d.ScaleTensor)
        << (d.ZeroPointTensor ? describe("ZeroPointTensor", *d.ZeroPointTensor) : "")
        << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
    compare(pool, d.OutputTensor, c.OutputTensor, "compiled form (qdml::compile, execute), path " + path_c + "; " + ctx.str());
}

using CaseFn = void (*)(Rng&, std::uint64_t);
constexpr CaseFn kCases[] = {one_case<float, std::int8_t>,        one_case<float, std::uint8_t>,
                             one_case<qdml::float16, std::int8_t>, one_case<qdml::float16, std::uint8_t>,
                             one_case<std::int32_t, std::int8_t>, one_case<std::int32_t, std::uint8_t>};
}  // namespace

TEST_CASE("SIMD quantize equals the reference: FLOAT32, FLOAT16 and INT32 to INT8 and UINT8, random layouts",
          "[simd][quantize]") {
    for_each_case(7, 16000, [](Rng& r, std::uint64_t seed) { kCases[r.range(0, 5)](r, seed); });
}
