// qdml/simd/x86/avx512vnni/gemm_pack.hpp - the GEMM engine's AVX-512 packers
// (simd/gemm/pack.hpp chooses): B rows of contiguous bytes into 4 panels a
// step, A rows padded for AMX (or summed in place), A blocks of 8 rows
// (Groups4, AVX-512 VNNI), row sums by vpsadbw.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/gemm/types.hpp"

#if QDML_X86
QDML_REGION_AVX512VNNI
namespace qdml::simd::gemm::detail {

/// pack_right_rows for the first N / 64 * 4 panels, four at a time: one
/// 64-byte load per row of B, the same unpacks per 128-bit lane (a lane is
/// one panel's 16 columns), then a 4 x 4 transpose of the lanes
/// (vshufi64x2) into the four panels' group rows; vpdpbusd of 1 x b' sums
/// the columns (exact: four products of at most 128). Returns the panels
/// done.
inline std::size_t pack_right_rows4(const std::uint8_t* src, std::uint64_t row_stride,
                                                      std::size_t K, std::size_t N, std::uint8_t flip,
                                                      PackedRight& out) {
    const __m512i x = _mm512_set1_epi8(static_cast<char>(flip)), ones = _mm512_set1_epi8(1);
    const std::size_t full = N / 64 * 4, stride = out.groups * 64;
    for (std::size_t p = 0; p < full; p += 4) {
        const std::uint8_t* col = src + p * kPanel;
        std::int8_t* dst = out.data.data() + p * stride;
        __m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                          _mm512_setzero_si512()};
        for (std::size_t g = 0; g < out.groups; ++g, dst += 64) {
            __m512i r[4];
            for (std::size_t t = 0; t < 4; ++t) {
                const std::size_t k = 4 * g + t;
                r[t] = k < K ? _mm512_xor_si512(_mm512_loadu_si512(col + k * row_stride), x) : _mm512_setzero_si512();
            }
            const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]), hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
            const __m512i lo23 = _mm512_unpacklo_epi8(r[2], r[3]), hi23 = _mm512_unpackhi_epi8(r[2], r[3]);
            // Per lane l (panel p + l): q0 columns 0-3, q1 4-7, q2 8-11, q3 12-15, four k bytes each.
            const __m512i q0 = _mm512_unpacklo_epi16(lo01, lo23), q1 = _mm512_unpackhi_epi16(lo01, lo23);
            const __m512i q2 = _mm512_unpacklo_epi16(hi01, hi23), q3 = _mm512_unpackhi_epi16(hi01, hi23);
            const __m512i t0 = _mm512_maskz_shuffle_i64x2(0xff, q0, q1, 0x44), t1 = _mm512_maskz_shuffle_i64x2(0xff, q0, q1, 0xee);
            const __m512i t2 = _mm512_maskz_shuffle_i64x2(0xff, q2, q3, 0x44), t3 = _mm512_maskz_shuffle_i64x2(0xff, q2, q3, 0xee);
            const __m512i w[4] = {_mm512_maskz_shuffle_i64x2(0xff, t0, t2, 0x88), _mm512_maskz_shuffle_i64x2(0xff, t0, t2, 0xdd),
                                  _mm512_maskz_shuffle_i64x2(0xff, t1, t3, 0x88), _mm512_maskz_shuffle_i64x2(0xff, t1, t3, 0xdd)};
            for (std::size_t j = 0; j < 4; ++j) {
                _mm512_store_si512(dst + j * stride, w[j]);
                sum[j] = _mm512_dpbusd_epi32(sum[j], ones, w[j]);
            }
        }
        for (std::size_t j = 0; j < 4; ++j) _mm512_store_si512(out.col_sum.data() + (p + j) * kPanel, sum[j]);
    }
    return full;
}

/// A contiguous row of K bytes as a' (xor `flip`) into `dst`, zero-padded to
/// `padded` bytes (a multiple of 64); returns the sum of the a' bytes mod 2^32
/// (Sum), else 0. Without Store, only the sum (dst unused).
template <bool Sum, bool Store = true>
std::uint32_t left_row_avx512(const std::uint8_t* src, std::size_t K, std::size_t padded,
                                                std::uint8_t flip, std::uint8_t* dst) noexcept {
    const __m512i x = _mm512_set1_epi8(static_cast<char>(flip)), zero = _mm512_setzero_si512();
    __m512i sum = zero;
    for (std::size_t k = 0; k < padded; k += 64) {
        const std::size_t n = K > k ? std::min<std::size_t>(64, K - k) : 0;
        const __mmask64 mask = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
        const __m512i v = _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src + k), x));
        if constexpr (Store) _mm512_storeu_si512(dst + k, v);
        if constexpr (Sum) sum = _mm512_add_epi64(sum, _mm512_sad_epu8(v, zero));
    }
    if constexpr (!Sum) return 0;
    // The eight lanes in halves (not _mm512_reduce_add_epi64: g++ 12 warns -Wuninitialized inside it).
    const __m256i s4 = _mm256_add_epi64(_mm512_maskz_extracti64x4_epi64(0xf, sum, 0), _mm512_maskz_extracti64x4_epi64(0xf, sum, 1));
    const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
    return static_cast<std::uint32_t>(_mm_cvtsi128_si64(_mm_add_epi64(s2, _mm_unpackhi_epi64(s2, s2))));
}

