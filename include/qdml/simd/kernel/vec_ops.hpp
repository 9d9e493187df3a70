// qdml/simd/kernel/vec_ops.hpp - qdml::VecOps for xsimd batches: the batch
// spelling of the few operations core/quantize.hpp's element-wise steps
// (Q, dequantize, add, scale-bias, min/max) use, so that those steps are one
// text for a scalar and for a batch.
#pragma once

#include <cstdint>

#include <xsimd/xsimd.hpp>

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
    /// The binary32 bits of each lane as int32.
    static Int bits(const xsimd::batch<float, A>& v) noexcept { return xsimd::bitwise_cast<Int>(v); }
};

}  // namespace qdml
