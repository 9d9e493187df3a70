// qdml/simd/x86/avx2/depthwise.hpp - the depthwise convolution's AVX2 kernels
// (8 lanes, int16 pairs by vpmaddwd + vpaddd): rows, the plane form, the
// NHWC pairs form (simd/conv/depthwise.hpp chooses; the word forms and
// ranges are in simd/conv/depthwise_kernels.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qdml/simd/conv/depthwise_kernels.hpp"
#include "qdml/simd/x86/avx2/store.hpp"

#if QDML_X86
QDML_REGION_AVX2
namespace qdml::simd::conv::kernel {

template <class TIn>
inline __m256i widen8_avx2(const std::uint8_t* x) noexcept {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_signed_v<TIn>)
        return _mm256_cvtepi8_epi32(b);
    else
        return _mm256_cvtepu8_epi32(b);
}

/// P[j] for j < n (n a multiple of 8; x readable to n + dx + 7).
template <class TIn>
void pair_row_avx2(const std::uint8_t* x, std::size_t dx, std::uint32_t* p, std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; j += 8) {
        const __m256i a = widen8_avx2<TIn>(x + j), b = _mm256_slli_epi32(widen8_avx2<TIn>(x + j + dx), 16);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + j), _mm256_blend_epi16(a, b, 0xAA));
    }
}

/// The DirectML profile's lanes (DepthwiseChannel::directml,
/// NhwcPairRows::directml): wrap32(int32_directml8(((fp32(acc) * s1) * s2)
/// / so) + zp); the callers' saturating packs then clamp them to the output
/// type as quantize_directml does (their int16 zero point add is 0).
struct DirectMLLanesAvx2 {
    __m256 s2, so;
    __m256i zp;
};
inline __m256i directml_lanes_avx2(__m256i acc, __m256 s1, const DirectMLLanesAvx2& d) noexcept {
    const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), s1);
    return _mm256_add_epi32(gemm::int32_directml8(_mm256_div_ps(_mm256_mul_ps(v, d.s2), d.so)), d.zp);
}

/// Q of 8 accumulators (DirectML: quantize_directml), as bytes in the low 8 bytes of the result.
inline std::uint64_t requantize8_avx2(__m256i acc, const DepthwiseChannel& c) noexcept {
    __m256i q;
    if (c.directml) {
        const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(c.s1));
        q = gemm::quantize8_directml(_mm256_div_ps(_mm256_mul_ps(v, _mm256_set1_ps(c.s2)), _mm256_set1_ps(c.so)),
                                     _mm256_set1_epi32(c.q.zp), _mm256_set1_epi32(static_cast<int>(c.q.lo) + c.q.zp),
                                     _mm256_set1_epi32(static_cast<int>(c.q.hi) + c.q.zp));
    } else {
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(c.mult));
        v = _mm256_max_ps(v, _mm256_set1_ps(c.q.lo));  // max(NaN, lo) is lo: Q maps NaN to lo - zp
        v = _mm256_min_ps(v, _mm256_set1_ps(c.q.hi));
        q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(c.q.zp));  // rne (MXCSR)
    }
    q = _mm256_and_si256(q, _mm256_set1_epi32(0xff));  // the output byte (values are in range)
    q = _mm256_packus_epi16(_mm256_packus_epi32(q, q), q);
    return static_cast<std::uint32_t>(_mm256_cvtsi256_si32(q)) |
           std::uint64_t{static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(q, 1)))} << 32;
}

template <int U>
inline void accumulate_avx2(const DepthwiseTaps& t, std::size_t o, std::uint32_t bias,
                                             __m256i (&acc)[U]) noexcept {
    for (int u = 0; u < U; ++u) acc[u] = _mm256_set1_epi32(static_cast<int>(bias));
    for (std::size_t i = 0; i < t.count; ++i) {
        const __m256i w = _mm256_set1_epi32(static_cast<int>(t.weights[i]));
        const std::uint32_t* p = t.rows[i] + o;
        QDML_UNROLL for (int u = 0; u < U; ++u) acc[u] = _mm256_add_epi32(
            acc[u], _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8 * u)), w));
    }
}

