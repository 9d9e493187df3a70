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

template <class TA, class TB, class TOut>
struct AddRow {
    AddParams p;
    void operator()(TOut* out, RowIn<TA> a, RowIn<TB> b, std::size_t n) const noexcept {
        using A = Arch;
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size;
        const F a_zp(static_cast<float>(p.a_zp)), b_zp(static_cast<float>(p.b_zp));
        std::size_t i = 0;
        for (; i + W <= n; i += W) {
            const F a_diff = kernel::load_float<A>(a.at(i)) - a_zp;  // 8-bit operands: exact
            const F b_diff = kernel::load_float<A>(b.at(i)) - b_zp;
            kernel::store_int<A>(out + i, quantize_int(add_step(a_diff, b_diff, p), p.out));
        }
        for (; i < n; ++i) {
            const float a_diff = fp32(std::int64_t{*a.at(i)} - p.a_zp);
            const float b_diff = fp32(std::int64_t{*b.at(i)} - p.b_zp);
            out[i] = static_cast<TOut>(quantize_int(add_step(a_diff, b_diff, p), p.out));
        }
    }
};

/// The rank-free part: every row of the plan (operands: output, A, B).
template <class TA, class TB, class TOut>
void add_rows(const LoopPlan<3>& plan, const std::array<char*, 3>& base, const AddParams& p) {
    for_each_row(plan, base, [&](const auto& ptrs, const auto& st, std::uint64_t n) {
        run_row<TOut, TA, TB>(ptrs, st, n, AddRow<TA, TB, TOut>{p});
    });
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
