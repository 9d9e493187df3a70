// qdml/simd/element_wise_clip.hpp - the fast path of ELEMENT_WISE_CLIP,
// bit-identical to reference/element_wise_clip.hpp (docs/semantics.md section 7):
//   Output[i] = max(Min, min(g(Input[i]), Max)),  g(x) = x * Scale + Bias or x
// Float types: binary32 lanes (FLOAT16 widened and rounded back once), core's
// scale_bias_step and clamp_min_max. Integers without ScaleBias: compared in
// their own type (INT64/UINT64 exact). 8/16-bit integers with ScaleBias: g
// in binary32, then NaN -> 0, clamp to the type's range and truncate (the
// value truncate_saturate gives). 32/64-bit integers with ScaleBias: core's
// clip_element per element.
#pragma once

#include <cstdint>
#include <string>
#include <limits>
#include <type_traits>

#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/element_wise_clip.hpp"
#include "qdml/reference/element_wise_clip.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// The row kernel on ISA tag A (arch.hpp); DirectML: float types compare as
/// DirectML does (clamp_min_max_directml, docs/semantics.md section 10).
/// Clip1 (float types): ELEMENT_WISE_CLIP1's own comparisons where they
/// differ from CLIP's (docs/semantics.md section 13; clip_rows takes this form
/// only then): min(Max, max(Min, v)) (exact), a NaN bound skipped (DirectML).
template <class T, bool ScaleBias, bool DirectML, class A, bool Clip1 = false>
struct ClipRow {
    ClipParams<T> p;
    bool stream = false;  ///< non-temporal stores (see streams())

    QDML_ALWAYS_INLINE void operator()(T* out, RowIn<T> x, std::size_t n) const noexcept {
        const ClipParams<T> prm = p;  // (the lambdas below copy what they use: no reloads after 8-bit stores)
        const auto one = [=](std::size_t i) QDML_ALWAYS_INLINE {
            if constexpr (Clip1 && DirectML)
                out[i] = clip1_element_directml(*x.at(i), prm);
            else if constexpr (Clip1)
                out[i] = clip1_element(*x.at(i), prm);
            else if constexpr (DirectML)
                out[i] = clip_element_directml(*x.at(i), prm);
            else
                out[i] = clip_element(*x.at(i), prm);
        };
        if constexpr (ClipParams<T>::is_float) {
            using F = kernel::fbatch<A>;
            constexpr std::size_t W = F::size;
            const F lo(p.lo), hi(p.hi);
            const bool lo_nan = p.lo != p.lo, hi_nan = p.hi != p.hi;
            const auto value = [=](std::size_t i) QDML_ALWAYS_INLINE {
                F v = kernel::load_float<A>(x.at(i));
                if constexpr (ScaleBias) v = scale_bias_step(v, prm.scale, prm.bias);
                if constexpr (Clip1 && DirectML)
                    return clamp1_directml_with(v, lo, hi, lo_nan, hi_nan);
                else if constexpr (Clip1)
                    return clamp_max_min(v, lo, hi);
                else if constexpr (DirectML)
                    return kernel::clamp_float_directml<A>(v, lo, hi);
                else
                    return kernel::clamp_float<A>(v, lo, hi);
            };
            row_blocks<W>(out, n, stream, kernel::vec4_block<A>(out, value), kernel::vec1_store<A>(out, value), one);
        } else if constexpr (!ScaleBias) {
            using B = kernel::batch<T, A>;
            constexpr std::size_t W = B::size;
            const B lo(p.lo), hi(p.hi);
            const auto value = [=](std::size_t i) QDML_ALWAYS_INLINE { return kernel::clamp_int<A>(kernel::load_batch<A>(x.at(i)), lo, hi); };
            row_blocks<W>(out, n, stream, kernel::vec4_block<A>(out, value), kernel::vec1_store<A>(out, value), one);
        } else {
            std::size_t i = 0;
            if constexpr (sizeof(T) <= 2) {
                using F = kernel::fbatch<A>;
                using I = kernel::ibatch<A>;
                const F t_lo(static_cast<float>(std::numeric_limits<T>::min()));
                const F t_hi(static_cast<float>(std::numeric_limits<T>::max()));
                const I lo(p.lo), hi(p.hi);
                for (; i + F::size <= n; i += F::size) {
                    F g = scale_bias_step(kernel::load_float<A>(x.at(i)), p.scale, p.bias);
                    g = VecOps<F>::select(g == g, g, F(0.0f));  // truncate_saturate: NaN -> 0 (ordered ==),
                    g = clamp_min_max(g, t_lo, t_hi);        // saturate (T's range is exact in binary32),
                    const I t = kernel::truncate_to_int<A>(g);  // truncate toward zero
                    kernel::store_int<A>(out + i, kernel::clamp_int<A>(t, lo, hi));
                }
            }
            for (; i < n; ++i) one(i);
        }
    }
};

