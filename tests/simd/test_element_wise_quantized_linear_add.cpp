// Differential test of ELEMENT_WISE_QUANTIZED_LINEAR_ADD: random cases of all
// 8 INT8/UINT8 mixes through the reference and the SIMD path (stateless and
// compiled), identical bits required (tests/support/differential.hpp).
#include <catch2/catch.hpp>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

/// A scale: mostly a power of two or a small multiple (so that sums land on
/// .5 ties), sometimes any value or a special one.
float scale(Rng& r) {
    switch (r.range(0, 9)) {
        case 0: return r.real(1.0f);
        case 1: return static_cast<float>(r.range(1, 50)) / 10.0f;
        default: return std::ldexp(1.0f, static_cast<int>(r.range(-6, 3))) * static_cast<float>(r.range(1, 3));
    }
}

template <class TA, class TB, class TOut>
void one_case(Rng& r, std::uint64_t seed) {
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    const std::vector<std::uint32_t> one(rank, 1);
    std::string l_a, l_b, l_out;
    qdml::ElementWiseQuantizedLinearAddDesc d;
    auto param = [&](DT t) { return pool.tensor(t, one, {}, r.range(0, 3)); };
    d.ATensor = pool.tensor(qdml::data_type_of<TA>, sizes, random_strides(r, sizes, true, l_a), r.range(0, 63));
    d.BTensor = pool.tensor(qdml::data_type_of<TB>, sizes, random_strides(r, sizes, true, l_b), r.range(0, 63));
    d.OutputTensor = pool.tensor(qdml::data_type_of<TOut>, sizes, random_strides(r, sizes, false, l_out), r.range(0, 63));
    d.AScaleTensor = param(DT::Float32);
    d.BScaleTensor = param(DT::Float32);
    d.OutputScaleTensor = param(DT::Float32);
    if (r.chance(80)) d.AZeroPointTensor = param(qdml::data_type_of<TA>);
    if (r.chance(80)) d.BZeroPointTensor = param(qdml::data_type_of<TB>);
    if (r.chance(80)) d.OutputZeroPointTensor = param(qdml::data_type_of<TOut>);
    fill<TA>(d.ATensor, [&] { return r.value<TA>(); });
    fill<TB>(d.BTensor, [&] { return r.value<TB>(); });
    for (auto* t : {&d.AScaleTensor, &d.BScaleTensor, &d.OutputScaleTensor})
        fill<float>(*t, [&] { return scale(r); });
    if (d.AZeroPointTensor) fill<TA>(*d.AZeroPointTensor, [&] { return r.value<TA>(); });
    if (d.BZeroPointTensor) fill<TB>(*d.BZeroPointTensor, [&] { return r.value<TB>(); });
    if (d.OutputZeroPointTensor) fill<TOut>(*d.OutputZeroPointTensor, [&] { return r.value<TOut>(); });

    qdml::ElementWiseQuantizedLinearAddDesc s = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::ElementWiseQuantizedLinearAddDesc c = d;  // the compiled form: compiled on d, executed with its own output
    c.OutputTensor = pool.clone(d.OutputTensor);
    std::string path_s, path_c, ex_s, ex_c;  // the element-wise paths of the two runs (each path in turn, case by case)
    const auto compiled = qdml::compile(d, elementwise_options(seed + 1, &path_c));
    qdml::RunOptions o_s = elementwise_options(seed, &path_s);
    o_s.executor = case_executor(seed, &ex_s);
    qdml::run(d, {qdml::Implementation::Reference});
    qdml::run(s, o_s);
    compiled.execute(c, case_executor(seed + 1, &ex_c));
    path_s += ", " + ex_s;
    path_c += ", " + ex_c;
    const auto zp = [](const std::optional<Tensor>& t, auto type) -> long long {
        using T = typename decltype(type)::type;
        return t ? *static_cast<const T*>(t->Data) : 0;
    };
    std::ostringstream ctx;
    ctx << "seed " << seed << "; A " << l_a << ", B " << l_b << ", output " << l_out << "; scales "
        << *static_cast<float*>(d.AScaleTensor.Data) << ", " << *static_cast<float*>(d.BScaleTensor.Data) << ", "
        << *static_cast<float*>(d.OutputScaleTensor.Data) << "; zero points "
        << zp(d.AZeroPointTensor, qdml::type_tag<TA>{}) << ", " << zp(d.BZeroPointTensor, qdml::type_tag<TB>{}) << ", "
        << zp(d.OutputZeroPointTensor, qdml::type_tag<TOut>{}) << "\n"
        << describe("ATensor", d.ATensor) << describe("BTensor", d.BTensor) << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
    compare(pool, d.OutputTensor, c.OutputTensor, "compiled form (qdml::compile, execute), path " + path_c + "; " + ctx.str());
}

