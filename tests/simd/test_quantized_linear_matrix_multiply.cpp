// The int8 GEMM engine (qdml::simd::quantized_linear_matrix_multiply) against
// the reference, bit for bit, once per micro-kernel family this CPU runs
// (generic, AVX2, AVX-VNNI, AVX-512 VNNI, AMX; the others are named in a
// warning). Random shapes around every tile size, all eight type mixes,
// extreme zero points, per-row / per-column parameters, batch broadcast,
// strided and transposed-by-strides operands and outputs, wrapping
// accumulators, ties, NaN/inf scales; outputs sentinel-filled with guards.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "qdml/qdml.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply_prepared.hpp"
#include "support/executors.hpp"
#include "support/gemm_paths.hpp"
#include "support/matmul_layout.hpp"

namespace {

using qdml::TensorDesc;
using DT = qdml::TensorDataType;
using qdml::simd::Isa;

using qtest::Rng;
using qtest::gemm_paths::run_executor;
using qtest::gemm_paths::runnable_isas;
using qtest::matmul_layout::Layout;
using qtest::matmul_layout::make_desc;
using qtest::matmul_layout::param_desc;
using qtest::matmul_layout::random_layout;

/// One random matmul problem with its buffers.
struct Problem {
    DT ta = DT::UInt8, tb = DT::Int8, tout = DT::UInt8;
    std::uint32_t rank = 2, batch = 1, channels = 1, M = 1, N = 1, K = 1;
    Layout la, lb, lout;
    qdml::Fidelity fidelity = qdml::Fidelity::Exact;  ///< the profile of the prepared test's runs
    bool per_row_a = false, per_col_b = false, per_row_out = false, zps = true;
    std::vector<std::uint8_t> a, b, a_zp, b_zp, out_zp;
    qtest::GuardedBuffer out;  ///< the output's buffer, between guards
    std::vector<float> a_scale, b_scale, out_scale;
    qdml::QuantizedLinearMatrixMultiplyDesc d;

    std::string describe() const {
        std::ostringstream os;
        os << name(ta) << " x " << name(tb) << " -> " << name(tout) << " rank " << rank << " " << batch << "x"
           << channels << "x" << M << "x" << N << "x" << K << " A{T" << la.transposed << " pad" << la.pad << " bb"
           << la.bcast_batch << " bc" << la.bcast_channel << " br" << la.bcast_rows << "} B{T" << lb.transposed << " pad" << lb.pad << " bb"
           << lb.bcast_batch << " bc" << lb.bcast_channel << "} Out{T" << lout.transposed << " pad" << lout.pad
           << "} rowA " << per_row_a << " colB " << per_col_b << " rowOut " << per_row_out << " zps " << zps
           << " fidelity " << qdml::to_string(fidelity);
        return os.str();
    }

    /// Binds every tensor (the output to its guarded buffer).
    void build() {
        const std::uint32_t sa[4] = {batch, channels, M, K}, sb[4] = {batch, channels, K, N},
                            so[4] = {batch, channels, M, N};
        d = {};
        d.ATensor = {make_desc(ta, rank, sa, la), a.data()};
        d.BTensor = {make_desc(tb, rank, sb, lb), b.data()};
        const TensorDesc od = make_desc(tout, rank, so, lout);
        d.OutputTensor = {od, out.data()};
        d.AScaleTensor = {param_desc(DT::Float32, rank, 2, per_row_a ? M : 1), a_scale.data()};
        d.BScaleTensor = {param_desc(DT::Float32, rank, 3, per_col_b ? N : 1), b_scale.data()};
        d.OutputScaleTensor = {param_desc(DT::Float32, rank, 2, per_row_out ? M : 1), out_scale.data()};
        if (zps) {
            d.AZeroPointTensor = qdml::Tensor{param_desc(ta, rank, 2, per_row_a ? M : 1), a_zp.data()};
            d.BZeroPointTensor = qdml::Tensor{param_desc(tb, rank, 3, per_col_b ? N : 1), b_zp.data()};
            d.OutputZeroPointTensor = qdml::Tensor{param_desc(tout, rank, 2, per_row_out ? M : 1), out_zp.data()};
        }
    }

