// The GEMM engine's micro-kernels, one at a time, the way XNNPACK tests its
// micro-kernels (test/gemm-microkernel-tester.h): each kernel this CPU runs
// is called directly on operands packed by pack_left / pack_right and an
// Epilogue prepared from a RequantSpec set up here, over edge shapes (K
// around a k group of 4, a loop of four groups, a 64-byte row and the AMX
// tile's 16 groups; every row count up to the kernel's row block, after a
// whole block or alone; every column tail of a 16-column panel and panel
// counts around what a call covers), the eight INT8/UINT8 type mixes,
// zero points (absent, per tensor at the extremes, per row, per column),
// the three multiplier forms, plain and transposed outputs; and the int32
// store (RequantSpec::int32_out: acc itself, MATRIX_MULTIPLY_INTEGER's
// output, docs/semantics.md section 12) on the same shapes. Every output
// byte is checked against a plain scalar transcription of
// docs/semantics.md section 5 written below (no qdml code), and every other
// byte of the output's guarded buffer must keep its sentinel. The engine-
// level tests (test_quantized_linear_matrix_multiply.cpp) check the driver,
// the blocking and the DirectML binding on top of these kernels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/simd/gemm/gemm.hpp"
#include "support/buffers.hpp"

namespace {

using qdml::simd::Isa;
namespace gemm = qdml::simd::gemm;
using gemm::Epilogue;
using gemm::LeftLayout;
using gemm::PackedLeft;
using gemm::PackedRight;
using qtest::Rng;

// ---------------------------------------------------------------------------
// The oracle: docs/semantics.md section 5, transcribed.
//   acc  = sum over k of (A[m][k] - AZeroPoint[m]) * (B[k][n] - BZeroPoint[n])   (32-bit, wrapping)
//   mult = fp32(AScale[m] * BScale[n]) / OutputScale[m]
//   out  = Q(fp32(acc) * mult, OutputZeroPoint[m], OutputType)
// Q (section 2): clamp to [lo - zp, hi - zp] in binary32 (NaN becomes
// lo - zp), round to nearest even, add zp.

std::int32_t oracle_acc(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& azp,
                        const std::vector<int>& bzp, std::size_t K, std::size_t N, std::size_t m, std::size_t n) {
    std::uint32_t acc = 0;
    for (std::size_t k = 0; k < K; ++k)
        acc += static_cast<std::uint32_t>(a[m * K + k] - azp[m]) * static_cast<std::uint32_t>(b[k * N + n] - bzp[n]);
    return static_cast<std::int32_t>(acc);  // (two's complement: C++17 implementations, C++20 by definition)
}

int oracle_q(float v, int zp, int lo, int hi) {
    const float low = static_cast<float>(lo - zp), high = static_cast<float>(hi - zp);
    if (std::isnan(v)) v = low;
    v = std::min(std::max(v, low), high);
    return static_cast<int>(std::nearbyint(v)) + zp;  // the default rounding mode: to nearest, ties to even
}

int oracle_out(std::int32_t acc, float a_scale, float b_scale, float out_scale, int zp, int lo, int hi) {
    const float scales = a_scale * b_scale;
    const float mult = scales / out_scale;
    const float v = static_cast<float>(acc) * mult;
    return oracle_q(v, zp, lo, hi);
}

// ---------------------------------------------------------------------------
// The micro-kernels: one entry per kernel and operand form, as the list of
// an XNNPACK micro-kernel family. A kernel computes rows m0..m0+rows-1 of
// the output (rows <= the row block) times `np` panels of 16 columns from p.

struct Call {
    std::size_t m0, rows, p, np;
};

using RunFn = void (*)(const PackedLeft&, const PackedRight&, const Epilogue&, const std::vector<Call>&, bool signed_out);

struct Microkernel {
    const char* name;
    Isa isa;
    LeftLayout layout;
    std::size_t mr;          ///< rows per block
    std::size_t np_max;      ///< panels per call (one row: np_row)
    std::size_t np_row;
    bool wide;               ///< RightPacking::wide (AVX2's widened panels)
    bool in_place;           ///< LeftPacking::in_place (whole blocks of a u8 A read where they are)
    int mixes;               ///< type mixes per shape (of the 8, rotating): fewer where the row block is large
    RunFn run;
};

void run_generic(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls,
                 bool signed_out) {
    for (const Call& c : calls)
        for (std::size_t j = 0; j < c.np; ++j)
            e.int32_out  ? gemm::generic::tile<std::int32_t>(a, b, e, c.m0, c.rows, c.p + j)
            : signed_out ? gemm::generic::tile<std::int8_t>(a, b, e, c.m0, c.rows, c.p + j)
                         : gemm::generic::tile<std::uint8_t>(a, b, e, c.m0, c.rows, c.p + j);
}

#if QDML_X86
void run_avx2(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls, bool) {
    for (const Call& c : calls)
        for (std::size_t j = 0; j < c.np; ++j) gemm::avx2::tiles(a, b, e, c.m0, c.rows, c.p + j);
}

#if QDML_INLINE_ASM
std::size_t g_fused_panels = 0;  ///< panels the fused form stored (a test that it ran)

/// The AVX2 driver's form (gemm.hpp): a whole 4-row block through the fused
/// form (x86/avx2/gemm_kernel.hpp: fused_panels) where its epilogue allows,
/// the panels it leaves (the last partial one, other epilogues) and
/// smaller blocks through the tiles.
void run_avx2_fused(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls,
                    bool) {
    gemm::avx2::FusedPlan plan = gemm::avx2::fused_plan(b, e);
    for (const Call& c : calls) {
        const std::size_t from =
            c.rows == gemm::avx2::kRows ? gemm::avx2::fused_panels(plan, a, b, e, c.m0, c.p, c.p + c.np) : c.p;
        g_fused_panels += from - c.p;
        for (std::size_t p = from; p < c.p + c.np; ++p) gemm::avx2::tiles(a, b, e, c.m0, c.rows, p);
    }
}

/// The same along the row blocks (the driver's form for few panels): each
/// panel of the calls over the whole blocks of all the calls' rows at once.
void run_avx2_fused_rows(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls,
                         bool) {
    gemm::avx2::FusedPlan plan = gemm::avx2::fused_plan(b, e);
    const std::size_t M = a.M;
    for (std::size_t p = 0; p < b.panels; ++p) {
        const std::size_t done = gemm::avx2::fused_rows(plan, a, b, e, 0, M, p);
        g_fused_panels += done / gemm::avx2::kRows;
        for (std::size_t m0 = done; m0 < M; m0 += gemm::avx2::kRows)
            gemm::avx2::tiles(a, b, e, m0, std::min<std::size_t>(gemm::avx2::kRows, M - m0), p);
    }
    (void)calls;
}
#endif

void run_avxvnni(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls, bool) {
    for (const Call& c : calls)
        for (std::size_t j = 0; j < c.np; ++j) gemm::avxvnni::tiles(a, b, e, c.m0, c.rows, c.p + j);
}

void run_avx512vnni(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls,
                    bool) {
    for (const Call& c : calls) gemm::avx512vnni::tiles(a, b, e, c.m0, c.rows, c.p, c.np);
}

/// AMX: blocks of up to 32 rows (2 row tiles) x 1 or 2 panels, each block's
/// epilogue left pending while the next computes; one Session (the tile
/// configuration) for the product, finish() stores the last block.
void run_amx(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const std::vector<Call>& calls, bool) {
    gemm::Session session(Isa::Amx);
    for (const Call& c : calls) {
        auto& pd = session.pending();
        if (c.rows > 16)
            c.np == 2 ? gemm::amx::tile<2, 2>(a, b, e, c.m0, c.rows, c.p, pd)
                      : gemm::amx::tile<2, 1>(a, b, e, c.m0, c.rows, c.p, pd);
        else
            c.np == 2 ? gemm::amx::tile<1, 2>(a, b, e, c.m0, c.rows, c.p, pd)
                      : gemm::amx::tile<1, 1>(a, b, e, c.m0, c.rows, c.p, pd);
    }
    session.finish();
}
#endif

const Microkernel kMicrokernels[] = {
    {"generic 4x16", Isa::Generic, gemm::generic::kLayout, gemm::generic::kRows, 1, 1, false, false, 8, run_generic},
#if QDML_X86
    {"avx2 4x16", Isa::Avx2, gemm::avx2::kLayout, gemm::avx2::kRows, 1, 1, false, false, 8, run_avx2},
    {"avx2 4x16 wide panels", Isa::Avx2, gemm::avx2::kLayout, gemm::avx2::kRows, 1, 1, true, false, 8, run_avx2},
    {"avxvnni 6x16", Isa::AvxVnni, gemm::avxvnni::kLayout, gemm::avxvnni::kRows, 1, 1, false, false, 8, run_avxvnni},
    {"avxvnni 6x16 A in place", Isa::AvxVnni, gemm::avxvnni::kLayout, gemm::avxvnni::kRows, 1, 1, false, true, 8,
     run_avxvnni},
    {"avx512vnni 8x48", Isa::Avx512Vnni, gemm::avx512vnni::kLayout, gemm::avx512vnni::kRows,
     gemm::avx512vnni::kPanels, gemm::avx512vnni::kRowPanels, false, false, 8, run_avx512vnni},
    {"avx512vnni 8x48 A in place", Isa::Avx512Vnni, gemm::avx512vnni::kLayout, gemm::avx512vnni::kRows,
     gemm::avx512vnni::kPanels, gemm::avx512vnni::kRowPanels, false, true, 8, run_avx512vnni},
    {"amx 32x32", Isa::Amx, gemm::amx::kLayout, gemm::amx::kRows, 2, 2, false, false, 2, run_amx},
    {"amx 32x32 A in place", Isa::Amx, gemm::amx::kLayout, gemm::amx::kRows, 2, 2, false, true, 2, run_amx},
#if QDML_INLINE_ASM
    {"avx2 4x16 fused panels", Isa::Avx2, gemm::avx2::kLayout, gemm::avx2::kRows, 4, 1, true, false, 8, run_avx2_fused},
    {"avx2 4x16 fused rows", Isa::Avx2, gemm::avx2::kLayout, gemm::avx2::kRows, 1, 1, true, false, 8,
     run_avx2_fused_rows},
#endif
#endif
};

// ---------------------------------------------------------------------------
// One case.

enum class ZeroPoints { Absent, PerTensor, PerRowA, PerColumnB, Both };
enum class Scales { PerTensor, PerColumn, PerRow, PerElement };

struct Case {
    std::size_t K = 1, rows = 1, N = 1;
    bool a_signed = false, b_signed = true, out_signed = false;
    bool lead_block = false;   ///< a whole row block before the `rows` under test
    std::size_t np = 1;        ///< panels per call (at most the kernel's)
    ZeroPoints zps = ZeroPoints::PerTensor;
    Scales scales = Scales::PerTensor;
    int mult_form = 0;         ///< 0: from the accumulators' range (few outputs clamp); 1: large (most clamp); 2: a NaN scale
    bool a_transposed = false, b_transposed = false, out_transposed = false;
    std::size_t a_pad = 0, b_pad = 0, out_pad = 0;

