// qdml/simd/element_wise_quantize_linear.hpp - the fast path of
// ELEMENT_WISE_QUANTIZE_LINEAR, bit-identical to
// reference/element_wise_quantize_linear.hpp (docs/semantics.md section 11):
//   Output[i] = Q(x(Input[i]) / Scale[i], ZeroPoint[i], OutputType)
// The input widens to binary32 (kernel::load_float: FLOAT32, FLOAT16;
// kernel::load_int_float: INT32, fp32 rounded once), one true division per
// lane, then Q: a per-tensor scale and zero point take core's quantize_int;
// per-element ones clamp against lo - zp and hi - zp lane by lane (exact in
// binary32) and round ties to even by the magic-number addition. A NaN
// quotient is first replaced by lo - zp (Q's low end) or, in DirectML's
// strided form (quantize_nan_to_low_directml false), by -zp (giving 0).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_quantize_linear.hpp"
#include "qdml/reference/element_wise_quantize_linear.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// How a row forms the value Q rounds: x / s (ELEMENT_WISE_QUANTIZE_LINEAR,
/// and DYNAMIC_QUANTIZE_LINEAR's exact profile) or x * r, the product
/// rounded on its own (DYNAMIC_QUANTIZE_LINEAR's directml profile, whose r
/// = 1 / s is per tensor: docs/semantics.md section 15).
enum class QuantizeBy { Divide, Multiply };

/// The row kernel on ISA tag A (arch.hpp); TScale the scale operand's type
/// (binary32 for DYNAMIC_QUANTIZE_LINEAR whatever its input); TRange the
/// type whose range Q saturates to (QUANTIZE's INT4/UINT4 into an 8-bit
/// TOut, one value a byte: simd/quantize.hpp packs them).
template <class TIn, class TOut, class A, class TScale = typename ElementWiseQuantizeLinear<TIn, TOut>::TScale,
          QuantizeBy By = QuantizeBy::Divide, class TRange = TOut>
struct QuantizeRow {
    bool nan_to_low = true;  ///< a NaN quotient gives the low end (else 0: DirectML's strided form)
    bool stream = false;     ///< non-temporal stores (see streams())

    QDML_ALWAYS_INLINE void operator()(TOut* out, RowIn<TIn> x, RowIn<TScale> scale, RowIn<TOut> zp,
                                       std::size_t n) const noexcept {
        using F = kernel::fbatch<A>;
        using O = VecOps<F>;
        constexpr std::size_t W = F::size;
        const bool low = nan_to_low;
        // x(Input) of W lanes: FLOAT32 as is, FLOAT16 widened, INT32 by fp32.
        const auto load_x = [](const TIn* p) QDML_ALWAYS_INLINE {
            if constexpr (std::is_same_v<TIn, std::int32_t>)
                return kernel::load_int_float<A>(p);
            else
                return kernel::load_float<A>(p);
        };
        // (Multiply: r and z per tensor, whatever the steps: a plan of one
        // element gives every operand step 1.)
        const bool per_tensor = By == QuantizeBy::Multiply || (scale.step == 0 && zp.step == 0);
        const auto one = [=](std::size_t i) QDML_ALWAYS_INLINE {
            const float xv = quantize_input(*x.at(i));
            if constexpr (By == QuantizeBy::Multiply) {
                out[i] = quantize_multiplied<TOut>(xv, to_float(*scale.p), *zp.p);  // (NaN to the low end, as Q)
            } else {
                const float s = to_float(*scale.at(i));
                const std::int32_t z = *zp.at(i);
                if constexpr (std::is_same_v<TRange, TOut>)
                    out[i] = low ? quantize_linear<TOut>(xv, s, z) : quantize_linear_directml<TOut>(xv, s, z, false);
                else  // (QUANTIZE: NaN to the low end always)
                    out[i] = static_cast<TOut>(quantize_value<TRange>(xv / s, z));
            }
        };
        const auto blocks = [&](const auto& q) QDML_ALWAYS_INLINE {
            row_blocks<W>(
                out, n, stream,
                [=](std::size_t i, auto s) QDML_ALWAYS_INLINE {
                    kernel::store_int4<A, decltype(s)::value>(out + i, q(i), q(i + W), q(i + 2 * W), q(i + 3 * W));
                },
                [=](std::size_t i) QDML_ALWAYS_INLINE { kernel::store_int<A>(out + i, q(i)); }, one);
        };
        if (per_tensor) {  // per-tensor (or per-row) scale and zero point: Q's own step
            const QuantizeParams p = QuantizeParams::make<TRange>(*zp.p);
            const F s(to_float(*scale.p));
            const F nan_value(low ? p.lo : static_cast<float>(-p.zp));
            if constexpr (By == QuantizeBy::Multiply) {  // Q takes a NaN product to its low end itself
                blocks([=](std::size_t i) QDML_ALWAYS_INLINE { return quantize_int(O::no_fuse(load_x(x.at(i)) * s), p); });
            } else {
                blocks([=](std::size_t i) QDML_ALWAYS_INLINE {
                    const F v = O::div(load_x(x.at(i)), s);
                    return quantize_int(O::select(v == v, v, nan_value), p);
                });
            }
        } else if constexpr (By == QuantizeBy::Divide) {  // (x * r is per tensor only)
            const F lo(static_cast<float>(value_range<TRange>::lo));
            const F hi(static_cast<float>(value_range<TRange>::hi));
            const F zero(0.0f);
            blocks([=](std::size_t i) QDML_ALWAYS_INLINE {
                const F v = O::div(load_x(x.at(i)), kernel::load_float<A>(scale.at(i)));
                const F z = kernel::load_float<A>(zp.at(i));  // exact
                const F lo_z = lo - z, hi_z = hi - z;           // exact: |lo - zp|, |hi - zp| <= 255
                return quantize_int_lanes(O::select(v == v, v, low ? lo_z : zero - z), lo_z, hi_z, z);
            });
        }
    }
};

