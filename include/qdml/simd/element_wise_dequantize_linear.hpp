// qdml/simd/element_wise_dequantize_linear.hpp - the fast path of
// ELEMENT_WISE_DEQUANTIZE_LINEAR, bit-identical to
// reference/element_wise_dequantize_linear.hpp (docs/semantics.md section 3):
//   Output[i] = fp32(Input[i] - ZeroPoint[i]) * Scale[i]
// The exact difference comes from kernel::load_float (8/16-bit: both
// operands exact in binary32, so is their difference) or
// kernel::load_diff_float (32-bit: formed in binary64, rounded once); the
// product is core's dequantize_step; FLOAT16 outputs are rounded once.
#pragma once

#include <cstdint>
#include <string>

#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_dequantize_linear.hpp"
#include "qdml/reference/element_wise_dequantize_linear.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// fp32(x - zp) for W lanes, exactly as fp32(int64(x) - int64(zp)).
template <class A, class TIn>
QDML_ALWAYS_INLINE inline kernel::fbatch<A> diff_float(const TIn* x, const TIn* zp) noexcept {
    if constexpr (sizeof(TIn) <= 2)
        return kernel::load_float<A>(x) - kernel::load_float<A>(zp);  // |x - zp| < 2^17: exact
    else
        return kernel::load_diff_float<A>(x, zp);
}

/// The row kernel on ISA tag A (arch.hpp); DirectML (INT32/UINT32 inputs):
/// DirectML's form (fp32(x) - fp32(zp)) * scale (docs/semantics.md section 10).
template <class TIn, class TOut, class A, bool DirectML = false>
struct DequantizeRow {
    bool stream = false;  ///< non-temporal stores (see streams())

    QDML_ALWAYS_INLINE void operator()(TOut* out, RowIn<TIn> x, RowIn<TOut> scale, RowIn<TIn> zp, std::size_t n) const noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size;
        const auto one = [=](std::size_t i) QDML_ALWAYS_INLINE {
            if constexpr (DirectML)
                out[i] = from_float<TOut>(dequantize_directml(*x.at(i), *zp.at(i), to_float(*scale.at(i))));
            else
                out[i] = from_float<TOut>(qdml::dequantize(*x.at(i), *zp.at(i), to_float(*scale.at(i))));
        };
        if constexpr (DirectML) {
            static_assert(sizeof(TIn) == 4, "INT32 or UINT32: for 8- and 16-bit inputs the two forms are equal");
            const auto value = [=](std::size_t i) QDML_ALWAYS_INLINE {
                const F d = kernel::load_int_float<A>(x.at(i)) - kernel::load_int_float<A>(zp.at(i));
                return dequantize_step(d, kernel::load_float<A>(scale.at(i)));
            };
            row_blocks<W>(out, n, stream, kernel::vec4_block<A>(out, value), kernel::vec1_store<A>(out, value), one);
        } else if (x.step == 1 && scale.step == 0 && zp.step == 0) {  // per-tensor (or per-row) scale and zero point
            const F vscale(to_float(*scale.p));
            [[maybe_unused]] const F vzp(static_cast<float>(*zp.p));
            const auto value = [=](std::size_t i) QDML_ALWAYS_INLINE {
                if constexpr (sizeof(TIn) <= 2)
                    return dequantize_step(kernel::load_float<A>(x.p + i) - vzp, vscale);  // exact difference
                else
                    return dequantize_step(kernel::load_diff_float<A>(x.p + i, zp.p), vscale);  // kRepeat copies
            };
            row_blocks<W>(out, n, stream, kernel::vec4_block<A>(out, value), kernel::vec1_store<A>(out, value), one);
        } else {
            const auto value = [=](std::size_t i) QDML_ALWAYS_INLINE {
                return dequantize_step(diff_float<A>(x.at(i), zp.at(i)), kernel::load_float<A>(scale.at(i)));
            };
            row_blocks<W>(out, n, stream, kernel::vec4_block<A>(out, value), kernel::vec1_store<A>(out, value), one);
        }
    }
};