    std::string describe(const Microkernel& k, std::uint64_t seed) const {
        static const char* zp_names[] = {"absent", "per tensor", "per row of A", "per column of B", "per row and column"};
        static const char* scale_names[] = {"per tensor", "per column", "per row", "per element"};
        std::ostringstream s;
        s << k.name << ": K " << K << ", rows " << rows << (lead_block ? " after a whole block" : "") << ", N " << N
          << ", " << (a_signed ? "s8" : "u8") << " x " << (b_signed ? "s8" : "u8") << " -> " << (out_signed ? "s8" : "u8")
          << ", " << np << " panel(s) a call, zero points " << zp_names[static_cast<int>(zps)] << ", scales "
          << scale_names[static_cast<int>(scales)] << ", multipliers "
          << (mult_form == 0 ? "from the range" : mult_form == 1 ? "large" : "with a NaN") << ", A"
          << (a_transposed ? " transposed" : "") << " pad " << a_pad << ", B" << (b_transposed ? " transposed" : "")
          << " pad " << b_pad << ", output" << (out_transposed ? " transposed" : "") << " pad " << out_pad << "; seed "
          << seed;
        return s.str();
    }
};

struct Stats {
    std::size_t cases = 0, failed = 0, outputs = 0, clamped = 0, borrowed = 0;
};

/// Runs `c` on kernel `k`; returns whether every byte of the output's
/// buffer is right. TOut int32: the int32 store (acc itself; the scales and
/// the output zero point are not given to the engine).
template <class TA, class TB, class TOut>
bool run_case(const Microkernel& k, const Case& c, Rng& rng, Stats& stats) {
    constexpr bool kInt32 = std::is_same_v<TOut, std::int32_t>;
    const std::size_t lead = c.lead_block ? k.mr : 0, M = lead + c.rows, K = c.K, N = c.N;
    const int out_lo = kInt32 ? 0 : std::numeric_limits<TOut>::min(), out_hi = kInt32 ? 255 : std::numeric_limits<TOut>::max();
    const auto value = [&](bool is_signed) { return static_cast<int>(rng.byte()) - (is_signed ? 128 : 0); };

    // Operands as ints (logical [m][k] and [k][n]) and in memory, with their strides.
    std::vector<int> a(M * K), b(K * N);
    for (auto& v : a) v = value(std::is_signed_v<TA>);
    for (auto& v : b) v = value(std::is_signed_v<TB>);
    const std::uint64_t a_rs = c.a_transposed ? 1 : K + c.a_pad, a_cs = c.a_transposed ? M + c.a_pad : 1;
    const std::uint64_t b_rs = c.b_transposed ? 1 : N + c.b_pad, b_cs = c.b_transposed ? K + c.b_pad : 1;
    std::vector<TA> a_mem((M - 1) * a_rs + (K - 1) * a_cs + 1, TA{0x5a});
    std::vector<TB> b_mem((K - 1) * b_rs + (N - 1) * b_cs + 1, TB{0x5a});
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t kk = 0; kk < K; ++kk) a_mem[m * a_rs + kk * a_cs] = static_cast<TA>(a[m * K + kk]);
    for (std::size_t kk = 0; kk < K; ++kk)
        for (std::size_t n = 0; n < N; ++n) b_mem[kk * b_rs + n * b_cs] = static_cast<TB>(b[kk * N + n]);