template <class TOut>
void row_avx2(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                               std::size_t width) noexcept {
    constexpr int U = 4;
    std::size_t o = 0;
    for (; o + 8 * U <= width; o += 8 * U) {
        __m256i acc[U];
        accumulate_avx2<U>(t, o, c.bias, acc);
        for (int u = 0; u < U; ++u) {
            const std::uint64_t q = requantize8_avx2(acc[u], c);
            std::memcpy(out + o + 8 * u, &q, 8);
        }
    }
    for (; o < width; o += 8) {
        __m256i acc[1];
        accumulate_avx2<1>(t, o, c.bias, acc);
        const std::uint64_t q = requantize8_avx2(acc[0], c);
        std::memcpy(out + o, &q, width - o < 8 ? width - o : 8);
    }
}

/// Q of 4 x 8 accumulators as 32 bytes, lane k of acc[u] at byte 16 * (k / 4)
/// + 4 * u + k % 4 (the packs work within 128-bit lanes); the saturating
/// form of requantize64_avx512 (min(hi, v) keeps NaN, vcvtps2dq, int16 and
/// int8 saturation; Capped false leaves the min out where
/// requantize_fits_int32 says it cannot matter).
/// With `d` (the DirectML profile) the lanes are directml_lanes_avx2's
/// (`mult` then holds s1, and `zp` must be 0).
template <class TOut, bool Capped>
inline __m256i requantize32_packed_avx2(__m256i a0, __m256i a1, __m256i a2, __m256i a3, __m256 mult,
                                                         __m256 hi, __m256i zp,
                                                         const DirectMLLanesAvx2* d = nullptr) noexcept {
    const __m256i acc[4] = {a0, a1, a2, a3};
    __m256i q[4];
    if (d) {
        QDML_UNROLL for (int u = 0; u < 4; ++u) q[u] = directml_lanes_avx2(acc[u], mult, *d);
    } else {
        QDML_UNROLL for (int u = 0; u < 4; ++u) {
            const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[u]), mult);
            q[u] = _mm256_cvtps_epi32(Capped ? _mm256_min_ps(hi, v) : v);  // min(hi, NaN) is NaN
        }
    }
    (void)hi;
    const __m256i w0 = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), zp);
    const __m256i w1 = _mm256_adds_epi16(_mm256_packs_epi32(q[2], q[3]), zp);
    return std::is_signed_v<TOut> ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1);
}

/// Q of 32 outputs from two phases of 8 accumulators each (lane i of e0:
/// output 2i, of o0: 2i + 1; e1, o1: outputs 16 + the same), as 32 bytes in order.
template <class TOut, bool Capped>
inline __m256i requantize32_phased_avx2(__m256i e0, __m256i o0, __m256i e1, __m256i o1, __m256 mult,
                                                         __m256 hi, __m256i zp,
                                                         const DirectMLLanesAvx2* d = nullptr) noexcept {
    // Per 128-bit lane k: outputs 8k + 0, 2, 4, 6, 1, 3, 5, 7, then 16 + the same.
    const __m256i b = requantize32_packed_avx2<TOut, Capped>(e0, o0, e1, o1, mult, hi, zp, d);
    return _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(b, _mm256_setr_epi8(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0, 4, 1, 5, 2, 6,
                                                3, 7, 8, 12, 9, 13, 10, 14, 11, 15)),
        0xD8);  // qwords 0, 2, 1, 3: outputs 0-7, 8-15, 16-23, 24-31
}

/// 16 int16 elements from p (unaligned): 8 pair words.
inline __m256i load16_avx2(const std::int16_t* p) noexcept {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// One tap of plane_pairs_avx2: the phases of 32 outputs from p.
inline void pair_tap_avx2(__m256i (&acc)[4], const std::int16_t* p, __m256i w) noexcept {
    acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(load16_avx2(p), w));
    acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(load16_avx2(p + 1), w));
    acc[2] = _mm256_add_epi32(acc[2], _mm256_madd_epi16(load16_avx2(p + 16), w));
    acc[3] = _mm256_add_epi32(acc[3], _mm256_madd_epi16(load16_avx2(p + 17), w));
}

