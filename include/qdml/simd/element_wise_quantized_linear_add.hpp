// qdml/simd/element_wise_quantized_linear_add.hpp - the fast path of
// ELEMENT_WISE_QUANTIZED_LINEAR_ADD, bit-identical to
// reference/element_wise_quantized_linear_add.hpp (docs/semantics.md section 4):
//   Output[i] = Q((fp32(A[i]-AZP)*AScale + fp32(B[i]-BZP)*BScale) / OutputScale, OutputZP)
// Blocks of 4W elements are first decided in integers (AddPairs below: the
// result where docs/semantics.md's roundings provably cannot matter, on AVX-512BW,
// AVX2 and SSE2); a block with a lane near a tie, other archs and the row's last
// elements take the spec's steps: A and B widen to binary32 (exact, as are
// A - AZP and B - BZP), core's add_step keeps the spec's order and true
// division, core's quantize_int clamps and rounds ties to even, and the
// int32 lanes narrow to 8 bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/add_pairs.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// Q((va + vb) / OutputScale) decided in integers where docs/semantics.md's four
/// binary32 roundings cannot change Q's result (kernel::add_pairs_block).
/// With M = 255 * (|AScale| + |BScale|) / |OutputScale|, which bounds the
/// quotient t, and 2^q (M + 258) < 2^31,
///   N = C + A * KA + B * KB,   KA = round(2^q * AScale / OutputScale), KB likewise,
///   C = round(2^q * (OutputZeroPoint + 1/2 - AZP * AScale / OutputScale
///                    - BZP * BScale / OutputScale)) + H
/// is exact in int32 and lies within E = 255.5 + 2^q * 3.01 * 2^-24 * M + 1
/// of 2^q * (t + OutputZeroPoint + 1/2) + H: the rounding of KA, KB and C
/// adds at most 255.5 (|A|, |B| <= 255), and the spec's roundings of va,
/// vb, their sum and the quotient move t at most 3.01 * 2^-24 * M from the
/// exact value (plus 2^-49 for subnormal steps, |OutputScale| >= 2^-100).
/// H, a power of two above E, puts a tie t = j + 1/2 at N = H modulo 2^q:
/// a lane with N mod 2^q < 2H may lie near a tie (`uncertain`: the block
/// then takes the spec's own steps, true division), and any other lane is
/// at least H > E from the tie, so N >> q = rne(t) + OutputZeroPoint, ties
/// impossible; the saturating packs then clamp it as Q does. Used on
/// AVX-512BW, AVX2 and SSE2 when the scales are finite, |OutputScale| >= 2^-100
/// and M < 2^13 (above, the window of 2H flags too many lanes to pay).
struct AddPairs {
    bool enabled = false;
    kernel::AddPairsConstants k;

    template <class A, class TOut>
    static AddPairs make(const AddParams& p) noexcept {
        AddPairs d;
        const double sa = p.a_scale, sb = p.b_scale, so = p.out_scale;
        const double m = 255.0 * (std::fabs(sa) + std::fabs(sb)) / std::fabs(so);
        if (!kernel::add_pairs_available<A>() || !std::isfinite(sa) || !std::isfinite(sb) || !std::isfinite(so) ||
            !(std::fabs(so) >= 0x1p-100) || !(m < 0x1p13))
            return d;
        int q = 0;
        while (std::ldexp(m + 258.0, q + 1) < 0x1p31 && q < 24) ++q;  // the largest q with 2^q (M + 258) < 2^31
        const double e = 255.5 + std::ldexp(3.01 * m, q - 24) + 1.0;
        std::int64_t h = 1;
        while (static_cast<double>(h) <= e) h *= 2;
        if (4 * h > (std::int64_t{1} << q)) return d;
        const double ka = sa / so, kb = sb / so;
        const auto KA = static_cast<std::int64_t>(std::llround(std::ldexp(ka, q)));
        const auto KB = static_cast<std::int64_t>(std::llround(std::ldexp(kb, q)));
        const double c = std::ldexp(p.out.zp + 0.5 - p.a_zp * ka - p.b_zp * kb, q);
        const auto pair = [](std::int64_t lo_word, std::int64_t hi_word) {  // (A's word, B's word) as one int32
            const std::uint64_t bits = (static_cast<std::uint64_t>(hi_word) << 16) |
                                       (static_cast<std::uint64_t>(lo_word) & 0xFFFF);  // (no signed shift)
            return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
        };
        const std::int64_t ka_lo = KA & 4095, kb_lo = KB & 4095;  // KA = 4096 * hi + lo, 0 <= lo < 4096
        d.k.k_hi = pair((KA - ka_lo) / 4096, (KB - kb_lo) / 4096);
        d.k.k_lo = pair(ka_lo, kb_lo);
        d.k.c = static_cast<std::int32_t>(std::llround(c) + h);
        d.k.mask = static_cast<std::int32_t>((std::int64_t{1} << q) - 2 * h);
        d.k.shift = q;
        d.enabled = true;
        return d;
    }
};

