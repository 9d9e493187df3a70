// qdml/simd/kernel/convert.hpp - the vector operations of the element-wise
// row kernels, over an ISA tag A: a vector of W = fbatch<A>::size elements
// of an integer or binary16 type loaded as binary32 (exact), the exact
// fp32(x - zp) of INT32/UINT32 with one rounding, binary32 stored as
// binary16 (RNE), int32 lanes narrowed to 8/16 bits, integer clamps. A is
// either an xsimd arch (the portable path: SSE2 forms here, else element by
// element through memory) or a region tag, x86/<isa>/elementwise.hpp's
// ElementWise (AVX2 + F16C, AVX-512), to which every function forwards.
// All forms give the bits of the scalar conversions in core/.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "qdml/core/float16.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"

#if XSIMD_WITH_SSE2
#include <immintrin.h>
#endif

namespace qdml::simd::kernel {

enum class Isa { Generic, Sse2 };

namespace detail {
template <class A, class = void>
struct IsRegion : std::false_type {};
template <class A>
struct IsRegion<A, std::enable_if_t<A::kRegion>> : std::true_type {};
}  // namespace detail

/// Whether A is a region tag (x86/<isa>/elementwise.hpp) rather than an xsimd arch.
template <class A>
inline constexpr bool is_region_v = detail::IsRegion<A>::value;

/// Which of the portable forms below serves xsimd arch A (SSE2 on x86-64;
/// every other arch the generic form).
template <class A>
constexpr Isa isa_of() noexcept {
#if XSIMD_WITH_SSE2
    if constexpr (!is_region_v<A>) {
        if constexpr (std::is_base_of_v<xsimd::sse2, A>) return Isa::Sse2;
    }
#endif
    return Isa::Generic;
}

namespace detail {
template <class A, class = void>
struct Vectors {  // an xsimd arch
    using F = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
    template <class T>
    using B = xsimd::batch<T, A>;
};
template <class A>
struct Vectors<A, std::enable_if_t<IsRegion<A>::value>> {  // a region tag
    using F = typename A::F;
    using I = typename A::I;
    template <class T>
    using B = typename A::template B<T>;
};
}  // namespace detail

/// A's vectors: W binary32 lanes, W int32 lanes, and a vector of integers T.
template <class A>
using fbatch = typename detail::Vectors<A>::F;
template <class A>
using ibatch = typename detail::Vectors<A>::I;
template <class T, class A>
using batch = typename detail::Vectors<A>::template B<T>;

/// clamp_min_max(v, lo, hi) (core/quantize.hpp: r = v > hi ? hi : v, then
/// r < lo ? lo : r) on binary32 lanes. On x86 that is min(hi, v) then
/// max(lo, r): minps / maxps return their second operand when the compare
/// is false, NaN or equal zeros included, which is the select order
/// exactly (two operations per vector instead of two compares and two
/// blends). Elsewhere (NEON's vminq propagates NaN) the selects.
/// (AVX-512's vminps / vmaxps behave the same; its arch tags do not derive
/// from sse2 in xsimd 8.1, hence their own test.)
template <class A>
QDML_ALWAYS_INLINE inline fbatch<A> clamp_float(const fbatch<A>& v, const fbatch<A>& lo, const fbatch<A>& hi) noexcept {
    if constexpr (is_region_v<A>) {
        return A::clamp_float(v, lo, hi);
    } else {
#if XSIMD_WITH_SSE2
        if constexpr (std::is_base_of_v<xsimd::sse2, A>) return xsimd::max(lo, xsimd::min(hi, v));
#endif
        return clamp_min_max(v, lo, hi);
    }
}

/// clamp_min_max_directml(v, lo, hi) (core/quantize_directml.hpp: t = v < hi
/// ? v : hi, then t > lo ? t : lo) on binary32 lanes: on x86 min(v, hi)
/// then max(t, lo), the operands the other way round from clamp_float
/// (minps / maxps return the second operand when the compare is false, NaN
/// included); elsewhere the selects.
template <class A>
QDML_ALWAYS_INLINE inline fbatch<A> clamp_float_directml(const fbatch<A>& v, const fbatch<A>& lo,
                                                         const fbatch<A>& hi) noexcept {
    if constexpr (is_region_v<A>) {
        return A::clamp_float_directml(v, lo, hi);
    } else {
#if XSIMD_WITH_SSE2
        if constexpr (std::is_base_of_v<xsimd::sse2, A>) return xsimd::max(xsimd::min(v, hi), lo);
#endif
        return clamp_min_max_directml(v, lo, hi);
    }
}

/// clamp_min_max(v, lo, hi) of integer vectors (any integer type, and the int32 lanes of ibatch).
template <class A, class V>
QDML_ALWAYS_INLINE inline V clamp_int(const V& v, const V& lo, const V& hi) noexcept {
    if constexpr (is_region_v<A>)
        return A::clamp(v, lo, hi);
    else
        return clamp_min_max(v, lo, hi);
}

/// A vector of integers T from p (unaligned).
template <class A, class T>
QDML_ALWAYS_INLINE inline batch<T, A> load_batch(const T* p) noexcept {
    if constexpr (is_region_v<A>)
        return A::load(p);
    else
        return batch<T, A>::load_unaligned(p);
}

namespace detail {
template <class A, class T, class F>
fbatch<A> load_generic(const T* p, F&& to_float) noexcept {
    alignas(64) float buf[fbatch<A>::size];
    for (std::size_t i = 0; i < fbatch<A>::size; ++i) buf[i] = to_float(p[i]);
    return fbatch<A>::load_aligned(buf);
}
}  // namespace detail

/// W elements of T (int8, uint8, int16, uint16, float16, float) as binary32, exactly.
template <class A, class T>
QDML_ALWAYS_INLINE inline fbatch<A> load_float(const T* p) noexcept {
    static_assert(sizeof(T) <= 2 || std::is_same_v<T, float>, "8/16-bit integers, float16 or float");
    if constexpr (is_region_v<A>) {
        return A::load_float(p);
    } else if constexpr (std::is_same_v<T, float>) {
        return fbatch<A>::load_unaligned(p);
    }
#if XSIMD_WITH_SSE2
    else if constexpr (isa_of<A>() == Isa::Sse2 && !std::is_same_v<T, float16>) {
        const __m128i zero = _mm_setzero_si128();
        __m128i v;
        if constexpr (sizeof(T) == 1) {
            std::int32_t four;
            std::memcpy(&four, p, 4);
            v = _mm_cvtsi32_si128(four);
            v = std::is_signed_v<T> ? _mm_unpacklo_epi8(v, v) : _mm_unpacklo_epi8(v, zero);
        } else {
            v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
        }
        if constexpr (std::is_signed_v<T>) {
            v = _mm_unpacklo_epi16(v, v);  // the value in the top bits of each lane: shift down with sign
            v = _mm_srai_epi32(v, sizeof(T) == 1 ? 24 : 16);
        } else {
            v = _mm_unpacklo_epi16(v, zero);
        }
        return _mm_cvtepi32_ps(v);
    }
#endif
    else {
        return detail::load_generic<A>(p, [](T x) { return to_float(x); });
    }
}

/// fp32(x - zp) for W lanes of INT32 or UINT32: the 33-bit difference formed
/// exactly in binary64 (both operands and their difference are exact there)
/// and rounded once to binary32, ties to even, as fp32(int64) rounds it.
/// UINT32 operands are both offset by -2^31 (a flip of the top bit), which
/// leaves the difference unchanged and makes them int32.
template <class A, class T>
QDML_ALWAYS_INLINE inline fbatch<A> load_diff_float(const T* x, const T* zp) noexcept {
    static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t>, "32-bit integers");
    if constexpr (is_region_v<A>) {
        return A::load_diff_float(x, zp);
    } else {
#if XSIMD_WITH_SSE2
        if constexpr (isa_of<A>() == Isa::Sse2) {
            constexpr std::int32_t flip = std::is_same_v<T, std::uint32_t> ? INT32_MIN : 0;
            const __m128i f = _mm_set1_epi32(flip);
            const __m128i vx = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)), f);
            const __m128i vz = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(zp)), f);
            const __m128 lo = _mm_cvtpd_ps(_mm_sub_pd(_mm_cvtepi32_pd(vx), _mm_cvtepi32_pd(vz)));
            const __m128 hi = _mm_cvtpd_ps(
                _mm_sub_pd(_mm_cvtepi32_pd(_mm_srli_si128(vx, 8)), _mm_cvtepi32_pd(_mm_srli_si128(vz, 8))));
            return _mm_movelh_ps(lo, hi);
        }
