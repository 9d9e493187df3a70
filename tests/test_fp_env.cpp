// The floating-point environment is qdml's, not the caller's
// (docs/semantics.md section 0; qdml/core/fp_env.hpp). With the calling
// thread in each foreign state (flush-to-zero + denormals-are-zero, and the
// three directed rounding modes: support/fp_state.hpp), every public entry
// that computes gives the bits of round-to-nearest without flushing, and
// hands the caller's state back. Expected values are derived by hand below;
// each case is one a foreign state changes when an entry computes in it.
#include <catch2/catch.hpp>

#include <cfenv>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/fp_state.hpp"
#include "support/tensors.hpp"

namespace {

using namespace qtest;
using qdml::Fidelity;
using qdml::Implementation;

float from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
std::vector<std::uint32_t> to_bits(const std::vector<float>& v) {
    std::vector<std::uint32_t> u(v.size());
    std::memcpy(u.data(), v.data(), 4 * v.size());
    return u;
}

/// The typed call of each operator, for the typed operator struct `op`:
/// qdml::simd's (Simd) or qdml::reference's (which takes o.fidelity).
template <bool Simd>
struct Typed {
    qdml::simd::GemmOptions o;
    template <class T>
    void operator()(const qdml::ElementWiseClip<T>& op) const {
        Simd ? qdml::simd::element_wise_clip(op, o) : qdml::reference::element_wise_clip(op, o.fidelity);
    }
    template <class TIn, class TOut>
    void operator()(const qdml::ElementWiseDequantizeLinear<TIn, TOut>& op) const {
        Simd ? qdml::simd::element_wise_dequantize_linear(op, o)
             : qdml::reference::element_wise_dequantize_linear(op, o.fidelity);
    }
    template <class TA, class TB, class TOut>
    void operator()(const qdml::ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op) const {
        Simd ? qdml::simd::element_wise_quantized_linear_add(op, o)
             : qdml::reference::element_wise_quantized_linear_add(op, o.fidelity);
    }
    template <class TA, class TB, class TOut>
    void operator()(const qdml::QuantizedLinearMatrixMultiply<TA, TB, TOut>& op) const {
        Simd ? qdml::simd::quantized_linear_matrix_multiply(op, o)
             : qdml::reference::quantized_linear_matrix_multiply(op, o.fidelity);
    }
    template <class TIn, class TF, class TOut>
    void operator()(const qdml::QuantizedLinearConvolution<TIn, TF, TOut>& op) const {
        Simd ? qdml::simd::quantized_linear_convolution(op, o)
             : qdml::reference::quantized_linear_convolution(op, o.fidelity);
    }
};

/// The typed operator struct of `d` at the element types of this file's
/// descs (FLOAT32 clip, INT8 -> FLOAT32 dequantize, INT8 add, matmul and
/// convolution), given to f. (qdml::visit_typed would compile the typed
/// calls for every type mix, SIMD paths included: this file took 512 s of
/// g++ 12 -O3 with it, 143 s without, on a busy 2-core machine.) A desc of
/// other types fails here, by name.
template <class F>
void typed(const qdml::ElementWiseClipDesc& d, F f) {
    f(qdml::ElementWiseClip<float>::bind(d));
}
template <class F>
void typed(const qdml::ElementWiseDequantizeLinearDesc& d, F f) {
    f(qdml::ElementWiseDequantizeLinear<std::int8_t, float>::bind(d));
}
template <class F>
void typed(const qdml::ElementWiseQuantizedLinearAddDesc& d, F f) {
    f(qdml::ElementWiseQuantizedLinearAdd<std::int8_t, std::int8_t, std::int8_t>::bind(d));
}
template <class F>
void typed(const qdml::QuantizedLinearMatrixMultiplyDesc& d, F f) {
    f(qdml::QuantizedLinearMatrixMultiply<std::int8_t, std::int8_t, std::int8_t>::bind(d));
}
template <class F>
void typed(const qdml::QuantizedLinearConvolutionDesc& d, F f) {
    f(qdml::QuantizedLinearConvolution<std::int8_t, std::int8_t, std::int8_t>::bind(d));
}

/// Every public entry that computes `d`, by name: qdml::run and
/// qdml::reference::run, the typed reference and SIMD calls, qdml::compile's
/// execute (with the compile itself made in the foreign state too), each in
/// profile `f` on SIMD path `isa`.
template <class Desc>
std::vector<std::pair<std::string, std::function<void(const Desc&)>>> entries(Fidelity f, qdml::simd::Isa isa) {
    const qdml::RunOptions ref{Implementation::Reference, qdml::FeatureLevel::Latest, isa, f};
    const qdml::RunOptions simd{Implementation::Simd, qdml::FeatureLevel::Latest, isa, f};
    return {
        {"qdml::run reference", [=](const Desc& d) { qdml::run(d, ref); }},
        {"qdml::run simd", [=](const Desc& d) { qdml::run(d, simd); }},
        {"qdml::reference::run", [=](const Desc& d) { qdml::reference::run(d, qdml::FeatureLevel::Latest, f); }},
        {"typed reference", [=](const Desc& d) { typed(d, Typed<false>{{isa, f}}); }},
        {"typed simd", [=](const Desc& d) { typed(d, Typed<true>{{isa, f}}); }},
        {"compile + execute reference", [=](const Desc& d) { qdml::compile(d, ref).execute(d); }},
        {"compile + execute simd", [=](const Desc& d) { qdml::compile(d, simd).execute(d); }},
    };
}

/// Computes `d` through every entry, with the thread in every foreign state,
/// in both profiles and on the best and the portable SIMD path: each output
/// must equal `expected` (read back by `read`, in the nearest state), each
/// call must leave the thread's control state as it found it, and the exact
/// checker (also run in the foreign state) must find no difference.
template <class Desc, class Read, class Expected>
void check_every_entry(Desc& d, Read read, const Expected& expected) {
    const std::size_t out_bytes = qdml::min_buffer_elements(d.OutputTensor.Desc).value_or(0) *
                                  qdml::element_size(d.OutputTensor.Desc.DataType);
    for (const FpState state : kForeignFpStates) {
        if (state == FpState::FlushToZero && !kCanFlush) continue;
        for (const Fidelity f : {Fidelity::Exact, Fidelity::DirectML})
            for (const qdml::simd::Isa isa : {qdml::simd::Isa::Best, qdml::simd::Isa::Generic})
                for (const auto& [entry, call] : entries<Desc>(f, isa)) {
                    INFO(entry << ", state " << name(state) << ", profile " << qdml::to_string(f) << ", isa "
                               << qdml::simd::isa_name(isa) << ", path " << qdml::describe(d, {Implementation::Simd,
                               qdml::FeatureLevel::Latest, isa, f}));
                    std::memset(d.OutputTensor.Data, 0x5A, out_bytes);  // no stale result passes
                    set_fp_state(state);
                    const std::uint64_t before = fp_control();
                    call(d);
                    const std::uint64_t after = fp_control();
                    qdml::exact::Report r = qdml::exact::check_exact(d, f);
                    const std::uint64_t after_check = fp_control();
                    set_fp_state(FpState::Nearest);
                    CHECK(after == before);
                    CHECK(after_check == before);
                    CHECK(read() == expected);
                    CHECK(r.differences.empty());
                }
    }
}

const Dims kRow = {1, 48};

// Near-tie requantization. Every value below is acc / 2 with acc odd: a tie,
// which each directed mode rounds differently from nearest-even:
//   v         0.5  -0.5  1.5  -1.5  2.5  -2.5
//   nearest    0    0     2    -2    2    -2     (expected)
//   upward     1    0     2    -1    3    -2
//   downward   0   -1     1    -2    2    -3
//   to zero    0    0     1    -1    2    -2
const std::vector<long long> kOdd = {1, -1, 3, -3, 5, -5};
const std::vector<long long> kHalvedNearest = {0, 0, 2, -2, 2, -2};

/// kOdd and kHalvedNearest repeated over `n` elements (vector bodies and tails).
std::pair<Values, std::vector<long long>> odd_pattern(std::size_t n) {
    Values in;
    std::vector<long long> out;
    for (std::size_t i = 0; i < n; ++i) {
        in.push_back(static_cast<double>(kOdd[i % kOdd.size()]));
        out.push_back(kHalvedNearest[i % kOdd.size()]);
    }
    return {in, out};
}

}  // namespace