    /// Sizes every buffer from the layouts and fills it with `byte()`.
    template <class Byte>
    void fill(Byte&& byte) {
        const std::uint32_t sa[4] = {batch, channels, M, K}, sb[4] = {batch, channels, K, N},
                            so[4] = {batch, channels, M, N};
        a.resize(*qdml::min_buffer_elements(make_desc(ta, rank, sa, la)));
        b.resize(*qdml::min_buffer_elements(make_desc(tb, rank, sb, lb)));
        out.assign(*qdml::min_buffer_elements(make_desc(tout, rank, so, lout)));
        for (auto& v : a) v = byte();
        for (auto& v : b) v = byte();
        a_zp.resize(M);
        b_zp.resize(N);
        out_zp.resize(M);
        for (auto& v : a_zp) v = byte();
        for (auto& v : b_zp) v = byte();
        for (auto& v : out_zp) v = byte();
    }
};

/// Runs the reference, then every path, in both profiles (exact and
/// directml: docs/semantics.md section 10), every other run on a thread pool
/// (gemm_paths::run_executor); requires identical output buffers.
void check_all_paths(Problem& p) {
    p.build();
    INFO(p.describe());
    qdml::validate(p.d);
    qtest::gemm_paths::require_same_in_both_profiles(
        p.out,
        [&](qdml::Fidelity f) {
            qdml::visit_typed(p.d, [&](const auto& op) { qdml::reference::quantized_linear_matrix_multiply(op, f); });
        },
        [&](const qdml::simd::GemmOptions& o) {
            qdml::visit_typed(p.d, [&](const auto& op) { qdml::simd::quantized_linear_matrix_multiply(op, o); });
        });
}

constexpr DT kQ8[] = {DT::UInt8, DT::Int8};

/// Scales that keep outputs mostly unsaturated: OutputScale from the typical
/// accumulator magnitude (about sqrt(K) * 100 * 100).
void random_scales(Problem& p, Rng& rng) {
    auto scale = [&] { return std::ldexp(1.0f + static_cast<float>(rng.uniform(0, 1023)) / 1024.0f, -static_cast<int>(rng.uniform(0, 8))); };
    p.a_scale.resize(p.M);
    p.b_scale.resize(p.N);
    p.out_scale.resize(p.M);
    for (auto& v : p.a_scale) v = scale();
    for (auto& v : p.b_scale) v = scale();
    const float typical = p.a_scale[0] * p.b_scale[0] * std::sqrt(static_cast<float>(p.K)) * 10000.0f / 60.0f;
    for (auto& v : p.out_scale) v = typical * (0.5f + static_cast<float>(rng.uniform(0, 100)) / 100.0f);
}

/// A random problem: type mix `mix` (bits: A, B, Output signed), rank 2-4,
/// sizes up to 70 (big: 300), random layouts and parameter forms.
Problem random_problem(Rng& rng, int mix, bool big) {
    Problem p;
    p.ta = kQ8[mix & 1];
    p.tb = kQ8[(mix >> 1) & 1];
    p.tout = kQ8[(mix >> 2) & 1];
    p.rank = rng.uniform(2, 4);
    p.batch = p.rank == 4 ? rng.uniform(1, 3) : 1;
    p.channels = p.rank >= 3 ? rng.uniform(1, 3) : 1;
    p.M = rng.size(big ? 300 : 70);
    p.N = rng.size(big ? 300 : 70);
    p.K = rng.size(big ? 300 : 140);
    p.la = random_layout(rng, false);
    p.lb = random_layout(rng, false);
    p.lout = random_layout(rng, true);
    p.per_row_a = rng.coin(2);
    p.per_col_b = rng.coin(2);
    p.per_row_out = rng.coin(2);
    p.zps = !rng.coin(5);
    p.fidelity = mix % 2 ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    p.fill([&] { return rng.byte(); });
    random_scales(p, rng);
    return p;
}

}  // namespace

TEST_CASE("simd matmul: random shapes, layouts, parameters and type mixes equal the reference on every path",
          "[simd][matmul]") {
    Rng rng(qtest::case_seed(8));
    for (int iter = 0; iter < 160; ++iter) {
        Problem p = random_problem(rng, iter, iter % 16 == 15);
        check_all_paths(p);
    }
}