using CaseFn = void (*)(Rng&, std::uint64_t);
using i8 = std::int8_t;
using u8 = std::uint8_t;
constexpr CaseFn kCases[] = {one_case<i8, i8, i8>, one_case<i8, i8, u8>, one_case<i8, u8, i8>, one_case<i8, u8, u8>,
                             one_case<u8, i8, i8>, one_case<u8, i8, u8>, one_case<u8, u8, i8>, one_case<u8, u8, u8>};
}  // namespace

TEST_CASE("SIMD quantized add equals the reference: all 8 type mixes, broadcasts, random layouts", "[simd][add]") {
    for_each_case(2, 20000, [](Rng& r, std::uint64_t seed) {
        kCases[r.range(0, 7)](r, seed);
    });
}

namespace {
/// Every (A, B) pair of TA x TB in one contiguous row of 65536 elements
/// (A = i >> 8, B = i & 255), per-tensor parameters, reference vs SIMD.
template <class T>
using Exactly = typename qdml::type_tag<T>::type;  // (not deduced from the zero points' literals)

template <class TA, class TB = TA, class TO = TA>
void every_pair(float a_scale, float b_scale, float out_scale, Exactly<TA> a_zp, Exactly<TB> b_zp, Exactly<TO> out_zp,
                std::size_t misalign) {
    GuardedPool pool;
    const std::vector<std::uint32_t> sizes{65536}, one{1};
    const DT ta = qdml::data_type_of<TA>, tb = qdml::data_type_of<TB>, to = qdml::data_type_of<TO>;
    qdml::ElementWiseQuantizedLinearAddDesc d;
    d.ATensor = pool.tensor(ta, sizes, {}, misalign);
    d.BTensor = pool.tensor(tb, sizes, {}, 0);
    d.OutputTensor = pool.tensor(to, sizes, {}, misalign);
    d.AScaleTensor = pool.tensor(DT::Float32, one, {}, 0);
    d.BScaleTensor = pool.tensor(DT::Float32, one, {}, 0);
    d.OutputScaleTensor = pool.tensor(DT::Float32, one, {}, 0);
    d.AZeroPointTensor = pool.tensor(ta, one, {}, 0);
    d.BZeroPointTensor = pool.tensor(tb, one, {}, 0);
    d.OutputZeroPointTensor = pool.tensor(to, one, {}, 0);
    std::uint32_t i = 0, j = 0;
    fill<TA>(d.ATensor, [&] { return static_cast<TA>(i++ >> 8); });
    fill<TB>(d.BTensor, [&] { return static_cast<TB>(j++ & 255); });
    fill<float>(d.AScaleTensor, [&] { return a_scale; });
    fill<float>(d.BScaleTensor, [&] { return b_scale; });
    fill<float>(d.OutputScaleTensor, [&] { return out_scale; });
    fill<TA>(*d.AZeroPointTensor, [&] { return a_zp; });
    fill<TB>(*d.BZeroPointTensor, [&] { return b_zp; });
    fill<TO>(*d.OutputZeroPointTensor, [&] { return out_zp; });
    qdml::ElementWiseQuantizedLinearAddDesc s = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::run(d, {qdml::Implementation::Reference});
    std::string path;
    qdml::run(s, next_elementwise_options(&path));
    std::ostringstream ctx;
    ctx << "every pair; scales " << a_scale << ", " << b_scale << ", " << out_scale << "; zero points " << +a_zp
        << ", " << +b_zp << ", " << +out_zp << "; misalign " << misalign;
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path + "; " + ctx.str());
}
}  // namespace