/// A whole channel plane of int16 pairs (dx = sx = sy = 1): output f reads
/// the pair word at in + f + offsets[i] (int16 elements); outputs f, f + 2,
/// ... (phase 0) and f + 1, f + 3, ... (phase 1) are one unaligned 32-byte
/// load each, four loads give 32. Writes oh * pitch outputs rounded up to 32
/// to a.out, flat (a.out holds rows of `pitch`); `in` readable to that plus
/// the largest offset + 33 elements. `Taps` > 0: a.taps == Taps, the tap loop
/// unrolled (offsets and weights in registers); 0: any a.taps.
template <class TOut, int Taps, bool Capped>
void plane_pairs_body_avx2(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    constexpr int kMaxTaps = Taps > 0 ? Taps : 1;
    const auto* in = static_cast<const std::int16_t*>(a.in);
    std::size_t off[kMaxTaps];
    __m256i wt[kMaxTaps];
    if constexpr (Taps > 0)
        for (int i = 0; i < Taps; ++i) {
            off[i] = a.offsets[i];
            wt[i] = _mm256_set1_epi32(static_cast<int>(a.weights[i]));
        }
    // (Locals: the stores could alias c, and the compiler would reload them per block.)
    const __m256 mult = _mm256_set1_ps(c.directml ? c.s1 : c.mult), hi = _mm256_set1_ps(c.q.hi);
    const __m256i zp = _mm256_set1_epi16(static_cast<short>(c.directml ? 0 : c.q.zp));
    const __m256i bias = _mm256_set1_epi32(static_cast<int>(c.bias));
    const DirectMLLanesAvx2 dml{_mm256_set1_ps(c.s2), _mm256_set1_ps(c.so), _mm256_set1_epi32(c.q.zp)};
    const DirectMLLanesAvx2* const d = c.directml ? &dml : nullptr;
    TOut* const out = a.out;
    const std::size_t count = a.oh * a.pitch;
    for (std::size_t f = 0; f < count; f += 32) {
        __m256i acc[4] = {bias, bias, bias, bias};
        if constexpr (Taps > 0) {
            QDML_UNROLL for (int i = 0; i < Taps; ++i) pair_tap_avx2(acc, in + f + off[i], wt[i]);
        } else {
            for (std::size_t i = 0; i < a.taps; ++i)
                pair_tap_avx2(acc, in + f + a.offsets[i], _mm256_set1_epi32(static_cast<int>(a.weights[i])));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + f),
                            requantize32_phased_avx2<TOut, Capped>(acc[0], acc[1], acc[2], acc[3], mult, hi, zp, d));
    }
}

template <class TOut, int Taps = 0>
void plane_pairs_avx2(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    if (!requantize_fits_int32(c.mult))
        plane_pairs_body_avx2<TOut, Taps, true>(a, c);
    else
        plane_pairs_body_avx2<TOut, Taps, false>(a, c);
}

/// 16 bytes of TIn as int16 (sign- or zero-extended).
template <class TIn>
inline __m256i widen_epi16_avx2(__m128i b) noexcept {
    if constexpr (std::is_signed_v<TIn>)
        return _mm256_cvtepi8_epi16(b);
    else
        return _mm256_cvtepu8_epi16(b);
}

/// 16 TIn elements from s as int16.
template <class TIn>
inline __m256i widen16_avx2(const TIn* s) noexcept {
    return widen_epi16_avx2<TIn>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
}

