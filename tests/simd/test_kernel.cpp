// Unit tests of the SIMD layer's pieces on every element-wise path the CPU
// runs (the portable xsimd arch, AVX2 + F16C, AVX-512): the batch form of Q
// (ties to even on every path), the per-ISA conversions against core's
// scalar ones, and the loop plan's dimension merging.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/buffers.hpp"

namespace {
namespace kernel = qdml::simd::kernel;

// The vector operations under test, each taking and giving plain arrays of
// W lanes (W = fbatch<A>::size), run on tag A through simd::on_arch (a
// region tag's code compiled for its region; no vector crosses into this file's code).
template <class A>
struct QuantizeLanes {
    qdml::QuantizeParams q;
    void operator()(const float* in, std::int32_t* out) const {
        kernel::store_vec<A>(out, qdml::quantize_int(kernel::load_float<A>(in), q));
    }
};
template <class A>
struct QuantizeScalar {  // quantize_int of a vector made from one scalar (the F(x) constructor)
    qdml::QuantizeParams q;
    float x;
    void operator()(std::int32_t* out) const {
        kernel::store_vec<A>(out, qdml::quantize_int(kernel::fbatch<A>(x), q));
    }
};
template <class A, class T>
struct DiffLanes {
    void operator()(const T* x, const T* z, float* out) const { kernel::store_vec<A>(out, kernel::load_diff_float<A>(x, z)); }
};
template <class A>
struct LoadF16 {
    void operator()(const qdml::float16* in, float* out) const { kernel::store_vec<A>(out, kernel::load_float<A>(in)); }
};
template <class A>
struct StoreF16 {
    void operator()(const float* in, qdml::float16* out) const { kernel::store_vec<A>(out, kernel::load_float<A>(in)); }
};
template <class A, class T>
struct StoreInt {
    void operator()(const std::int32_t* in, T* out) const {
        kernel::store_int<A>(out, kernel::load_batch<A>(in));
    }
};

template <class A, class K, class... Args>
void call(K k, Args... args) {
    qdml::simd::on_arch<A>(k)(args...);
}

/// Runs body(tag, name) for every element-wise path this CPU runs.
template <class Body>
void each_arch(Body body) {
    qdml::simd::for_each_elementwise_arch([&](auto tag) {
        using A = typename decltype(tag)::type;
        constexpr std::size_t W = kernel::fbatch<A>::size;
        std::string name;
        if constexpr (kernel::is_region_v<A>) name = A::kName;
        else name = qdml::simd::Arch::name();
        INFO("element-wise path " << name << ", " << W << " lanes");
        body(tag, W);
    });
}
}  // namespace

TEST_CASE("Q in batch form rounds ties to even and clamps NaN low, as the scalar form", "[simd][kernel]") {
    // Hand-derived: rne(0.5)=0, rne(1.5)=2, rne(2.5)=2, rne(-0.5)=-0, rne(-1.5)=-2, rne(-2.5)=-2;
    // NaN -> lo-zp; beyond the range -> the bound.
    const float v[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.4999998f, 126.5f, 127.5f, -128.5f,
                       std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f, 8388607.5f, -3.5f, 0.0f};
    const std::int32_t want[] = {0, 2, 2, 0, -2, -2, 3, 126, 127, -128, -128, 127, -128, 127, -4, 0};
    each_arch([&](auto tag, std::size_t W) {
        using A = typename decltype(tag)::type;
        const auto q = qdml::QuantizeParams::make<std::int8_t>(0);
        for (std::size_t start = 0; start < 16; start += W) {
            alignas(64) float buf[64] = {};
            alignas(64) std::int32_t exp[64] = {}, got[64] = {};
            for (std::size_t i = 0; i < W; ++i) {
                buf[i] = v[(start + i) % 16];
                exp[i] = want[(start + i) % 16];
            }
            call<A>(QuantizeLanes<A>{q}, static_cast<const float*>(buf), static_cast<std::int32_t*>(got));
            for (std::size_t i = 0; i < W; ++i) {
                INFO("v = " << buf[i]);
                CHECK(got[i] == exp[i]);
                CHECK(qdml::quantize_int(buf[i], q) == exp[i]);
            }
        }
        // With a zero point: Q(2.5, zp=10, UINT8) = rne(2.5) + 10 = 12; Q(-20.5, 10) = max(-20.5, -10) -> 0.
        const auto qu = qdml::QuantizeParams::make<std::uint8_t>(10);
        alignas(64) std::int32_t out[64] = {};
        const auto q1 = [&](float x) {
            call<A>(QuantizeScalar<A>{qu, x}, static_cast<std::int32_t*>(out));
            for (std::size_t i = 1; i < W; ++i) CHECK(out[i] == out[0]);
            return out[0];
        };
        CHECK(q1(2.5f) == 12);
        CHECK(q1(-20.5f) == 0);
        CHECK(q1(250.5f) == 255);
    });
}

