// MATRIX_MULTIPLY_INTEGER on the int8 GEMM engine (qdml::simd::matrix_multiply_integer,
// the engine's int32 store) against the reference, bit for bit, once per
// micro-kernel family this CPU runs (generic, AVX2, AVX-VNNI, AVX-512 VNNI,
// AMX emulated; the others are named in a warning), every other run on a
// thread pool. Random shapes around the tile sizes, the four type mixes,
// zero points absent / per tensor / per row / per column at any value,
// batch broadcast and rows broadcast (a row stride of 0), strided and
// transposed operands and outputs, accumulators that wrap; outputs
// sentinel-filled with guards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"
#include "qdml/simd/matrix_multiply_integer.hpp"
#include "qdml/simd/matrix_multiply_integer_prepared.hpp"
#include "support/gemm_paths.hpp"
#include "support/matmul_layout.hpp"

namespace {

using DT = qdml::TensorDataType;
using qtest::Rng;
using qtest::matmul_layout::Layout;
using qtest::matmul_layout::make_desc;
using qtest::matmul_layout::param_desc;
using qtest::matmul_layout::random_layout;

constexpr DT kQ8[] = {DT::UInt8, DT::Int8};

/// One integer matmul problem with its buffers.
struct Problem {
    DT ta = DT::UInt8, tb = DT::Int8;
    std::uint32_t rank = 2, batch = 1, channels = 1, M = 1, N = 1, K = 1;
    Layout la, lb, lout;
    bool per_row_a = false, per_col_b = false, a_zps = true, b_zps = true;
    std::vector<std::uint8_t> a, b, a_zp, b_zp;
    qtest::GuardedBuffer out;  ///< the output's buffer, between guards
    qdml::MatrixMultiplyIntegerDesc d;

    std::string describe() const {
        std::ostringstream os;
        os << name(ta) << " x " << name(tb) << " rank " << rank << " " << batch << "x" << channels << "x" << M << "x"
           << N << "x" << K << " A{T" << la.transposed << " pad" << la.pad << " bb" << la.bcast_batch << " bc"
           << la.bcast_channel << " br" << la.bcast_rows << "} B{T" << lb.transposed << " pad" << lb.pad << " bb"
           << lb.bcast_batch << " bc" << lb.bcast_channel << " br" << lb.bcast_rows << "} Out{T" << lout.transposed
           << " pad" << lout.pad << "} azp " << a_zps << (per_row_a ? " per row" : "") << " bzp " << b_zps
           << (per_col_b ? " per column" : "");
        return os.str();
    }

    /// Sizes every buffer from the layouts, fills A, B and the zero points
    /// with `byte()`, and binds every tensor (the output to its guarded buffer).
    template <class Byte>
    void build(Byte&& byte) {
        const std::uint32_t sa[4] = {batch, channels, M, K}, sb[4] = {batch, channels, K, N},
                            so[4] = {batch, channels, M, N};
        const qdml::TensorDesc da = make_desc(ta, rank, sa, la), db = make_desc(tb, rank, sb, lb),
                               dout = make_desc(DT::Int32, rank, so, lout);
        a.resize(*qdml::min_buffer_elements(da));
        b.resize(*qdml::min_buffer_elements(db));
        out.assign(*qdml::min_buffer_elements(dout) * sizeof(std::int32_t));
        a_zp.resize(M);
        b_zp.resize(N);
        for (auto* v : {&a, &b, &a_zp, &b_zp})
            for (auto& x : *v) x = byte();
        d = {};
        d.ATensor = {da, a.data()};
        d.BTensor = {db, b.data()};
        d.OutputTensor = {dout, out.data()};
        if (a_zps) d.AZeroPointTensor = qdml::Tensor{param_desc(ta, rank, 2, per_row_a ? M : 1), a_zp.data()};
        if (b_zps) d.BZeroPointTensor = qdml::Tensor{param_desc(tb, rank, 3, per_col_b ? N : 1), b_zp.data()};
    }
};

/// Runs the reference, then every path, in both profiles (the same sums),
/// every other run on a thread pool; requires identical output buffers.
void check_all_paths(Problem& p) {
    INFO(p.describe());
    qdml::validate(p.d);
    qtest::gemm_paths::require_same_in_both_profiles(
        p.out,
        [&](qdml::Fidelity f) {
            qdml::visit_typed(p.d, [&](const auto& op) { qdml::reference::matrix_multiply_integer(op, f); });
        },
        [&](const qdml::simd::GemmOptions& o) {
            qdml::visit_typed(p.d, [&](const auto& op) { qdml::simd::matrix_multiply_integer(op, o); });
        });
}

/// A random problem: type mix `mix` (bits: A, B signed), rank 2-4, sizes up
/// to 70 (big: 300), random layouts and zero-point forms.
Problem random_problem(Rng& rng, int mix, bool big) {
    Problem p;
    p.ta = kQ8[mix & 1];
    p.tb = kQ8[(mix >> 1) & 1];
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
    p.a_zps = !rng.coin(4);
    p.b_zps = !rng.coin(4);
    p.build([&] { return rng.byte(); });
    return p;
}

}  // namespace

