// qdml/simd/element_wise_quantized_linear_add.hpp - the fast path of
// ELEMENT_WISE_QUANTIZED_LINEAR_ADD, bit-identical to
// reference/element_wise_quantized_linear_add.hpp (SPEC.md section 4):
//   Output[i] = Q((fp32(A[i]-AZP)*AScale + fp32(B[i]-BZP)*BScale) / OutputScale, OutputZP)
// A and B widen to binary32 (exact, as are A - AZP and B - BZP); core's
// add_step keeps the spec's order and true division; core's quantize_int
// clamps and rounds ties to even; the int32 lanes narrow to 8 bits.
#pragma once

#include <cstdint>

#include "qdml/core/quantize.hpp"
#include "qdml/operators/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/loops.hpp"

namespace qdml::simd {

namespace detail {

/// Q((va + vb) / OutputScale) without the division where that gives Q's
/// bits: t' = (va + vb) * fp32(1 / OutputScale) is within |t'| * 2^-22 of
/// the true quotient t (three binary32 roundings, with OutputScale normal
/// and within 2^-100..2^100), so Q(t') = Q(t) unless a tie k + 0.5 lies
/// between them. Q(t') is read off t' rounded to multiples of 2^-12
/// (t' + 3072, in [2048, 4096) for |t'| < 1024, holds t' to 2^-12): a lane
/// within a step of a tie is `uncertain`, and the caller then computes the
/// block with the true division. Lanes beyond +-1024, and NaN (sent to
/// -2048, as Q sends NaN low), give values past T's range, which the
/// saturating store_int4 clamps as Q's clamp would.
template <class A>
struct QuickQuotient {
    using F = kernel::fbatch<A>;
    using I = kernel::ibatch<A>;
    bool enabled = false;
    float recip = 0.0f;
    std::int32_t bias = 0;

    template <class TOut>
    static QuickQuotient make(const AddParams& p) noexcept {
        QuickQuotient f;
        const float s = p.out_scale < 0.0f ? -p.out_scale : p.out_scale;  // (false for NaN)
        f.enabled = kernel::store_int4_saturates<A, TOut>() && s >= 0x1p-100f && s <= 0x1p100f;
        f.recip = 1.0f / p.out_scale;
        // bits(t' + 3072) - bits(3072) = t' * 4096 rounded; + 2048 + 1 + zp * 4096, >> 12: rne(t') + zp.
        f.bias = VecOps<float>::bits(3072.0f) - 2049 - p.out.zp * 4096;
        return f;
    }

    /// rne(t') + zp for lanes off ties; `uncertain` is set for lanes near one.
    I operator()(const F& sum, xsimd::batch_bool<std::int32_t, A>& uncertain) const noexcept {
        const F t = kernel::max_or_low<A>(VecOps<F>::no_fuse(sum * F(recip)), F(-2048.0f));
        const I n = VecOps<F>::bits(VecOps<F>::no_fuse(t + F(3072.0f))) - I(bias);
        uncertain = (n & I(0xFFC)) == I(0);  // n = 4096 * (t' + zp + 0.5) + 1 within [-1, 2] of a tie's
        return kernel::shift_right_arith<12, A>(n);
    }
};

/// Bytes ahead of the current block that a streaming add prefetches A and
/// B (measured: README, "Non-temporal stores and prefetch").
inline constexpr std::size_t kPrefetchAhead = 1024;

template <class TA, class TB, class TOut>
struct AddRow {
    AddParams p;
    bool stream = false;  ///< non-temporal stores (see streams())

    void operator()(TOut* out, RowIn<TA> a, RowIn<TB> b, std::size_t n) const noexcept {
        if (a.step == 1 && b.step == 1) run<false, false>(out, a.p, b.p, n);
        else if (b.step == 0 && a.step == 1) run<false, true>(out, a.p, b.p, n);
        else if (a.step == 0 && b.step == 1) run<true, false>(out, a.p, b.p, n);
        else run<true, true>(out, a.p, b.p, n);
    }