namespace {

/// The prepared operator on every path against the reference (B packed at
/// construction, executed twice: the second run reuses every buffer).
void check_prepared_all_paths(Problem& p) {
    p.build();
    p.d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    INFO(p.describe());
    for (const qdml::Fidelity f : {qdml::Fidelity::Exact, qdml::Fidelity::DirectML}) {
        INFO("fidelity " << qdml::to_string(f));
        p.out.reset();
        qdml::visit_typed(p.d, [&](const auto& op) { qdml::reference::quantized_linear_matrix_multiply(op, f); });
        const std::vector<std::uint8_t> expected = p.out.with_guards();
        for (Isa isa : runnable_isas()) {
            INFO("path " << qdml::simd::isa_name(isa));
            const qdml::simd::PreparedQuantizedLinearMatrixMultiply prepared(p.d, qdml::simd::GemmOptions{isa, f});
            for (int run = 0; run < 2; ++run) {
                static std::size_t k = 0;
                const auto& ex = run_executor(k++);
                INFO("executor " << ex.first);
                p.out.reset();
                prepared.execute_unchecked(p.d, ex.second);
                REQUIRE(p.out.with_guards() == expected);
            }
        }
    }
}

}  // namespace

TEST_CASE("simd matmul: many row and column blocks around 16/32/64, K around 64, batches of shared and distinct "
          "slices, stateless and prepared, on every path",
          "[simd][matmul][blocks]") {
    // The AMX loops store a block's tiles while the next block computes
    // (kernel_amx.hpp) and store two column tiles per row (store_rows32):
    // row and column counts around the tile edges, several blocks each way,
    // both output signs, per-column and per-row multipliers.
    Rng rng(qtest::case_seed(8));
    constexpr std::uint32_t kEdges[] = {15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 96, 100};
    constexpr std::uint32_t kDepths[] = {1, 4, 63, 64, 65, 128, 130};
    for (int iter = 0; iter < 24; ++iter) {
        Problem p;
        p.ta = kQ8[iter & 1];
        p.tb = kQ8[(iter >> 1) & 1];
        p.tout = kQ8[(iter >> 2) & 1];
        p.M = kEdges[rng.uniform(0, 11)];
        p.N = kEdges[rng.uniform(0, 11)];
        p.K = kDepths[rng.uniform(0, 6)];
        if (iter % 3 == 2) {  // a batch: 3 products, B shared (zero stride) or distinct, A distinct
            p.rank = 3;
            p.channels = 3;
            p.lb.bcast_channel = rng.coin(2);
        }
        p.per_row_a = p.per_row_out = iter % 4 >= 2;  // with a uniform B scale: a per-row multiplier
        p.per_col_b = iter % 8 == 7;
        p.fill([&] { return rng.byte(); });
        if (iter % 4 == 2) std::fill(p.a_zp.begin(), p.a_zp.end(), p.a_zp[0]);  // per-row scales, uniform zero point
        random_scales(p, rng);
        check_all_paths(p);
        check_prepared_all_paths(p);
    }
}

TEST_CASE("simd matmul: A read in place (u8, K a multiple of 64, whole tiles and a partial last one), row sums "
          "skipped or not, batches whose products alternate epilogues, on every path",
          "[simd][matmul][blocks]") {
    // AMX reads the whole 16-row tiles of a u8 A with contiguous rows and K a
    // multiple of 64 where they are and packs only the last partial tile;
    // the row sums are computed only when B's zero point is not 0 (s8 B
    // without zero point: none); consecutive products alternate two
    // epilogues (the last block of one stored while the next computes), so
    // a batch mixes shared and distinct A and B slices with per-row
    // parameters (row constants kept per epilogue, sums per A slice).
    Rng rng(qtest::case_seed(81));
    constexpr std::uint32_t kRows[] = {16, 17, 31, 32, 33, 48, 64, 100};
    constexpr std::uint32_t kDepths[] = {64, 128, 256};
    for (int iter = 0; iter < 32; ++iter) {
        Problem p;
        p.ta = DT::UInt8;
        p.tb = kQ8[iter & 1];
        p.tout = kQ8[(iter >> 1) & 1];
        p.M = kRows[rng.uniform(0, 7)];
        p.N = rng.uniform(1, 80);
        p.K = kDepths[rng.uniform(0, 2)];
        p.la.pad = iter % 4 == 3 ? 64 : 0;  // rows further apart than K: still in place
        p.zps = iter % 3 != 0;              // without zero points an s8 B needs no row sums
        if (iter % 2 == 0 || iter % 5 == 1) {  // batches of 2 x 3 products
            p.rank = 4;
            p.batch = 2;
            p.channels = 3;
            p.la.bcast_channel = iter % 8 == 4;  // A shared by the channels
            p.lb.bcast_batch = iter % 4 == 2;    // B shared by the batches
            p.lb.bcast_channel = iter % 8 == 0;
        }
        p.per_row_a = iter % 3 == 1;
        p.per_row_out = iter % 6 == 2;
        p.per_col_b = iter % 7 == 3;
        p.fill([&] { return rng.byte(); });
        if (p.tb == DT::Int8 && iter % 4 == 1) std::fill(p.b_zp.begin(), p.b_zp.end(), 0);  // zero point given, 0
        random_scales(p, rng);
        check_all_paths(p);
        check_prepared_all_paths(p);
    }
}

