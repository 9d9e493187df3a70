// qdml/simd/x86/avx2/gemm_pack.hpp - the GEMM engine's AVX2 packers
// (simd/gemm/pack.hpp chooses): B rows of contiguous bytes into panels, the
// panels widened to vpmaddwd's int16 pairs, A blocks of 6 rows (Groups4,
// AVX-VNNI) and 4 rows (Pairs16, AVX2), row sums by vpsadbw.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/gemm/types.hpp"

#if QDML_X86
QDML_REGION_AVX2
namespace qdml::simd::gemm::detail {

/// pack_right for rows of contiguous bytes (col_stride 1), panel by panel:
/// per group the 16 bytes of four rows are interleaved into column dwords
/// (unpack 8, then 16 bits); the column sums come from the packed dwords
/// (vpmaddubsw of 1 x b' is exact: at most 2 * 128 per pair; vpmaddwd then
/// adds the pairs). `flip` is 0x80 for an unsigned B (as_right), else 0.
inline void pack_right_rows(const std::uint8_t* src, std::uint64_t row_stride, std::size_t K,
                                            std::size_t N, std::uint8_t flip, PackedRight& out, std::size_t p_begin = 0) {
    const __m128i x = _mm_set1_epi8(static_cast<char>(flip));
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
    for (std::size_t p = p_begin; p < out.panels; ++p) {
        const std::size_t n0 = p * kPanel, count = std::min(kPanel, N - n0);
        std::int8_t* dst = out.data.data() + p * out.groups * 64;
        __m256i sum0 = _mm256_setzero_si256(), sum1 = _mm256_setzero_si256();
        for (std::size_t g = 0; g < out.groups; ++g, dst += 64) {
            __m128i r[4];
            for (std::size_t t = 0; t < 4; ++t) {
                const std::size_t k = 4 * g + t;
                if (k >= K) {
                    r[t] = _mm_setzero_si128();
                } else if (count == kPanel) {
                    r[t] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k * row_stride + n0)), x);
                } else {  // the last, partial panel: columns past N are 0
                    alignas(16) std::uint8_t tail[16] = {};
                    std::memcpy(tail, src + k * row_stride + n0, count);
                    for (std::size_t j = 0; j < count; ++j) tail[j] ^= flip;
                    r[t] = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
                }
            }
            const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), hi01 = _mm_unpackhi_epi8(r[0], r[1]);
            const __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
            const __m256i w0 = _mm256_set_m128i(_mm_unpackhi_epi16(lo01, lo23), _mm_unpacklo_epi16(lo01, lo23));
            const __m256i w1 = _mm256_set_m128i(_mm_unpackhi_epi16(hi01, hi23), _mm_unpacklo_epi16(hi01, hi23));
            _mm256_store_si256(reinterpret_cast<__m256i*>(dst), w0);
            _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 32), w1);
            sum0 = _mm256_add_epi32(sum0, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, w0), ones16));
            sum1 = _mm256_add_epi32(sum1, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, w1), ones16));
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(out.col_sum.data() + n0), sum0);
        _mm256_store_si256(reinterpret_cast<__m256i*>(out.col_sum.data() + n0 + 8), sum1);
    }
}

/// The packed panels widened in place, last group first (group i's 64 bytes
/// at 64 i are read before its 128 bytes go to 128 i): per 32-byte half the
/// even bytes (b0, b2 of each column) and the odd ones (b1, b3) sign-extended
/// to int16 by shifts. `out.data` has room for the wide panels.
inline void widen_right(PackedRight& out) noexcept {
    const std::size_t n = out.panels * out.groups;
    out.data.resize(n * 128);
    std::int8_t* d = out.data.data();
    for (std::size_t i = n; i-- > 0;) {
        const __m256i h0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(d + 64 * i));
        const __m256i h1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(d + 64 * i + 32));
        auto* w = reinterpret_cast<__m256i*>(d + 128 * i);
        _mm256_store_si256(w + 0, _mm256_srai_epi16(_mm256_slli_epi16(h0, 8), 8));
        _mm256_store_si256(w + 1, _mm256_srai_epi16(h0, 8));
        _mm256_store_si256(w + 2, _mm256_srai_epi16(_mm256_slli_epi16(h1, 8), 8));
        _mm256_store_si256(w + 3, _mm256_srai_epi16(h1, 8));
    }
    out.wide = true;
}