/// The row kernel on ISA tag A (arch.hpp).
template <class TA, class TB, class TOut, class A>
struct AddRow {
    AddParams p;
    AddPairs pairs;  ///< the integer decision of 4W-element blocks, where enabled
    bool stream = false;  ///< non-temporal stores (see streams())

    QDML_ALWAYS_INLINE void operator()(TOut* out, RowIn<TA> a, RowIn<TB> b, std::size_t n) const noexcept {
        if (a.step == 1 && b.step == 1) run<false, false>(out, a.p, b.p, n);
        else if (b.step == 0 && a.step == 1) run<false, true>(out, a.p, b.p, n);
        else if (a.step == 0 && b.step == 1) run<true, false>(out, a.p, b.p, n);
        else run<true, true>(out, a.p, b.p, n);
    }

    /// A row whose A (AConst) or B (BConst) is one value repeated: that
    /// operand is loaded (and, for the spec's steps, dequantized) once.
    template <bool AConst, bool BConst>
    QDML_ALWAYS_INLINE void run(TOut* out, const TA* a, const TB* b, std::size_t n) const noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size;
        const AddParams prm = p;  // (the lambdas below copy what they use: no reloads after 8-bit stores)
        const AddPairs dec = pairs;
        const F a_zp(static_cast<float>(p.a_zp)), b_zp(static_cast<float>(p.b_zp));
        const F a_one(static_cast<float>(*a)), b_one(static_cast<float>(*b));
        // fp32(A) and fp32(B) of W lanes at i (exact for 8-bit operands, as is fp32(x) - fp32(zp)).
        const auto fa = [=](std::size_t i) QDML_ALWAYS_INLINE { return AConst ? a_one : kernel::load_float<A>(a + i); };
        const auto fb = [=](std::size_t i) QDML_ALWAYS_INLINE { return BConst ? b_one : kernel::load_float<A>(b + i); };
        // The spec's steps: Q((va + vb) / OutputScale), a true division.
        const auto q = [=](const F& x, const F& y) QDML_ALWAYS_INLINE {
            return quantize_int(add_step(x - a_zp, y - b_zp, prm), prm.out);
        };
        const auto one = [=](std::size_t i) QDML_ALWAYS_INLINE {
            const float x = qdml::dequantize(a[AConst ? 0 : i], prm.a_zp, prm.a_scale);
            const float y = qdml::dequantize(b[BConst ? 0 : i], prm.b_zp, prm.b_scale);
            out[i] = static_cast<TOut>(quantize_int(add_sum(x, y, prm), prm.out));
        };
        row_blocks<W>(
            out, n, stream,
            [=](std::size_t i, auto s) QDML_ALWAYS_INLINE {
                constexpr bool S = decltype(s)::value;
                if constexpr (S) {  // a large call: fetch the inputs ahead (the hardware prefetcher lags here)
                    if constexpr (!AConst) kernel::prefetch(a + i, kPrefetchAhead);
                    if constexpr (!BConst) kernel::prefetch(b + i, kPrefetchAhead);
                }
                if (dec.enabled && kernel::add_pairs_block<A, S, AConst, BConst>(out + i, AConst ? a : a + i,
                                                                                 BConst ? b : b + i, dec.k))
                    return;  // decided without the spec's steps
                const F x0 = fa(i), x1 = fa(i + W), x2 = fa(i + 2 * W), x3 = fa(i + 3 * W);
                const F y0 = fb(i), y1 = fb(i + W), y2 = fb(i + 2 * W), y3 = fb(i + 3 * W);
                kernel::store_int4<A, S>(out + i, q(x0, y0), q(x1, y1), q(x2, y2), q(x3, y3));
            },
            [=](std::size_t i) QDML_ALWAYS_INLINE { kernel::store_int<A>(out + i, q(fa(i), fb(i))); }, one);
    }
};

