// qdml/simd/x86/avx512vnni/depthwise.hpp - the depthwise convolution's
// AVX-512 VNNI kernels (16 lanes: vpdpbusd on byte quads, vpdpwssd on int16
// pairs): rows, the plane form, the NHWC quads form (simd/conv/depthwise.hpp
// chooses; the word forms and ranges are in simd/conv/depthwise_kernels.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qdml/simd/conv/depthwise_kernels.hpp"
#include "qdml/simd/x86/avx2/depthwise.hpp"
#include "qdml/simd/x86/avx512vnni/store.hpp"

#if QDML_X86
QDML_REGION_AVX512VNNI
namespace qdml::simd::conv::kernel {

template <class TIn>
inline __m512i widen16_avx512(const std::uint8_t* x) noexcept {
    // (The all-lanes maskz forms: g++ 12's unmasked ones warn -Wuninitialized inside its own header.)
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    if constexpr (std::is_signed_v<TIn>)
        return _mm512_maskz_cvtepi8_epi32(0xffff, b);
    else
        return _mm512_maskz_cvtepu8_epi32(0xffff, b);
}

/// P[j] for j < n (n a multiple of 16; x readable to n + dx + 15).
template <class TIn>
void pair_row_avx512(const std::uint8_t* x, std::size_t dx, std::uint32_t* p,
                                        std::size_t n) noexcept {
    for (std::size_t j = 0; j < n; j += 16) {
        const __m512i a = widen16_avx512<TIn>(x + j);
        const __m512i b = _mm512_maskz_slli_epi32(0xffff, widen16_avx512<TIn>(x + j + dx), 16);
        _mm512_storeu_si512(p + j, _mm512_mask_blend_epi16(0xAAAAAAAAu, a, b));
    }
}

/// Stages `rows` input rows of `w` bytes (element stride 1, `src_stride`
/// bytes apart), each xor `flip`, at dst + r * pitch: 64 bytes a load, the
/// last chunk of a row masked (nothing outside the rows read or written).
/// One call per plane: a generic copy per row cost a fifth of the 3x3
/// 32-channel 112^2 depthwise row (calls, spills and 32-byte chunks).
inline void stage_rows_avx512(const std::uint8_t* src, std::size_t src_stride, std::size_t rows,
                                                 std::size_t w, std::uint8_t flip, std::uint8_t* dst,
                                                 std::size_t pitch) noexcept {
    const __m512i x = _mm512_set1_epi8(static_cast<char>(flip));
    const std::size_t full = w / 64 * 64;
    const __mmask64 tail = (std::uint64_t{1} << (w - full)) - 1;  // w - full < 64
    for (std::size_t r = 0; r < rows; ++r, src += src_stride, dst += pitch) {
        for (std::size_t j = 0; j < full; j += 64)
            _mm512_storeu_si512(dst + j, _mm512_xor_si512(_mm512_loadu_si512(src + j), x));
        if (tail) _mm512_mask_storeu_epi8(dst + full, tail, _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, src + full), x));
    }
}

/// The quad row of one input row read in place: Q[j] = bytes xp[j..j+3] for
/// j < n (n a multiple of 16), xp the row padded on the left by `pad` and on
/// the right by any amount, padding bytes `zp` (in TIn's bits); UINT8 out
/// (INT8 inputs offset by +128 with `flip` 0x80). `src` is the row (stride 1,
/// `w` elements); the loads are masked to it, so nothing outside is read.
inline void quad_row_direct_avx512(const std::uint8_t* src, std::size_t pad, std::size_t w,
                                                      std::uint8_t zp, std::uint8_t flip, std::uint32_t* q,
                                                      std::size_t n) noexcept {
    // Lane k of 16 words takes source dwords k and k+1 (bytes 4k..4k+7), then
    // bytes (i, i+1, i+2, i+3) for word i of the lane.
    const __m512i dwords = _mm512_setr_epi32(0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4);
    const __m512i bytes = _mm512_set4_epi32(0x06050403, 0x05040302, 0x04030201, 0x03020100);
    const __m512i fill = _mm512_set1_epi8(static_cast<char>(zp)), flips = _mm512_set1_epi8(static_cast<char>(flip));
    const auto base = reinterpret_cast<std::uintptr_t>(src);
    for (std::size_t j = 0; j < n; j += 16) {
        // Bytes b < 20 of the chunk are xp[j + b] = src[j + b - pad] where 0 <= j + b - pad < w.
        const std::size_t lo = j < pad ? std::min<std::size_t>(pad - j, 20) : 0;
        const std::size_t hi = j + 20 <= pad ? 0 : std::min<std::size_t>(pad + w > j ? pad + w - j : 0, 20);
        const __mmask64 mask = hi > lo ? ((std::uint64_t{1} << hi) - 1) & ~((std::uint64_t{1} << lo) - 1) : 0;
        // Masked-off bytes are never accessed (AVX-512 fault suppression), so the
        // address may lie outside the row where the mask excludes those bytes.
        const auto at = reinterpret_cast<const void*>(base + j - pad);
        const __m512i x = _mm512_xor_si512(_mm512_mask_loadu_epi8(fill, mask, at), flips);
        const __m512i v = _mm512_maskz_permutexvar_epi32(0xffff, dwords, x);
        _mm512_storeu_si512(q + j, _mm512_shuffle_epi8(v, bytes));
    }
}

