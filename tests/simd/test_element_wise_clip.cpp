// Differential test of ELEMENT_WISE_CLIP: random cases of all ten types, with
// and without ScaleBias, Min > Max, in place, in both profiles (exact and
// directml: docs/semantics.md section 10), through the reference and the
// SIMD path (stateless and compiled), identical bits required
// (tests/support/differential.hpp).
#include <catch2/catch.hpp>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

/// A clip bound: a value of the type's range (integral or not), beyond it,
/// an infinity, or a tie of binary16 rounding.
template <class T>
float bound(Rng& r) {
    switch (r.range(0, 7)) {
        case 0: return r.chance(50) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
        case 1: return static_cast<float>(std::numeric_limits<T>::lowest()) * (r.chance(50) ? 1.0f : 2.0f);
        case 2: return static_cast<float>(std::numeric_limits<T>::max()) * (r.chance(50) ? 1.0f : 2.0f);
        case 3: return 1.0f + std::ldexp(1.0f, -11);  // a binary16 tie
        case 4: return static_cast<float>(r.range(-300, 300)) + 0.5f;
        default: {
            if (r.chance(30)) return static_cast<float>(r.range(-100, 100));
            float v = r.real(100.0f);
            while (std::isnan(v)) v = r.real(100.0f);  // validation rejects NaN bounds
            return v;
        }
    }
}

template <class T>
void one_case(Rng& r, std::uint64_t seed) {
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    std::string l_in, l_out;
    qdml::ElementWiseClipDesc d;
    d.InputTensor = pool.tensor(qdml::data_type_of<T>, sizes, random_strides(r, sizes, true, l_in), r.range(0, 15));
    fill<T>(d.InputTensor, [&] { return r.value<T>(100.0f); });
    const bool in_place = r.chance(20);
    if (in_place) {
        d.InputTensor = pool.tensor(qdml::data_type_of<T>, sizes, random_strides(r, sizes, false, l_in), r.range(0, 15));
        fill<T>(d.InputTensor, [&] { return r.value<T>(100.0f); });
        d.OutputTensor = d.InputTensor;
        l_out = "in place";
    } else {
        d.OutputTensor = pool.tensor(qdml::data_type_of<T>, sizes, random_strides(r, sizes, false, l_out), r.range(0, 15));
    }
    d.Min = bound<T>(r);
    d.Max = r.chance(10) ? d.Min : bound<T>(r);
    if (r.chance(50)) d.ScaleBias = qdml::ScaleBiasDesc{r.chance(20) ? r.real() : static_cast<float>(r.range(-8, 8)) / 4.0f,
                                                        r.chance(20) ? r.real(100.0f) : static_cast<float>(r.range(-40, 40)) / 4.0f};

    qdml::ElementWiseClipDesc s = d;
    if (in_place) {
        s.InputTensor = s.OutputTensor = pool.clone(d.InputTensor);
    } else {
        s.OutputTensor = pool.clone(d.OutputTensor);
    }
    qdml::ElementWiseClipDesc c = d;  // the compiled form: compiled on d, executed on its own buffers
    if (in_place) {
        c.InputTensor = c.OutputTensor = pool.clone(d.InputTensor);
    } else {
        c.OutputTensor = pool.clone(d.OutputTensor);
    }
    // Half the cases in the directml profile (which refuses ScaleBias on 64-bit integers).
    const bool refused = d.ScaleBias && sizeof(T) == 8 && !std::is_floating_point_v<T>;
    const auto fidelity = !refused && r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    std::string path_s, path_c;  // the element-wise paths of the two runs (each path in turn, case by case)
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    std::ostringstream ctx;
    ctx << "seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; input " << l_in << ", output " << l_out
        << "; Min " << d.Min << ", Max " << d.Max;
    if (d.ScaleBias) ctx << ", Scale " << d.ScaleBias->Scale << ", Bias " << d.ScaleBias->Bias;
    ctx << "\n" << describe("InputTensor", d.InputTensor) << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
    compare(pool, d.OutputTensor, c.OutputTensor, "compiled form (qdml::compile, execute), path " + path_c + "; " + ctx.str());
}