    /// A row whose A (AConst) or B (BConst) is one value repeated: that
    /// operand's dequantized value is computed once, as a scalar.
    template <bool AConst, bool BConst>
    void run(TOut* out, const TA* a, const TB* b, std::size_t n) const noexcept {
        using A = Arch;
        using F = kernel::fbatch<A>;
        using I = kernel::ibatch<A>;
        constexpr std::size_t W = F::size;
        const AddParams prm = p;  // (the lambdas below copy what they use: no reloads after 8-bit stores)
        const F a_zp(static_cast<float>(p.a_zp)), b_zp(static_cast<float>(p.b_zp));
        const F a_scale(p.a_scale), b_scale(p.b_scale);
        const F a_const(dequantize(*a, p.a_zp, p.a_scale)), b_const(dequantize(*b, p.b_zp, p.b_scale));
        // va and vb of W lanes at i (8-bit operands: fp32(x) - fp32(zp) is the exact fp32(x - zp)).
        const auto va = [=](std::size_t i) {
            return AConst ? a_const : dequantize_step(kernel::load_float<A>(a + i) - a_zp, a_scale);
        };
        const auto vb = [=](std::size_t i) {
            return BConst ? b_const : dequantize_step(kernel::load_float<A>(b + i) - b_zp, b_scale);
        };
        const auto q = [=](const F& x, const F& y) { return quantize_int(add_sum(x, y, prm), prm.out); };
        const auto one = [=](std::size_t i) {
            const float x = dequantize(a[AConst ? 0 : i], prm.a_zp, prm.a_scale);
            const float y = dequantize(b[BConst ? 0 : i], prm.b_zp, prm.b_scale);
            out[i] = static_cast<TOut>(quantize_int(add_sum(x, y, prm), prm.out));
        };
        const auto quick = QuickQuotient<A>::template make<TOut>(p);
        row_blocks<W>(
            out, n, stream,
            [=](std::size_t i, auto s) {
                constexpr bool S = decltype(s)::value;
                if constexpr (S) {  // a large call: fetch the inputs ahead (the hardware prefetcher lags here)
                    if constexpr (!AConst) kernel::prefetch(a + i, kPrefetchAhead);
                    if constexpr (!BConst) kernel::prefetch(b + i, kPrefetchAhead);
                }
                const F x0 = va(i), x1 = va(i + W), x2 = va(i + 2 * W), x3 = va(i + 3 * W);
                const F y0 = vb(i), y1 = vb(i + W), y2 = vb(i + 2 * W), y3 = vb(i + 3 * W);
                if (quick.enabled) {
                    xsimd::batch_bool<std::int32_t, A> u0, u1, u2, u3;
                    const I q0 = quick(x0 + y0, u0), q1 = quick(x1 + y1, u1);
                    const I q2 = quick(x2 + y2, u2), q3 = quick(x3 + y3, u3);
                    if (!xsimd::any((u0 | u1) | (u2 | u3))) {
                        kernel::store_int4<A, S>(out + i, q0, q1, q2, q3);
                        return;
                    }
                }
                kernel::store_int4<A, S>(out + i, q(x0, y0), q(x1, y1), q(x2, y2), q(x3, y3));
            },
            [=](std::size_t i) { kernel::store_int<A>(out + i, q(va(i), vb(i))); }, one);
    }
};

/// The rank-free part: every row of the plan (operands: output, A, B).
template <class TA, class TB, class TOut>
void add_rows(const LoopPlan<3>& plan, const std::array<char*, 3>& base, const AddParams& p) {
    const bool stream = streams(plan.elements() * sizeof(TOut));
    for_each_row(plan, base, [&](const auto& ptrs, const auto& st, std::uint64_t n) {
        run_row<TOut, TA, TB>(ptrs, st, n, AddRow<TA, TB, TOut>{p, stream});
    });
    if (stream) kernel::stream_fence();
}

/// The loop plan of `op` (operands: output, A, B); it depends on the descs only.
template <class TA, class TB, class TOut>
LoopPlan<3> add_plan(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op) noexcept {
    return make_plan<3>(op.OutputTensor.sizes, {&op.OutputTensor.strides, &op.ATensor.strides, &op.BTensor.strides},
                              {sizeof(TOut), sizeof(TA), sizeof(TB)});
}

}  // namespace detail

/// Same signature and bits as reference::element_wise_quantized_linear_add.
template <class TA, class TB, class TOut>
void element_wise_quantized_linear_add(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op) {
    if constexpr (!kAvailable) {
        reference::element_wise_quantized_linear_add(op);
    } else {
        detail::add_rows<TA, TB, TOut>(detail::add_plan(op),
                                       {reinterpret_cast<char*>(op.OutputTensor.data),
                                        const_cast<char*>(reinterpret_cast<const char*>(op.ATensor.data)),
                                        const_cast<char*>(reinterpret_cast<const char*>(op.BTensor.data))},
                                       AddParams::derive(op));
    }
}

}  // namespace qdml::simd
