// qdml/simd/kernel/vec_ops.hpp - qdml::VecOps for xsimd batches: the batch
// spelling of the few operations core/quantize.hpp's element-wise steps
// (Q, dequantize, add, scale-bias, min/max) use, so that those steps are one
// text for a scalar and for a batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#if XSIMD_WITH_NEON64
#include <arm_neon.h>
#endif

#include "qdml/core/quantize.hpp"

namespace qdml {

template <class T, class A>
struct VecOps<xsimd::batch<T, A>> {
    using V = xsimd::batch<T, A>;
    using Int = xsimd::batch<std::int32_t, A>;

    /// The register unchanged, hidden from the optimizer: a product computed
    /// before never fuses with a later add (whatever -ffp-contract says).
    static V no_fuse(V v) noexcept {
        auto r = static_cast<typename V::register_type>(v);
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
        __asm__("" : "+v"(r));
#elif defined(__GNUC__) || defined(__clang__)
        __asm__("" : "+m"(r));
#endif
        return V(r);
    }
    static V select(const xsimd::batch_bool<T, A>& c, const V& a, const V& b) noexcept {
        return xsimd::select(c, a, b);
    }
    /// a / b, a true IEEE division in every lane. (xsimd 8.1 divides binary32
    /// on NEON by a reciprocal estimate and Newton steps, which is not exact.)
    static V div(const V& a, const V& b) noexcept {
#if XSIMD_WITH_NEON64
        if constexpr (std::is_same_v<T, float> && std::is_base_of_v<xsimd::neon64, A>) return V(vdivq_f32(a, b));
#endif
#if XSIMD_WITH_NEON && !XSIMD_WITH_NEON64
        if constexpr (std::is_same_v<T, float> && std::is_base_of_v<xsimd::neon, A>) {  // no vector division
            alignas(64) float x[V::size], y[V::size];
            a.store_aligned(x);
            b.store_aligned(y);
            for (std::size_t i = 0; i < V::size; ++i) x[i] /= y[i];
            return V::load_aligned(x);
        }
#endif
        return a / b;
    }
    /// The binary32 bits of each lane as int32.
    static Int bits(const xsimd::batch<float, A>& v) noexcept { return xsimd::bitwise_cast<Int>(v); }
};

}  // namespace qdml
