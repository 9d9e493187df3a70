// qdml/simd/kernel/convert.hpp - the per-ISA conversions xsimd 8.1 lacks or
// does through a scalar round trip, in one place: a vector of W =
// batch<float, A>::size elements of an integer or binary16 type loaded as
// binary32 (exact), the exact fp32(x - zp) of INT32/UINT32 with one rounding,
// binary32 stored as binary16 (RNE), and int32 lanes narrowed to 8/16 bits.
// Each function has an AVX-512F, an AVX2 (+F16C where present), an SSE2 and a
// generic form (element by element through memory: every other arch). All
// forms give the bits of the scalar conversions in core/.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "qdml/core/float16.hpp"
#include "qdml/core/quantize.hpp"

#if XSIMD_WITH_SSE2
#include <immintrin.h>
#endif

// GCC 12 reports its own _mm512_undefined_* placeholders inside AVX-512
// intrinsics as "(may be) used uninitialized" once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace qdml::simd::kernel {

enum class Isa { Generic, Sse2, Avx2, Avx512 };

/// Which of the forms below serves xsimd arch A (plain AVX without AVX2 and
/// every non-x86 arch use the generic form).
template <class A>
constexpr Isa isa_of() noexcept {
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_base_of_v<xsimd::avx512f, A>) return Isa::Avx512;
#endif
#if XSIMD_WITH_AVX2
    if constexpr (std::is_base_of_v<xsimd::avx2, A>) return Isa::Avx2;
#endif
#if XSIMD_WITH_SSE2
    if constexpr (std::is_base_of_v<xsimd::sse2, A>) return Isa::Sse2;
#endif
    return Isa::Generic;
}

template <class A>
using fbatch = xsimd::batch<float, A>;
template <class A>
using ibatch = xsimd::batch<std::int32_t, A>;

/// clamp_min_max(v, lo, hi) (core/quantize.hpp: r = v > hi ? hi : v, then
/// r < lo ? lo : r) on binary32 lanes. On x86 that is min(hi, v) then
/// max(lo, r): minps / maxps return their second operand when the compare
/// is false, NaN or equal zeros included, which is the select order
/// exactly (two operations per vector instead of two compares and two
/// blends). Elsewhere (NEON's vminq propagates NaN) the selects.
/// (AVX-512's vminps / vmaxps behave the same; its arch tags do not derive
/// from sse2 in xsimd 8.1, hence their own test.)
template <class A>
fbatch<A> clamp_float(const fbatch<A>& v, const fbatch<A>& lo, const fbatch<A>& hi) noexcept {
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_base_of_v<xsimd::avx512f, A>) return xsimd::max(lo, xsimd::min(hi, v));
#endif
#if XSIMD_WITH_SSE2
    if constexpr (std::is_base_of_v<xsimd::sse2, A>) return xsimd::max(lo, xsimd::min(hi, v));
#endif
    return clamp_min_max(v, lo, hi);
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
fbatch<A> load_float(const T* p) noexcept {
    static_assert(sizeof(T) <= 2 || std::is_same_v<T, float>, "8/16-bit integers, float16 or float");
    [[maybe_unused]] constexpr Isa isa = isa_of<A>();
    if constexpr (std::is_same_v<T, float>) {
        return fbatch<A>::load_unaligned(p);
    }
#if XSIMD_WITH_AVX512F
    else if constexpr (isa == Isa::Avx512) {
        const __m128i b16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m256i h16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        if constexpr (std::is_same_v<T, std::int8_t>) return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b16));
        if constexpr (std::is_same_v<T, std::uint8_t>) return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b16));
        if constexpr (std::is_same_v<T, std::int16_t>) return _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(h16));
        if constexpr (std::is_same_v<T, std::uint16_t>) return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(h16));
        if constexpr (std::is_same_v<T, float16>) return _mm512_cvtph_ps(h16);
    }
#endif
#if XSIMD_WITH_AVX2
    else if constexpr (isa == Isa::Avx2 && sizeof(T) == 1) {
        const __m128i b8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
        if constexpr (std::is_same_v<T, std::int8_t>) return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b8));
        if constexpr (std::is_same_v<T, std::uint8_t>) return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b8));
    } else if constexpr (isa == Isa::Avx2 && sizeof(T) == 2) {
        const __m128i h8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        if constexpr (std::is_same_v<T, std::int16_t>) return _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(h8));
        if constexpr (std::is_same_v<T, std::uint16_t>) return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(h8));
#if defined(__F16C__)
        if constexpr (std::is_same_v<T, float16>) return _mm256_cvtph_ps(h8);
#else
        if constexpr (std::is_same_v<T, float16>) return detail::load_generic<A>(p, [](T x) { return to_float(x); });
#endif
    }
