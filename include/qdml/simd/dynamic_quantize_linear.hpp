// qdml/simd/dynamic_quantize_linear.hpp - the fast path of
// DYNAMIC_QUANTIZE_LINEAR, bit-identical to
// reference/dynamic_quantize_linear.hpp (docs/semantics.md section 15):
//   m = min(0, min x), M = max(0, max x)   (NaN skipped; FLOAT16 widened)
//   exact:    Output = Q(x / s, z)      directml: Output = Q(x * r, z)
// in two passes over the input, each on the element-wise ISA path:
//   1. the range: the input's elements in a fixed order of its own (its
//      stride-0 dimensions dropped, the others outermost-stride first, so a
//      permuted input reads as a packed one), cut into tasks by row_tasks (a
//      function of the shape alone); each task's lanes keep DynamicRange's
//      rule (x < lo, x > hi: NaN and -0.0 never replace, so every lane is
//      +0 or a number of its sign), and the tasks' ranges combine in task
//      order. A minimum and a maximum under that rule are exact and do not
//      depend on the order: the bits are the reference's whatever the pool;
//   2. s, r and z from the range once (core's DynamicQuantizeParams), then
//      ELEMENT_WISE_QUANTIZE_LINEAR's rows (element_wise_quantize_linear.hpp)
//      with the scale (exact) or r (directml: QuantizeBy::Multiply) and z as
//      per-tensor operands.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/dynamic_quantize_linear.hpp"
#include "qdml/reference/dynamic_quantize_linear.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/element_wise_quantize_linear.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// The range pass's row kernel on ISA tag A: adds n contiguous elements to
/// *range (a pointer: a region's Rows passes its arguments by value).
template <class TIn, class A>
struct RangeRow {
    QDML_ALWAYS_INLINE void operator()(DynamicRange* range, const TIn* x, std::size_t n) const noexcept {
        using F = kernel::fbatch<A>;
        using O = VecOps<F>;
        constexpr std::size_t W = F::size;
        // DynamicRange::add lane by lane: x < lo (x > hi) replaces, so NaN and -0.0 never do.
        const auto add = [](F& lo, F& hi, const F& v) QDML_ALWAYS_INLINE {
            lo = O::select(v < lo, v, lo);
            hi = O::select(v > hi, v, hi);
        };
        const F zero(0.0f);
        F lo0 = zero, lo1 = zero, lo2 = zero, lo3 = zero, hi0 = zero, hi1 = zero, hi2 = zero, hi3 = zero;
        std::size_t i = 0;
        for (; i + 4 * W <= n; i += 4 * W) {
            add(lo0, hi0, kernel::load_float<A>(x + i));
            add(lo1, hi1, kernel::load_float<A>(x + i + W));
            add(lo2, hi2, kernel::load_float<A>(x + i + 2 * W));
            add(lo3, hi3, kernel::load_float<A>(x + i + 3 * W));
        }
        for (; i + W <= n; i += W) add(lo0, hi0, kernel::load_float<A>(x + i));
        add(lo0, hi0, lo1);  // (a lane's lo is +0 or negative, its hi +0 or positive: either may pass as a value)
        add(lo0, hi0, hi1);
        add(lo2, hi2, lo3);
        add(lo2, hi2, hi3);
        add(lo0, hi0, lo2);
        add(lo0, hi0, hi2);
        alignas(64) float lanes[2][W];
        kernel::store_vec<A>(lanes[0], lo0);
        kernel::store_vec<A>(lanes[1], hi0);
        for (std::size_t k = 0; k < W; ++k) range->add(DynamicRange{lanes[0][k], lanes[1][k]});
        for (; i < n; ++i) range->add(quantize_input(x[i]));
    }
};