/// The rank-free part: every row of the plan (operands: output, input, scale, zero point).
template <class TIn, class TOut, class TScale = typename ElementWiseQuantizeLinear<TIn, TOut>::TScale,
          QuantizeBy By = QuantizeBy::Divide>
void quantize_rows(const LoopPlan<4>& plan, const std::array<char*, 4>& base, bool nan_to_low, ElementWiseIsa isa,
                   const Executor& ex = {}) {
    const bool stream = streams(plan.elements() * sizeof(TOut));
    run_rows_on<TOut, TIn, TScale, TOut>(isa, plan, base, [&](auto tag) {
        return QuantizeRow<TIn, TOut, typename decltype(tag)::type, TScale, By>{nan_to_low, stream};
    }, ex);
    if (stream) kernel::stream_fence();
}

/// What an absent zero point reads: 0, repeated through zero strides.
template <class TOut>
inline const TOut kNoQuantizeZeroPoint{};

/// The loop plan of `op` (operands: output, input, scale, zero point); it
/// depends on the descs only.
template <class TIn, class TOut>
LoopPlan<4> quantize_plan(const ElementWiseQuantizeLinear<TIn, TOut>& op) noexcept {
    using TScale = typename ElementWiseQuantizeLinear<TIn, TOut>::TScale;
    static const std::array<std::uint64_t, kMaxDimensions> zero_strides{};
    const auto* zp_strides = op.ZeroPointTensor ? &op.ZeroPointTensor->strides : &zero_strides;
    return make_plan<4>(
        op.OutputTensor.sizes, {&op.OutputTensor.strides, &op.InputTensor.strides, &op.ScaleTensor.strides, zp_strides},
        {sizeof(TOut), sizeof(TIn), sizeof(TScale), sizeof(TOut)});
}

/// Whether a NaN quotient gives the low end in profile `f` (section 11).
template <class TIn, class TOut>
bool quantize_nan_to_low(const ElementWiseQuantizeLinear<TIn, TOut>& op, Fidelity f) noexcept {
    return f == Fidelity::Exact || quantize_nan_to_low_directml(op);
}

}  // namespace detail

/// ELEMENT_WISE_QUANTIZE_LINEAR with its loop plan, ISA path and NaN form
/// derived once: execute() computes with new buffers of the same descs
/// (`zero_point` null when the desc has none; qdml::Compiled keeps one).
/// Where kAvailable.
template <class TIn, class TOut>
class PreparedElementWiseQuantizeLinear {
public:
    explicit PreparedElementWiseQuantizeLinear(const ElementWiseQuantizeLinear<TIn, TOut>& op, const GemmOptions& o = {})
        : plan_(detail::quantize_plan(op)), isa_(select_elementwise_isa(o.isa)),
          nan_to_low_(detail::quantize_nan_to_low(op, o.fidelity)) {}
    /// `executor`: the caller's thread pool (default: the calling thread).
    void execute(void* out, const void* in, const void* scale, const void* zero_point,
                 const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        const auto c = [](const void* p) { return const_cast<char*>(static_cast<const char*>(p)); };
        detail::quantize_rows<TIn, TOut>(
            plan_,
            {static_cast<char*>(out), c(in), c(scale), c(zero_point ? zero_point : &detail::kNoQuantizeZeroPoint<TOut>)},
            nan_to_low_, isa_, executor);
    }

private:
    LoopPlan<4> plan_;
    ElementWiseIsa isa_;
    bool nan_to_low_;
};

/// The bits of reference::element_wise_quantize_linear(op, o.fidelity);
/// `o.isa` caps the path (select_elementwise_isa).
template <class TIn, class TOut>
void element_wise_quantize_linear(const ElementWiseQuantizeLinear<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::element_wise_quantize_linear(op, o.fidelity);
    } else {
        const TOut* zp_data = op.ZeroPointTensor ? op.ZeroPointTensor->data : &detail::kNoQuantizeZeroPoint<TOut>;
        detail::quantize_rows<TIn, TOut>(
            detail::quantize_plan(op),
            {reinterpret_cast<char*>(op.OutputTensor.data),
             const_cast<char*>(reinterpret_cast<const char*>(op.InputTensor.data)),
             const_cast<char*>(reinterpret_cast<const char*>(op.ScaleTensor.data)),
             const_cast<char*>(reinterpret_cast<const char*>(zp_data))},
            detail::quantize_nan_to_low(op, o.fidelity), select_elementwise_isa(o.isa), o.executor);
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`.
template <class TIn, class TOut>
std::string path(const ElementWiseQuantizeLinear<TIn, TOut>&, const GemmOptions& o = {}) {
    return std::string("element-wise ") + (kAvailable ? arch_name(o.isa) : "scalar");
}

}  // namespace qdml::simd