TEST_CASE("load_diff_float: fp32(x - zp) of INT32/UINT32 rounded once, ties to even", "[simd][kernel]") {
    each_arch([&](auto tag, std::size_t W) {
        using A = typename decltype(tag)::type;
        qtest::Rng g(qtest::case_seed(33));
        // 2^24 + 1 is a tie between 2^24 and 2^24 + 2 -> 2^24 (even); 2^24 + 3 -> 2^24 + 4.
        const std::int64_t x_i[] = {INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, (1 << 24) + 1, (1 << 24) + 3, 0, -1};
        const std::int64_t z_i[] = {INT32_MIN, INT32_MAX, 0, 0, 0, 0, INT32_MIN, INT32_MAX};
        for (int round = 0; round < 200; ++round) {
            alignas(64) std::int32_t xs[64], zs[64];
            alignas(64) std::uint32_t xu[64], zu[64];
            for (std::size_t i = 0; i < W; ++i) {
                const bool fixed = round == 0;
                xs[i] = fixed ? static_cast<std::int32_t>(x_i[i % 8]) : static_cast<std::int32_t>(g.bits());
                zs[i] = fixed ? static_cast<std::int32_t>(z_i[i % 8]) : static_cast<std::int32_t>(g.bits());
                xu[i] = fixed ? static_cast<std::uint32_t>(x_i[i % 8]) : static_cast<std::uint32_t>(g.bits());
                zu[i] = fixed ? (i % 2 ? 0u : UINT32_MAX) : static_cast<std::uint32_t>(g.bits());
            }
            alignas(64) float ds[64], du[64];
            call<A>(DiffLanes<A, std::int32_t>{}, static_cast<const std::int32_t*>(xs), static_cast<const std::int32_t*>(zs),
                    static_cast<float*>(ds));
            call<A>(DiffLanes<A, std::uint32_t>{}, static_cast<const std::uint32_t*>(xu),
                    static_cast<const std::uint32_t*>(zu), static_cast<float*>(du));
            for (std::size_t i = 0; i < W; ++i) {
                CHECK(ds[i] == qdml::fp32(std::int64_t{xs[i]} - zs[i]));
                CHECK(du[i] == qdml::fp32(std::int64_t{xu[i]} - zu[i]));
            }
        }
        alignas(64) std::int32_t x[64] = {}, z[64] = {};
        x[0] = (1 << 24) + 1;
        alignas(64) float d[64];
        call<A>(DiffLanes<A, std::int32_t>{}, static_cast<const std::int32_t*>(x), static_cast<const std::int32_t*>(z),
                static_cast<float*>(d));
        CHECK(d[0] == 16777216.0f);
    });
}

TEST_CASE("binary16 conversions of the SIMD layer equal core's, for every binary16 and many binary32", "[simd][kernel]") {
    each_arch([&](auto tag, std::size_t W) {
        using A = typename decltype(tag)::type;
        std::vector<qdml::float16> h(65536 + 64);
        for (std::uint32_t i = 0; i < 65536; ++i) h[i] = qdml::float16::from_bits(static_cast<std::uint16_t>(i));
        std::size_t wrong = 0;
        for (std::uint32_t i = 0; i < 65536; i += static_cast<std::uint32_t>(W)) {
            alignas(64) float f[64];
            call<A>(LoadF16<A>{}, static_cast<const qdml::float16*>(&h[i]), static_cast<float*>(f));
            for (std::size_t k = 0; k < W; ++k) {
                const float want = static_cast<float>(h[i + k]);
                std::uint32_t a, b;
                std::memcpy(&a, &f[k], 4);
                std::memcpy(&b, &want, 4);
                if (std::isnan(want) ? !std::isnan(f[k]) : a != b) ++wrong;
            }
        }
        CHECK(wrong == 0);
        qtest::Rng g(qtest::case_seed(34));
        for (int round = 0; round < 20000; ++round) {
            alignas(64) float f[64];
            for (std::size_t k = 0; k < W; ++k) {
                auto b = static_cast<std::uint32_t>(g.bits());
                if (round % 2) b = (b & 0x8000ffffu) | ((0x30 + (b >> 16) % 0x20) << 23);  // near binary16's range
                std::memcpy(&f[k], &b, 4);
            }
            qdml::float16 out[64];
            call<A>(StoreF16<A>{}, static_cast<const float*>(f), static_cast<qdml::float16*>(out));
            for (std::size_t k = 0; k < W; ++k)
                if (out[k].bits != qdml::float16(f[k]).bits) {
                    INFO("binary32 " << f[k]);
                    CHECK(out[k].bits == qdml::float16(f[k]).bits);
                }
        }
    });
}