#endif
        alignas(64) float buf[fbatch<A>::size];
        for (std::size_t i = 0; i < fbatch<A>::size; ++i) buf[i] = fp32(std::int64_t{x[i]} - std::int64_t{zp[i]});
        return fbatch<A>::load_aligned(buf);
    }
}

/// fp32(x) for W lanes of INT32 or UINT32, each rounded once to binary32,
/// ties to even, as fp32(int64) rounds it (DirectML's dequantize converts
/// the input and the zero point so: core/quantize_directml.hpp).
template <class A, class T>
QDML_ALWAYS_INLINE inline fbatch<A> load_int_float(const T* p) noexcept {
    static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t>, "32-bit integers");
    if constexpr (is_region_v<A>) {
        return A::load_int_float(p);
    } else {
#if XSIMD_WITH_SSE2
        if constexpr (isa_of<A>() == Isa::Sse2) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            if constexpr (std::is_same_v<T, std::int32_t>) {
                return _mm_cvtepi32_ps(v);
            } else {  // in binary64 (exact), offset by 2^31 after the flip, then rounded once
                const __m128i u = _mm_xor_si128(v, _mm_set1_epi32(INT32_MIN));
                const __m128d off = _mm_set1_pd(2147483648.0);
                const __m128 lo = _mm_cvtpd_ps(_mm_add_pd(_mm_cvtepi32_pd(u), off));
                const __m128 hi = _mm_cvtpd_ps(_mm_add_pd(_mm_cvtepi32_pd(_mm_srli_si128(u, 8)), off));
                return _mm_movelh_ps(lo, hi);
            }
        }