/// The rank-free part: every row of the plan (operands: output, input, scale, zero point).
/// (8- and 16-bit inputs compute the same in both profiles.)
template <class TIn, class TOut>
void dequantize_rows(const LoopPlan<4>& plan, const std::array<char*, 4>& base, ElementWiseIsa isa, Fidelity f,
                     const Executor& ex = {}) {
    const bool stream = streams(plan.elements() * sizeof(TOut));
    if constexpr (dequantize_directml_differs<TIn>) {
        if (f == Fidelity::DirectML) {
            run_rows_on<TOut, TIn, TOut, TIn>(isa, plan, base, [&](auto tag) {
                return DequantizeRow<TIn, TOut, typename decltype(tag)::type, true>{stream};
            }, ex);
            if (stream) kernel::stream_fence();
            return;
        }
    }
    run_rows_on<TOut, TIn, TOut, TIn>(isa, plan, base, [&](auto tag) {
        return DequantizeRow<TIn, TOut, typename decltype(tag)::type>{stream};
    }, ex);
    if (stream) kernel::stream_fence();
}

/// What an absent zero point reads: 0, repeated through zero strides.
template <class TIn>
inline const TIn kNoZeroPoint{};

/// The loop plan of `op` (operands: output, input, scale, zero point); it
/// depends on the descs only.
template <class TIn, class TOut>
LoopPlan<4> dequantize_plan(const ElementWiseDequantizeLinear<TIn, TOut>& op) noexcept {
    static const std::array<std::uint64_t, kMaxDimensions> zero_strides{};
    const auto* zp_strides = op.ZeroPointTensor ? &op.ZeroPointTensor->strides : &zero_strides;
    return make_plan<4>(
        op.OutputTensor.sizes, {&op.OutputTensor.strides, &op.InputTensor.strides, &op.ScaleTensor.strides, zp_strides},
        {sizeof(TOut), sizeof(TIn), sizeof(TOut), sizeof(TIn)});
}

}  // namespace detail

/// ELEMENT_WISE_DEQUANTIZE_LINEAR with its loop plan and ISA path derived
/// once: execute() computes with new buffers of the same descs (`zero_point`
/// null when the desc has none; qdml::Compiled keeps one). Where kAvailable.
template <class TIn, class TOut>
class PreparedElementWiseDequantizeLinear {
public:
    explicit PreparedElementWiseDequantizeLinear(const ElementWiseDequantizeLinear<TIn, TOut>& op,
                                                 const GemmOptions& o = {})
        : plan_(detail::dequantize_plan(op)), isa_(select_elementwise_isa(o.isa)), fidelity_(o.fidelity) {}
    /// `executor`: the caller's thread pool (default: the calling thread).
    void execute(void* out, const void* in, const void* scale, const void* zero_point,
                 const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        const auto c = [](const void* p) { return const_cast<char*>(static_cast<const char*>(p)); };
        detail::dequantize_rows<TIn, TOut>(
            plan_, {static_cast<char*>(out), c(in), c(scale), c(zero_point ? zero_point : &detail::kNoZeroPoint<TIn>)},
            isa_, fidelity_, executor);
    }

private:
    LoopPlan<4> plan_;
    ElementWiseIsa isa_;
    Fidelity fidelity_;
};

/// The bits of reference::element_wise_dequantize_linear(op, o.fidelity);
/// `o.isa` caps the path (select_elementwise_isa).
template <class TIn, class TOut>
void element_wise_dequantize_linear(const ElementWiseDequantizeLinear<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::element_wise_dequantize_linear(op, o.fidelity);
    } else {
        const TIn* zp_data = op.ZeroPointTensor ? op.ZeroPointTensor->data : &detail::kNoZeroPoint<TIn>;
        const auto plan = detail::dequantize_plan(op);
        detail::dequantize_rows<TIn, TOut>(
            plan, {reinterpret_cast<char*>(op.OutputTensor.data),
                   const_cast<char*>(reinterpret_cast<const char*>(op.InputTensor.data)),
                   const_cast<char*>(reinterpret_cast<const char*>(op.ScaleTensor.data)),
                   const_cast<char*>(reinterpret_cast<const char*>(zp_data))},
            select_elementwise_isa(o.isa), o.fidelity, o.executor);
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`.
template <class TIn, class TOut>
std::string path(const ElementWiseDequantizeLinear<TIn, TOut>&, const GemmOptions& o = {}) {
    return std::string("element-wise ") + (kAvailable ? arch_name(o.isa) : "scalar");
}

}  // namespace qdml::simd