/// The four 64-bit lanes of `s` (vpsadbw sums) added, mod 2^32.
inline std::uint32_t lane_sum(__m256i s) noexcept {
    const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return static_cast<std::uint32_t>(_mm_cvtsi128_si64(_mm_add_epi64(s2, _mm_unpackhi_epi64(s2, s2))));
}

/// The sum of K unsigned bytes mod 2^32 (an in-place row's sum for the
/// AVX-VNNI kernel, whose CPUs may lack AVX-512).
inline std::uint32_t byte_sum_avx2(const std::uint8_t* src, std::size_t K) noexcept {
    __m256i s = _mm256_setzero_si256();
    std::size_t k = 0;
    for (; k + 32 <= K; k += 32)
        s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)),
                                                _mm256_setzero_si256()));
    std::uint32_t sum = lane_sum(s);
    for (; k < K; ++k) sum += src[k];
    return sum;
}

/// Bytes row[0..n) XOR `flip` in the low n bytes of a vector, zeros above
/// (n < 32), reading nothing at or past row + n: the whole dwords by a
/// masked load, the 1-3 bytes after them one by one. (A short row's tail in
/// the packings below: one byte at a time, it took a fifth of a 1x1 NHWC
/// convolution with 16 input channels.)
inline __m256i load_tail32(const std::uint8_t* row, std::size_t n, std::uint8_t flip) noexcept {
    if (n == 0) return _mm256_setzero_si256();
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int whole = static_cast<int>(n / 4);
    __m256i v = _mm256_maskload_epi32(reinterpret_cast<const int*>(row), _mm256_cmpgt_epi32(_mm256_set1_epi32(whole), lane));
    if (const std::size_t rest = n % 4) {
        std::uint32_t w = 0;
        for (std::size_t j = 0; j < rest; ++j) w |= std::uint32_t{row[4 * static_cast<std::size_t>(whole) + j]} << (8 * j);
        v = _mm256_blendv_epi8(v, _mm256_set1_epi32(static_cast<int>(w)), _mm256_cmpeq_epi32(_mm256_set1_epi32(whole), lane));
    }
    const __m256i index = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                           23, 24, 25, 26, 27, 28, 29, 30, 31);
    const __m256i valid = _mm256_cmpgt_epi8(_mm256_set1_epi8(static_cast<char>(n)), index);
    return _mm256_xor_si256(v, _mm256_and_si256(_mm256_set1_epi8(static_cast<char>(flip)), valid));
}

