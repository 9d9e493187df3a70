// qdml/simd/x86/avx2/elementwise.hpp - the element-wise loops' AVX2 + F16C
// path: 8-lane binary32 and int32 vectors (F, I, their comparison mask M,
// and IV<T>, 32 bytes of an integer T) with the operators core/quantize.hpp's
// steps use, qdml::VecOps for them, and ElementWise, the ISA tag the row
// kernels of simd/element_wise_*.hpp take (loads that widen to binary32,
// the exact INT32/UINT32 difference, binary16 and 8/16-bit stores, the
// add's integer decision). Rows wraps a row kernel so that it is compiled
// for this region: its call operator is flattened (QDML_FLATTEN), so the
// generic row kernel and core's steps inline into it and these operations
// inline into them. Chosen at run time (simd::select_elementwise_isa); the
// bits of every operation are those of the scalar steps in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "qdml/core/float16.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/simd/isa.hpp"
#include "qdml/simd/kernel/add_pairs_constants.hpp"

#if QDML_X86
QDML_REGION_AVX2_F16C
namespace qdml::simd::x86::avx2 {

/// The mask of a comparison of F lanes (all ones where true).
struct M {
    __m256 m;
};

/// 8 binary32 lanes.
struct F {
    using value_type = float;
    static constexpr std::size_t size = 8;
    __m256 v;
    F() = default;
    F(__m256 r) : v(r) {}
    explicit F(float x) : v(_mm256_set1_ps(x)) {}
};

/// 32 bytes of integers of type T (clip without ScaleBias); I, the int32 lanes
/// of quantize_int and the 8/16-bit stores, is IV<std::int32_t>.
template <class T>
struct IV {
    using value_type = T;
    static constexpr std::size_t size = 32 / sizeof(T);
    __m256i v;
    IV() = default;
    IV(__m256i r) : v(r) {}
    explicit IV(T x) {
        if constexpr (sizeof(T) == 1) v = _mm256_set1_epi8(static_cast<char>(x));
        else if constexpr (sizeof(T) == 2) v = _mm256_set1_epi16(static_cast<short>(x));
        else if constexpr (sizeof(T) == 4) v = _mm256_set1_epi32(static_cast<int>(x));
        else v = _mm256_set1_epi64x(static_cast<long long>(x));
    }
};

using I = IV<std::int32_t>;

template <class Kernel>
struct Rows;

// Ordered, quiet comparisons: false where a lane is NaN, as the scalar operators.
inline F operator+(F a, F b) { return _mm256_add_ps(a.v, b.v); }
inline F operator-(F a, F b) { return _mm256_sub_ps(a.v, b.v); }
inline F operator*(F a, F b) { return _mm256_mul_ps(a.v, b.v); }
inline M operator==(F a, F b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)}; }
inline M operator>=(F a, F b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GE_OQ)}; }
inline M operator>(F a, F b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)}; }
inline M operator<(F a, F b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline I operator-(I a, I b) { return _mm256_sub_epi32(a.v, b.v); }

/// The ISA tag of this path (simd::kernel's functions forward to it).
struct ElementWise {
    static constexpr bool kRegion = true;
    static constexpr Isa kCap = Isa::Avx2;  ///< the lowest ISA cap that selects this path
    static constexpr const char* kName = "avx2+f16c";
    using F = avx2::F;
    using I = avx2::I;
    template <class Kernel>
    using Rows = avx2::Rows<Kernel>;
    template <class T>
    using B = IV<T>;

    /// W elements of T (int8, uint8, int16, uint16, float16, float) as binary32, exactly.
    template <class T>
    static F load_float(const T* p) {
        if constexpr (std::is_same_v<T, float>) {
            return _mm256_loadu_ps(p);
        } else if constexpr (sizeof(T) == 1) {
            const __m128i b8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
            if constexpr (std::is_signed_v<T>) return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b8));
            else return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b8));
        } else {
            const __m128i h8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            if constexpr (std::is_same_v<T, std::int16_t>) return _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(h8));
            else if constexpr (std::is_same_v<T, std::uint16_t>) return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(h8));
            else return _mm256_cvtph_ps(h8);  // float16
        }
    }

    /// fp32(x - zp) of INT32 or UINT32 lanes: the difference exact in
    /// binary64, rounded once (UINT32 offset by -2^31 on both sides: a flip
    /// of the top bit, the difference unchanged).
    template <class T>
    static F load_diff_float(const T* x, const T* zp) {
        constexpr std::int32_t flip = std::is_same_v<T, std::uint32_t> ? INT32_MIN : 0;
        const __m256i f = _mm256_set1_epi32(flip);
        const __m256i vx = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)), f);
        const __m256i vz = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp)), f);
        const __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(vx)),
                                                        _mm256_cvtepi32_pd(_mm256_castsi256_si128(vz))));
        const __m128 hi = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(vx, 1)),
                                                        _mm256_cvtepi32_pd(_mm256_extracti128_si256(vz, 1))));
        return _mm256_set_m128(hi, lo);
    }

    /// fp32(x) of INT32 or UINT32 lanes, each rounded once (ties to even) as
    /// fp32(int64) rounds it: DirectML's dequantize converts the input and
    /// the zero point so (UINT32 in binary64, offset by 2^31 after the flip).
    template <class T>
    static F load_int_float(const T* p) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        if constexpr (std::is_same_v<T, std::int32_t>) {
            return _mm256_cvtepi32_ps(v);
        } else {
            const __m256i u = _mm256_xor_si256(v, _mm256_set1_epi32(INT32_MIN));
            const __m256d off = _mm256_set1_pd(2147483648.0);
            const __m128 lo = _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(u)), off));
            const __m128 hi = _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(u, 1)), off));
            return _mm256_set_m128(hi, lo);
        }
    }

    /// 32 bytes at p; with Stream non-temporally (p aligned to 32).
    template <bool Stream>
    static void store_bytes(void* p, __m256i r) {
        if constexpr (Stream) _mm256_stream_si256(static_cast<__m256i*>(p), r);
        else _mm256_storeu_si256(static_cast<__m256i*>(p), r);
    }

    /// 8 binary32 lanes stored as float, or as float16 (rounded once, RNE).
    template <bool Stream, class T>
    static void store(T* p, F v) {
        if constexpr (std::is_same_v<T, float>) {
            store_bytes<Stream>(p, _mm256_castps_si256(v.v));
        } else {
            static_assert(std::is_same_v<T, float16>, "float or float16");
            const __m128i h = _mm256_cvtps_ph(v.v, _MM_FROUND_TO_NEAREST_INT);
            if constexpr (Stream) _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
            else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
        }
    }
    /// 32 bytes of integers.
    template <bool Stream, class T>
    static void store(T* p, IV<T> v) {
        store_bytes<Stream>(p, v.v);
    }

    template <class T>
    static IV<T> load(const T* p) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }

    /// max(lo, min(v, hi)) of integer lanes: clamp_min_max's value (an
    /// integer equal to a bound is that bound; lo > hi gives lo).
    template <class T>
    static IV<T> clamp(IV<T> v, IV<T> lo, IV<T> hi) {
        if constexpr (std::is_same_v<T, std::int8_t>) return _mm256_max_epi8(lo.v, _mm256_min_epi8(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::uint8_t>) return _mm256_max_epu8(lo.v, _mm256_min_epu8(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::int16_t>) return _mm256_max_epi16(lo.v, _mm256_min_epi16(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::uint16_t>) return _mm256_max_epu16(lo.v, _mm256_min_epu16(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::int32_t>) return _mm256_max_epi32(lo.v, _mm256_min_epi32(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::uint32_t>) return _mm256_max_epu32(lo.v, _mm256_min_epu32(v.v, hi.v));
        else {  // 64-bit: signed compares (UINT64 with the top bits flipped, an order-preserving map)
            const __m256i f = _mm256_set1_epi64x(std::is_signed_v<T> ? 0 : INT64_MIN);
            const __m256i r = _mm256_blendv_epi8(v.v, hi.v, _mm256_cmpgt_epi64(_mm256_xor_si256(v.v, f), _mm256_xor_si256(hi.v, f)));
            return _mm256_blendv_epi8(r, lo.v, _mm256_cmpgt_epi64(_mm256_xor_si256(lo.v, f), _mm256_xor_si256(r, f)));
        }
    }

    /// max(lo, min(hi, v)) of binary32 lanes: minps/maxps return their
    /// second operand when the compare is false (NaN, equal zeros), which is
    /// clamp_min_max's select order exactly.
    static F clamp_float(F v, F lo, F hi) { return _mm256_max_ps(lo.v, _mm256_min_ps(hi.v, v.v)); }
    /// clamp_min_max_directml: min(v, hi) then max(t, lo), v and t first (minps / maxps return the second operand).
    static F clamp_float_directml(F v, F lo, F hi) { return _mm256_max_ps(_mm256_min_ps(v.v, hi.v), lo.v); }

    /// Each lane truncated toward zero (cvttps); lanes within int32's range.
    static I truncate_to_int(F v) { return _mm256_cvttps_epi32(v.v); }

    /// 8 int32 lanes, each within T's range, stored as 8/16-bit T (in-range
    /// lanes pass the saturating packs unchanged).
    template <class T>
    static void store_int(T* p, I v) {
        const __m128i lo = _mm256_castsi256_si128(v.v), hi = _mm256_extracti128_si256(v.v, 1);
        const __m128i w = std::is_same_v<T, std::uint16_t> ? _mm_packus_epi32(lo, hi) : _mm_packs_epi32(lo, hi);
        if constexpr (sizeof(T) == 2)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
        else
            _mm_storel_epi64(reinterpret_cast<__m128i*>(p), std::is_signed_v<T> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
    }

    /// 4 vectors of int32 lanes (v0 first), each within 8-bit T's range, as
    /// 32 consecutive bytes (p aligned to 32 with Stream).
    template <bool Stream, class T>
    static void store_int4(T* p, I v0, I v1, I v2, I v3) {
        const __m256i w01 = _mm256_packs_epi32(v0.v, v1.v), w23 = _mm256_packs_epi32(v2.v, v3.v);
        const __m256i b = std::is_signed_v<T> ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
        store_bytes<Stream>(p, _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    }

    static constexpr bool kAddPairs = true;

    /// The add's integer decision of 32 lanes (kernel/add_pairs.hpp's
    /// contract): N = C + A * KA + B * KB by two vpmaddwd per 8 word pairs;
    /// false (nothing stored) when a lane is uncertain.
    template <bool Stream, bool AConst, bool BConst, class TOut, class TA, class TB>
    static bool add_pairs_block(TOut* out, const TA* a, const TB* b, const kernel::AddPairsConstants& k) {
        const auto words = [](const auto* p, std::size_t off) {  // 16 elements as int16
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + off));
            return std::is_signed_v<T> ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
        };
        __m256i a0, a1, b0, b1;
        if constexpr (AConst) a0 = a1 = _mm256_set1_epi16(static_cast<short>(*a));
        else a0 = words(a, 0), a1 = words(a, 16);
        if constexpr (BConst) b0 = b1 = _mm256_set1_epi16(static_cast<short>(*b));
        else b0 = words(b, 0), b1 = words(b, 16);
        const __m256i k_hi = _mm256_set1_epi32(k.k_hi), k_lo = _mm256_set1_epi32(k.k_lo);
        const __m256i c = _mm256_set1_epi32(k.c), mask = _mm256_set1_epi32(k.mask), zero = _mm256_setzero_si256();
        const auto n_of = [&](__m256i pairs) {
            const __m256i hi = _mm256_madd_epi16(pairs, k_hi);
            const __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(pairs, k_lo), c);
            return _mm256_add_epi32(_mm256_slli_epi32(hi, 12), lo);
        };
        const __m256i n0 = n_of(_mm256_unpacklo_epi16(a0, b0)), n1 = n_of(_mm256_unpackhi_epi16(a0, b0));
        const __m256i n2 = n_of(_mm256_unpacklo_epi16(a1, b1)), n3 = n_of(_mm256_unpackhi_epi16(a1, b1));
        const __m256i low_bits = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi32(_mm256_and_si256(n0, mask), zero), _mm256_cmpeq_epi32(_mm256_and_si256(n1, mask), zero)),
            _mm256_or_si256(_mm256_cmpeq_epi32(_mm256_and_si256(n2, mask), zero), _mm256_cmpeq_epi32(_mm256_and_si256(n3, mask), zero)));
        if (!_mm256_testz_si256(low_bits, low_bits)) return false;
        const __m128i s = _mm_cvtsi32_si128(k.shift);
        // Per 128-bit lane: bytes of elements 0-7, 16-23 | 8-15, 24-31; qwords 0,2,1,3 restore the order.
        const __m256i w0 = _mm256_packs_epi32(_mm256_sra_epi32(n0, s), _mm256_sra_epi32(n1, s));
        const __m256i w1 = _mm256_packs_epi32(_mm256_sra_epi32(n2, s), _mm256_sra_epi32(n3, s));
        const __m256i bytes = std::is_signed_v<TOut> ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1);
        store_bytes<Stream>(out, _mm256_permute4x64_epi64(bytes, 0xD8));
        return true;
    }
};