#endif
        return detail::load_generic<A>(p, [](T x) { return fp32(std::int64_t{x}); });
    }
}

/// Stores a vector at p (binary32 lanes to float or, rounded once RNE, to
/// float16; or a vector of T itself); with Stream, non-temporally (around
/// the caches), and `p` must be aligned to the store's width. The caller
/// ends a call that streamed with stream_fence().
template <class A, bool Stream = false, class T, class V>
QDML_ALWAYS_INLINE inline void store_vec(T* p, const V& v) noexcept {
    if constexpr (is_region_v<A>) {
        A::template store<Stream>(p, v);
    } else if constexpr (std::is_same_v<typename V::value_type, T>) {
#if XSIMD_WITH_SSE2
        if constexpr (Stream && sizeof(typename V::register_type) == 16) {
            const typename V::register_type reg = v;
            __m128i r;
            std::memcpy(&r, &reg, sizeof r);
            _mm_stream_si128(reinterpret_cast<__m128i*>(p), r);
            return;
        }
#endif
        v.store_unaligned(p);
    } else {
        static_assert(std::is_same_v<T, float16>, "float or float16");
        alignas(64) float buf[fbatch<A>::size];
        v.store_aligned(buf);
        for (std::size_t i = 0; i < fbatch<A>::size; ++i) p[i] = float16(buf[i]);
    }
}

/// Stores four vectors of W lanes at p, p + W, p + 2W and p + 3W (store_vec).
template <class A, bool Stream = false, class T, class V>
QDML_ALWAYS_INLINE inline void store_vec4(T* p, const V& v0, const V& v1, const V& v2, const V& v3) noexcept {
    constexpr std::size_t W = V::size;
    store_vec<A, Stream>(p, v0);
    store_vec<A, Stream>(p + W, v1);
    store_vec<A, Stream>(p + 2 * W, v2);
    store_vec<A, Stream>(p + 3 * W, v3);
}

/// For simd::row_blocks, a row whose vector at element i is value(i): the
/// `block` (four vectors, normal or non-temporal stores) ...
template <class A, class T, class Value>
QDML_ALWAYS_INLINE inline auto vec4_block(T* out, const Value& value) noexcept {
    return [=](std::size_t i, auto stream) QDML_ALWAYS_INLINE {
        constexpr std::size_t W = decltype(value(i))::size;
        store_vec4<A, decltype(stream)::value>(out + i, value(i), value(i + W), value(i + 2 * W), value(i + 3 * W));
    };
}

/// ... and the `vec` (one vector, a normal store).
template <class A, class T, class Value>
QDML_ALWAYS_INLINE inline auto vec1_store(T* out, const Value& value) noexcept {
    return [=](std::size_t i) QDML_ALWAYS_INLINE { store_vec<A>(out + i, value(i)); };
}