/// Q of 4 x 16 accumulators as 64 output bytes. Per lane:
/// v = min(hi - zp, fp32(acc) * mult) keeps NaN; rne by vcvtps2dq (NaN and
/// v < -2^31 give INT_MIN); then int16 saturation, + zp with int16
/// saturation, and 8-bit saturation: Q's clamp from below (NaN to the low
/// bound) done by the saturations, equal to Q because the bounds are integers.
/// Byte order: acc[0] then acc[1], ... (Phased false), or output 4i + p from
/// lane i of acc[p] (Phased: the four phases of plane_quads_avx512).
/// Capped false leaves the min out, for multipliers where it cannot change
/// the result (requantize_fits_int32: a seventh of the depthwise kernels'
/// vector work; requantize multipliers are << 1).
/// With `d` (the DirectML profile: `mult` holds FilterScale, s1) each lane
/// is wrap32(int32_directml16(((fp32(acc) * s1) * s2) / so) + zp) and the
/// saturating packs clamp it to the type, as quantize_directml does (no
/// int16 zero point add).
struct DirectMLLanes512 {
    __m512 s2, so;
};
template <class TOut, bool Phased = false, bool Capped = true>
inline __m512i requantize64_lanes_avx512(__m512i a0, __m512i a1, __m512i a2, __m512i a3,
                                                            __m512 mult, __m512 hi, std::int32_t out_zp,
                                                            const DirectMLLanes512* d = nullptr) noexcept {
    constexpr __mmask16 all = 0xffff;
    const __m512i acc[4] = {a0, a1, a2, a3};  // (by value: a pointer would keep the caller's accumulators in memory)
    __m512i q[4];
    if (d) {
        const __m512i zp32 = _mm512_set1_epi32(out_zp);
        QDML_UNROLL for (int u = 0; u < 4; ++u) {
            const __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc[u]), mult);
            q[u] = _mm512_add_epi32(gemm::int32_directml16(_mm512_div_ps(_mm512_mul_ps(v, d->s2), d->so)), zp32);
        }
    } else {
        QDML_UNROLL for (int u = 0; u < 4; ++u) {
            const __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc[u]), mult);
            if constexpr (Capped)
                q[u] = _mm512_maskz_cvtps_epi32(all, _mm512_maskz_min_ps(all, hi, v));  // min(hi, NaN) is NaN
            else
                q[u] = _mm512_maskz_cvtps_epi32(all, v);
        }
    }
    (void)hi;
    const __m512i zp = _mm512_set1_epi16(static_cast<short>(d ? 0 : out_zp));
    const __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), zp);
    const __m512i w23 = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), zp);
    // Per 128-bit lane k, dwords: acc[0] lanes 4k..4k+3, acc[1] .., acc[2] .., acc[3] ...
    const __m512i b = std::is_signed_v<TOut> ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
    if constexpr (Phased)  // byte 4p + i of each lane to 4i + p
        return _mm512_shuffle_epi8(b, _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400));
    else
        return _mm512_maskz_permutexvar_epi32(all, _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
}