/// One Groups4 block of 6 contiguous rows (the AVX-VNNI kernel's; row r at
/// src + r * stride, K bytes): a' (each byte XOR `flip`) into dst, group g's
/// six dwords at dst + 24 g (zeros past K), the rows' sums of a' into `sums`
/// when not null; 8 groups a step (a short last step through load_tail32).
inline void groups4_block6(const std::uint8_t* src, std::uint64_t stride, std::size_t K,
                                            std::size_t groups, std::uint8_t flip, std::uint8_t* dst,
                                            std::uint32_t* sums) noexcept {
    const __m256i x = _mm256_set1_epi8(static_cast<char>(flip)), zero = _mm256_setzero_si256();
    __m256i sum[6];
    for (int r = 0; r < 6; ++r) sum[r] = zero;
    // Groups g and g + 1 (24 bytes each) from three 16-byte pieces; only g's when g + 1 is past the end.
    const auto put = [&](std::size_t g, __m128i p0, __m128i p1, __m128i p2) {
        if (g >= groups) return;
        std::uint8_t* d = dst + 24 * g;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), p0);
        if (g + 1 < groups) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16), p1);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 32), p2);
        } else {
            _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 16), p1);
        }
    };
    for (std::size_t g0 = 0; g0 < groups; g0 += 8) {
        const std::size_t k = 4 * g0, n = K > k ? std::min<std::size_t>(32, K - k) : 0;
        __m256i v[6];
        for (int r = 0; r < 6; ++r) {
            const std::uint8_t* row = src + r * stride + k;
            v[r] = n == 32 ? _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)), x)
                           : load_tail32(row, n, flip);
            if (sums) sum[r] = _mm256_add_epi64(sum[r], _mm256_sad_epu8(v[r], zero));
        }
        // Row pairs (0,1), (2,3), (4,5) as one qword per group: per 128-bit
        // lane L, lo[q] holds groups 4L and 4L + 1, hi[q] groups 4L + 2 and 4L + 3.
        __m256i lo[3], hi[3];
        for (int q = 0; q < 3; ++q) {
            lo[q] = _mm256_unpacklo_epi32(v[2 * q], v[2 * q + 1]);
            hi[q] = _mm256_unpackhi_epi32(v[2 * q], v[2 * q + 1]);
        }
        // Two groups a, b per lane: (pairs 01, 23 of a), (45 of a, 01 of b), (23, 45 of b).
        const auto two = [&](const __m256i (&pq)[3], std::size_t g) {  // g, g + 1; g + 4, g + 5
            const __m256i s0 = _mm256_unpacklo_epi64(pq[0], pq[1]), s1 = _mm256_blend_epi32(pq[2], pq[0], 0xcc),
                          s2 = _mm256_unpackhi_epi64(pq[1], pq[2]);
            put(g, _mm256_castsi256_si128(s0), _mm256_castsi256_si128(s1), _mm256_castsi256_si128(s2));
            put(g + 4, _mm256_extracti128_si256(s0, 1), _mm256_extracti128_si256(s1, 1), _mm256_extracti128_si256(s2, 1));
        };
        two(lo, g0);
        two(hi, g0 + 2);
    }
    if (sums)
        for (int r = 0; r < 6; ++r) sums[r] = lane_sum(sum[r]);
}