/// One Groups4 block of 8 contiguous rows (row r at src + r * stride, K
/// bytes) as a' (xor `flip`) into `dst` (groups * 32 bytes): per 64 bytes of
/// K (16 groups) an 8 x 16 dword transpose (unpack 32, then 64 bits, then
/// 128-bit lanes of two registers), so that group g holds the 8 rows' dwords
/// at dst + 32 g. Bytes past K are 0. With `sums` (else nullptr), the rows'
/// sums of a' (mod 2^32) into sums[0..7].
inline void groups4_block8(const std::uint8_t* src, std::uint64_t stride, std::size_t K,
                                       std::size_t groups, std::uint8_t flip, std::uint8_t* dst,
                                       std::uint32_t* sums) noexcept {
    const __m512i x = _mm512_set1_epi8(static_cast<char>(flip)), zero = _mm512_setzero_si512();
    const __m512i lanes02 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);    // a.L0, b.L0, a.L1, b.L1
    const __m512i lanes13 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);  // a.L2, b.L2, a.L3, b.L3
    __m512i sum[8];
    for (int r = 0; r < 8; ++r) sum[r] = zero;
    for (std::size_t g0 = 0; g0 < groups; g0 += 16) {
        const std::size_t k = 4 * g0, n = K > k ? std::min<std::size_t>(64, K - k) : 0;
        const __mmask64 mask = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
        __m512i v[8];
        for (int r = 0; r < 8; ++r) {
            v[r] = _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src + r * stride + k), x));
            if (sums) sum[r] = _mm512_add_epi64(sum[r], _mm512_sad_epu8(v[r], zero));
        }
        // Per 128-bit lane L (groups 4L..4L+3): t (row pairs), then u[i] = rows 0-3 (u[4 + i]: rows 4-7) of
        // group 4L + i (the all-lanes maskz unpacks: g++ 12 warns -Wmaybe-uninitialized inside the plain ones).
        __m512i t[8], u[8];
        for (int h = 0; h < 2; ++h) {
            for (int q = 0; q < 2; ++q) {
                t[4 * h + 2 * q] = _mm512_maskz_unpacklo_epi32(0xffff, v[4 * h + 2 * q], v[4 * h + 2 * q + 1]);
                t[4 * h + 2 * q + 1] = _mm512_maskz_unpackhi_epi32(0xffff, v[4 * h + 2 * q], v[4 * h + 2 * q + 1]);
            }
            u[4 * h + 0] = _mm512_maskz_unpacklo_epi64(0xff, t[4 * h + 0], t[4 * h + 2]);
            u[4 * h + 1] = _mm512_maskz_unpackhi_epi64(0xff, t[4 * h + 0], t[4 * h + 2]);
            u[4 * h + 2] = _mm512_maskz_unpacklo_epi64(0xff, t[4 * h + 1], t[4 * h + 3]);
            u[4 * h + 3] = _mm512_maskz_unpackhi_epi64(0xff, t[4 * h + 1], t[4 * h + 3]);
        }
        for (int i = 0; i < 4; ++i) {
            const __m512i w[2] = {_mm512_permutex2var_epi64(u[i], lanes02, u[4 + i]),   // groups i, 4 + i
                                  _mm512_permutex2var_epi64(u[i], lanes13, u[4 + i])};  // groups 8 + i, 12 + i
            for (int j = 0; j < 2; ++j) {  // (the extract's index must be a constant for clang)
                const std::size_t g = g0 + 8 * j + i;
                if (g < groups)
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * g), _mm512_maskz_extracti64x4_epi64(0xf, w[j], 0));
                if (g + 4 < groups)
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * (g + 4)),
                                        _mm512_maskz_extracti64x4_epi64(0xf, w[j], 1));
            }
        }
    }
    if (sums)
        for (int r = 0; r < 8; ++r) {
            const __m256i s4 = _mm256_add_epi64(_mm512_maskz_extracti64x4_epi64(0xf, sum[r], 0),
                                                _mm512_maskz_extracti64x4_epi64(0xf, sum[r], 1));
            const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
            sums[r] = static_cast<std::uint32_t>(_mm_cvtsi128_si64(_mm_add_epi64(s2, _mm_unpackhi_epi64(s2, s2))));
        }
}

}  // namespace qdml::simd::gemm::detail
QDML_REGION_END
#endif  // QDML_X86