// The SIMD add decides blocks in integers where docs/semantics.md's roundings cannot
// change Q's result (simd/element_wise_quantized_linear_add.hpp, AddPairs)
// and takes the spec's steps (true division) near ties and where the
// decision is off: sums on and next to ties (scales that put va + vb on k/8
// steps, output scales with inexact quotients), the limits of OutputScale
// and special scales.
TEST_CASE("SIMD quantized add: the integer decision near ties and at OutputScale's limits", "[simd][add]") {
    const float inf = std::numeric_limits<float>::infinity();
    const float out_scales[] = {0.3f,       0.7f,           3.0f,           0.1f,           1.0f / 3.0f,
                                0.125f,     1.0f,           0x1p-100f,      0x1.fffffep-101f, 0x1p100f,
                                0x1.000002p100f, 1e-30f,    -0.3f,          0.0f,           inf,
                                std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
    const std::pair<float, float> in_scales[] = {{0.1f, 0.2f}, {0.15f, 0.05f}, {0.375f, 0.125f}, {1e-32f, 3e-31f}};
    std::size_t k = 0;
    for (float os : out_scales)
        for (const auto& [as, bs] : in_scales) {
            every_pair<std::int8_t>(as, bs, os, 0, 5, static_cast<std::int8_t>(k % 2 ? -128 : 7), k % 3);
            every_pair<std::uint8_t>(as, bs, os, 128, 3, static_cast<std::uint8_t>(k % 2 ? 255 : 0), k % 5);
            ++k;
        }
}

// The integer decision's own limits (AddPairs): M = 255 * (|AScale| +
// |BScale|) / |OutputScale| just below and above each power of two where
// its fixed-point scale q changes (2^q (M + 258) < 2^31) and at its
// ceiling 2^13; scales whose sums land exactly on ties (dyadic scales and
// an output scale of 3 * 2^-j); negative scales; mixed operand types.
TEST_CASE("SIMD quantized add: the integer decision at its fixed-point limits, on ties, mixed types", "[simd][add]") {
    std::size_t k = 0;
    for (double m : {254.0, 766.0, 1790.0, 3838.0, 7934.0, 8191.0, 8192.0, 100.0, 0.5})
        for (double rel : {-1e-6, 0.0, 1e-6}) {
            const float as = 0.375f, bs = 0.25f;
            const auto os = static_cast<float>(255.0 * (as + bs) / (m * (1.0 + rel)));
            every_pair<std::int8_t>(as, bs, os, -128, 127, static_cast<std::int8_t>(k % 2 ? 5 : -128), k % 3);
            every_pair<std::uint8_t>(as, bs, os, 255, 0, static_cast<std::uint8_t>(k % 2 ? 200 : 255), k % 5);
            ++k;
        }
    const std::pair<float, float> tie_scales[] = {{0.5f, 0.25f}, {1.0f, 1.0f}, {0.125f, 0.375f}, {2.0f, -0.75f}};
    for (const auto& [as, bs] : tie_scales)
        for (float os : {1.0f, 0.5f, 3.0f, 0.75f, 0x1p-6f, 48.0f, -1.5f}) {
            every_pair<std::int8_t, std::uint8_t, std::int8_t>(as, bs, os, 3, 128, -7, k % 3);
            every_pair<std::uint8_t, std::int8_t, std::uint8_t>(as, bs, os, 0, -1, 128, k % 5);
            every_pair<std::int8_t, std::int8_t, std::uint8_t>(-as, bs, os, 127, -128, 0, k % 7);
            ++k;
        }
}

namespace {
/// NHWC A, B and/or output viewed as NCHW (B also broadcast over channels):
/// the loop plan's transposed tile form against the reference.
template <class TA, class TB, class TO>
void interleaved_case(const std::vector<std::uint32_t>& sizes, int a_form, int b_form, int out_form) {
    Rng r(case_seed(32, sizes[1] * 64 + a_form * 16 + b_form * 4 + out_form));
    GuardedPool pool;
    const std::vector<std::uint32_t> one{1, 1, 1, 1};  // per-tensor parameters
    qdml::ElementWiseQuantizedLinearAddDesc d;
    d.ATensor = pool.tensor(qdml::data_type_of<TA>, sizes, interleaved_layout(sizes, a_form), 1);
    const std::vector<std::uint32_t> b_strides =
        b_form == 3 ? std::vector<std::uint32_t>{0, 0, sizes[3], 1} : interleaved_layout(sizes, b_form);
    d.BTensor = pool.tensor(qdml::data_type_of<TB>, sizes, b_strides, 2);
    d.OutputTensor = pool.tensor(qdml::data_type_of<TO>, sizes, interleaved_layout(sizes, out_form), 3);
    d.AScaleTensor = pool.tensor(DT::Float32, one, {}, 0);
    d.BScaleTensor = pool.tensor(DT::Float32, one, {}, 0);
    d.OutputScaleTensor = pool.tensor(DT::Float32, one, {}, 0);
    d.AZeroPointTensor = pool.tensor(qdml::data_type_of<TA>, one, {}, 0);
    d.OutputZeroPointTensor = pool.tensor(qdml::data_type_of<TO>, one, {}, 0);
    fill<TA>(d.ATensor, [&] { return r.value<TA>(); });
    fill<TB>(d.BTensor, [&] { return r.value<TB>(); });
    fill<float>(d.AScaleTensor, [&] { return 0.05f; });
    fill<float>(d.BScaleTensor, [&] { return 0.125f; });
    fill<float>(d.OutputScaleTensor, [&] { return 0.1f; });
    fill<TA>(*d.AZeroPointTensor, [&] { return r.value<TA>(); });
    fill<TO>(*d.OutputZeroPointTensor, [&] { return r.value<TO>(); });
    qdml::ElementWiseQuantizedLinearAddDesc s = d;
    s.OutputTensor = pool.clone(d.OutputTensor);
    qdml::run(d, {qdml::Implementation::Reference});
    std::string path;
    qdml::run(s, next_elementwise_options(&path));
    std::ostringstream ctx;
    ctx << "interleaved: A form " << a_form << ", B form " << b_form << ", output form " << out_form << "\n"
        << describe("ATensor", d.ATensor) << describe("BTensor", d.BTensor) << describe("OutputTensor", d.OutputTensor);
    compare(pool, d.OutputTensor, s.OutputTensor, "path " + path + "; " + ctx.str());
}

template <class TA, class TB, class TO>
void interleaved_cases() {
    for (const auto& sizes : kInterleavedShapes)
        for (int a_form = 0; a_form < kInterleavedForms; ++a_form)
            for (int b_form = 0; b_form < 4; ++b_form)
                for (int out_form = 0; out_form < kInterleavedForms; ++out_form) interleaved_case<TA, TB, TO>(sizes, a_form, b_form, out_form);
}
}  // namespace

TEST_CASE("SIMD quantized add on NHWC operands viewed as NCHW (the transposed tile form) equals the reference",
          "[simd][add]") {
    interleaved_cases<i8, i8, i8>();
    interleaved_cases<u8, i8, u8>();
    interleaved_cases<i8, u8, u8>();
}