    // Parameters, one per row / column (the spec gets one value where they
    // are per tensor). Zero points at any value, the extremes often; scales
    // 2^-e times 1 to 2 (e per case), so that per-row and per-column
    // multipliers stay within a factor of 4 of each other.
    const bool zp_row = c.zps == ZeroPoints::PerRowA || c.zps == ZeroPoints::Both;
    const bool zp_col = c.zps == ZeroPoints::PerColumnB || c.zps == ZeroPoints::Both;
    const bool scale_row = c.scales == Scales::PerRow || c.scales == Scales::PerElement;
    const bool scale_col = c.scales == Scales::PerColumn || c.scales == Scales::PerElement;
    const bool ozp_row = zp_row || scale_row;  // the output's zero point per row
    std::vector<int> azp(M, 0), bzp(N, 0), ozp(M, 0);
    if (c.zps != ZeroPoints::Absent) {
        for (std::size_t m = 0; m < M; ++m) azp[m] = zp_row || m == 0 ? value(std::is_signed_v<TA>) : azp[0];
        for (std::size_t n = 0; n < N; ++n) bzp[n] = zp_col || n == 0 ? value(std::is_signed_v<TB>) : bzp[0];
    }
    const int exponent = -static_cast<int>(rng.uniform(0, 6));
    const auto scale = [&] { return std::ldexp(1.0f + static_cast<float>(rng.uniform(0, 255)) / 256.0f, exponent); };
    std::vector<float> as(M), bs(N), os(M);
    for (std::size_t m = 0; m < M; ++m) as[m] = scale_row || m == 0 ? scale() : as[0];
    for (std::size_t n = 0; n < N; ++n) bs[n] = scale_col || n == 0 ? scale() : bs[0];
    const float bs_max = *std::max_element(bs.begin(), bs.end());
    // The output scale from the accumulators' spread (XNNPACK's tester: the
    // outputs then use the type's range rather than clamp), and the output
    // zero point at its centre give or take 16; or large multipliers (up to
    // 2^9: most outputs clamp, some beyond 2^31) and any zero point; or a NaN scale.
    std::vector<std::int32_t> acc(M * N);
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t n = 0; n < N; ++n) {
            acc[m * N + n] = oracle_acc(a, b, azp, bzp, K, N, m, n);
            lo = std::min<std::int64_t>(lo, acc[m * N + n]);
            hi = std::max<std::int64_t>(hi, acc[m * N + n]);
        }
    const float spread = static_cast<float>(std::max<std::int64_t>(hi - lo, 1)) / 255.0f;
    const int mid = std::is_signed_v<TOut> ? 0 : 128;
    for (std::size_t m = 0; m < M; ++m) {
        if (!scale_row && m > 0) {
            os[m] = os[0];
        } else if (c.mult_form == 1) {
            os[m] = as[m] * bs_max / static_cast<float>(rng.uniform(1, 256));
        } else {
            os[m] = as[m] * bs_max * spread * rng.between(1.0f, 2.0f);
        }
        if (!ozp_row && m > 0) {
            ozp[m] = ozp[0];
        } else if (c.zps != ZeroPoints::Absent && c.mult_form == 0) {
            const float centre = static_cast<float>(lo + hi) / 2.0f * (as[m] * bs_max / os[m]);
            const float zp = std::clamp(static_cast<float>(mid) - centre, static_cast<float>(out_lo), static_cast<float>(out_hi));
            ozp[m] = std::clamp(static_cast<int>(zp) + static_cast<int>(rng.range(-16, 16)), out_lo, out_hi);
        } else if (c.zps != ZeroPoints::Absent) {
            ozp[m] = value(std::is_signed_v<TOut>);
        }
    }
    if (c.mult_form == 2) {
        if (scale_col)
            bs[N - 1] = std::numeric_limits<float>::quiet_NaN();
        else if (scale_row)
            os[M - 1] = std::numeric_limits<float>::quiet_NaN();
        else
            std::fill(os.begin(), os.end(), std::numeric_limits<float>::quiet_NaN());
    }

    // The engine's spec: zero points shifted as gemm/types.hpp says (the
    // left operand unsigned: a signed A + 128; the right signed: an unsigned B - 128).
    gemm::RequantSpec spec;
    const int a_shift = std::is_signed_v<TA> ? 128 : 0, b_shift = std::is_signed_v<TB> ? 0 : -128;
    spec.a_zp.resize(zp_row ? M : 1);
    for (std::size_t m = 0; m < spec.a_zp.size(); ++m) spec.a_zp[m] = azp[m] + a_shift;
    spec.b_zp.resize(zp_col ? N : 1);
    for (std::size_t n = 0; n < spec.b_zp.size(); ++n) spec.b_zp[n] = bzp[n] + b_shift;
    spec.out_zp.assign(ozp.begin(), ozp.begin() + (ozp_row ? M : 1));
    spec.a_scale.assign(as.begin(), as.begin() + (scale_row ? M : 1));
    spec.out_scale.assign(os.begin(), os.begin() + (scale_row ? M : 1));
    spec.b_scale.assign(bs.begin(), bs.begin() + (scale_col ? N : 1));
    spec.out_lo = out_lo;
    spec.out_hi = out_hi;
    if (kInt32) {
        spec.int32_out = true;
        spec.a_scale.clear();
        spec.b_scale.clear();
        spec.out_scale.clear();
        spec.out_zp.clear();
    }

    // Packed operands and the epilogue, in the driver's order (the columns
    // first: they say whether the row sums are needed).
    PackedRight pb;
    gemm::pack_right(gemm::Matrix<TB>{b_mem.data(), b_rs, b_cs}, K, N, k.isa, pb, {k.wide});
    Epilogue e;
    gemm::prepare_columns(spec, pb, e);
    PackedLeft pa;
    gemm::pack_left(gemm::Matrix<TA>{a_mem.data(), a_rs, a_cs}, M, K, k.layout, k.mr, gemm::k_groups(K, k.isa), pa,
                    {e.needs_row_sums(), k.in_place});
    gemm::prepare_rows(spec, pa, e);
    stats.borrowed += pa.borrowed_rows > 0;

    // The output in a guarded buffer: row-major with padded rows, or transposed.
    const std::uint64_t o_rs = c.out_transposed ? 1 : N + c.out_pad, o_cs = c.out_transposed ? M + c.out_pad : 1;
    qtest::GuardedBuffer out(((M - 1) * o_rs + (N - 1) * o_cs + 1) * sizeof(TOut));
    e.out = out.data();
    e.out_rs = o_rs;
    e.out_cs = o_cs;

    // The calls: row blocks, each over the panels np at a time.
    std::vector<Call> calls;
    for (std::size_t m0 = 0; m0 < M; m0 += k.mr) {
        const std::size_t rows = std::min(k.mr, M - m0);
        const std::size_t np = rows == 1 ? std::min(c.np, k.np_row) : std::min(c.np, k.np_max);
        for (std::size_t p = 0; p < pb.panels; p += np) calls.push_back({m0, rows, p, std::min(np, pb.panels - p)});
    }
    k.run(pa, pb, e, calls, std::is_signed_v<TOut>);

    // Expected: the sentinel everywhere but the M x N outputs.
    std::vector<std::uint8_t> expected = qtest::GuardedBuffer(out.size()).with_guards();
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t n = 0; n < N; ++n) {
            if (kInt32) {  // little-endian bytes of acc
                const auto v = static_cast<std::uint32_t>(acc[m * N + n]);
                for (std::size_t i = 0; i < 4; ++i)
                    expected[qtest::kGuardBytes + (m * o_rs + n * o_cs) * 4 + i] = static_cast<std::uint8_t>(v >> (8 * i));
                continue;
            }
            const std::size_t bs_n = scale_col ? n : 0;
            const int q = oracle_out(acc[m * N + n], as[m], bs[bs_n], os[m], ozp[m], out_lo, out_hi);
            stats.clamped += c.mult_form == 0 && (q == out_lo || q == out_hi);
            expected[qtest::kGuardBytes + m * o_rs + n * o_cs] = static_cast<std::uint8_t>(q);
        }
    ++stats.cases;
    if (c.mult_form == 0 && !kInt32) stats.outputs += M * N;
    const std::vector<std::uint8_t> got = out.with_guards();
    if (got == expected && out.broken_guard() == qtest::GuardedBuffer::ok) return true;

    ++stats.failed;
    if (stats.failed <= 3) {  // the first few in full; the test's summary counts the rest
        std::size_t first = 0, wrong = 0;
        for (std::size_t i = got.size(); i-- > 0;)
            if (got[i] != expected[i]) {
                first = i;
                ++wrong;
            }
        std::ostringstream where;
        const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(first) - static_cast<std::ptrdiff_t>(qtest::kGuardBytes);
        bool in_view = false;
        for (std::size_t m = 0; m < M && !in_view; ++m)
            for (std::size_t n = 0; n < N && !in_view; ++n)
                if (static_cast<std::ptrdiff_t>((m * o_rs + n * o_cs) * sizeof(TOut)) == at - at % static_cast<std::ptrdiff_t>(sizeof(TOut))) {
                    where << "output (" << m << ", " << n << "): accumulator " << acc[m * N + n] << ", expected "
                          << static_cast<int>(static_cast<TOut>(expected[first])) << ", got "
                          << static_cast<int>(static_cast<TOut>(got[first])) << (kInt32 ? " (a byte of it)" : "");
                    in_view = true;
                }
        if (!in_view) where << "byte " << at << " from the output's start, outside the view: 0x" << std::hex
                            << static_cast<int>(got[first]) << " (sentinel 0xa5)";
        FAIL_CHECK(wrong << " wrong bytes in the output's buffer; the first: " << where.str() << "\n"
                         << c.describe(k, rng.seed()));
    }
    return false;
}