/// A row kernel compiled for this region (see the top of the file).
template <class Kernel>
struct Rows {
    Kernel kernel;
    template <class... Args>
    QDML_FLATTEN void operator()(Args... args) const {
        kernel(args...);
    }
    /// One row as loops.hpp's row_thunk calls it: the kernel compiled for
    /// this region once, out of line (region() inlines it into the tile loop).
    template <class... Args>
    QDML_NOINLINE QDML_FLATTEN void row(Args... args) const {
        kernel(args...);
    }
    /// `f()`, everything it calls inlined and compiled for this region: a
    /// whole tile of rows (loops.hpp, run_tile_impl: the transpositions, the
    /// staging and this kernel) in one call, as a -march build compiles it.
    template <class F>
    QDML_FLATTEN void region(F& f) const {
        f();
    }
};

}  // namespace qdml::simd::x86::avx2

namespace qdml {
template <>
struct VecOps<simd::x86::avx2::F> {
    using V = simd::x86::avx2::F;
    using Int = simd::x86::avx2::I;
    static V no_fuse(V v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
        __asm__("" : "+x"(v.v));
#endif
        return v;
    }
    static V select(simd::x86::avx2::M c, V a, V b) noexcept { return _mm256_blendv_ps(b.v, a.v, c.m); }
    static V div(V a, V b) noexcept { return _mm256_div_ps(a.v, b.v); }
    static Int bits(V v) noexcept { return _mm256_castps_si256(v.v); }
};
}  // namespace qdml
QDML_REGION_END
#endif