/// requantize64_lanes_avx512 with one channel's multiplier (DirectML: scales) in every lane.
template <class TOut, bool Phased = false, bool Capped = true>
inline __m512i requantize64_avx512(__m512i a0, __m512i a1, __m512i a2, __m512i a3,
                                                      const DepthwiseChannel& c) noexcept {
    if (c.directml) {
        const DirectMLLanes512 d{_mm512_set1_ps(c.s2), _mm512_set1_ps(c.so)};
        return requantize64_lanes_avx512<TOut, Phased, Capped>(a0, a1, a2, a3, _mm512_set1_ps(c.s1),
                                                               _mm512_set1_ps(c.q.hi), c.q.zp, &d);
    }
    const __m512 m = _mm512_set1_ps(c.mult);
    return requantize64_lanes_avx512<TOut, Phased, Capped>(a0, a1, a2, a3, m, _mm512_set1_ps(c.q.hi), c.q.zp);
}

/// acc += x (u8) . w (s8), four products per lane. Written out with
/// QDML_INLINE_ASM: g++ 12 keeps the intrinsic's accumulator apart from its
/// result and copies every accumulator twice per tap (as in
/// x86/avx512vnni/gemm_kernel.hpp); else the intrinsic.
inline void dot_quads(__m512i& acc, __m512i x, __m512i w) noexcept {
#if QDML_INLINE_ASM
    __asm__("vpdpbusd %[w], %[x], %[acc]" : [acc] "+v"(acc) : [x] "v"(x), [w] "v"(w));
#else
    acc = _mm512_dpbusd_epi32(acc, x, w);
#endif
}

/// One tap of plane_quads_avx512: phases 0-3 of 64 outputs from p.
inline void plane_tap(__m512i (&acc)[4], const std::uint8_t* p, __m512i w) noexcept {
    QDML_UNROLL for (int u = 0; u < 4; ++u) dot_quads(acc[u], _mm512_loadu_si512(p + u), w);
}

/// A whole channel plane (dx = sx = sy = 1, weights in int8), row by row:
/// output (r, o) reads the quad at in + r*pitch + o + offsets[i]; in blocks of
/// 64 outputs, 16 outputs o + p, o + p + 4, ... (phase p) are one unaligned
/// load of 64 bytes, so no quad row is built; a row's last block is stored
/// masked to its `ow` outputs (its other lanes read the padding and the
/// next row: computed, never stored). `in` readable to (oh - 1) * pitch +
/// ow rounded up to 64, plus the largest offset + 3. `Taps` > 0: a.taps ==
/// Taps, the tap loop unrolled (offsets and weights in registers); 0: any a.taps.
/// (Measured against one flat pass over the plane with per-row masked
/// stores: the flat form computes 2% fewer outputs but its stores cost more.)
template <class TOut, int Taps, bool Capped>
void plane_quads_body_avx512(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    constexpr int kMaxTaps = Taps > 0 ? Taps : 1;
    const auto* in = static_cast<const std::uint8_t*>(a.in);
    std::size_t off[kMaxTaps];
    __m512i wt[kMaxTaps];
    if constexpr (Taps > 0)
        for (int i = 0; i < Taps; ++i) {
            off[i] = a.offsets[i];
            wt[i] = _mm512_set1_epi32(static_cast<int>(a.weights[i]));
        }
    const std::size_t last = (a.ow - 1) / 64 * 64;  // the last block's first output
    const __mmask64 tail = ~std::uint64_t{0} >> (63 - (a.ow - 1 - last));
    for (std::size_t r = 0; r < a.oh; ++r) {
        const std::uint8_t* row = in + r * a.pitch;
        TOut* out = a.out + r * a.out_row_stride;
        for (std::size_t o = 0; o < a.ow; o += 64) {
            __m512i acc[4];
            for (int u = 0; u < 4; ++u) acc[u] = _mm512_set1_epi32(static_cast<int>(c.bias));
            if constexpr (Taps > 0) {
                QDML_UNROLL for (int i = 0; i < Taps; ++i) plane_tap(acc, row + o + off[i], wt[i]);
            } else {
                for (std::size_t i = 0; i < a.taps; ++i)
                    plane_tap(acc, row + o + a.offsets[i], _mm512_set1_epi32(static_cast<int>(a.weights[i])));
            }
            const __m512i q = requantize64_avx512<TOut, true, Capped>(acc[0], acc[1], acc[2], acc[3], c);
            if (o < last)
                _mm512_storeu_si512(out + o, q);
            else
                _mm512_mask_storeu_epi8(out + o, tail, q);
        }
    }
}