/// The range pass's loop plan: the input's dimensions of size above 1 and
/// nonzero stride (a repeated element adds nothing to a minimum or a
/// maximum), the largest stride outermost, merged where they can be.
template <class TIn>
LoopPlan<1> range_plan(const TensorView<const TIn, kMaxDimensions>& in) noexcept {
    std::array<std::pair<std::uint64_t, std::uint32_t>, kMaxDimensions> dims{};  // (stride, size)
    std::size_t n = 0;
    for (std::size_t d = 0; d < kMaxDimensions; ++d)
        if (in.sizes[d] > 1 && in.strides[d] != 0) dims[n++] = {in.strides[d], in.sizes[d]};
    std::stable_sort(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(n),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::array<std::uint32_t, kMaxDimensions> sizes;
    std::array<std::uint64_t, kMaxDimensions> strides{};
    sizes.fill(1);
    for (std::size_t k = 0; k < n; ++k) {
        sizes[kMaxDimensions - n + k] = dims[k].second;
        strides[kMaxDimensions - n + k] = dims[k].first;
    }
    return make_plan<1>(sizes, {&strides}, {sizeof(TIn)});
}

/// The input's range (docs/semantics.md section 15): the rows of
/// range_plan in row_tasks' tasks, each task's range from the row kernel
/// (a strided row gathered kChunk elements at a time), combined in task
/// order.
template <class TIn>
DynamicRange input_range(const TensorView<const TIn, kMaxDimensions>& in, ElementWiseIsa isa, const Executor& ex) {
    const LoopPlan<1> plan = range_plan(in);
    const std::array<char*, 1> base{const_cast<char*>(reinterpret_cast<const char*>(in.data))};
    const std::uint64_t n = plan.row;
    const RowTasks t = row_tasks(RowCursor<1>::rows(plan), 1, n, sizeof(TIn));
    // Each task's range (one task, the small calls: no allocation).
    DynamicRange one;
    std::vector<DynamicRange> many(t.tasks() > 1 ? static_cast<std::size_t>(t.tasks()) : 0);
    DynamicRange* const ranges = t.tasks() > 1 ? many.data() : &one;
    const std::size_t count = t.tasks() > 1 ? many.size() : 1;
    const auto run = [&](auto kernel) {
        const auto task = [&](std::size_t k) {
            const std::uint64_t u0 = k / t.chunks * t.per, u1 = std::min(t.units, u0 + t.per);
            const std::uint64_t c0 = k % t.chunks * t.columns, columns = std::min(n - c0, t.columns);
            DynamicRange r;
            RowCursor<1> cursor(plan, base);
            cursor.seek(u0);
            for (std::uint64_t u = u0; u < u1; ++u) {
                if (u != u0) cursor.next();
                const char* p = cursor.at(c0)[0];
                const std::int64_t st = plan.row_stride[0];
                if (st == static_cast<std::int64_t>(sizeof(TIn))) {
                    kernel(&r, reinterpret_cast<const TIn*>(p), static_cast<std::size_t>(columns));
                    continue;
                }
                Staging<TIn> chunk;  // strided (a row of one element included): gathered
                for (std::uint64_t s = 0; s < columns; s += kChunk) {
                    const std::uint64_t m = std::min<std::uint64_t>(kChunk, columns - s);
                    for (std::uint64_t j = 0; j < m; ++j)
                        std::memcpy(&chunk.v[j], p + static_cast<std::int64_t>(s + j) * st, sizeof(TIn));
                    kernel(&r, chunk.v, static_cast<std::size_t>(m));
                }
            }
            ranges[k] = r;
        };
        // (On the pool from run_rows' size on; either way the same tasks.)
        const bool threaded = plan.elements() * sizeof(TIn) >= kMinThreadedBytes;
        qdml::detail::parallel_for(threaded ? ex : Executor{}, count, task);
    };
#if QDML_X86
    if (isa == ElementWiseIsa::Avx512)
        run(on_arch<x86::avx512bw::ElementWise>(RangeRow<TIn, x86::avx512bw::ElementWise>{}));
    else if (isa == ElementWiseIsa::Avx2)
        run(on_arch<x86::avx2::ElementWise>(RangeRow<TIn, x86::avx2::ElementWise>{}));
    else
#endif
        run(RangeRow<TIn, Arch>{});
    (void)isa;
    DynamicRange range;
    for (std::size_t k = 0; k < count; ++k) range.add(ranges[k]);  // in task order
    return range;
}

}  // namespace detail

/// The bits of reference::dynamic_quantize_linear(op, o.fidelity); `o.isa`
/// caps the path (select_elementwise_isa), `o.executor` runs both passes'
/// tasks.
template <class TIn, class TOut>
void dynamic_quantize_linear(const DynamicQuantizeLinear<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::dynamic_quantize_linear(op, o.fidelity);
    } else {
        const ElementWiseIsa isa = select_elementwise_isa(o.isa);
        const bool directml = o.fidelity == Fidelity::DirectML;
        const auto p = DynamicQuantizeParams::make<TOut>(detail::input_range(op.InputTensor, isa, o.executor), directml);
        const float factor = p.factor;  // s (exact) or r (directml)
        const TOut zp = static_cast<TOut>(p.zp);
        static const std::array<std::uint64_t, kMaxDimensions> zero_strides{};
        const LoopPlan<4> plan = make_plan<4>(
            op.OutputTensor.sizes, {&op.OutputTensor.strides, &op.InputTensor.strides, &zero_strides, &zero_strides},
            {sizeof(TOut), sizeof(TIn), sizeof(float), sizeof(TOut)});
        const std::array<char*, 4> base{reinterpret_cast<char*>(op.OutputTensor.data),
                                        const_cast<char*>(reinterpret_cast<const char*>(op.InputTensor.data)),
                                        const_cast<char*>(reinterpret_cast<const char*>(&factor)),
                                        const_cast<char*>(reinterpret_cast<const char*>(&zp))};
        if (directml)
            detail::quantize_rows<TIn, TOut, float, detail::QuantizeBy::Multiply>(plan, base, true, isa, o.executor);
        else
            detail::quantize_rows<TIn, TOut, float, detail::QuantizeBy::Divide>(plan, base, true, isa, o.executor);
        op.OutputScaleTensor.scalar() = p.scale;
        op.OutputZeroPointTensor.scalar() = zp;
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`.
template <class TIn, class TOut>
std::string path(const DynamicQuantizeLinear<TIn, TOut>&, const GemmOptions& o = {}) {
    return std::string("element-wise ") + (kAvailable ? arch_name(o.isa) : "scalar");
}

}  // namespace qdml::simd