TEST_CASE("FpEnvironment: qdml's state inside, the caller's control state after, sticky flags kept",
          "[fp_env]") {
    for (const FpState state : kForeignFpStates) {
        if (state == FpState::FlushToZero && !kCanFlush) continue;
        INFO("state " << name(state));
        set_fp_state(state);
        const std::uint64_t caller = fp_control();
        std::feclearexcept(FE_ALL_EXCEPT);
        bool changed = false, nested_changed = true;
        std::uint64_t inside = 0;
        volatile float one = 1.0f, three = 3.0f, tiny = from_bits(0x00800000u);  // 2^-126
        float third = 0, half_tiny = 0;
        {
            const qdml::FpEnvironment fp;
            changed = fp.changed();
            {
                const qdml::FpEnvironment nested;  // already qdml's: nothing to write
                nested_changed = nested.changed();
            }
            inside = fp_control();
            third = one / three;        // 0x3EAAAAAB nearest (0x3EAAAAAA down and to zero)
            half_tiny = tiny * 0.5f;    // 2^-127, subnormal (0 flushed)
        }
        const std::uint64_t after = fp_control();
        const bool inexact = std::fetestexcept(FE_INEXACT) != 0;
        set_fp_state(FpState::Nearest);
        const std::uint64_t nearest = fp_control();
        CHECK(changed);
        CHECK_FALSE(nested_changed);
        CHECK(inside == nearest);
        CHECK(after == caller);
        CHECK(inexact);  // raised inside the guard, still raised after it
        CHECK(to_bits({third, half_tiny}) == std::vector<std::uint32_t>{0x3EAAAAABu, 0x00400000u});
    }
    const qdml::FpEnvironment fp;
    CHECK_FALSE(fp.changed());
}