template <class TOut, int Taps = 0>
void plane_quads_avx512(const PlaneArgs<TOut>& a, const DepthwiseChannel& c) noexcept {
    if (!requantize_fits_int32(c.mult))
        plane_quads_body_avx512<TOut, Taps, true>(a, c);
    else
        plane_quads_body_avx512<TOut, Taps, false>(a, c);
}

/// acc[0..U) = bias + the taps' dot products at outputs o.. (the rest 0).
template <bool Quads, int U>
inline void accumulate_avx512(const DepthwiseTaps& t, std::size_t o, std::uint32_t bias,
                                                 __m512i (&acc)[8]) noexcept {
    for (int u = 0; u < 8; ++u) acc[u] = u < U ? _mm512_set1_epi32(static_cast<int>(bias)) : _mm512_setzero_si512();
    for (std::size_t i = 0; i < t.count; ++i) {
        const __m512i w = _mm512_set1_epi32(static_cast<int>(t.weights[i]));
        const std::uint32_t* p = t.rows[i] + o;
        QDML_UNROLL for (int u = 0; u < U; ++u) {
            const __m512i x = _mm512_loadu_si512(p + 16 * u);
            if constexpr (Quads)
                acc[u] = _mm512_dpbusd_epi32(acc[u], x, w);
            else
                acc[u] = _mm512_dpwssd_epi32(acc[u], x, w);
        }
    }
}

/// `count` outputs from o (1 <= count <= 128), U = ceil(count / 16) vectors.
template <class TOut, bool Quads, bool Capped, int U>
inline void block_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                            std::size_t o, std::size_t count) noexcept {
    __m512i acc[8];
    accumulate_avx512<Quads, U>(t, o, c.bias, acc);
    for (int h = 0; h < (U + 3) / 4; ++h) {
        const __m512i q = requantize64_avx512<TOut, false, Capped>(acc[4 * h], acc[4 * h + 1], acc[4 * h + 2], acc[4 * h + 3], c);
        const std::size_t n = count - 64 * h;
        if (n >= 64)
            _mm512_storeu_si512(out + o + 64 * h, q);
        else
            _mm512_mask_storeu_epi8(out + o + 64 * h, (std::uint64_t{1} << n) - 1u, q);
    }
}

/// One output row of `width` outputs (exactly `width` bytes stored), in
/// blocks of up to 128.
template <class TOut, bool Quads, bool Capped>
void row_body_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                   std::size_t width) noexcept {
    std::size_t o = 0;
    for (; o + 128 <= width; o += 128) block_avx512<TOut, Quads, Capped, 8>(t, c, out, o, 128);
    const std::size_t rest = width - o;
    switch ((rest + 15) / 16) {
        case 0: break;
        case 1: block_avx512<TOut, Quads, Capped, 1>(t, c, out, o, rest); break;
        case 2: block_avx512<TOut, Quads, Capped, 2>(t, c, out, o, rest); break;
        case 3: block_avx512<TOut, Quads, Capped, 3>(t, c, out, o, rest); break;
        case 4: block_avx512<TOut, Quads, Capped, 4>(t, c, out, o, rest); break;
        case 5: block_avx512<TOut, Quads, Capped, 5>(t, c, out, o, rest); break;
        case 6: block_avx512<TOut, Quads, Capped, 6>(t, c, out, o, rest); break;
        case 7: block_avx512<TOut, Quads, Capped, 7>(t, c, out, o, rest); break;
        default: block_avx512<TOut, Quads, Capped, 8>(t, c, out, o, rest); break;
    }
}

template <class TOut, bool Quads>
void row_avx512(const DepthwiseTaps& t, const DepthwiseChannel& c, TOut* out,
                                   std::size_t width) noexcept {
    if (!requantize_fits_int32(c.mult))
        row_body_avx512<TOut, Quads, true>(t, c, out, width);
    else
        row_body_avx512<TOut, Quads, false>(t, c, out, width);
}