/// One Pairs16 block of 4 contiguous rows (row r at src + r * stride, K
/// bytes) as a' (xor `flip`) into `dst` (groups * 32 bytes), 8 groups (32
/// bytes of K) at a time: per row the dwords' even bytes (a0, a2) and odd
/// bytes (a1, a3) as int16 pairs (and, shift), interleaved per group
/// (unpack 32), then the four rows' qwords of each group together (unpack
/// 64, then 128-bit lanes), group g at dst + 32 g. The last partial 32 bytes
/// of K go through load_tail32. With `sums` (else nullptr), the rows' sums
/// of a' (mod 2^32) into sums[0..3].
inline void pairs16_block4(const std::uint8_t* src, std::uint64_t stride, std::size_t K,
                                     std::size_t groups, std::uint8_t flip, std::uint8_t* dst,
                                     std::uint32_t* sums) noexcept {
    const __m256i x = _mm256_set1_epi8(static_cast<char>(flip)), low = _mm256_set1_epi16(0x00ff);
    const __m256i zero = _mm256_setzero_si256();
    __m256i sum0 = zero, sum1 = zero, sum2 = zero, sum3 = zero;
    const std::uint8_t* r0 = src;
    const std::uint8_t* r1 = src + stride;
    const std::uint8_t* r2 = src + 2 * stride;
    const std::uint8_t* r3 = src + 3 * stride;
    // 8 groups (32 bytes of K) of the four rows v0..v3 into dst + 32 g0 (the
    // groups past `groups` not stored). Written out in named registers: with
    // arrays and the tail's copy in the same loop, g++ 12 kept them on the stack.
    const auto step = [&](__m256i v0, __m256i v1, __m256i v2, __m256i v3, std::size_t g0) {
        if (sums) {
            sum0 = _mm256_add_epi64(sum0, _mm256_sad_epu8(v0, zero));
            sum1 = _mm256_add_epi64(sum1, _mm256_sad_epu8(v1, zero));
            sum2 = _mm256_add_epi64(sum2, _mm256_sad_epu8(v2, zero));
            sum3 = _mm256_add_epi64(sum3, _mm256_sad_epu8(v3, zero));
        }
        // Per row: (a0, a2) even and (a1, a3) odd int16 pairs, per group (unpack 32).
        const auto pairs = [&](__m256i v, __m256i& l, __m256i& h) {
            const __m256i even = _mm256_and_si256(v, low), odd = _mm256_srli_epi16(v, 8);
            l = _mm256_unpacklo_epi32(even, odd);  // groups 0, 1 | 4, 5
            h = _mm256_unpackhi_epi32(even, odd);  // groups 2, 3 | 6, 7
        };
        __m256i l0, l1, l2, l3, h0, h1, h2, h3;
        pairs(v0, l0, h0);
        pairs(v1, l1, h1);
        pairs(v2, l2, h2);
        pairs(v3, l3, h3);
        const __m256i q0 = _mm256_unpacklo_epi64(l0, l1), q1 = _mm256_unpacklo_epi64(l2, l3);  // group 0 | 4
        const __m256i q2 = _mm256_unpackhi_epi64(l0, l1), q3 = _mm256_unpackhi_epi64(l2, l3);  // 1 | 5
        const __m256i q4 = _mm256_unpacklo_epi64(h0, h1), q5 = _mm256_unpacklo_epi64(h2, h3);  // 2 | 6
        const __m256i q6 = _mm256_unpackhi_epi64(h0, h1), q7 = _mm256_unpackhi_epi64(h2, h3);  // 3 | 7
        // Groups 0-7 in order (128-bit lanes of the q pairs).
        const __m256i o0 = _mm256_permute2x128_si256(q0, q1, 0x20), o1 = _mm256_permute2x128_si256(q2, q3, 0x20);
        const __m256i o2 = _mm256_permute2x128_si256(q4, q5, 0x20), o3 = _mm256_permute2x128_si256(q6, q7, 0x20);
        const __m256i o4 = _mm256_permute2x128_si256(q0, q1, 0x31), o5 = _mm256_permute2x128_si256(q2, q3, 0x31);
        const __m256i o6 = _mm256_permute2x128_si256(q4, q5, 0x31), o7 = _mm256_permute2x128_si256(q6, q7, 0x31);
        auto* d = reinterpret_cast<__m256i*>(dst + 32 * g0);
        if (g0 + 8 <= groups) {
            _mm256_storeu_si256(d + 0, o0);
            _mm256_storeu_si256(d + 1, o1);
            _mm256_storeu_si256(d + 2, o2);
            _mm256_storeu_si256(d + 3, o3);
            _mm256_storeu_si256(d + 4, o4);
            _mm256_storeu_si256(d + 5, o5);
            _mm256_storeu_si256(d + 6, o6);
            _mm256_storeu_si256(d + 7, o7);
            return;
        }
        alignas(32) const __m256i out[8] = {o0, o1, o2, o3, o4, o5, o6, o7};
        std::memcpy(d, out, 32 * (groups - g0));
    };
    const auto load = [&](const std::uint8_t* row, std::size_t k) {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + k)), x);
    };
    std::size_t g0 = 0;
    for (; g0 < groups && 4 * g0 + 32 <= K; g0 += 8) {
        const std::size_t k = 4 * g0;
        step(load(r0, k), load(r1, k), load(r2, k), load(r3, k), g0);
    }
    // The last partial 32 bytes of K (and the zero groups up to `groups`): load_tail32.
    for (; g0 < groups; g0 += 8) {
        const std::size_t k = 4 * g0, n = K > k ? K - k : 0;  // (< 32)
        const auto t = [&](const std::uint8_t* row) { return n ? load_tail32(row + k, n, flip) : _mm256_setzero_si256(); };
        step(t(r0), t(r1), t(r2), t(r3), g0);
    }
    if (sums) {
        const __m256i s[4] = {sum0, sum1, sum2, sum3};
        for (int r = 0; r < 4; ++r) sums[r] = lane_sum(s[r]);
    }
}

}  // namespace qdml::simd::gemm::detail
QDML_REGION_END
#endif  // QDML_X86