/// Stages `rows` input rows of `w` TIn elements (element stride 1, rows
/// `src_stride` elements apart) as int16 at dst + r * pitch: 16 elements a
/// load, a row's last 16 overlapping the previous ones (rows shorter than 16
/// element by element); nothing outside the rows read or written.
template <class TIn>
void stage_pairs_avx2(const TIn* src, std::size_t src_stride, std::size_t rows, std::size_t w,
                                       std::int16_t* dst, std::size_t pitch) noexcept {
    for (std::size_t r = 0; r < rows; ++r, src += src_stride, dst += pitch) {
        if (w < 16) {
            for (std::size_t j = 0; j < w; ++j) dst[j] = src[j];
            continue;
        }
        std::size_t j = 0;
        for (; j + 16 <= w; j += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), widen16_avx2<TIn>(src + j));
        if (j < w) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + w - 16), widen16_avx2<TIn>(src + w - 16));
    }
}

/// Copies `rows` rows of `w` bytes from src (rows `src_pitch` apart) to dst
/// (rows `dst_stride` apart, element stride 1): 32 bytes a load, a row's
/// last 32 overlapping (16 for rows of 16-31, shorter ones byte by byte).
inline void copy_rows_avx2(const std::uint8_t* src, std::size_t src_pitch, std::uint8_t* dst,
                                            std::uint64_t dst_stride, std::size_t rows, std::size_t w) noexcept {
    for (std::size_t r = 0; r < rows; ++r, src += src_pitch, dst += dst_stride) {
        if (w >= 32) {
            std::size_t j = 0;
            for (; j + 32 <= w; j += 32)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j),
                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j)));
            if (j < w)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + w - 32),
                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + w - 32)));
        } else if (w >= 16) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + w - 16),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + w - 16)));
        } else {
            std::memcpy(dst, src, w);
        }
    }
}

/// 8 bytes as int16 (TIn sign- or zero-extended).
template <class TIn>
inline __m128i widen8_epi16(__m128i b) noexcept {
    if constexpr (std::is_signed_v<TIn>)
        return _mm_cvtepi8_epi16(b);
    else
        return _mm_cvtepu8_epi16(b);
}

/// Pairs of vertical neighbours: v[e] = pair(r0[e], r1[e]) (int16 of TIn)
/// for e < n, n a multiple of 8 (nothing past n read or written): the bytes
/// interleaved, then widened (byte pairs become word pairs in order).
template <class TIn>
void vertical_pairs_avx2(const TIn* r0, const TIn* r1, std::size_t n, std::uint32_t* v) noexcept {
    std::size_t e = 0;
    for (; e + 16 <= n; e += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + e));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + e));
        const __m128i lo = _mm_unpacklo_epi8(a, b), hi = _mm_unpackhi_epi8(a, b);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + e), widen_epi16_avx2<TIn>(lo));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + e + 8), widen_epi16_avx2<TIn>(hi));
    }
    if (e < n) {  // the last 8
        const __m128i ab = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0 + e)),
                                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r1 + e)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(v + e), widen8_epi16<TIn>(ab));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(v + e + 4), widen8_epi16<TIn>(_mm_unpackhi_epi64(ab, ab)));
    }
}