/// Quads of vertical neighbours: v[b] = bytes (r0[b], r1[b], r2[b], r3[b]) ^ flip
/// for b < round_up(bytes, 64) (the rows read to `bytes`, masked; the quads
/// past it are garbage for the caller to overwrite). Each 64-byte row chunk
/// is first permuted (dword 4L + k from dword 4k + L) so that the unpacks,
/// which work within 128-bit lanes, give the quads in order.
template <bool Flip>
void vertical_quads_avx512(const std::uint8_t* const* rows, std::size_t bytes,
                                              std::uint32_t* v) noexcept {
    const __m512i fl = _mm512_set1_epi8(static_cast<char>(0x80));
    const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (std::size_t b = 0; b < bytes; b += 64) {
        const __mmask64 m = bytes - b >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (bytes - b)) - 1;
        __m512i r[4];
        for (int j = 0; j < 4; ++j) {
            r[j] = _mm512_maskz_loadu_epi8(m, rows[j] + b);
            if constexpr (Flip) r[j] = _mm512_xor_si512(r[j], fl);
            r[j] = _mm512_maskz_permutexvar_epi32(0xffff, perm, r[j]);
        }
        const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]), hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
        const __m512i lo23 = _mm512_unpacklo_epi8(r[2], r[3]), hi23 = _mm512_unpackhi_epi8(r[2], r[3]);
        _mm512_storeu_si512(v + b, _mm512_unpacklo_epi16(lo01, lo23));  // bytes b .. b + 15
        _mm512_storeu_si512(v + b + 16, _mm512_unpackhi_epi16(lo01, lo23));
        _mm512_storeu_si512(v + b + 32, _mm512_unpacklo_epi16(hi01, hi23));
        _mm512_storeu_si512(v + b + 48, _mm512_unpackhi_epi16(hi01, hi23));
    }
}

/// The 16-byte lanes j < count of q to out + j * pitch (the all-lanes
/// maskz extracts: g++ 12 warns -Wmaybe-uninitialized inside the plain ones
/// and inside _mm512_castsi512_si128).
template <class TOut>
inline void store_lanes_avx512(TOut* out, std::size_t pitch, __m512i q, std::size_t count) noexcept {
    constexpr __mmask8 all = 0xf;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_maskz_extracti32x4_epi32(all, q, 0));
    if (count > 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pitch), _mm512_maskz_extracti32x4_epi32(all, q, 1));
    if (count > 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * pitch), _mm512_maskz_extracti32x4_epi32(all, q, 2));
    if (count > 3) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * pitch), _mm512_maskz_extracti32x4_epi32(all, q, 3));
}

#if !QDML_INLINE_ASM
/// nhwc_rows_avx512's tap loop, out of line in the intrinsics-only form (as
/// gemm_kernel.hpp's tile_k_out): inlined, g++ 12 kept each intrinsic's
/// accumulator apart from its result and copied it twice per tap (16
/// register copies per 8 vpdpbusd, objdump; 0.88x the asm form's 3x3 32ch
/// 112^2 NHWC row on Zen 5); here the accumulators stay in registers and are
/// stored once per block.
template <bool Two>
QDML_NOINLINE void nhwc_taps_avx512(std::int32_t (&sums)[2][4][16], const std::uint32_t* p, const std::uint32_t* w0,
                                    const std::uint32_t* w1, std::size_t C, std::size_t taps, std::size_t tap_step,
                                    __m512i bias) noexcept {
    __m512i x0[4], x1[4];
    for (int u = 0; u < 4; ++u) x0[u] = x1[u] = bias;
    for (std::size_t kx = 0; kx < taps; ++kx, p += tap_step) {
        const __m512i wa = _mm512_loadu_si512(w0 + kx * C);
        const __m512i wb = Two ? _mm512_loadu_si512(w1 + kx * C) : wa;
        QDML_UNROLL for (int u = 0; u < 4; ++u) {
            const __m512i in = _mm512_loadu_si512(p + u * C);
            x0[u] = _mm512_dpbusd_epi32(x0[u], in, wa);
            if constexpr (Two) x1[u] = _mm512_dpbusd_epi32(x1[u], in, wb);
        }
    }
    QDML_UNROLL for (int u = 0; u < 4; ++u) {
        _mm512_store_si512(sums[0][u], x0[u]);
        if constexpr (Two) _mm512_store_si512(sums[1][u], x1[u]);
    }
}

