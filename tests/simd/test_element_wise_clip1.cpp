// Differential test of ELEMENT_WISE_CLIP1: random cases of all ten types with
// typed bounds (the types' extremes, Min > Max, Min = Max, NaN bounds), with
// and without ScaleBias ((1, +-0) included), in place, in both profiles
// (docs/semantics.md section 13), through the reference and the SIMD path
// (stateless and compiled), identical bits required (tests/support/differential.hpp).
#include <catch2/catch.hpp>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

/// A bound of type T: a random value, an extreme of T, a value near the
/// inputs' range, or (float types) an infinity or NaN.
template <class T>
T bound(Rng& r) {
    constexpr bool is_float = std::is_same_v<T, float> || std::is_same_v<T, float16>;
    const auto of = [](float v) {
        if constexpr (std::is_same_v<T, float16>)
            return float16(v);
        else if constexpr (is_float)
            return v;
        else
            return qdml::truncate_saturate<T>(v);
    };
    switch (r.range(0, 7)) {
        case 0:
            if constexpr (std::is_same_v<T, float16>)
                return of(r.chance(50) ? -65504.0f : 65504.0f);
            else
                return r.chance(50) ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        case 1:
            if constexpr (is_float)
                return of(r.chance(50) ? std::numeric_limits<float>::quiet_NaN()
                                       : std::numeric_limits<float>::infinity() * (r.chance(50) ? 1.0f : -1.0f));
            else
                return r.chance(50) ? static_cast<T>(std::numeric_limits<T>::lowest() + 1)
                                    : static_cast<T>(std::numeric_limits<T>::max() - 1);
        case 2: return of(static_cast<float>(r.range(-300, 300)) + (r.chance(50) ? 0.5f : 0.0f));
        case 3: return of(r.chance(50) ? 0.0f : -0.0f);
        default: return r.value<T>(100.0f);
    }
}

template <class T>
void one_case(Rng& r, std::uint64_t seed) {
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    std::string l_in, l_out;
    qdml::ElementWiseClip1Desc d;
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
    d.MinMaxDataType = qdml::data_type_of<T>;
    const T lo = bound<T>(r), hi = r.chance(10) ? lo : bound<T>(r);
    d.Min = qdml::scalar_union(lo);
    d.Max = qdml::scalar_union(hi);
    if (r.chance(10))
        d.ScaleBias = qdml::ScaleBiasDesc{1.0f, r.chance(50) ? 0.0f : -0.0f};
    else if (r.chance(40))
        d.ScaleBias = qdml::ScaleBiasDesc{r.chance(20) ? r.real() : static_cast<float>(r.range(-8, 8)) / 4.0f,
                                          r.chance(20) ? r.real(100.0f) : static_cast<float>(r.range(-40, 40)) / 4.0f};

    qdml::ElementWiseClip1Desc s = d, c = d;  // c: the compiled form, compiled on d, executed on its own buffers
    if (in_place) {
        s.InputTensor = s.OutputTensor = pool.clone(d.InputTensor);
        c.InputTensor = c.OutputTensor = pool.clone(d.InputTensor);
    } else {
        s.OutputTensor = pool.clone(d.OutputTensor);
        c.OutputTensor = pool.clone(d.OutputTensor);
    }
    // Half the cases in the directml profile (which refuses ScaleBias on 64-bit integers).
    const bool refused = d.ScaleBias && sizeof(T) == 8 && !std::is_floating_point_v<T>;
    const auto fidelity = !refused && r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    std::string path_s, path_c;
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    std::ostringstream ctx;
    ctx << "seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; input " << l_in << ", output " << l_out
        << "; Min bytes " << d.Min.UInt64 << ", Max bytes " << d.Max.UInt64;
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

TEST_CASE("SIMD clip1 equals the reference: all ten types, typed and NaN bounds, Min > Max, ScaleBias, in place",
          "[simd][clip1]") {
    for_each_case(31, 12000, [](Rng& r, std::uint64_t seed) {
        kCases[r.range(0, 9)](r, seed);
    });
}