#endif
#if XSIMD_WITH_SSE2
    else if constexpr (isa == Isa::Sse2 && !std::is_same_v<T, float16>) {
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
fbatch<A> load_diff_float(const T* x, const T* zp) noexcept {
    static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t>, "32-bit integers");
    [[maybe_unused]] constexpr Isa isa = isa_of<A>();
    [[maybe_unused]] constexpr std::int32_t flip = std::is_same_v<T, std::uint32_t> ? INT32_MIN : 0;
#if XSIMD_WITH_AVX512F
    if constexpr (isa == Isa::Avx512) {
        const __m512i f = _mm512_set1_epi32(flip);
        const __m512i vx = _mm512_xor_si512(_mm512_loadu_si512(x), f);
        const __m512i vz = _mm512_xor_si512(_mm512_loadu_si512(zp), f);
        const __m256 lo = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(vx)),
                                                        _mm512_cvtepi32_pd(_mm512_castsi512_si256(vz))));
        const __m256 hi = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(vx, 1)),
                                                        _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(vz, 1))));
        return _mm512_castpd_ps(
            _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    } else
#endif
#if XSIMD_WITH_AVX2
    if constexpr (isa == Isa::Avx2) {
        const __m256i f = _mm256_set1_epi32(flip);
        const __m256i vx = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)), f);
        const __m256i vz = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp)), f);
        const __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(vx)),
                                                        _mm256_cvtepi32_pd(_mm256_castsi256_si128(vz))));
        const __m128 hi = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(vx, 1)),
                                                        _mm256_cvtepi32_pd(_mm256_extracti128_si256(vz, 1))));
        return _mm256_set_m128(hi, lo);
    } else
#endif
#if XSIMD_WITH_SSE2
    if constexpr (isa == Isa::Sse2) {
        const __m128i f = _mm_set1_epi32(flip);
        const __m128i vx = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)), f);
        const __m128i vz = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(zp)), f);
        const __m128 lo = _mm_cvtpd_ps(_mm_sub_pd(_mm_cvtepi32_pd(vx), _mm_cvtepi32_pd(vz)));
        const __m128 hi = _mm_cvtpd_ps(
            _mm_sub_pd(_mm_cvtepi32_pd(_mm_srli_si128(vx, 8)), _mm_cvtepi32_pd(_mm_srli_si128(vz, 8))));
        return _mm_movelh_ps(lo, hi);
    } else
#endif
    {
        alignas(64) float buf[fbatch<A>::size];
        for (std::size_t i = 0; i < fbatch<A>::size; ++i) buf[i] = fp32(std::int64_t{x[i]} - std::int64_t{zp[i]});
        return fbatch<A>::load_aligned(buf);
    }
}

/// Stores a batch at p; with Stream, non-temporally (around the caches),
/// and `p` must be aligned to the batch's width. The caller ends a call
/// that streamed with stream_fence().
template <class A, bool Stream = false, class T>
void store_batch(T* p, const xsimd::batch<T, A>& v) noexcept {
    if constexpr (Stream) {
        using R = typename xsimd::batch<T, A>::register_type;
        [[maybe_unused]] const R reg = v;
#if XSIMD_WITH_AVX512F
        if constexpr (sizeof(R) == 64) {
            __m512i r;
            std::memcpy(&r, &reg, sizeof r);
            _mm512_stream_si512(reinterpret_cast<__m512i*>(p), r);
            return;
        }
#endif
#if XSIMD_WITH_AVX
        if constexpr (sizeof(R) == 32) {
            __m256i r;
            std::memcpy(&r, &reg, sizeof r);
            _mm256_stream_si256(reinterpret_cast<__m256i*>(p), r);
            return;
        }
#endif
#if XSIMD_WITH_SSE2
        if constexpr (sizeof(R) == 16) {
            __m128i r;
            std::memcpy(&r, &reg, sizeof r);
            _mm_stream_si128(reinterpret_cast<__m128i*>(p), r);
            return;
        }
#endif
    }
    v.store_unaligned(p);
}

/// Stores W binary32 lanes as T = float or float16 (rounded once, RNE). With
/// Stream, the store is non-temporal (around the caches) and `p` must be
/// aligned to the store's width (W * sizeof(T) bytes); the caller ends the
/// call with stream_fence().
template <class A, bool Stream = false, class T>
void store_float(T* p, const fbatch<A>& v) noexcept {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, float16>, "float or float16");
    [[maybe_unused]] constexpr Isa isa = isa_of<A>();
    if constexpr (std::is_same_v<T, float>) {
        store_batch<A, Stream>(p, v);
    }
#if XSIMD_WITH_AVX512F
    else if constexpr (isa == Isa::Avx512) {
        const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if constexpr (Stream)
            _mm256_stream_si256(reinterpret_cast<__m256i*>(p), h);
        else
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
    }
#endif
#if XSIMD_WITH_AVX2 && defined(__F16C__)
    else if constexpr (isa == Isa::Avx2) {
        const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
        if constexpr (Stream)
            _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
    }
#endif
    else {
        alignas(64) float buf[fbatch<A>::size];
        v.store_aligned(buf);
        for (std::size_t i = 0; i < fbatch<A>::size; ++i) p[i] = float16(buf[i]);
    }
}

/// Stores a vector as store_float does (binary32 lanes to float or float16)
/// or as store_batch does (a batch of T itself).
template <class A, bool Stream = false, class T, class V>
void store_vec(T* p, const V& v) noexcept {
    if constexpr (std::is_same_v<typename V::value_type, T>)
        store_batch<A, Stream>(p, v);
    else
        store_float<A, Stream>(p, v);
}