TEST_CASE("every entry computes in qdml's floating-point state: clip", "[fp_env][clip]") {
    Pool pool;
    qdml::ElementWiseClipDesc d;
    const auto read = [&] { return to_bits(pool.read<float>(d.OutputTensor)); };

    SECTION("subnormal inputs are kept (DAZ would read them as 0)") {
        // Min = -1, Max = 1, no ScaleBias: each input is within the bounds,
        // so the output is the input, bit for bit: 9.9999461e-41, its
        // negative, and the smallest subnormal 2^-149.
        const std::vector<std::uint32_t> in = {0x000116C2u, 0x800116C2u, 0x00000001u};
        std::vector<float> x;
        for (auto u : in) x.push_back(from_bits(u));
        d.InputTensor = pool.raw<float>({3}, x);
        d.OutputTensor = pool.output(DT::Float32, {3});
        d.Min = -1.0f;
        d.Max = 1.0f;
        check_every_entry(d, read, in);
    }
    SECTION("subnormal results are kept (FTZ would give 0)") {
        // g(x) = x * 0.5 + 0 on +-2^-126 (0x00800000): +-2^-127, subnormal,
        // exact (0x00400000 and 0x80400000), within [-1, 1].
        d.InputTensor = pool.raw<float>({2}, std::vector<float>{from_bits(0x00800000u), from_bits(0x80800000u)});
        d.OutputTensor = pool.output(DT::Float32, {2});
        d.ScaleBias = qdml::ScaleBiasDesc{0.5f, 0.0f};
        d.Min = -1.0f;
        d.Max = 1.0f;
        check_every_entry(d, read, std::vector<std::uint32_t>{0x00400000u, 0x80400000u});
    }
    SECTION("ScaleBias sums round to nearest, ties to even") {
        // g(x) = x * 1 + b with b = 3 * 2^-25 (0x33C00000), on x = +-1; Min -2, Max 2.
        //   1 + b = 1 + 0.75 ulp(1): nearest 1 + 2^-23 (0x3F800001); down and to zero 1.
        //   -1 + b = -(1 - 1.5 * 2^-24), halfway between -(1 - 2^-24) (0xBF7FFFFF, odd)
        //   and -(1 - 2^-23) (0xBF7FFFFE, even): nearest-even 0xBF7FFFFE; up and to zero 0xBF7FFFFF.
        d.InputTensor = pool.raw<float>({2}, std::vector<float>{1.0f, -1.0f});
        d.OutputTensor = pool.output(DT::Float32, {2});
        d.ScaleBias = qdml::ScaleBiasDesc{1.0f, from_bits(0x33C00000u)};
        d.Min = -2.0f;
        d.Max = 2.0f;
        check_every_entry(d, read, std::vector<std::uint32_t>{0x3F800001u, 0xBF7FFFFEu});
    }
}

TEST_CASE("every entry computes in qdml's floating-point state: dequantize with a subnormal scale",
          "[fp_env][dequantize]") {
    // Scale s = 9.9999461e-41 (0x000116C2), no zero point: fp32(x) * s for
    // x = 1, -1, 2 is s, -s and 2s (0x00022D84), all exact and subnormal.
    Pool pool;
    qdml::ElementWiseDequantizeLinearDesc d;
    d.InputTensor = pool.raw(DT::Int8, {3}, {1, -1, 2});
    d.ScaleTensor = pool.raw<float>({3}, std::vector<float>{from_bits(0x000116C2u)}, {0});  // one, broadcast
    d.OutputTensor = pool.output(DT::Float32, {3});
    check_every_entry(d, [&] { return to_bits(pool.read<float>(d.OutputTensor)); },
                      std::vector<std::uint32_t>{0x000116C2u, 0x800116C2u, 0x00022D84u});
}