TEST_CASE("store_int narrows in-range int32 lanes to 8/16 bits", "[simd][kernel]") {
    each_arch([&](auto tag, std::size_t W) {
        using A = typename decltype(tag)::type;
        alignas(64) std::int32_t v[64];
        const auto* cv = static_cast<const std::int32_t*>(v);
        const std::int32_t s8[] = {-128, 127, 0, -1, 5, -77, 100, -100};
        for (std::size_t i = 0; i < W; ++i) v[i] = s8[i % 8];
        std::int8_t o8[64];
        call<A>(StoreInt<A, std::int8_t>{}, cv, static_cast<std::int8_t*>(o8));
        for (std::size_t i = 0; i < W; ++i) CHECK(o8[i] == s8[i % 8]);
        const std::int32_t u16[] = {0, 65535, 32768, 32767, 1, 40000, 255, 256};
        for (std::size_t i = 0; i < W; ++i) v[i] = u16[i % 8];
        std::uint16_t o16[64];
        call<A>(StoreInt<A, std::uint16_t>{}, cv, static_cast<std::uint16_t*>(o16));
        for (std::size_t i = 0; i < W; ++i) CHECK(o16[i] == u16[i % 8]);
        const std::int32_t s16[] = {-32768, 32767, 0, -1, 300, -300, 12345, -12345};
        for (std::size_t i = 0; i < W; ++i) v[i] = s16[i % 8];
        std::int16_t os16[64];
        call<A>(StoreInt<A, std::int16_t>{}, cv, static_cast<std::int16_t*>(os16));
        for (std::size_t i = 0; i < W; ++i) CHECK(os16[i] == s16[i % 8]);
        const std::int32_t u8[] = {0, 255, 128, 127, 1, 200, 254, 3};
        for (std::size_t i = 0; i < W; ++i) v[i] = u8[i % 8];
        std::uint8_t ou8[64];
        call<A>(StoreInt<A, std::uint8_t>{}, cv, static_cast<std::uint8_t*>(ou8));
        for (std::size_t i = 0; i < W; ++i) CHECK(ou8[i] == u8[i % 8]);
    });
}

TEST_CASE("Loop plan: merges where every operand allows, keeps broadcast and strided dimensions", "[simd][plan]") {
    using qdml::simd::make_plan;
    // Packed {2,3,4} with a per-tensor operand (all strides 0): one row of 24.
    const std::array<std::uint32_t, 3> sizes{2, 3, 4};
    const std::array<std::uint64_t, 3> packed{12, 4, 1}, zero{0, 0, 0}, row_bcast{0, 1, 0}, padded{15, 5, 1};
    auto p = make_plan<2, 3>(sizes, {&packed, &zero}, {1, 4});
    CHECK(p.outer_rank == 0);
    CHECK(p.row == 24);
    CHECK(p.row_stride[0] == 1);
    CHECK(p.row_stride[1] == 0);
    // A per-axis operand {0,1,0} merges nothing with its neighbours: 3 dims stay.
    p = make_plan<2, 3>(sizes, {&packed, &row_bcast}, {1, 1});
    CHECK(p.outer_rank == 2);
    CHECK(p.row == 4);
    CHECK(p.row_stride[1] == 0);
    CHECK(p.outer_strides[1][1] == 1);
    // Padded rows (stride 5 for 4 elements) keep two dimensions: {2*3, 4}, since 15 == 5*3 merges the outer two.
    p = make_plan<2, 3>(sizes, {&packed, &padded}, {2, 2});
    CHECK(p.outer_rank == 1);
    CHECK(p.outer_sizes[0] == 6);
    CHECK(p.outer_strides[1][0] == 10);
    CHECK(p.row == 4);
    // Size-1 dimensions vanish whatever their strides; a single element is a row of 1.
    const std::array<std::uint32_t, 3> ones{1, 1, 1};
    const std::array<std::uint64_t, 3> odd{7, 9, 11};
    p = make_plan<2, 3>(ones, {&odd, &zero}, {4, 4});
    CHECK(p.outer_rank == 0);
    CHECK(p.row == 1);
}
