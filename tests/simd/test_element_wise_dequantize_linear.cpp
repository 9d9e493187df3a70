// Differential test of ELEMENT_WISE_DEQUANTIZE_LINEAR: random cases in both
// profiles (exact and directml: docs/semantics.md section 10) through the
// reference and the SIMD path (stateless and compiled), identical bits
// required (tests/support/differential.hpp).
#include <catch2/catch.hpp>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

template <class TIn, class TOut>
void one_case(Rng& r, std::uint64_t seed) {
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    std::string l_in, l_scale, l_zp = "absent", l_out;
    qdml::ElementWiseDequantizeLinearDesc d;
    d.InputTensor = pool.tensor(qdml::data_type_of<TIn>, sizes, random_strides(r, sizes, true, l_in), r.range(0, 7));
    d.ScaleTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, param_strides(r, sizes, l_scale), r.range(0, 7));
    if (r.chance(80))
        d.ZeroPointTensor = pool.tensor(qdml::data_type_of<TIn>, sizes, param_strides(r, sizes, l_zp), r.range(0, 7));
    d.OutputTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, random_strides(r, sizes, false, l_out), r.range(0, 7));
    fill<TIn>(d.InputTensor, [&] { return r.value<TIn>(); });
    const float mag = r.chance(50) ? 1.0f : std::ldexp(1.0f, static_cast<int>(r.range(-30, 30)));
    fill<TOut>(d.ScaleTensor, [&] { return r.value<TOut>(mag); });
    if (d.ZeroPointTensor) fill<TIn>(*d.ZeroPointTensor, [&] { return r.value<TIn>(); });

    qdml::ElementWiseDequantizeLinearDesc s = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::ElementWiseDequantizeLinearDesc c = d;  // the compiled form: compiled on d, executed with its own output
    c.OutputTensor = pool.clone(d.OutputTensor);
    const auto fidelity = r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    std::string path_s, path_c;  // the element-wise paths of the two runs (each path in turn, case by case)
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    std::ostringstream ctx;
    ctx << "seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; input " << l_in << ", scale " << l_scale << ", zero point " << l_zp << ", output "
        << l_out << "\n"
        << describe("InputTensor", d.InputTensor) << describe("ScaleTensor", d.ScaleTensor)
        << (d.ZeroPointTensor ? describe("ZeroPointTensor", *d.ZeroPointTensor) : "")
        << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
    compare(pool, d.OutputTensor, c.OutputTensor, "compiled form (qdml::compile, execute), path " + path_c + "; " + ctx.str());
}

using CaseFn = void (*)(Rng&, std::uint64_t);
template <class TOut>
constexpr CaseFn kCases[] = {one_case<std::int8_t, TOut>,  one_case<std::uint8_t, TOut>, one_case<std::int16_t, TOut>,
                             one_case<std::uint16_t, TOut>, one_case<std::int32_t, TOut>, one_case<std::uint32_t, TOut>};
}  // namespace

TEST_CASE("SIMD dequantize equals the reference: every input type, FLOAT32 and FLOAT16, random layouts",
          "[simd][dequantize]") {
    for_each_case(1, 20000, [](Rng& r, std::uint64_t seed) {
        const auto t = static_cast<std::size_t>(r.range(0, 11));
        (t < 6 ? kCases<float>[t] : kCases<qdml::float16>[t - 6])(r, seed);
    });
}

namespace {
/// An NHWC input and/or output viewed as NCHW, a per-channel scale (stride 1
/// along C: the repeated value of each row) and a per-tensor or NHWC zero
/// point: the loop plan's transposed tile form against the reference.
template <class TIn, class TOut>
void interleaved_case(const std::vector<std::uint32_t>& sizes, int in_form, int out_form, int zp_form,
                      qdml::Fidelity fidelity = qdml::Fidelity::Exact) {
    Rng r(case_seed(31, sizes[1] * 64 + in_form * 16 + out_form * 4 + zp_form));
    GuardedPool pool;
    qdml::ElementWiseDequantizeLinearDesc d;
    d.InputTensor = pool.tensor(qdml::data_type_of<TIn>, sizes, interleaved_layout(sizes, in_form), 1);
    d.ScaleTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, {0, 1, 0, 0}, 0);
    const std::vector<std::uint32_t> zp_strides = zp_form == 0 ? std::vector<std::uint32_t>{0, 0, 0, 0} : interleaved_layout(sizes, 1);
    d.ZeroPointTensor = pool.tensor(qdml::data_type_of<TIn>, sizes, zp_strides, 2);
    d.OutputTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, interleaved_layout(sizes, out_form), 3);
    fill<TIn>(d.InputTensor, [&] { return r.value<TIn>(); });
    fill<TOut>(d.ScaleTensor, [&] { return r.value<TOut>(1.0f); });
    fill<TIn>(*d.ZeroPointTensor, [&] { return r.value<TIn>(); });
    qdml::ElementWiseDequantizeLinearDesc s = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::RunOptions o_r{qdml::Implementation::Reference};
    o_r.fidelity = fidelity;
    qdml::run(d, o_r);
    std::string path;
    qdml::RunOptions o_s = next_elementwise_options(&path);
    o_s.fidelity = fidelity;
    qdml::run(s, o_s);
    std::ostringstream ctx;
    ctx << "fidelity " << qdml::to_string(fidelity) << "; interleaved: input form " << in_form << ", output form " << out_form << ", zero point form " << zp_form << "\n"
        << describe("InputTensor", d.InputTensor) << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path + "; " + ctx.str());
}

template <class TIn, class TOut>
void interleaved_cases() {
    for (const auto& sizes : kInterleavedShapes)
        for (int in_form = 0; in_form < kInterleavedForms; ++in_form)
            for (int out_form = 0; out_form < kInterleavedForms; ++out_form) {
                interleaved_case<TIn, TOut>(sizes, in_form, out_form, (in_form + out_form) % 2);
                if (sizeof(TIn) == 4)  // DirectML's INT32/UINT32 form on the tile form
                    interleaved_case<TIn, TOut>(sizes, in_form, out_form, (in_form + out_form + 1) % 2,
                                                qdml::Fidelity::DirectML);
            }
}
}  // namespace

TEST_CASE("SIMD dequantize on NHWC operands viewed as NCHW (the transposed tile form) equals the reference",
          "[simd][dequantize]") {
    interleaved_cases<std::int8_t, float>();
    interleaved_cases<std::uint8_t, qdml::float16>();
    interleaved_cases<std::int16_t, float>();
    interleaved_cases<std::int32_t, float>();
    interleaved_cases<std::uint32_t, qdml::float16>();
}