using CaseFn = bool (*)(const Microkernel&, const Case&, Rng&, Stats&);
using i8 = std::int8_t;
using u8 = std::uint8_t;
using i32 = std::int32_t;
/// The eight type mixes, indexed by (A signed, B signed, output signed) as bits 0-2.
constexpr CaseFn kMixes[] = {run_case<u8, u8, u8>, run_case<i8, u8, u8>, run_case<u8, i8, u8>, run_case<i8, i8, u8>,
                             run_case<u8, u8, i8>, run_case<i8, u8, i8>, run_case<u8, i8, i8>, run_case<i8, i8, i8>};
/// The four input mixes with the int32 store, indexed by (A signed, B signed) as bits 0-1.
constexpr CaseFn kInt32Mixes[] = {run_case<u8, u8, i32>, run_case<i8, u8, i32>, run_case<u8, i8, i32>,
                                  run_case<i8, i8, i32>};

/// Whether `isa`'s kernels run here; warns once per ISA when not.
bool runs_here(const Microkernel& k) {
    if (qdml::simd::isa_available(k.isa)) {
#if defined(QDML_GEMM_TEST_AMX_EMULATION) && QDML_X86
        if (k.isa == Isa::Amx && qdml::simd::gemm::amx::emulation::emulated())
            WARN("micro-kernel " << k.name << " runs emulated: its tile instructions in plain C++ (this CPU has no "
                                             "AMX-INT8: x86/amx/emulation.hpp's testing aid), its epilogue "
                                 << (qdml::simd::isa_available(Isa::Avx512Vnni) ? "the AVX-512 stores" : "the AVX2 store"));
#endif
        return true;
    }
    WARN("micro-kernel " << k.name << " not tested: this CPU does not run the " << qdml::simd::isa_name(k.isa)
                         << " path");
    return false;
}