/// The rank-free part: every row of the plan (operands: output, A, B).
template <class TA, class TB, class TOut>
void add_rows(const LoopPlan<3>& plan, const std::array<char*, 3>& base, const AddParams& p, ElementWiseIsa isa,
              const Executor& ex = {}) {
    const bool stream = streams(plan.elements() * sizeof(TOut));
    run_rows_on<TOut, TA, TB>(isa, plan, base, [&](auto tag) {
        using A = typename decltype(tag)::type;
        return AddRow<TA, TB, TOut, A>{p, AddPairs::make<A, TOut>(p), stream};
    }, ex);
    if (stream) kernel::stream_fence();
}

/// The loop plan of `op` (operands: output, A, B); it depends on the descs only.
template <class TA, class TB, class TOut>
LoopPlan<3> add_plan(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op) noexcept {
    return make_plan<3>(op.OutputTensor.sizes, {&op.OutputTensor.strides, &op.ATensor.strides, &op.BTensor.strides},
                              {sizeof(TOut), sizeof(TA), sizeof(TB)});
}

}  // namespace detail

/// ELEMENT_WISE_QUANTIZED_LINEAR_ADD with its loop plan and ISA path
/// derived once: execute() computes with new buffers of the same descs and
/// the parameters `p` read from their bindings (AddParams; qdml::Compiled
/// keeps one). Where kAvailable.
template <class TA, class TB, class TOut>
class PreparedElementWiseQuantizedLinearAdd {
public:
    explicit PreparedElementWiseQuantizedLinearAdd(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op,
                                                   const GemmOptions& o = {})
        : plan_(detail::add_plan(op)), isa_(select_elementwise_isa(o.isa)) {}
    /// `executor`: the caller's thread pool (default: the calling thread).
    void execute(void* out, const void* a, const void* b, const AddParams& p, const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        const auto c = [](const void* q) { return const_cast<char*>(static_cast<const char*>(q)); };
        detail::add_rows<TA, TB, TOut>(plan_, {static_cast<char*>(out), c(a), c(b)}, p, isa_, executor);
    }

private:
    LoopPlan<3> plan_;
    ElementWiseIsa isa_;
};

/// Same signature and bits as reference::element_wise_quantized_linear_add;
/// `o.isa` caps the path (select_elementwise_isa).
template <class TA, class TB, class TOut>
void element_wise_quantized_linear_add(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::element_wise_quantized_linear_add(op);
    } else {
        detail::add_rows<TA, TB, TOut>(detail::add_plan(op),
                                       {reinterpret_cast<char*>(op.OutputTensor.data),
                                        const_cast<char*>(reinterpret_cast<const char*>(op.ATensor.data)),
                                        const_cast<char*>(reinterpret_cast<const char*>(op.BTensor.data))},
                                       AddParams::derive(op), select_elementwise_isa(o.isa), o.executor);
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`.
template <class TA, class TB, class TOut>
std::string path(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>&, const GemmOptions& o = {}) {
    return std::string("element-wise ") + (kAvailable ? arch_name(o.isa) : "scalar");
}

}  // namespace qdml::simd