TEST_CASE("simd matmul integer: random shapes, layouts, zero points and type mixes equal the reference on every path",
          "[simd][matmul_integer]") {
    Rng rng(qtest::case_seed(270));
    for (int iter = 0; iter < 120; ++iter) {
        Problem p = random_problem(rng, iter, iter % 16 == 15);
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul integer: register-block and tile edges (M 1-33, N around 16/32/48/64, K remainders) on "
          "every path",
          "[simd][matmul_integer]") {
    // Rows around every kernel's block (AVX2 4, AVX-VNNI 6, AVX-512 VNNI 8,
    // AMX 16/32; M = 1 the GEMV path), columns around the panels a call
    // covers, K around a group of 4, 64 bytes (A read in place) and AMX's 16 groups.
    Rng rng(qtest::case_seed(271));
    const std::uint32_t ms[] = {1, 2, 4, 5, 6, 7, 8, 9, 16, 17, 32, 33};
    const std::uint32_t ns[] = {1, 15, 16, 17, 32, 47, 48, 49, 64, 65};
    const std::uint32_t ks[] = {1, 3, 4, 63, 64, 65, 128};
    int mix = 0;
    for (std::uint32_t m : ms)
        for (std::uint32_t n : ns)
            for (std::uint32_t k : ks) {
                Problem p;
                p.ta = kQ8[mix & 1];
                p.tb = kQ8[(mix >> 1) & 1];
                ++mix;
                p.M = m;
                p.N = n;
                p.K = k;
                p.per_col_b = mix % 3 == 0;
                p.per_row_a = mix % 5 == 0;
                p.a_zps = mix % 7 != 0;
                p.lout.pad = mix % 4 == 0 ? 3 : 0;
                p.build([&] { return rng.byte(); });
                check_all_paths(p);
            }
}

TEST_CASE("simd matmul integer: batches of shared slices (zero strides) and rows broadcast (a row stride of 0) on "
          "every path",
          "[simd][matmul_integer]") {
    Rng rng(qtest::case_seed(272));
    constexpr std::uint32_t kRows[] = {1, 6, 8, 16, 23, 33};
    constexpr std::uint32_t kDepths[] = {4, 60, 64, 128};
    for (int iter = 0; iter < 24; ++iter) {
        Problem p;
        p.ta = kQ8[iter & 1];
        p.tb = kQ8[(iter >> 1) & 1];
        p.rank = 4;
        p.batch = 2;
        p.channels = 3;
        p.M = kRows[rng.uniform(0, 5)];
        p.N = rng.uniform(1, 40);
        p.K = kDepths[rng.uniform(0, 3)];
        p.la.bcast_rows = iter % 3 == 0;  // (every row of A the first)
        p.lb.bcast_rows = iter % 3 == 1;  // (every k of B the first)
        p.la.bcast_batch = iter % 2 == 0;
        p.lb.bcast_channel = iter % 4 < 2;
        p.per_row_a = iter % 5 < 2;
        p.per_col_b = iter % 5 >= 2;
        p.build([&] { return rng.byte(); });
        check_all_paths(p);
    }
}

TEST_CASE("simd matmul integer: accumulators that wrap modulo 2^32 (large K, extreme values) on every path",
          "[simd][matmul_integer]") {
    // A - AZP = 255 (u8 255, zero point 0; or s8 127, zero point -128) and
    // B - BZP = -255 (u8 0 with 255, s8 -128 with 127), every 7th k 0 instead:
    // the sum is -65025 * 6/7 * K, about -2.2e9 for K = 40000, below -2^31:
    // the reference's int32 wraps, every path must give the same bits. The
    // zero points per row / column cover the epilogue's correction terms.
    for (int variant = 0; variant < 4; ++variant) {
        Problem p;
        p.ta = kQ8[variant & 1];
        p.tb = kQ8[(variant >> 1) & 1];
        p.M = 9;
        p.N = 20;  // (B's element (k, 0) at 20 k, or k transposed: 0 where k % 7 == 0)
        p.K = 40000 + static_cast<std::uint32_t>(variant);
        p.lb.transposed = variant == 1;
        p.per_row_a = variant >= 2;
        p.per_col_b = variant == 3;
        const bool sa = variant & 1, sb = (variant >> 1) & 1;
        p.build([] { return std::uint8_t{0}; });
        std::fill(p.a.begin(), p.a.end(), sa ? 0x7f : 0xff);
        for (std::size_t i = 0; i < p.b.size(); ++i)
            p.b[i] = i % 7 == 0 ? (sb ? 0x7f : 0xff) : (sb ? 0x80 : 0);
        std::fill(p.a_zp.begin(), p.a_zp.end(), sa ? 0x80 : 0);
        std::fill(p.b_zp.begin(), p.b_zp.end(), sb ? 0x7f : 0xff);
        check_all_paths(p);
        // The first output by hand: k = 0 (mod 7) gives 0, the rest 255 * -255.
        std::uint32_t want = 0;
        for (std::uint32_t k = 0; k < p.K; ++k)
            if (k % 7 != 0) want += static_cast<std::uint32_t>(255 * -255);
        std::int32_t got;
        std::memcpy(&got, p.out.data(), 4);
        CHECK(got == static_cast<std::int32_t>(want));
    }
}

TEST_CASE("simd matmul integer prepared: B packed once, executed with new A three times, same bits as the reference "
          "on every path",
          "[simd][matmul_integer][prepared]") {
    // After initialize, B's and BZeroPoint's buffers are overwritten and
    // unbound (Data null): execute must read neither, nor change the panels.
    Rng rng(qtest::case_seed(273));
    for (int iter = 0; iter < 32; ++iter) {
        Problem p = random_problem(rng, iter, iter % 16 == 15);
        p.d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
        const std::vector<std::uint8_t> b0 = p.b, b_zp0 = p.b_zp;
        for (qdml::simd::Isa isa : qtest::gemm_paths::runnable_isas()) {
            INFO(p.describe() << " path " << qdml::simd::isa_name(isa));
            p.b = b0;
            p.b_zp = b_zp0;
            const qdml::simd::PreparedMatrixMultiplyInteger prepared(p.d, qdml::simd::GemmOptions{isa});
            REQUIRE(prepared.isa() == isa);
            qtest::gemm_paths::Fnv before;
            for (const auto& slice : prepared.packed()) before.mix(slice.data.data(), slice.data.size());
            for (int run = 0; run < 3; ++run) {
                for (auto& v : p.a) v = rng.byte();
                for (auto& v : p.a_zp) v = rng.byte();
                p.b = b0;
                p.b_zp = b_zp0;
                p.out.reset();
                qdml::visit_typed(p.d, [&](const auto& op) { qdml::reference::matrix_multiply_integer(op); });
                const std::vector<std::uint8_t> expected = p.out.with_guards();
                std::fill(p.b.begin(), p.b.end(), std::uint8_t{0x5a});
                std::fill(p.b_zp.begin(), p.b_zp.end(), std::uint8_t{0x5a});
                auto d = p.d;
                d.BTensor.Data = nullptr;
                if (d.BZeroPointTensor) d.BZeroPointTensor->Data = nullptr;
                p.out.reset();
                const auto& ex = qtest::gemm_paths::run_executor(static_cast<std::size_t>(iter * 3 + run));
                INFO("executor " << ex.first);
                prepared.execute_unchecked(d, ex.second);
                REQUIRE(p.out.with_guards() == expected);
                REQUIRE(p.out.broken_guard() == qtest::GuardedBuffer::ok);
            }
            qtest::gemm_paths::Fnv after;
            for (const auto& slice : prepared.packed()) after.mix(slice.data.data(), slice.data.size());
            REQUIRE(after.h == before.h);
        }
    }
}

TEST_CASE("simd matmul integer prepared: through qdml::compile, and errors that name the member and the rule",
          "[simd][matmul_integer][prepared]") {
    Rng rng(qtest::case_seed(274));
    Problem p;
    p.M = 5;
    p.N = 7;
    p.K = 9;
    p.build([&] { return rng.byte(); });
    using qtest::gemm_paths::error_of;
    using Prepared = qdml::simd::PreparedMatrixMultiplyInteger;
    CHECK_THAT(error_of([&] { Prepared prepared(p.d); }),
               Catch::Matchers::Contains("MATRIX_MULTIPLY_INTEGER: BTensor: Flags must include DML_TENSOR_FLAG_OWNED_BY_DML"));
    p.d.BTensor.Desc.Flags = 3;
    CHECK_THAT(error_of([&] { Prepared prepared(p.d); }),
               Catch::Matchers::Contains("MATRIX_MULTIPLY_INTEGER: BTensor: Flags 3 has bits"));
    p.d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    p.out.reset();
    qdml::visit_typed(p.d, [&](const auto& op) { qdml::reference::matrix_multiply_integer(op); });
    const std::vector<std::uint8_t> expected = p.out.with_guards();
    const auto compiled = qdml::compile(p.d);  // B packed here
    auto d = p.d;
    d.BTensor.Data = nullptr;  // (constant weights: not bound at execute)
    d.BZeroPointTensor->Data = nullptr;
    p.out.reset();
    compiled.execute(d);
    CHECK(p.out.with_guards() == expected);
    auto other = p.d;
    other.OutputTensor.Desc.DataType = DT::Float32;
    CHECK_THAT(error_of([&] { compiled.execute(other); }),
               Catch::Matchers::Contains("OutputTensor: differs from the compiled desc"));
    other = d;
    other.ATensor.Data = nullptr;
    CHECK_THAT(error_of([&] { compiled.execute(other); }), Catch::Matchers::Contains("ATensor: Data is null"));
}