/// The sweep of one kernel: K around a k group, four groups, 64 bytes and
/// the AMX tile's 16 groups; every row count up to the row block, alone and
/// after a whole block; column tails of a panel and 1-4 panels; each
/// shape with k.mixes of the eight type mixes (rotating) and an epilogue
/// form, operand layout and panels-per-call drawn at random. `int32_out`:
/// the int32 store instead, the output's signedness bit unused.
void sweep(const Microkernel& k, std::uint64_t salt, bool int32_out = false) {
    if (!runs_here(k)) return;
#if QDML_X86 && QDML_INLINE_ASM
    g_fused_panels = 0;
#endif
    static const std::size_t kDepths[] = {1, 3, 4, 8, 12, 63, 64, 65, 127, 128, 129};
    static const std::size_t kCols[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 48, 64};
    Rng rng(qtest::case_seed(salt));
    INFO("seed " << rng.seed() << " (--rng-seed " << Catch::rngSeed() << ")");
    Stats stats;
    int mix = 0;
    for (std::size_t K : kDepths)
        for (std::size_t rows = 1; rows <= k.mr; ++rows)
            for (std::size_t N : kCols)
                for (int i = 0; i < k.mixes; ++i, mix = (mix + 1) % 8) {
                    Case c;
                    c.K = K;
                    c.rows = rows;
                    c.N = N;
                    c.a_signed = mix & 1;
                    c.b_signed = (mix >> 1) & 1;
                    c.out_signed = (mix >> 2) & 1;
                    c.lead_block = rng.coin(2);
                    c.np = rng.uniform(1, static_cast<std::uint32_t>(rows == 1 ? k.np_row : k.np_max));
                    c.zps = static_cast<ZeroPoints>(rng.uniform(0, 4));
                    c.scales = static_cast<Scales>(rng.uniform(0, 3));
                    c.mult_form = rng.coin(8) ? 1 : rng.coin(16) ? 2 : 0;
                    // Operands mostly contiguous (what the in-place reads and
                    // the vector packers take), sometimes padded or transposed.
                    c.a_transposed = rng.coin(8);
                    c.b_transposed = rng.coin(8);
                    c.out_transposed = rng.coin(8);
                    c.a_pad = rng.coin(4) ? rng.uniform(1, 64) : 0;
                    c.b_pad = rng.coin(4) ? rng.uniform(1, 5) : 0;
                    c.out_pad = rng.coin(4) ? rng.uniform(1, 5) : 0;
                    (int32_out ? kInt32Mixes[mix % 4] : kMixes[mix])(k, c, rng, stats);
                }
    INFO(k.name << ": " << stats.failed << " of " << stats.cases << " cases wrong; " << stats.clamped << " of "
                << stats.outputs << " outputs at a bound with multipliers from the range; A read in place in "
                << stats.borrowed << " cases");
    CHECK(stats.failed == 0);
    if (!int32_out) CHECK(stats.clamped * 4 < stats.outputs);  // the cases test the arithmetic, not only the clamps
    // The in-place form was taken (AMX's needs AVX-512: pack.hpp).
    if (k.in_place && (k.isa != Isa::Amx || qdml::simd::isa_available(Isa::Avx512Vnni))) CHECK(stats.borrowed > 0);
#if QDML_X86 && QDML_INLINE_ASM
    if ((k.run == run_avx2_fused || k.run == run_avx2_fused_rows) && !int32_out)
        CHECK(g_fused_panels > 0);  // (the fused form ran)
#endif
}

}  // namespace