TEST_CASE("simd matmul: an A whose rows are all one row (row stride 0), u8 with K a multiple of 4 and whole row "
          "blocks, is not read in place as if packed, on every path",
          "[simd][matmul][blocks]") {
    // (fuzz_diff found it: AVX-512 VNNI read such an A in place with a row
    // step of 0, which its kernel takes for packed data, past A's buffer.)
    Rng rng(qtest::case_seed(83));
    constexpr std::uint32_t kRows[] = {6, 8, 12, 16, 23, 32, 33};
    constexpr std::uint32_t kDepths[] = {4, 60, 64, 128};
    for (int iter = 0; iter < 16; ++iter) {
        Problem p;
        p.ta = DT::UInt8;
        p.tb = kQ8[iter & 1];
        p.tout = kQ8[(iter >> 1) & 1];
        p.M = kRows[rng.uniform(0, 6)];
        p.N = rng.uniform(1, 40);
        p.K = kDepths[rng.uniform(0, 3)];
        p.la.bcast_rows = true;
        p.zps = iter % 3 != 0;
        if (iter % 2 == 0) {
            p.rank = 3;
            p.channels = 3;
        }
        p.fill([&] { return rng.byte(); });
        random_scales(p, rng);
        check_all_paths(p);
        check_prepared_all_paths(p);
    }
}

TEST_CASE("simd matmul: odd sizes of the issue (7x13x5, 33x65x17, K not a multiple of 4 or 64) on every path",
          "[simd][matmul]") {
    Rng rng(qtest::case_seed(8));
    const std::uint32_t shapes[][3] = {{7, 13, 5}, {33, 65, 17}, {1, 100, 3}, {50, 1, 67}, {17, 33, 130}, {1, 64, 1}};
    for (auto& s : shapes)
        for (int mix = 0; mix < 8; ++mix) {
            Problem p;
            p.ta = kQ8[mix & 1];
            p.tb = kQ8[(mix >> 1) & 1];
            p.tout = kQ8[(mix >> 2) & 1];
            p.M = s[0];
            p.N = s[1];
            p.K = s[2];
            p.fill([&] { return rng.byte(); });
            random_scales(p, rng);
            check_all_paths(p);
        }
}

TEST_CASE("simd matmul: register-block edges (M 1-9, N around 16/32/48/64/96, K remainders) on every path",
          "[simd][matmul]") {
    // Rows around every kernel's block (AVX2 4, AVX-VNNI 6, AVX-512 VNNI 8,
    // whose whole blocks are packed 16 groups at a time by a transpose;
    // M = 1 is the GEMV path), columns around the 1-4 panels a call covers
    // (AVX-512 VNNI: 3 per call, four left as 2 + 2, 4 for one row), K
    // around a group of 4, a transpose of 16 groups and the prefetch distance.
    Rng rng(qtest::case_seed(8));
    const std::uint32_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
    const std::uint32_t ns[] = {15, 16, 32, 47, 48, 49, 64, 65, 97};
    const std::uint32_t ks[] = {3, 64, 67, 1030};
    int mix = 0;
    for (std::uint32_t m : ms)
        for (std::uint32_t n : ns)
            for (std::uint32_t k : ks) {
                Problem p;
                p.ta = kQ8[mix & 1];
                p.tb = kQ8[(mix >> 1) & 1];
                p.tout = kQ8[(mix >> 2) & 1];
                ++mix;
                p.M = m;
                p.N = n;
                p.K = k;
                p.per_col_b = mix % 3 == 0;
                p.per_row_a = mix % 5 == 0;
                p.fill([&] { return rng.byte(); });
                random_scales(p, rng);
                check_all_paths(p);
            }
}