/// The rank-free part: every row of the plan (operands: output, input).
/// (Integer types compute the same in both profiles.) `clip1`: `p` is
/// ELEMENT_WISE_CLIP1's (ClipParams::derive_clip1), which computes as CLIP
/// but where Min > Max (exact profile: Max, for integer types by taking Max
/// as both bounds; float types: ClipRow's Clip1 form) and for a NaN bound
/// (DirectML profile, float types: ClipRow's Clip1 form).
template <class T>
void clip_rows(const LoopPlan<2>& plan, const std::array<char*, 2>& base, const ClipParams<T>& p_in, ElementWiseIsa isa,
               Fidelity f, const Executor& ex = {}, bool clip1 = false) {
    const bool stream = streams(plan.elements() * sizeof(T));
    ClipParams<T> p = p_in;
    const auto rows = [&](auto scale_bias, auto directml, auto clip1_form) {
        run_rows_on<T, T>(isa, plan, base, [&](auto tag) {
            return ClipRow<T, decltype(scale_bias)::value, decltype(directml)::value, typename decltype(tag)::type,
                           decltype(clip1_form)::value>{p, stream};
        }, ex);
    };
    using Yes = std::true_type;
    using No = std::false_type;
    if constexpr (ClipParams<T>::is_float) {
        const bool directml = f == Fidelity::DirectML;
        if (clip1 && (directml ? p.lo != p.lo || p.hi != p.hi : p.lo > p.hi)) {
            if (directml)
                p.scale_bias ? rows(Yes{}, Yes{}, Yes{}) : rows(No{}, Yes{}, Yes{});
            else
                p.scale_bias ? rows(Yes{}, No{}, Yes{}) : rows(No{}, No{}, Yes{});
        } else if (directml) {
            p.scale_bias ? rows(Yes{}, Yes{}, No{}) : rows(No{}, Yes{}, No{});
        } else {
            p.scale_bias ? rows(Yes{}, No{}, No{}) : rows(No{}, No{}, No{});
        }
    } else {
        if (clip1 && f == Fidelity::Exact && p.lo > p.hi) p.lo = p.hi;  // every result is Max
        p.scale_bias ? rows(Yes{}, No{}, No{}) : rows(No{}, No{}, No{});
    }
    if (stream) kernel::stream_fence();
}

/// The loop plan of `op` (ELEMENT_WISE_CLIP or CLIP1; operands: output, input);
/// it depends on the descs only.
template <class Op>
LoopPlan<2> clip_plan(const Op& op) noexcept {
    constexpr std::size_t size = sizeof(*op.OutputTensor.data);
    return make_plan<2>(op.OutputTensor.sizes, {&op.OutputTensor.strides, &op.InputTensor.strides}, {size, size});
}

}  // namespace detail

/// ELEMENT_WISE_CLIP with what depends on the descs alone derived once (the
/// loop plan, the bounds, the ISA path): execute() computes with new buffers
/// of the same descs (qdml::Compiled keeps one). Where kAvailable.
template <class T>
class PreparedElementWiseClip {
public:
    explicit PreparedElementWiseClip(const ElementWiseClip<T>& op, const GemmOptions& o = {})
        : plan_(detail::clip_plan(op)),
          params_(ClipParams<T>::derive(op)),
          isa_(select_elementwise_isa(o.isa)),
          fidelity_(o.fidelity) {}
    /// `executor`: the caller's thread pool (default: the calling thread).
    void execute(void* out, const void* in, const Executor& executor = {}) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        detail::clip_rows<T>(plan_, {static_cast<char*>(out), const_cast<char*>(static_cast<const char*>(in))}, params_,
                             isa_, fidelity_, executor);
    }

private:
    LoopPlan<2> plan_;
    ClipParams<T> params_;
    ElementWiseIsa isa_;
    Fidelity fidelity_;
};

/// The bits of reference::element_wise_clip(op, o.fidelity); may run in
/// place; `o.isa` caps the path (select_elementwise_isa).
template <class T>
void element_wise_clip(const ElementWiseClip<T>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (!kAvailable) {
        reference::element_wise_clip(op, o.fidelity);
    } else {
        detail::clip_rows<T>(detail::clip_plan(op),
                             {reinterpret_cast<char*>(op.OutputTensor.data),
                              const_cast<char*>(reinterpret_cast<const char*>(op.InputTensor.data))},
                             ClipParams<T>::derive(op), select_elementwise_isa(o.isa), o.fidelity, o.executor);
    }
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`.
template <class T>
std::string path(const ElementWiseClip<T>&, const GemmOptions& o = {}) {
    return std::string("element-wise ") + (kAvailable ? arch_name(o.isa) : "scalar");
}

}  // namespace qdml::simd