TEST_CASE("gemm micro-kernels: each kernel this CPU runs against the scalar oracle on edge shapes",
          "[gemm][microkernel]") {
    for (std::size_t i = 0; i < std::size(kMicrokernels); ++i)  // (-c "<name>" runs one)
        DYNAMIC_SECTION(kMicrokernels[i].name) { sweep(kMicrokernels[i], 100 + i); }
}

TEST_CASE("gemm micro-kernels: the int32 store (acc itself) of each kernel this CPU runs on edge shapes",
          "[gemm][microkernel][int32]") {
    for (std::size_t i = 0; i < std::size(kMicrokernels); ++i)
        DYNAMIC_SECTION(kMicrokernels[i].name) { sweep(kMicrokernels[i], 200 + i, true); }
}

TEST_CASE("gemm micro-kernels: the scalar oracle on hand-derived values", "[gemm][microkernel]") {
    // acc wraps: 2 * (255 - 0) * (127 - (-128)) * 33025 ... kept small here:
    // u8 A {255, 255}, s8 B {127, -128}, zero points 0: acc = 255*127 - 255*128 = -255.
    CHECK(oracle_acc({255, 255}, {127, -128}, {0}, {0}, 2, 1, 0, 0) == -255);
    // Wrapping: 0x10000 * 0x10000 = 2^32 -> 0.
    CHECK(oracle_acc({65536}, {65536}, {0}, {0}, 1, 1, 0, 0) == 0);
    // mult = fp32(0.5 * 0.25) / 2 = 0.0625; -255 * 0.0625 = -15.9375 -> -16, + zp 3 = -13.
    CHECK(oracle_out(-255, 0.5f, 0.25f, 2.0f, 3, -128, 127) == -13);
    // Ties to even: 5 * 0.5 = 2.5 -> 2; 7 * 0.5 = 3.5 -> 4; -5 * 0.5 -> -2.
    CHECK(oracle_out(5, 1.0f, 0.5f, 1.0f, 0, 0, 255) == 2);
    CHECK(oracle_out(7, 1.0f, 0.5f, 1.0f, 0, 0, 255) == 4);
    CHECK(oracle_out(-5, 1.0f, 0.5f, 1.0f, 0, -128, 127) == -2);
    // Clamps at lo - zp / hi - zp; NaN becomes lo - zp (then + zp: lo).
    CHECK(oracle_out(1000, 1.0f, 1.0f, 1.0f, 10, 0, 255) == 255);
    CHECK(oracle_out(-1000, 1.0f, 1.0f, 1.0f, 10, 0, 255) == 0);
    CHECK(oracle_out(3, std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0f, 10, 0, 255) == 0);
    CHECK(oracle_out(3, 1.0f, 1.0f, std::numeric_limits<float>::quiet_NaN(), -5, -128, 127) == -128);
    // fp32(acc) rounds: 2^24 + 1 -> 2^24; times 2^-24 = 1.
    CHECK(oracle_out((1 << 24) + 1, 1.0f, 1.0f, 16777216.0f, 0, 0, 255) == 1);
}