/// Stores W int32 lanes, each already within T's range, as T (8/16-bit).
template <class A, class T>
QDML_ALWAYS_INLINE inline void store_int(T* p, const ibatch<A>& v) noexcept {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 2, "8/16-bit integers");
    if constexpr (is_region_v<A>) {
        A::store_int(p, v);
    } else {
#if XSIMD_WITH_SSE2
        if constexpr (isa_of<A>() == Isa::Sse2) {
            __m128i w;
            if constexpr (std::is_same_v<T, std::uint16_t>) {  // SSE2 has no packusdw: pack v - 2^15, flip back
                const __m128i bias = _mm_set1_epi32(32768);
                w = _mm_packs_epi32(_mm_sub_epi32(v, bias), _mm_sub_epi32(v, bias));
                w = _mm_xor_si128(w, _mm_set1_epi16(INT16_MIN));
            } else {
                w = _mm_packs_epi32(v, v);
            }
            if constexpr (sizeof(T) == 2) {
                _mm_storel_epi64(reinterpret_cast<__m128i*>(p), w);
            } else {
                const std::int32_t four =
                    _mm_cvtsi128_si32(std::is_signed_v<T> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
                std::memcpy(p, &four, 4);
            }
            return;
        }
#endif
        alignas(64) std::int32_t buf[ibatch<A>::size];
        v.store_aligned(buf);
        for (std::size_t i = 0; i < ibatch<A>::size; ++i) p[i] = static_cast<T>(buf[i]);
    }
}

/// Stores 4 vectors of W int32 lanes (v0 first), each within T's range, as
/// 4W consecutive elements of an 8-bit T: saturating packs (and, 256 bits
/// and up, one lane permutation) where the ISA has them (in-range lanes
/// pass unchanged), else store_int four times. With Stream, the store is
/// non-temporal and `p` must be aligned to 4W bytes; the caller ends the
/// call with stream_fence().
template <class A, bool Stream = false, class T>
QDML_ALWAYS_INLINE inline void store_int4(T* p, const ibatch<A>& v0, const ibatch<A>& v1, const ibatch<A>& v2, const ibatch<A>& v3) noexcept {
    static_assert(std::is_integral_v<T> && sizeof(T) == 1, "8-bit integers");
    if constexpr (is_region_v<A>) {
        A::template store_int4<Stream>(p, v0, v1, v2, v3);
    } else {
#if XSIMD_WITH_SSE2
        if constexpr (isa_of<A>() == Isa::Sse2) {
            const __m128i w01 = _mm_packs_epi32(v0, v1), w23 = _mm_packs_epi32(v2, v3);
            const __m128i r = std::is_signed_v<T> ? _mm_packs_epi16(w01, w23) : _mm_packus_epi16(w01, w23);
            if constexpr (Stream)
                _mm_stream_si128(reinterpret_cast<__m128i*>(p), r);
            else
                _mm_storeu_si128(reinterpret_cast<__m128i*>(p), r);
            return;
        }
#endif
        constexpr std::size_t W = ibatch<A>::size;
        store_int<A>(p, v0);
        store_int<A>(p + W, v1);
        store_int<A>(p + 2 * W, v2);
        store_int<A>(p + 3 * W, v3);
    }
}

/// A hint to fetch the cache line `ahead` bytes past `p` (which may lie
/// past the buffer: a prefetch never faults; the address is formed as an
/// integer, not by pointer arithmetic).
inline void prefetch(const void* p, std::size_t ahead) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + ahead));
#elif XSIMD_WITH_SSE2  // MSVC x64
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + ahead), _MM_HINT_T0);
#else
    (void)p;
    (void)ahead;
#endif
}

/// Orders the non-temporal stores of this thread before any later store
/// (the end of a call that streamed its output).
inline void stream_fence() noexcept {
#if XSIMD_WITH_SSE2
    _mm_sfence();
#endif
}

/// Each binary32 lane truncated toward zero to int32 (cvttps); lanes must be
/// within int32's range.
template <class A>
QDML_ALWAYS_INLINE inline ibatch<A> truncate_to_int(const fbatch<A>& v) noexcept {
    if constexpr (is_region_v<A>)
        return A::truncate_to_int(v);
    else
        return xsimd::batch_cast<std::int32_t>(v);
}

}  // namespace qdml::simd::kernel