/// Stores four vectors of W lanes at p, p + W, p + 2W and p + 3W (store_vec).
template <class A, bool Stream = false, class T, class V>
void store_vec4(T* p, const V& v0, const V& v1, const V& v2, const V& v3) noexcept {
    constexpr std::size_t W = V::size;
    store_vec<A, Stream>(p, v0);
    store_vec<A, Stream>(p + W, v1);
    store_vec<A, Stream>(p + 2 * W, v2);
    store_vec<A, Stream>(p + 3 * W, v3);
}

/// For simd::row_blocks, a row whose vector at element i is value(i): the
/// `block` (four vectors, normal or non-temporal stores) ...
template <class A, class T, class Value>
auto vec4_block(T* out, Value value) noexcept {
    return [=](std::size_t i, auto stream) {
        constexpr std::size_t W = decltype(value(i))::size;
        store_vec4<A, decltype(stream)::value>(out + i, value(i), value(i + W), value(i + 2 * W), value(i + 3 * W));
    };
}

/// ... and the `vec` (one vector, a normal store).
template <class A, class T, class Value>
auto vec1_store(T* out, Value value) noexcept {
    return [=](std::size_t i) { store_vec<A>(out + i, value(i)); };
}

/// Stores W int32 lanes, each already within T's range, as T (8/16-bit).
template <class A, class T>
void store_int(T* p, const ibatch<A>& v) noexcept {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 2, "8/16-bit integers");
    [[maybe_unused]] constexpr Isa isa = isa_of<A>();
#if XSIMD_WITH_AVX512F
    if constexpr (isa == Isa::Avx512) {
        if constexpr (sizeof(T) == 1)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v));  // truncating vpmovdb
        else
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(v));
    } else
#endif
#if XSIMD_WITH_AVX2
    if constexpr (isa == Isa::Avx2) {
        const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
        // In-range lanes pass the saturating packs unchanged.
        const __m128i w = std::is_same_v<T, std::uint16_t> ? _mm_packus_epi32(lo, hi) : _mm_packs_epi32(lo, hi);
        if constexpr (sizeof(T) == 2)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
        else
            _mm_storel_epi64(reinterpret_cast<__m128i*>(p),
                             std::is_signed_v<T> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
    } else
#endif
#if XSIMD_WITH_SSE2
    if constexpr (isa == Isa::Sse2) {
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
    } else
#endif
    {
        alignas(64) std::int32_t buf[ibatch<A>::size];
        v.store_aligned(buf);
        for (std::size_t i = 0; i < ibatch<A>::size; ++i) p[i] = static_cast<T>(buf[i]);
    }
}

/// Stores 4 vectors of W int32 lanes (v0 first), each within T's range, as
/// 4W consecutive elements of an 8-bit T: saturating packs and one lane
/// permutation where the ISA has them (in-range lanes pass unchanged), else
/// store_int four times. With Stream, the store is non-temporal and `p` must
/// be aligned to 4W bytes; the caller ends the call with stream_fence().
template <class A, bool Stream = false, class T>
void store_int4(T* p, const ibatch<A>& v0, const ibatch<A>& v1, const ibatch<A>& v2, const ibatch<A>& v3) noexcept {
    static_assert(std::is_integral_v<T> && sizeof(T) == 1, "8-bit integers");
    [[maybe_unused]] constexpr Isa isa = isa_of<A>();
#if XSIMD_WITH_AVX512BW
    if constexpr (std::is_base_of_v<xsimd::avx512bw, A>) {
        const __m512i w01 = _mm512_packs_epi32(v0, v1), w23 = _mm512_packs_epi32(v2, v3);
        const __m512i b = std::is_signed_v<T> ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
        // Each 128-bit lane l now holds dwords (v0_l, v1_l, v2_l, v3_l): gather them in order.
        const __m512i r = _mm512_permutexvar_epi32(
            _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
        if constexpr (Stream)
            _mm512_stream_si512(reinterpret_cast<__m512i*>(p), r);
        else
            _mm512_storeu_si512(p, r);
        return;
    }
#endif
#if XSIMD_WITH_AVX2
    if constexpr (isa == Isa::Avx2) {
        const __m256i w01 = _mm256_packs_epi32(v0, v1), w23 = _mm256_packs_epi32(v2, v3);
        const __m256i b = std::is_signed_v<T> ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
        const __m256i r = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        if constexpr (Stream)
            _mm256_stream_si256(reinterpret_cast<__m256i*>(p), r);
        else
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), r);
        return;
    }
#endif
#if XSIMD_WITH_SSE2
    if constexpr (isa == Isa::Sse2) {
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

/// A hint to fetch the cache line `ahead` bytes past `p` (which may lie
/// past the buffer: a prefetch never faults; the address is formed as an
/// integer, not by pointer arithmetic).
inline void prefetch(const void* p, std::size_t ahead) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + ahead));
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
ibatch<A> truncate_to_int(const fbatch<A>& v) noexcept {
    return xsimd::batch_cast<std::int32_t>(v);
}

}  // namespace qdml::simd::kernel

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