// ---------------------------------------------------------------------------
// DirectML's requantize (docs/semantics.md section 10) applies the scales one
// at a time: ((fp32(acc) * s1) * s2) / OutputScale, with (s1, s2) =
// (AScale, BScale[n]), or (BScale[n], AScale) for the NHWC convolution
// (RequantSpec::col_scale_first). The two orders round differently near a
// half, rarely: random values almost never tell them apart. Here the values
// are searched for where they do, and the product that has them goes
// through the AVX2 driver (the fused form on whole 4-row blocks and panels,
// x86/avx2/gemm_kernel.hpp; the tiles without GNU asm), both orders, u8 and
// s8 outputs. Transcription of the DirectML quantize step for values far
// below 2^30 (no saturation or wrap): clamp(rne(v) + zp, lo, hi).

namespace {

int dml_out(std::int32_t acc, float s1, float s2, float out_scale, int zp, int lo, int hi) {
    const float x = static_cast<float>(acc) * s1;
    const float y = x * s2;
    const float v = y / out_scale;
    return std::min(std::max(static_cast<int>(std::nearbyint(v)) + zp, lo), hi);
}

template <class TOut>
void dml_order_case(bool col_first, Rng& rng) {
    constexpr std::size_t M = 8, K = 32, N = 32;  // two 4-row blocks, two panels; B's column n is d[n] at row n
    const int lo = std::is_signed_v<TOut> ? -128 : 0, hi = std::is_signed_v<TOut> ? 127 : 255;
    const int zp = std::is_signed_v<TOut> ? -3 : 131;
    const float a_scale = 0.0123f, out_scale = 0.173f;
    std::vector<float> b_scale(N);
    std::vector<int> d(N);
    std::vector<std::uint8_t> a(M * K);
    for (auto& v : a) v = static_cast<std::uint8_t>(rng.uniform(0, 255));
    const auto out_of = [&](std::int32_t acc, float sb) {
        return col_first ? dml_out(acc, sb, a_scale, out_scale, zp, lo, hi) : dml_out(acc, a_scale, sb, out_scale, zp, lo, hi);
    };
    const auto other = [&](std::int32_t acc, float sb) {
        return col_first ? dml_out(acc, a_scale, sb, out_scale, zp, lo, hi) : dml_out(acc, sb, a_scale, out_scale, zp, lo, hi);
    };
    // Per column: a scale and d where some a in 0..255 gives a product whose
    // output depends on the order; those a go to the column's rows.
    std::size_t telling = 0;
    for (std::size_t n = 0; n < N; ++n) {
        std::vector<int> found;
        for (int attempt = 0; attempt < 200000 && found.empty(); ++attempt) {
            b_scale[n] = rng.between(0.001f, 0.05f);
            d[n] = static_cast<int>(rng.uniform(1, 255)) - 128;
            for (int v = 0; v < 256; ++v)
                if (out_of(v * d[n], b_scale[n]) != other(v * d[n], b_scale[n])) found.push_back(v);
        }
        for (std::size_t m = 0; m < M && !found.empty(); ++m)
            if (m % 2 == n % 2 || found.size() > 1) {
                a[m * K + n] = static_cast<std::uint8_t>(found[(m + n) % found.size()]);
                ++telling;
            }
    }
    std::vector<std::int8_t> b(K * N, 0);
    for (std::size_t n = 0; n < N; ++n) b[n * N + n] = static_cast<std::int8_t>(d[n]);

    gemm::RequantSpec spec;
    spec.a_zp = {0};
    spec.b_zp = {0};
    spec.out_zp = {zp};
    spec.a_scale = {a_scale};
    spec.b_scale = b_scale;
    spec.out_scale = {out_scale};
    spec.out_lo = lo;
    spec.out_hi = hi;
    spec.directml = true;
    spec.col_scale_first = col_first;
    PackedRight pb;
    gemm::pack_right(gemm::Matrix<std::int8_t>{b.data(), N, 1}, K, N, Isa::Avx2, pb, {true});
    Epilogue e;
    gemm::prepare_columns(spec, pb, e);
    PackedLeft pa;
    gemm::pack_left(gemm::Matrix<std::uint8_t>{a.data(), K, 1}, M, K, Isa::Avx2, pa, {e.needs_row_sums()});
    gemm::prepare_rows(spec, pa, e);
    CHECK(e.dml_small);  // (the fused form's condition)
    std::vector<TOut> out(M * N);
    e.out = reinterpret_cast<std::uint8_t*>(out.data());
    e.out_rs = N;
    e.out_cs = 1;
#if QDML_X86 && QDML_INLINE_ASM
    g_fused_panels = 0;
    std::vector<Call> calls{{0, 4, 0, 2}, {4, 4, 0, 2}};
    run_avx2_fused(pa, pb, e, calls, std::is_signed_v<TOut>);
    CHECK(g_fused_panels == 4);
#else
    gemm::multiply<TOut>(pa, pb, e);
#endif
    std::size_t wrong = 0, differs = 0;
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t n = 0; n < N; ++n) {
            const std::int32_t acc = static_cast<std::int32_t>(a[m * K + n]) * d[n];
            wrong += static_cast<int>(out[m * N + n]) != out_of(acc, b_scale[n]);
            differs += out_of(acc, b_scale[n]) != other(acc, b_scale[n]);
        }
    INFO((col_first ? "BScale first" : "AScale first") << ", " << (std::is_signed_v<TOut> ? "s8" : "u8") << " output: "
                                                        << differs << " outputs whose value depends on the order");
    CHECK(differs >= 16);  // the case tells the orders apart
    CHECK(differs >= telling);
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("gemm micro-kernels: AVX2 DirectML requantize in both scale orders at values the order decides",
          "[gemm][microkernel][directml]") {
    if (!qdml::simd::isa_available(Isa::Avx2)) {
        WARN("not tested: this CPU does not run the avx2 path");
        return;
    }
    Rng rng(qtest::case_seed(300));
    INFO("seed " << rng.seed());
    for (const bool col_first : {true, false}) {
        dml_order_case<std::uint8_t>(col_first, rng);
        dml_order_case<std::int8_t>(col_first, rng);
    }
}

TEST_CASE("gemm micro-kernels: AVX2 fused form with one row's bias 0 and the others' not", "[gemm][microkernel]") {
    // The rows' bias is -BZeroPoint * (the row's sum of A): with a row of
    // zeros it is 0 there alone. The fused form must add the others' (it
    // leaves the adds out only when all four rows' are 0). Exact profile,
    // u8 x s8 -> u8, BZeroPoint 5, per-tensor scales (multiplier below 1).
    if (!qdml::simd::isa_available(Isa::Avx2)) {
        WARN("not tested: this CPU does not run the avx2 path");
        return;
    }
    constexpr std::size_t M = 4, K = 20, N = 32;
    Rng rng(qtest::case_seed(400));
    INFO("seed " << rng.seed());
    for (std::size_t zero_row = 0; zero_row < M; ++zero_row) {
        std::vector<int> a(M * K), b(K * N);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = i / K == zero_row ? 0 : static_cast<int>(rng.uniform(0, 255));
        for (auto& v : b) v = static_cast<int>(rng.uniform(0, 255)) - 128;
        const std::vector<std::uint8_t> a8(a.begin(), a.end());
        const std::vector<std::int8_t> b8(b.begin(), b.end());
        gemm::RequantSpec spec;
        spec.a_zp = {0};
        spec.b_zp = {5};
        spec.out_zp = {7};
        spec.a_scale = {0.02f};
        spec.b_scale = {0.01f};
        spec.out_scale = {0.75f};
        PackedRight pb;
        gemm::pack_right(gemm::Matrix<std::int8_t>{b8.data(), N, 1}, K, N, Isa::Avx2, pb, {true});
        Epilogue e;
        gemm::prepare_columns(spec, pb, e);
        PackedLeft pa;
        gemm::pack_left(gemm::Matrix<std::uint8_t>{a8.data(), K, 1}, M, K, Isa::Avx2, pa, {e.needs_row_sums()});
        gemm::prepare_rows(spec, pa, e);
        std::vector<std::uint8_t> out(M * N);
        e.out = out.data();
        e.out_rs = N;
        e.out_cs = 1;
        gemm::multiply<std::uint8_t>(pa, pb, e);
        std::size_t wrong = 0;
        for (std::size_t m = 0; m < M; ++m)
            for (std::size_t n = 0; n < N; ++n)
                wrong += out[m * N + n] !=
                         oracle_out(oracle_acc(a, b, {0, 0, 0, 0}, std::vector<int>(N, 5), K, N, m, n), 0.02f, 0.01f, 0.75f, 7, 0, 255);
        INFO("row " << zero_row << " all zeros");
        CHECK(e.rows[zero_row].bias == 0);
        CHECK(wrong == 0);
    }
}