using CaseFn = void (*)(Rng&, std::uint64_t);
constexpr CaseFn kCases[] = {one_case<float>,         one_case<qdml::float16>, one_case<std::int8_t>,
                             one_case<std::uint8_t>,  one_case<std::int16_t>,  one_case<std::uint16_t>,
                             one_case<std::int32_t>,  one_case<std::uint32_t>, one_case<std::int64_t>,
                             one_case<std::uint64_t>};
}  // namespace

TEST_CASE("SIMD clip equals the reference: all ten types, ScaleBias, Min > Max, in place, random layouts",
          "[simd][clip]") {
    for_each_case(3, 20000, [](Rng& r, std::uint64_t seed) {
        kCases[r.range(0, 9)](r, seed);
    });
}

namespace {
/// An NHWC input or output (or both, or in place) viewed as NCHW: the loop
/// plan's transposed tile form (1-, 2-, 4- and 8-byte elements) against the reference.
template <class T>
void interleaved_case(const std::vector<std::uint32_t>& sizes, int in_form, int out_form, bool in_place, bool scale_bias,
                      qdml::Fidelity fidelity = qdml::Fidelity::Exact) {
    Rng r(case_seed(30, sizes[1] * 16 + in_form * 4 + out_form));
    GuardedPool pool;
    qdml::ElementWiseClipDesc d;
    d.InputTensor = pool.tensor(qdml::data_type_of<T>, sizes, interleaved_layout(sizes, in_form), 1);
    fill<T>(d.InputTensor, [&] { return r.value<T>(100.0f); });
    d.OutputTensor = in_place ? d.InputTensor : pool.tensor(qdml::data_type_of<T>, sizes, interleaved_layout(sizes, out_form), 3);
    d.Min = -20.5f;
    d.Max = 60.25f;
    if (scale_bias) d.ScaleBias = qdml::ScaleBiasDesc{0.75f, -3.5f};
    qdml::ElementWiseClipDesc s = d;
    if (in_place)
        s.InputTensor = s.OutputTensor = pool.clone(d.InputTensor);
    else
        s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::RunOptions o_r{qdml::Implementation::Reference};
    o_r.fidelity = fidelity;
    qdml::run(d, o_r);
    std::string path;
    qdml::RunOptions o_s = next_elementwise_options(&path);
    o_s.fidelity = fidelity;
    qdml::run(s, o_s);
    std::ostringstream ctx;
    ctx << "fidelity " << qdml::to_string(fidelity) << "; interleaved: input form " << in_form << ", output form " << out_form << (in_place ? ", in place" : "")
        << (scale_bias ? ", ScaleBias" : "") << "\n"
        << describe("InputTensor", d.InputTensor) << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path + "; " + ctx.str());
}

template <class T>
void interleaved_cases() {
    for (const auto& sizes : kInterleavedShapes)
        for (int in_form = 0; in_form < kInterleavedForms; ++in_form) {
            for (int out_form = 0; out_form < kInterleavedForms; ++out_form) interleaved_case<T>(sizes, in_form, out_form, false, in_form == 1);
            interleaved_case<T>(sizes, in_form, in_form, true, false);
            if (!std::is_integral_v<T>)  // the float types' DirectML comparisons on the tile form
                interleaved_case<T>(sizes, in_form, (in_form + 1) % kInterleavedForms, false, in_form == 1,
                                    qdml::Fidelity::DirectML);
        }
}
}  // namespace

TEST_CASE("SIMD clip on NHWC operands viewed as NCHW (the transposed tile form) equals the reference", "[simd][clip]") {
    interleaved_cases<float>();
    interleaved_cases<qdml::float16>();
    interleaved_cases<std::int8_t>();
    interleaved_cases<std::uint8_t>();
    interleaved_cases<std::int64_t>();
}