/// One block of nhwc_rows_avx512 (4 pixels x 16 channels of channel block
/// cb from pixel x), out of line in the intrinsics-only form: its constants
/// are loaded after the tap loop's call, so that the caller keeps no vector
/// register across it (every zmm is caller-saved: kept in the caller's loop,
/// they were spilled and reloaded around each call, 0.91x the asm form).
template <class TOut, bool Two, bool Capped>
QDML_NOINLINE void nhwc_block_avx512(const NhwcRows<TOut>& a, std::size_t cb, std::size_t x) noexcept {
    const std::size_t C = a.cblocks * 16;
    alignas(64) std::int32_t sums[2][4][16];
    nhwc_taps_avx512<Two>(sums, a.v + x * C + cb * 16, a.w0 + cb * 16, a.w1 + cb * 16, C, a.taps, a.tap_step,
                          _mm512_loadu_si512(a.bias + cb * 16));
    const __m512 hi = _mm512_set1_ps(a.hi), m = _mm512_loadu_ps(a.mult + cb * 16);
    const DirectMLLanes512 dml{_mm512_set1_ps(a.in_scale), _mm512_set1_ps(a.out_scale)};
    const DirectMLLanes512* const d = a.directml ? &dml : nullptr;
    const std::size_t count = std::min<std::size_t>(4, a.ow - x), at = x * C + cb * 16;
    const auto q = [&](int r) {
        return requantize64_lanes_avx512<TOut, false, Capped>(_mm512_load_si512(sums[r][0]), _mm512_load_si512(sums[r][1]),
                                                              _mm512_load_si512(sums[r][2]), _mm512_load_si512(sums[r][3]),
                                                              m, hi, a.zp, d);
    };
    store_lanes_avx512(a.out0 + at, C, q(0), count);
    if constexpr (Two) store_lanes_avx512(a.out1 + at, C, q(1), count);
}
#endif

/// Per channel block (its weights, bias and multiplier loaded once), blocks
/// of 4 pixels x 16 channels: each input vector feeds both rows, and the
/// weights are shared by the 4 pixels (against 64 consecutive outputs per
/// block, whose channel blocks vary: 3x3 32ch 112^2 NHWC, Zen 4, 90 -> 66 us).
template <class TOut, bool Two, bool Capped = true>
void nhwc_rows_avx512(const NhwcRows<TOut>& a) noexcept {
#if !QDML_INLINE_ASM
    for (std::size_t cb = 0; cb < a.cblocks; ++cb)
        for (std::size_t x = 0; x < a.ow; x += 4) nhwc_block_avx512<TOut, Two, Capped>(a, cb, x);
#else
    const __m512 hi = _mm512_set1_ps(a.hi);
    const DirectMLLanes512 dml{_mm512_set1_ps(a.in_scale), _mm512_set1_ps(a.out_scale)};
    const DirectMLLanes512* const d = a.directml ? &dml : nullptr;
    const std::size_t C = a.cblocks * 16;
    for (std::size_t cb = 0; cb < a.cblocks; ++cb) {
        const __m512i bias = _mm512_loadu_si512(a.bias + cb * 16);
        const __m512 m = _mm512_loadu_ps(a.mult + cb * 16);
        const std::uint32_t* const w0 = a.w0 + cb * 16;
        const std::uint32_t* const w1 = a.w1 + cb * 16;
        for (std::size_t x = 0; x < a.ow; x += 4) {
            __m512i x0[4], x1[4];
            const std::uint32_t* p = a.v + x * C + cb * 16;
            for (int u = 0; u < 4; ++u) x0[u] = x1[u] = bias;
            for (std::size_t kx = 0; kx < a.taps; ++kx, p += a.tap_step) {
                const __m512i wa = _mm512_loadu_si512(w0 + kx * C);
                const __m512i wb = Two ? _mm512_loadu_si512(w1 + kx * C) : wa;
                QDML_UNROLL for (int u = 0; u < 4; ++u) {
                    const __m512i in = _mm512_loadu_si512(p + u * C);
                    dot_quads(x0[u], in, wa);
                    if constexpr (Two) dot_quads(x1[u], in, wb);
                }
            }
            const std::size_t count = std::min<std::size_t>(4, a.ow - x), at = x * C + cb * 16;
            store_lanes_avx512(a.out0 + at, C, requantize64_lanes_avx512<TOut, false, Capped>(x0[0], x0[1], x0[2], x0[3], m, hi, a.zp, d), count);
            if constexpr (Two)
                store_lanes_avx512(a.out1 + at, C, requantize64_lanes_avx512<TOut, false, Capped>(x1[0], x1[1], x1[2], x1[3], m, hi, a.zp, d), count);
        }
    }
#endif
}

}  // namespace qdml::simd::conv::kernel
QDML_REGION_END
#endif  // QDML_X86