TEST_CASE("simd matmul: whole 8-row blocks of 2 and 3 panels (AVX-512 VNNI: the asm k loop, the saturating-pack "
          "store) with every epilogue form, on every path",
          "[simd][matmul][blocks]") {
    // The AVX-512 VNNI kernel's 8 x 32 and 8 x 48 blocks run K in groups of
    // four after groups % 4 single ones (K below: 0-3 groups left over, one
    // group, no full iteration) and, when the zero points are uniform and
    // the multiplier per column or per row, start from the column bias and
    // store through saturating packs (per-row output zero points, multipliers
    // below 1, at and above 1 or NaN: with and without the high clamp);
    // partial last panels; per-row A zero points and per-element multipliers
    // take store16. The other kernels see the same shapes.
    Rng rng(qtest::case_seed(85));
    constexpr std::uint32_t kRows[] = {8, 16, 24, 25};
    constexpr std::uint32_t kCols[] = {32, 33, 47, 48, 63, 80, 96};
    constexpr std::uint32_t kDepths[] = {4, 5, 8, 12, 16, 60, 61, 64, 100, 257};
    for (int iter = 0; iter < 64; ++iter) {
        Problem p;
        p.ta = kQ8[iter & 1];
        p.tb = kQ8[(iter >> 1) & 1];
        p.tout = kQ8[(iter >> 2) & 1];
        p.M = kRows[rng.uniform(0, 3)];
        p.N = kCols[rng.uniform(0, 6)];
        p.K = kDepths[iter % 10];
        const int form = (iter / 8) % 4;  // 0 per tensor, 1 per-row output, 2 per-row A and output, 3 per-column B
        p.per_row_out = form == 1 || form == 2;
        p.per_row_a = form == 2;
        p.per_col_b = form == 3;
        p.fill([&] { return rng.byte(); });
        if (form == 2 && iter % 16 < 8) std::fill(p.a_zp.begin(), p.a_zp.end(), p.a_zp[0]);  // per-row scales only
        random_scales(p, rng);
        if (iter % 3 == 1)  // multipliers of about 1 or 1e6: many products past 2^31, which only the high clamp catches
            for (auto& v : p.out_scale) v = p.a_scale[0] * p.b_scale[0] * (iter % 2 ? 1.0f : 1e-6f);
        if (iter % 11 == 5) p.out_scale[0] = NAN;  // row 0's outputs: the low bound
        if (form == 1 && iter % 2 == 0)  // per-row output zero points with a per-column multiplier
            std::fill(p.out_scale.begin(), p.out_scale.end(), p.out_scale[0]);
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul: extreme zero points (0, 255, -128, 127) per tensor, row and column", "[simd][matmul]") {
    Rng rng(qtest::case_seed(8));
    for (int mix = 0; mix < 8; ++mix)
        for (int z = 0; z < 4; ++z) {
            Problem p;
            p.ta = kQ8[mix & 1];
            p.tb = kQ8[(mix >> 1) & 1];
            p.tout = kQ8[(mix >> 2) & 1];
            p.M = 19;
            p.N = 37;
            p.K = 45;
            p.per_row_a = p.per_col_b = p.per_row_out = z >= 2;
            p.fill([&] { return rng.byte(); });
            const std::uint8_t zp = z % 2 ? 0x7f : 0x80;  // 127 or 128 (-128 as INT8)
            const std::uint8_t zp2 = z % 2 ? 0xff : 0x00;  // 255 (-1 as INT8) or 0
            for (std::size_t i = 0; i < p.a_zp.size(); ++i) p.a_zp[i] = i % 2 ? zp : zp2;
            for (std::size_t i = 0; i < p.b_zp.size(); ++i) p.b_zp[i] = i % 3 ? zp2 : zp;
            for (std::size_t i = 0; i < p.out_zp.size(); ++i) p.out_zp[i] = i % 2 ? zp2 : zp;
            random_scales(p, rng);
            check_all_paths(p);
        }
}

TEST_CASE("simd matmul: accumulators that wrap modulo 2^32 (large K, extreme values)", "[simd][matmul]") {
    // A = 255 with zero point 0, B - BZP = -255 for 6 elements in 7: the sum
    // is about -65025 * 40000 * 6/7 = -2.2e9, below -2^31, so the reference's
    // accumulator wraps; every path must give the same bits.
    for (int variant = 0; variant < 3; ++variant) {
        Problem p;
        p.ta = DT::UInt8;
        p.tb = variant == 2 ? DT::Int8 : DT::UInt8;
        p.tout = DT::Int8;
        p.M = 3;
        p.N = 21;
        p.K = 40000 + static_cast<std::uint32_t>(variant);
        p.lb.transposed = variant == 1;
        p.fill([] { return std::uint8_t{255}; });
        // B - BZP is -255 (0 - 255, or -128 - 127 for INT8), every 7th element 0.
        for (std::size_t i = 0; i < p.b.size(); ++i)
            p.b[i] = i % 7 == 0 ? (variant == 2 ? 0x7f : 0xff) : (variant == 2 ? 0x80 : 0);
        std::fill(p.a_zp.begin(), p.a_zp.end(), 0);
        std::fill(p.b_zp.begin(), p.b_zp.end(), variant == 2 ? 0x7f : 0xff);
        std::fill(p.out_zp.begin(), p.out_zp.end(), 0);
        p.a_scale.assign(p.M, 1.0f);
        p.b_scale.assign(p.N, 1.0f);
        p.out_scale.assign(p.M, 4.0e7f);  // wrapped sums (about +-2^31) land inside -128..127
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul: accumulators at +-2^31 with multipliers at and below 1 in magnitude (the AMX epilogue's "
          "clamp-free case)",
          "[simd][matmul]") {
    // When every multiplier has |m| < 1, |fp32(acc) * m| < 2^31 and the AMX
    // epilogue drops its high clamp (the saturating packs do it); m = 1, 2,
    // NaN keep it. Row 0's accumulator in column 0 (3, 6, ...) is 2^31 - 1
    // exactly: 255 * 127 * 66311 + 239 * 8, whose fp32 is 2^31 (cvtps2dq's
    // overflow); in column 1 (B = -128) it wraps; column 2's is small.
    constexpr std::uint32_t K = 66312;
    const float kBelow1 = std::nextafter(1.0f, 0.0f);
    const std::vector<std::vector<float>> column_scales = {
        {1.0f}, {kBelow1}, {2.0f}, {-1.0f}, {-kBelow1}, {0.5f},
        {0.5f, kBelow1, 0.25f}, {0.5f, 1.0f, 0.25f}, {-kBelow1, 0.5f, NAN}};
    for (std::size_t v = 0; v < 2 * column_scales.size() + 4; ++v) {
        Problem p;
        p.ta = DT::UInt8;
        p.tb = DT::Int8;
        p.tout = kQ8[v & 1];
        p.M = 2;
        p.N = 20;  // two column tiles (store_rows32), column n as column n % 3 below
        p.K = K;
        const bool per_row = v >= 2 * column_scales.size();  // per-row multipliers: 1 / 2, or below 1
        const std::vector<float>& bs = per_row ? column_scales[1] : column_scales[v / 2];
        p.per_col_b = bs.size() > 1;
        p.per_row_a = p.per_row_out = per_row;
        p.fill([] { return std::uint8_t{0}; });
        for (std::uint32_t k = 0; k < K; ++k) {
            const bool last = k + 1 == K;
            p.a[k] = last ? 239 : 255;               // row 0
            p.a[K + k] = static_cast<std::uint8_t>(k % 251);  // row 1
            for (std::uint32_t n = 0; n < p.N; ++n)
                p.b[std::size_t{k} * p.N + n] = n % 3 == 0   ? (last ? 8 : 127)
                                                : n % 3 == 1 ? 0x80  // -128
                                                             : static_cast<std::uint8_t>(k % 3 == 0 ? 1 : k % 3 == 1 ? 0xff : 0);
        }
        std::fill(p.a_zp.begin(), p.a_zp.end(), 0);
        std::fill(p.b_zp.begin(), p.b_zp.end(), 0);
        std::fill(p.out_zp.begin(), p.out_zp.end(), p.tout == DT::UInt8 ? 10 : 0);
        p.a_scale.assign(p.M, 1.0f);
        p.b_scale.resize(p.N);
        for (std::uint32_t n = 0; n < p.N; ++n) p.b_scale[n] = bs[n % bs.size()];
        p.out_scale.assign(p.M, 1.0f);
        if (per_row) p.out_scale[1] = v % 4 < 2 ? 0.5f : 2.0f;  // row 1: 2 * m (clamped), or m / 2
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul: ties, NaN and infinite scales", "[simd][matmul]") {
    Rng rng(qtest::case_seed(8));
    for (int variant = 0; variant < 6; ++variant) {
        Problem p;
        p.ta = kQ8[variant & 1];
        p.tb = DT::Int8;
        p.tout = kQ8[(variant >> 1) & 1];
        p.M = 23;
        p.N = 41;
        p.K = 9;
        p.per_row_a = p.per_col_b = p.per_row_out = variant >= 2;
        p.fill([&] { return rng.byte(); });
        // Powers of two: fp32(acc) * 2^-e is exact, so every odd multiple of
        // 2^(e-1) is a tie that rne must send to the even neighbour.
        p.a_scale.assign(p.M, 0.5f);
        p.b_scale.assign(p.N, 0.25f);
        p.out_scale.assign(p.M, 64.0f);
        if (variant >= 4) {
            p.a_scale[1] = NAN;
            p.a_scale[2] = INFINITY;
            p.b_scale[3] = -INFINITY;
            p.b_scale[4] = NAN;
            p.out_scale[5] = INFINITY;
            p.out_scale[6] = -INFINITY;
            p.out_scale[7] = NAN;
            p.out_scale[8] = 1e-38f;  // huge multipliers saturate
        }
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul: u8 x s8 where vpmaddubsw's int16 pair sum saturates, the AVX2 path still equals the reference",
          "[simd][matmul]") {
    // A = 255 (UINT8), B = 127 (INT8), zero points 0, K = 4, scales 1, 1, 1024:
    //   acc = 4 * 255 * 127 = 129540;  129540 / 1024 = 126.50390625 -> 127 (not a tie).
    // vpmaddubsw would saturate each pair 255*127 + 255*127 = 64770 to 32767,
    // giving 65534 / 1024 = 63.998 -> 64.
    Problem p;
    p.ta = DT::UInt8;
    p.tb = DT::Int8;
    p.tout = DT::UInt8;
    p.M = 1;
    p.N = 1;
    p.K = 4;
    p.fill([] { return std::uint8_t{0}; });
    std::fill(p.a.begin(), p.a.end(), 255);
    std::fill(p.b.begin(), p.b.end(), 127);
    p.a_scale = {1.0f};
    p.b_scale = {1.0f};
    p.out_scale = {1024.0f};
    for (Isa isa : runnable_isas()) {
        INFO("path " << qdml::simd::isa_name(isa));
        p.build();
        p.out.reset();
        qdml::visit_typed(p.d, [&](const auto& op) {
            qdml::simd::quantized_linear_matrix_multiply(op, qdml::simd::GemmOptions{isa});
        });
        REQUIRE(int{p.out[0]} == 127);
    }
    check_all_paths(p);  // and the reference agrees
}

TEST_CASE("simd matmul: QDML_ISA names and the cap", "[simd][matmul]") {
    Isa i = Isa::Best;
    REQUIRE(qdml::simd::parse_isa("avx2", i));
    REQUIRE(i == Isa::Avx2);
    REQUIRE(qdml::simd::parse_isa("amx", i));
    REQUIRE(i == Isa::Amx);
    REQUIRE_FALSE(qdml::simd::parse_isa("sse9", i));
    REQUIRE(qdml::simd::select_isa(Isa::Generic) == Isa::Generic);
    for (Isa cap : qdml::simd::kAllIsas) {
        const Isa got = qdml::simd::select_isa(cap);
        REQUIRE(static_cast<int>(got) <= static_cast<int>(cap));
        REQUIRE(qdml::simd::isa_available(got));
        if (qdml::simd::isa_available(cap)) REQUIRE(got == cap);
    }
}

namespace {

/// FNV-1a over every packed panel and column sum of a prepared operator.
std::uint64_t packed_hash(const qdml::simd::PreparedQuantizedLinearMatrixMultiply& prepared) {
    qtest::gemm_paths::Fnv h;
    const auto mix = [&h](const void* p, std::size_t n) { h.mix(p, n); };
    for (const auto& slice : prepared.packed()) {
        mix(slice.data.data(), slice.data.size());
        mix(slice.col_sum.data(), slice.col_sum.size() * 4);
    }
    return h.h;
}

}  // namespace

TEST_CASE("simd matmul prepared: B packed once, execute with new A many times, same bits as the reference",
          "[simd][matmul][prepared]") {
    Rng rng(qtest::case_seed(8));
    for (int iter = 0; iter < 24; ++iter) {
        Problem p = random_problem(rng, iter, false);
        for (Isa isa : runnable_isas()) {
            INFO(p.describe() << " path " << qdml::simd::isa_name(isa));
            p.fill([&] { return rng.byte(); });
            p.build();
            p.d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            const qdml::simd::PreparedQuantizedLinearMatrixMultiply prepared(p.d,
                                                                             qdml::simd::GemmOptions{isa, p.fidelity});
            REQUIRE(prepared.isa() == isa);
            const std::uint64_t packed_before = packed_hash(prepared);
            const std::vector<std::uint8_t> b_at_initialize = p.b;
            for (int run = 0; run < 3; ++run) {
                // New A and A / output parameters; B's buffer changed and unbound: execute must not read it.
                for (auto& v : p.a) v = rng.byte();
                for (auto& v : p.a_zp) v = rng.byte();
                for (auto& v : p.out_zp) v = rng.byte();
                p.out.reset();
                p.b = b_at_initialize;
                p.build();
                p.d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
                qdml::visit_typed(p.d, [&](const auto& op) {
                    qdml::reference::quantized_linear_matrix_multiply(op, p.fidelity);
                });
                const std::vector<std::uint8_t> expected = p.out.with_guards();
                p.out.reset();
                std::fill(p.b.begin(), p.b.end(), std::uint8_t{0x5a});
                auto d = p.d;
                d.BTensor.Data = nullptr;
                const auto& ex = run_executor(static_cast<std::size_t>(iter * 3 + run));
                INFO("executor " << ex.first);
                prepared.execute_unchecked(d, ex.second);
                REQUIRE(p.out.with_guards() == expected);
            }
            REQUIRE(packed_hash(prepared) == packed_before);
        }
    }
}

TEST_CASE("simd matmul prepared: errors name the member and the rule", "[simd][matmul][prepared]") {
    Problem p;
    p.M = 5;
    p.N = 7;
    p.K = 9;
    Rng rng(qtest::case_seed(8));
    p.fill([&] { return rng.byte(); });
    random_scales(p, rng);
    p.build();
    using qtest::gemm_paths::error_of;
    using Prepared = qdml::simd::PreparedQuantizedLinearMatrixMultiply;
    CHECK_THAT(error_of([&] { Prepared prepared(p.d); }),
               Catch::Matchers::Contains("BTensor: Flags must include DML_TENSOR_FLAG_OWNED_BY_DML"));
    p.d.BTensor.Desc.Flags = 3;
    CHECK_THAT(error_of([&] { Prepared prepared(p.d); }),
               Catch::Matchers::Contains("QUANTIZED_LINEAR_MATRIX_MULTIPLY: BTensor: Flags 3 has bits"));
    p.d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    const auto compiled = qdml::compile(p.d);  // B packed here
    auto other = p.d;
    other.OutputTensor.Desc.DataType = DT::Int8;
    CHECK_THAT(error_of([&] { compiled.execute(other); }),
               Catch::Matchers::Contains("OutputTensor: differs from the compiled desc"));
    other = p.d;
    other.ATensor.Data = nullptr;
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("ATensor: Data is null"));
    other = p.d;
    other.OutputTensor.Data = p.d.ATensor.Data;  // output over A
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("OutputTensor"));
}