TEST_CASE("every entry computes in qdml's floating-point state: quantized add on ties", "[fp_env][add]") {
    // (fp32(A) * 1 + fp32(B) * 1) / 2 with B = 0: A / 2, the ties of kOdd.
    const auto [a, expected] = odd_pattern(kRow[1]);
    Pool pool;
    qdml::ElementWiseQuantizedLinearAddDesc d;
    d.ATensor = pool.raw(DT::Int8, kRow, a);
    d.AScaleTensor = pool.scalar(DT::Float32, 1, 2);
    d.BTensor = pool.raw(DT::Int8, kRow, Values(kRow[1], 0.0));
    d.BScaleTensor = pool.scalar(DT::Float32, 1, 2);
    d.OutputScaleTensor = pool.scalar(DT::Float32, 2, 2);
    d.OutputTensor = pool.output(DT::Int8, kRow);
    check_every_entry(d, [&] { return pool.read(d.OutputTensor); }, expected);
}

TEST_CASE("every entry computes in qdml's floating-point state: matmul requantization on ties",
          "[fp_env][matmul]") {
    // A (4x2) rows {1, 0}; B (2x48) row 0 the kOdd pattern, row 1 all 7:
    // acc[m][n] = 1 * B[0][n] + 0 * 7 = kOdd[n % 6]. AScale = BScale = 1,
    // OutputScale = 2: mult = fp32(1 * 1) / 2 = 0.5 (DirectML's order,
    // (acc * 1) * 1 / 2, the same), acc * 0.5 exact: the ties of kOdd.
    const auto [b_row, row] = odd_pattern(48);
    Values b = b_row;
    b.insert(b.end(), 48, 7.0);
    std::vector<long long> expected;
    for (int m = 0; m < 4; ++m) expected.insert(expected.end(), row.begin(), row.end());
    for (const bool constant_weights : {false, true}) {
        INFO("B flagged OWNED_BY_DML (packed at compile): " << constant_weights);
        Pool pool;
        qdml::QuantizedLinearMatrixMultiplyDesc d;
        d.ATensor = pool.raw(DT::Int8, {4, 2}, {1, 0, 1, 0, 1, 0, 1, 0});
        d.AScaleTensor = pool.scalar(DT::Float32, 1, 2);
        d.BTensor = pool.raw(DT::Int8, {2, 48}, b);
        if (constant_weights) d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
        d.BScaleTensor = pool.scalar(DT::Float32, 1, 2);
        d.OutputScaleTensor = pool.scalar(DT::Float32, 2, 2);
        d.OutputTensor = pool.output(DT::Int8, {4, 48});
        check_every_entry(d, [&] { return pool.read(d.OutputTensor); }, expected);
    }
}

TEST_CASE("every entry computes in qdml's floating-point state: convolution requantization on ties",
          "[fp_env][conv]") {
    // Two input channels of 4x12 pixels, 1x1 filters, scales 1, 1 and
    // OutputScale 2: mult = fp32(1 * 1) / 2 = 0.5 (DirectML's order,
    // ((acc * 1) * 1) / 2, the same), and acc = kOdd[i % 6] in each output
    // channel, so the outputs are the ties of kOdd. Two forms:
    //   GEMM engine: one group; channel 0 holds kOdd, channel 1 all 7;
    //     both filters {1, 0}: acc = 1 * kOdd + 0 * 7;
    //   depthwise path: two groups of one channel, both holding kOdd,
    //     filters {1} and {1}: acc = kOdd.
    const auto [plane, plane_out] = odd_pattern(48);
    for (const bool depthwise : {false, true})
        for (const bool constant_weights : {false, true}) {
            INFO("depthwise " << depthwise << ", filter flagged OWNED_BY_DML (packed at compile): " << constant_weights);
            Values x = plane;
            if (depthwise) x.insert(x.end(), plane.begin(), plane.end());
            else x.insert(x.end(), 48, 7.0);
            std::vector<long long> expected = plane_out;
            expected.insert(expected.end(), plane_out.begin(), plane_out.end());
            Pool pool;
            qdml::QuantizedLinearConvolutionDesc d;
            d.InputTensor = pool.raw(DT::Int8, {1, 2, 4, 12}, x);
            d.InputScaleTensor = pool.scalar(DT::Float32, 1, 4);
            d.FilterTensor = depthwise ? pool.raw(DT::Int8, {2, 1, 1, 1}, {1, 1})
                                       : pool.raw(DT::Int8, {2, 2, 1, 1}, {1, 0, 1, 0});
            if (constant_weights) d.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            d.FilterScaleTensor = pool.scalar(DT::Float32, 1, 4);
            d.OutputScaleTensor = pool.scalar(DT::Float32, 2, 4);
            d.OutputTensor = pool.output(DT::Int8, {1, 2, 4, 12});
            d.GroupCount = depthwise ? 2 : 1;
            const std::string path = qdml::describe(d);
            INFO(path);
            CHECK(path.find(depthwise ? "simd depthwise" : "simd gemm") == 0);
            check_every_entry(d, [&] { return pool.read(d.OutputTensor); }, expected);
        }
}
