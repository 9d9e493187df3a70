// qdml/simd/x86/avx2/store.hpp - the GEMM epilogue's 256-bit store (AVX2 and
// AVX-VNNI kernels): 8 int32 sums requantized, or stored as int32
// (Epilogue::int32_out; simd/gemm/epilogue.hpp has the formula and the
// portable store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_X86
QDML_REGION_AVX2
namespace qdml::simd::gemm {

/// DirectML's conversion of 8 lanes to int32 (core/quantize_directml.hpp):
/// rne(v) saturating, NaN -> 0 (cvtps2dq gives 0x80000000 for NaN and out
/// of range: flipped to INT32_MAX where v >= 2^31, zeroed where v is NaN).
inline __m256i int32_directml8(__m256 v) noexcept {
    __m256i i = _mm256_cvtps_epi32(v);  // rne (MXCSR)
    i = _mm256_xor_si256(i, _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ)));
    return _mm256_and_si256(i, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q)));
}

/// quantize_directml of 8 lanes: int32_directml8(v) plus zp wrapping, clamped to [lo, hi].
inline __m256i quantize8_directml(__m256 v, __m256i zp, __m256i lo, __m256i hi) noexcept {
    return _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(int32_directml8(v), zp), lo), hi);
}

/// 8 columns n0.. of row m from a 256-bit dot product (AVX2 and AVX-VNNI).
inline void store8(const Epilogue& e, std::size_t m, std::size_t n0, __m256i dot) noexcept {
    const RowParams& r = e.row(m);
    __m256i acc = _mm256_add_epi32(dot, _mm256_set1_epi32(static_cast<int>(r.bias)));
    acc = _mm256_add_epi32(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_bias.data() + n0)));
    if (e.var_b)
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(r.neg_ra)),
                                    _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_zp.data() + n0))));
    if (e.var_a)
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(r.neg_azp)),
                                    _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_sum.data() + n0))));
    if (e.int32_out) {  // acc itself
        if (e.out_cs == 1 && e.N - n0 >= 8) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(e.element(m, n0)), acc);
        } else {
            alignas(32) std::int32_t v[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(v), acc);
            scatter_int32<8>(e, m, n0, v);
        }
        return;
    }
    __m256i q;
    if (e.directml) {  // ((fp32(acc) * s1) * s2) / OutputScale, then DirectML's quantize step
        const __m256 sa = _mm256_set1_ps(r.a_scale), sb = _mm256_load_ps(e.col_scale.data() + n0);
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), e.col_first ? sb : sa);
        v = _mm256_div_ps(_mm256_mul_ps(v, e.col_first ? sa : sb), _mm256_set1_ps(r.out_scale));
        q = quantize8_directml(v, _mm256_set1_epi32(r.zp), _mm256_set1_epi32(e.out_lo), _mm256_set1_epi32(e.out_hi));
    } else {
        __m256 mult;
        if (e.mode == MultMode::PerColumn)
            mult = _mm256_load_ps(e.col_mult.data() + n0);
        else if (e.mode == MultMode::PerRow)
            mult = _mm256_set1_ps(r.mult);
        else
            mult = _mm256_div_ps(_mm256_mul_ps(_mm256_set1_ps(r.a_scale), _mm256_load_ps(e.col_scale.data() + n0)),
                                 _mm256_set1_ps(r.out_scale));
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), mult);
        v = _mm256_max_ps(v, _mm256_set1_ps(r.lo));  // max(NaN, lo) is lo
        v = _mm256_min_ps(v, _mm256_set1_ps(r.hi));
        q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(r.zp));
    }
    // Low byte of each lane (values are in the output range): mask, then two
    // non-saturating packs (every value is <= 255), then the two 128-bit halves.
    q = _mm256_and_si256(q, _mm256_set1_epi32(0xff));
    q = _mm256_packus_epi16(_mm256_packus_epi32(q, q), q);
    const std::uint64_t packed = static_cast<std::uint32_t>(_mm256_cvtsi256_si32(q)) |
                                 std::uint64_t{static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(q, 1)))} << 32;
    if (e.out_cs == 1 && e.N - n0 >= 8) {
        std::memcpy(e.out + m * e.out_rs + n0, &packed, 8);
    } else {
        std::uint8_t bytes[8];
        std::memcpy(bytes, &packed, 8);
        scatter_bytes<8>(e, m, n0, bytes);
    }
}

}  // namespace qdml::simd::gemm
QDML_REGION_END
#endif  // QDML_X86
