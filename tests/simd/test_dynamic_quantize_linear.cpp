// Differential test of DYNAMIC_QUANTIZE_LINEAR: random cases in both
// profiles (exact and directml: docs/semantics.md section 15) through the
// reference and the SIMD path (stateless and compiled), identical bits
// required in all three outputs (tests/support/differential.hpp). The
// inputs' values come in forms that reach the section's edge cases: random
// finite values with NaN, -0.0 and subnormals among them (the range's
// rule), any value (infinities: s = +inf), one sign only, one repeated value
// (all NaN, all +-0.0, all equal), a range of a few subnormals (s = +0), and
// a grid of half steps of a power-of-two scale (ties in x / s); the input's
// buffer around and between the addressed elements holds other values
// (neither pass may read them).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

/// A generator of the case's input values (binary32; FLOAT16 rounds them).
std::function<float()> input_values(Rng& r, std::string& why) {
    const float mag = std::ldexp(1.0f, static_cast<int>(r.range(-20, 20)));
    const auto nan = std::numeric_limits<float>::quiet_NaN();
    switch (r.range(0, 9)) {
        case 0:
            why = "any values";
            return [&r, mag] { return r.real(mag); };
        case 1: {
            const float sign = r.chance(50) ? 1.0f : -1.0f;
            why = sign > 0 ? "positive" : "negative";
            return [&r, mag, sign] { return sign * std::fabs(r.between(0.0f, 1.0f) * mag); };
        }
        case 2: {
            const float v = r.pick(std::vector<float>{nan, 0.0f, -0.0f, 1.0f, -3.5f, mag});
            why = "all equal";
            return [v] { return v; };
        }
        case 3:
            why = "subnormals";
            return [&r] {
                return std::numeric_limits<float>::denorm_min() * static_cast<float>(r.range(-300, 300));
            };
        case 4: {
            // m = -z0 * s, M = m + 255 s: s exactly 2^e (exact profile), the
            // elements m + j s / 2 (ties), m and M among them.
            const float s = std::ldexp(1.0f, static_cast<int>(r.range(-12, 8)));
            const auto z0 = r.range(0, 255);
            why = "grid of half steps, s = 2^" + std::to_string(std::ilogb(s)) + ", z = " + std::to_string(z0);
            return [&r, s, z0] {
                const auto j = r.chance(3) ? 510 * r.range(0, 1) : r.range(0, 510);
                return static_cast<float>(j - 2 * z0) * (s / 2);
            };
        }
        default:
            why = "finite values, some NaN, -0.0, subnormals";
            return [&r, mag, nan] {
                switch (r.range(0, 40)) {
                    case 0: return nan;
                    case 1: return -0.0f;
                    case 2: return std::numeric_limits<float>::denorm_min() * static_cast<float>(r.range(-9, 9));
                    default: return r.between(-1.0f, 1.0f) * mag;
                }
            };
    }
}

template <class TIn, class TOut>
void one_case(Rng& r, std::uint64_t seed) {
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    const std::vector<std::uint32_t> ones(rank, 1);
    std::string l_in, l_out, values;
    qdml::DynamicQuantizeLinearDesc d;
    d.InputTensor = pool.tensor(qdml::data_type_of<TIn>, sizes, random_strides(r, sizes, true, l_in), r.range(0, 7));
    d.OutputTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, random_strides(r, sizes, false, l_out), r.range(0, 7));
    d.OutputScaleTensor = pool.tensor(DT::Float32, ones, {}, r.range(0, 3));
    d.OutputZeroPointTensor = pool.tensor(qdml::data_type_of<TOut>, ones, {}, r.range(0, 7));
    const auto gen = input_values(r, values);
    // The buffer first (gaps and broadcast copies: values that take part in
    // no range), then the addressed elements.
    fill<TIn>(d.InputTensor, [&] { return TIn(r.chance(50) ? -1e30f : 1e30f); });
    for (const std::uint64_t off : qtest::logical_offsets(d.InputTensor.Desc))
        static_cast<TIn*>(d.InputTensor.Data)[off] = TIn(gen());

    qdml::DynamicQuantizeLinearDesc s = d, c = d;  // c: compiled on d, executed with its own outputs
    for (auto* x : {&s, &c}) {
        x->OutputTensor = pool.clone(d.OutputTensor);
        x->OutputScaleTensor = pool.clone(d.OutputScaleTensor);
        x->OutputZeroPointTensor = pool.clone(d.OutputZeroPointTensor);
    }
    const auto fidelity = r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    std::string path_s, path_c;
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    std::ostringstream ctx;
    ctx << "seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; values: " << values << "; input "
        << l_in << ", output " << l_out << "\n"
        << describe("InputTensor", d.InputTensor) << describe("OutputTensor", d.OutputTensor);
    for (const auto& [x, name] : {std::pair{&s, "path " + path_s}, std::pair{&c, "compiled form, path " + path_c}}) {
        compare(pool, d.OutputScaleTensor, x->OutputScaleTensor, "OutputScaleTensor, " + name + "; " + ctx.str());
        compare(pool, d.OutputZeroPointTensor, x->OutputZeroPointTensor,
                "OutputZeroPointTensor, " + name + "; " + ctx.str());
        compare(pool, d.OutputTensor, x->OutputTensor, "OutputTensor, " + name + "; " + ctx.str());
    }
}

using CaseFn = void (*)(Rng&, std::uint64_t);
constexpr CaseFn kCases[] = {one_case<float, std::int8_t>, one_case<float, std::uint8_t>,
                             one_case<qdml::float16, std::int8_t>, one_case<qdml::float16, std::uint8_t>};
}  // namespace

TEST_CASE("SIMD dynamic quantize equals the reference: FLOAT32 and FLOAT16 to INT8 and UINT8, random layouts and values",
          "[simd][dynamic_quantize]") {
    for_each_case(11, 12000, [](Rng& r, std::uint64_t seed) { kCases[r.range(0, 3)](r, seed); });
}