/// 8 words from p (unaligned).
inline __m256i load8_avx2(const std::uint32_t* p) noexcept {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// One filter column of nhwc_pair_rows_avx2's block: r[u] (row 0) and
/// r[2 + u] (row 1) of pixel u += the column's products (pixel u's inputs
/// at p + u * ps, q + u * ps).
template <bool Two>
inline void nhwc_pair_column_avx2(__m256i (&r)[4], const std::uint32_t* p, const std::uint32_t* q,
                                                   const std::uint32_t* w, std::size_t ps) noexcept {
    const __m256i a01 = load8_avx2(w), a23 = load8_avx2(w + 8);
    const __m256i b01 = load8_avx2(w + 16), b23 = load8_avx2(w + 24);
    QDML_UNROLL for (int u = 0; u < 2; ++u) {
        const __m256i i01 = load8_avx2(p + u * ps), i23 = load8_avx2(q + u * ps);
        r[u] = _mm256_add_epi32(r[u], _mm256_add_epi32(_mm256_madd_epi16(i01, a01), _mm256_madd_epi16(i23, a23)));
        if constexpr (Two)
            r[2 + u] = _mm256_add_epi32(r[2 + u], _mm256_add_epi32(_mm256_madd_epi16(i01, b01), _mm256_madd_epi16(i23, b23)));
    }
    (void)b01;
    (void)b23;
}

/// Blocks of 2 pixels x 8 channels x both rows, each input vector feeding
/// both rows: 4 accumulators and 4 inputs in registers, the weights memory
/// operands (an AVX2 core has 16 vector registers). Pixel pairs outer and
/// channel blocks inner, so a pixel's stores are consecutive. `Taps` > 0:
/// a.taps == Taps, the filter-column loop unrolled. (Zen 4, 3x3 32ch 112^2
/// NHWC under QDML_ISA=avx2: blocks of 4 pixels, channel blocks outer, 140
/// us (the compiler loaded every input twice); 2 pixels with a rolled column
/// loop 146; unrolled 127-137; pixel pairs outer 125.)
template <class TOut, bool Two, bool Capped, int Taps = 0>
void nhwc_pair_rows_avx2(const NhwcPairRows<TOut>& a) noexcept {
    const __m256 hi = _mm256_set1_ps(a.hi);
    const __m256i zp = _mm256_set1_epi16(static_cast<short>(a.directml ? 0 : a.zp));
    const DirectMLLanesAvx2 dml{_mm256_set1_ps(a.in_scale), _mm256_set1_ps(a.out_scale), _mm256_set1_epi32(a.zp)};
    const DirectMLLanesAvx2* const d = a.directml ? &dml : nullptr;
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // dword 4 * (k / 4) + u to qword u
    const std::size_t C = a.cblocks * 8, wstep = a.cblocks * 32, ow = a.ow, step = a.tap_step, ps = a.pixel_step;
    TOut* const out0 = a.out0;
    TOut* const out1 = a.out1;
    const std::uint32_t* const v01 = a.v01;
    const std::uint32_t* const v23 = a.v23;
    for (std::size_t x = 0; x < ow; x += 2)
        for (std::size_t cb = 0; cb < a.cblocks; ++cb) {
            const __m256i bias = load8_avx2(a.bias + cb * 8);
            const __m256 m = _mm256_loadu_ps(a.mult + cb * 8);
            __m256i r[4] = {bias, bias, bias, bias};  // row 0 pixels 0, 1; row 1 pixels 0, 1
            const std::size_t at = x * C + cb * 8, in = x * ps + cb * 8;
            const std::uint32_t* p = v01 + in;
            const std::uint32_t* q = v23 + in;
            const std::uint32_t* w = a.w + cb * 32;
            if constexpr (Taps > 0) {
                QDML_UNROLL for (int kx = 0; kx < Taps; ++kx) nhwc_pair_column_avx2<Two>(r, p + kx * step, q + kx * step, w + kx * wstep, ps);
            } else {
                for (std::size_t kx = 0; kx < a.taps; ++kx) nhwc_pair_column_avx2<Two>(r, p + kx * step, q + kx * step, w + kx * wstep, ps);
            }
            const __m256i b = _mm256_permutevar8x32_epi32(requantize32_packed_avx2<TOut, Capped>(r[0], r[1], r[2], r[3], m, hi, zp, d), order);
            const __m128i lo = _mm256_castsi256_si128(b), up = _mm256_extracti128_si256(b, 1);
            const bool both = ow - x > 1;
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out0 + at), lo);
            if (both) _mm_storeh_pd(reinterpret_cast<double*>(out0 + at + C), _mm_castsi128_pd(lo));
            if constexpr (Two) {
                _mm_storel_epi64(reinterpret_cast<__m128i*>(out1 + at), up);
                if (both) _mm_storeh_pd(reinterpret_cast<double*>(out1 + at + C), _mm_castsi128_pd(up));
            }
        }
}

}  // namespace qdml::simd::conv::kernel
QDML_REGION_END
#endif  // QDML_X86
