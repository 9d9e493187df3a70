// qdml/simd/x86/avx512bw/elementwise.hpp - the element-wise loops' AVX-512
// path (F, BW, DQ, VL; no VNNI needed): 16-lane binary32 and int32 vectors
// and 64 bytes of integers, with the same contract as
// x86/avx2/elementwise.hpp (which says how the row kernels use them); the
// comparison mask is a k register. Chosen at run time
// (simd::select_elementwise_isa); every operation gives the bits of the
// scalar steps in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "qdml/core/float16.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/simd/isa.hpp"
#include "qdml/simd/kernel/add_pairs_constants.hpp"

// GCC 12 reports its own _mm512_undefined_* placeholders inside AVX-512
// intrinsics as "(may be) used uninitialized" once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#if QDML_X86
QDML_REGION_AVX512BW
namespace qdml::simd::x86::avx512bw {

/// The mask of a comparison of F lanes.
struct M {
    __mmask16 m;
};

/// 16 binary32 lanes.
struct F {
    using value_type = float;
    static constexpr std::size_t size = 16;
    __m512 v;
    F() = default;
    F(__m512 r) : v(r) {}
    explicit F(float x) : v(_mm512_set1_ps(x)) {}
};

/// 64 bytes of integers of type T (clip without ScaleBias); I, the int32 lanes
/// of quantize_int and the 8/16-bit stores, is IV<std::int32_t>.
template <class T>
struct IV {
    using value_type = T;
    static constexpr std::size_t size = 64 / sizeof(T);
    __m512i v;
    IV() = default;
    IV(__m512i r) : v(r) {}
    explicit IV(T x) {
        if constexpr (sizeof(T) == 1) v = _mm512_set1_epi8(static_cast<char>(x));
        else if constexpr (sizeof(T) == 2) v = _mm512_set1_epi16(static_cast<short>(x));
        else if constexpr (sizeof(T) == 4) v = _mm512_set1_epi32(static_cast<int>(x));
        else v = _mm512_set1_epi64(static_cast<long long>(x));
    }
};

using I = IV<std::int32_t>;

template <class Kernel>
struct Rows;

// Ordered, quiet comparisons: false where a lane is NaN, as the scalar operators.
inline F operator+(F a, F b) { return _mm512_add_ps(a.v, b.v); }
inline F operator-(F a, F b) { return _mm512_sub_ps(a.v, b.v); }
inline F operator*(F a, F b) { return _mm512_mul_ps(a.v, b.v); }
inline M operator==(F a, F b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }
inline M operator>=(F a, F b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GE_OQ)}; }
inline M operator>(F a, F b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline M operator<(F a, F b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline I operator-(I a, I b) { return _mm512_sub_epi32(a.v, b.v); }

/// The ISA tag of this path (simd::kernel's functions forward to it).
struct ElementWise {
    static constexpr bool kRegion = true;
    static constexpr Isa kCap = Isa::Avx512Vnni;  ///< the lowest ISA cap that selects this path
    static constexpr const char* kName = "avx512bw";
    using F = avx512bw::F;
    using I = avx512bw::I;
    template <class Kernel>
    using Rows = avx512bw::Rows<Kernel>;
    template <class T>
    using B = IV<T>;

    /// W elements of T (int8, uint8, int16, uint16, float16, float) as binary32, exactly.
    template <class T>
    static F load_float(const T* p) {
        if constexpr (std::is_same_v<T, float>) {
            return _mm512_loadu_ps(p);
        } else if constexpr (sizeof(T) == 1) {
            const __m128i b16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            if constexpr (std::is_signed_v<T>) return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b16));
            else return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b16));
        } else {
            const __m256i h16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
            if constexpr (std::is_same_v<T, std::int16_t>) return _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(h16));
            else if constexpr (std::is_same_v<T, std::uint16_t>) return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(h16));
            else return _mm512_cvtph_ps(h16);  // float16
        }
    }

    /// fp32(x - zp) of INT32 or UINT32 lanes: the difference exact in
    /// binary64, rounded once (UINT32 offset by -2^31 on both sides).
    template <class T>
    static F load_diff_float(const T* x, const T* zp) {
        constexpr std::int32_t flip = std::is_same_v<T, std::uint32_t> ? INT32_MIN : 0;
        const __m512i f = _mm512_set1_epi32(flip);
        const __m512i vx = _mm512_xor_si512(_mm512_loadu_si512(x), f);
        const __m512i vz = _mm512_xor_si512(_mm512_loadu_si512(zp), f);
        const __m256 lo = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(vx)),
                                                        _mm512_cvtepi32_pd(_mm512_castsi512_si256(vz))));
        const __m256 hi = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(vx, 1)),
                                                        _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(vz, 1))));
        return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    }

    /// fp32(x) of INT32 or UINT32 lanes, each rounded once (ties to even) as
    /// fp32(int64) rounds it (DirectML's dequantize).
    template <class T>
    static F load_int_float(const T* p) {
        const __m512i v = _mm512_loadu_si512(p);
        if constexpr (std::is_same_v<T, std::int32_t>)
            return _mm512_cvtepi32_ps(v);
        else
            return _mm512_cvtepu32_ps(v);
    }

    /// 64 bytes at p; with Stream non-temporally (p aligned to 64).
    template <bool Stream>
    static void store_bytes(void* p, __m512i r) {
        if constexpr (Stream) _mm512_stream_si512(static_cast<__m512i*>(p), r);
        else _mm512_storeu_si512(p, r);
    }

    /// 16 binary32 lanes stored as float, or as float16 (rounded once, RNE).
    template <bool Stream, class T>
    static void store(T* p, F v) {
        if constexpr (std::is_same_v<T, float>) {
            store_bytes<Stream>(p, _mm512_castps_si512(v.v));
        } else {
            static_assert(std::is_same_v<T, float16>, "float or float16");
            const __m256i h = _mm512_cvtps_ph(v.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            if constexpr (Stream) _mm256_stream_si256(reinterpret_cast<__m256i*>(p), h);
            else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
        }
    }
    /// 64 bytes of integers.
    template <bool Stream, class T>
    static void store(T* p, IV<T> v) {
        store_bytes<Stream>(p, v.v);
    }

    template <class T>
    static IV<T> load(const T* p) {
        return _mm512_loadu_si512(p);
    }

    /// max(lo, min(v, hi)) of integer lanes: clamp_min_max's value.
    template <class T>
    static IV<T> clamp(IV<T> v, IV<T> lo, IV<T> hi) {
        if constexpr (std::is_same_v<T, std::int8_t>) return _mm512_max_epi8(lo.v, _mm512_min_epi8(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::uint8_t>) return _mm512_max_epu8(lo.v, _mm512_min_epu8(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::int16_t>) return _mm512_max_epi16(lo.v, _mm512_min_epi16(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::uint16_t>) return _mm512_max_epu16(lo.v, _mm512_min_epu16(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::int32_t>) return _mm512_max_epi32(lo.v, _mm512_min_epi32(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::uint32_t>) return _mm512_max_epu32(lo.v, _mm512_min_epu32(v.v, hi.v));
        else if constexpr (std::is_same_v<T, std::int64_t>) return _mm512_max_epi64(lo.v, _mm512_min_epi64(v.v, hi.v));
        else return _mm512_max_epu64(lo.v, _mm512_min_epu64(v.v, hi.v));
    }

    /// max(lo, min(hi, v)) of binary32 lanes (see x86/avx2/elementwise.hpp).
    static F clamp_float(F v, F lo, F hi) { return _mm512_max_ps(lo.v, _mm512_min_ps(hi.v, v.v)); }
    /// clamp_min_max_directml: min(v, hi) then max(t, lo), v and t first (minps / maxps return the second operand).
    static F clamp_float_directml(F v, F lo, F hi) { return _mm512_max_ps(_mm512_min_ps(v.v, hi.v), lo.v); }

    /// Each lane truncated toward zero (cvttps); lanes within int32's range.
    static I truncate_to_int(F v) { return _mm512_cvttps_epi32(v.v); }

    /// 16 int32 lanes, each within T's range, stored as 8/16-bit T (truncating vpmovdb / vpmovdw).
    template <class T>
    static void store_int(T* p, I v) {
        if constexpr (sizeof(T) == 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v.v));
        else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(v.v));
    }

    /// 4 vectors of int32 lanes (v0 first), each within 8-bit T's range, as
    /// 64 consecutive bytes (p aligned to 64 with Stream).
    template <bool Stream, class T>
    static void store_int4(T* p, I v0, I v1, I v2, I v3) {
        const __m512i w01 = _mm512_packs_epi32(v0.v, v1.v), w23 = _mm512_packs_epi32(v2.v, v3.v);
        const __m512i b = std::is_signed_v<T> ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
        // Each 128-bit lane l now holds dwords (v0_l, v1_l, v2_l, v3_l): gather them in order.
        store_bytes<Stream>(p, _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b));
    }

    static constexpr bool kAddPairs = true;

    /// The add's integer decision of 64 lanes (kernel/add_pairs.hpp's contract).
    template <bool Stream, bool AConst, bool BConst, class TOut, class TA, class TB>
    static bool add_pairs_block(TOut* out, const TA* a, const TB* b, const kernel::AddPairsConstants& k) {
        const auto words = [](const auto* p, std::size_t off) {  // 32 elements as int16
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + off));
            return std::is_signed_v<T> ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
        };
        __m512i a0, a1, b0, b1;
        if constexpr (AConst) a0 = a1 = _mm512_set1_epi16(static_cast<short>(*a));
        else a0 = words(a, 0), a1 = words(a, 32);
        if constexpr (BConst) b0 = b1 = _mm512_set1_epi16(static_cast<short>(*b));
        else b0 = words(b, 0), b1 = words(b, 32);
        const __m512i k_hi = _mm512_set1_epi32(k.k_hi), k_lo = _mm512_set1_epi32(k.k_lo);
        const __m512i c = _mm512_set1_epi32(k.c), mask = _mm512_set1_epi32(k.mask);
        const auto n_of = [&](__m512i pairs) {  // N of 16 (A, B) word pairs
            const __m512i hi = _mm512_madd_epi16(pairs, k_hi);
            const __m512i lo = _mm512_add_epi32(_mm512_madd_epi16(pairs, k_lo), c);
            return _mm512_add_epi32(_mm512_slli_epi32(hi, 12), lo);
        };
        // In each 128-bit lane j, unpacklo pairs elements 8j..8j+3 and unpackhi 8j+4..8j+7.
        const __m512i n0 = n_of(_mm512_unpacklo_epi16(a0, b0)), n1 = n_of(_mm512_unpackhi_epi16(a0, b0));
        const __m512i n2 = n_of(_mm512_unpacklo_epi16(a1, b1)), n3 = n_of(_mm512_unpackhi_epi16(a1, b1));
        const __mmask16 uncertain = _mm512_testn_epi32_mask(n0, mask) | _mm512_testn_epi32_mask(n1, mask) |
                                    _mm512_testn_epi32_mask(n2, mask) | _mm512_testn_epi32_mask(n3, mask);
        if (uncertain != 0) return false;
        const __m128i s = _mm_cvtsi32_si128(k.shift);
        // packs_epi32 puts lane j's elements 8j..8j+7 in order; packs_epi16 then holds, per lane j,
        // the 8 bytes of elements 8j.. and of 32 + 8j..: qwords 0,2,4,6 then 1,3,5,7 restore the order.
        const __m512i w0 = _mm512_packs_epi32(_mm512_sra_epi32(n0, s), _mm512_sra_epi32(n1, s));
        const __m512i w1 = _mm512_packs_epi32(_mm512_sra_epi32(n2, s), _mm512_sra_epi32(n3, s));
        const __m512i bytes = std::is_signed_v<TOut> ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1);
        store_bytes<Stream>(out, _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), bytes));
        return true;
    }
};

/// A row kernel compiled for this region (x86/avx2/elementwise.hpp's Rows).
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

}  // namespace qdml::simd::x86::avx512bw

namespace qdml {
template <>
struct VecOps<simd::x86::avx512bw::F> {
    using V = simd::x86::avx512bw::F;
    using Int = simd::x86::avx512bw::I;
    static V no_fuse(V v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
        __asm__("" : "+v"(v.v));
#endif
        return v;
    }
    static V select(simd::x86::avx512bw::M c, V a, V b) noexcept { return _mm512_mask_blend_ps(c.m, b.v, a.v); }
    static V div(V a, V b) noexcept { return _mm512_div_ps(a.v, b.v); }
    static Int bits(V v) noexcept { return _mm512_castps_si512(v.v); }
};
}  // namespace qdml
QDML_REGION_END
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
