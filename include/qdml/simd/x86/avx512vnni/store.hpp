// qdml/simd/x86/avx512vnni/store.hpp - the GEMM epilogue's AVX-512 stores
// (AVX-512 VNNI and AMX kernels): 16 int32 sums at a time requantized, or
// stored as int32 (Epilogue::int32_out; simd/gemm/epilogue.hpp has the
// formula and the portable store).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qdml/simd/gemm/epilogue.hpp"

#if QDML_X86
QDML_REGION_AVX512VNNI
namespace qdml::simd::gemm {

/// 16 columns n0.. of row m from a 512-bit dot product (AVX-512 VNNI and AMX).
/// The requantize step of 16 int32 sums (docs/semantics.md section 5): `Q(fp32(acc) *
/// mult)` as `min(hi, max(lo, v))`, round to nearest even, plus the output
/// zero point, as 16 int32 lanes (stored as bytes by the caller). Every
/// AVX-512 store of the vector kernels goes through it.
inline __m512i requantize16(__m512i acc, __m512 mult, __m512 lo, __m512 hi, __m512i zp) noexcept {
    // (The all-lanes maskz forms: g++ 12's unmasked ones warn -Wuninitialized inside its own header.)
    constexpr __mmask16 all = 0xffff;
    __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), mult);
    v = _mm512_maskz_max_ps(all, v, lo);  // max(NaN, lo) is lo: Q maps NaN to lo - zp
    v = _mm512_maskz_min_ps(all, v, hi);
    return _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), zp);  // rne (MXCSR)
}

/// DirectML's conversion of 16 lanes to int32 (core/quantize_directml.hpp):
/// rne(v) saturating, NaN -> 0 (cvtps2dq gives 0x80000000 for NaN and out
/// of range: INT32_MAX where v >= 2^31, 0 where v is NaN).
inline __m512i int32_directml16(__m512 v) noexcept {
    constexpr __mmask16 all = 0xffff;
    const __m512i i = _mm512_maskz_cvtps_epi32(all, v);  // rne (MXCSR)
    return _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q),
                                  _mm512_mask_mov_epi32(i, _mm512_cmp_ps_mask(v, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ),
                                                        _mm512_set1_epi32(0x7fffffff)));
}

/// quantize_directml of 16 lanes: int32_directml16(v) plus zp wrapping, clamped to [lo, hi].
inline __m512i quantize16_directml(__m512 v, __m512i zp, __m512i lo, __m512i hi) noexcept {
    constexpr __mmask16 all = 0xffff;
    const __m512i i = _mm512_add_epi32(int32_directml16(v), zp);
    return _mm512_maskz_min_epi32(all, _mm512_maskz_max_epi32(all, i, lo), hi);  // (maskz: see requantize16)
}

inline void store16(const Epilogue& e, std::size_t m, std::size_t n0, __m512i dot) noexcept {
    const RowParams& r = e.row(m);
    __m512i acc = _mm512_add_epi32(dot, _mm512_set1_epi32(static_cast<int>(r.bias)));
    acc = _mm512_add_epi32(acc, _mm512_load_si512(e.col_bias.data() + n0));
    if (e.var_b)
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(r.neg_ra)),
                                                       _mm512_load_si512(e.col_zp.data() + n0)));
    if (e.var_a)
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(r.neg_azp)),
                                                       _mm512_load_si512(e.col_sum.data() + n0)));
    const std::size_t count = e.N - n0 < 16 ? e.N - n0 : 16;
    if (e.int32_out) {  // acc itself
        if (e.out_cs == 1) {
            _mm512_mask_storeu_epi32(e.element(m, n0), static_cast<__mmask16>((1u << count) - 1u), acc);
        } else {
            alignas(64) std::int32_t v[16];
            _mm512_store_si512(v, acc);
            scatter_int32<16>(e, m, n0, v);
        }
        return;
    }
    __m512i q;
    if (e.directml) {  // ((fp32(acc) * s1) * s2) / OutputScale, then DirectML's quantize step
        constexpr __mmask16 all = 0xffff;
        const __m512 sa = _mm512_set1_ps(r.a_scale), sb = _mm512_load_ps(e.col_scale.data() + n0);
        __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), e.col_first ? sb : sa);
        v = _mm512_div_ps(_mm512_mul_ps(v, e.col_first ? sa : sb), _mm512_set1_ps(r.out_scale));
        q = quantize16_directml(v, _mm512_set1_epi32(r.zp), _mm512_set1_epi32(e.out_lo), _mm512_set1_epi32(e.out_hi));
    } else {
        __m512 mult;
        if (e.mode == MultMode::PerColumn)
            mult = _mm512_load_ps(e.col_mult.data() + n0);
        else if (e.mode == MultMode::PerRow)
            mult = _mm512_set1_ps(r.mult);
        else
            mult = _mm512_div_ps(_mm512_mul_ps(_mm512_set1_ps(r.a_scale), _mm512_load_ps(e.col_scale.data() + n0)),
                                 _mm512_set1_ps(r.out_scale));
        q = requantize16(acc, mult, _mm512_set1_ps(r.lo), _mm512_set1_ps(r.hi), _mm512_set1_epi32(r.zp));
    }
    if (e.out_cs == 1) {
        _mm512_mask_cvtepi32_storeu_epi8(e.out + m * e.out_rs + n0, static_cast<__mmask16>((1u << count) - 1u), q);
    } else {
        alignas(16) std::uint8_t bytes[16];
        _mm512_mask_cvtepi32_storeu_epi8(bytes, 0xffff, q);
        scatter_bytes<16>(e, m, n0, bytes);
    }
}

/// Whether store_rows16_directml stores this epilogue: the DirectML profile
/// with uniform zero points, contiguous output rows, an 8-bit output type's
/// whole range.
inline bool directml_store(const Epilogue& e) noexcept {
    return e.directml && !(e.var_a || e.var_b || e.int32_out || e.out_cs != 1) &&
           ((e.out_lo == 0 && e.out_hi == 255) || (e.out_lo == -128 && e.out_hi == 127));
}

namespace detail {
/// Rows m0..m0+rows-1 x columns n0..n0+15 in the DirectML profile: store16's
/// value (the scales one at a time, then the division), the per-column
/// vectors loaded once and each row's constants broadcast once, four rows
/// to a byte register as rows16 does (one 16-byte store per row). The
/// quantize step takes store_rows32's saturating packs when every value of
/// the four rows has |v| < 2^30: there quantize_directml is clamp(rne(v) +
/// zp) (no saturation, no wrap, no NaN), which the packs give (rne(v) to
/// int16 saturating, plus zp saturating, to the type saturating: a value
/// past int16 stays past the type's range); otherwise quantize16_directml
/// for those four rows (its values in range, the packs keep them).
template <bool ColFirst>
void rows16_directml(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0, const std::int32_t* c,
                     bool has_col_bias) noexcept {
    const bool is_signed = e.out_lo < 0;
    const std::size_t count = std::min<std::size_t>(16, e.N - n0);
    const auto mask = static_cast<__mmask16>((1u << count) - 1u);
    const __m512 sb = _mm512_load_ps(e.col_scale.data() + n0);
    const __m512i add = has_col_bias ? _mm512_setzero_si512() : _mm512_load_si512(e.col_bias.data() + n0);
    const __m512i lo = _mm512_set1_epi32(e.out_lo), hi = _mm512_set1_epi32(e.out_hi);
    const __m512 limit = _mm512_set1_ps(1073741824.0f);  // 2^30
    const RowParams* rp = e.rows.data() + m0;
    const std::uint64_t rs = e.out_rs;
    constexpr __mmask16 all = 0xffff;
    // dword order after the packs: per lane l, rows r..r+3 of columns 4l..4l+3; into row order.
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    std::uint8_t* out = e.out + m0 * rs + n0;
    for (std::size_t r = 0; r < rows; r += 4, out += 4 * rs) {
        const RowParams* p[4];
        __m512 v[4];
        __mmask16 small = all;
        for (int k = 0; k < 4; ++k) {  // (rows past the last repeat it: computed, not stored)
            const std::size_t row = r + k < rows ? r + k : rows - 1;
            p[k] = rp + row;
            const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(_mm512_load_si512(c + 16 * row), add),
                                                 _mm512_set1_epi32(static_cast<int>(p[k]->bias)));
            const __m512 sa = _mm512_set1_ps(p[k]->a_scale);
            const __m512 x = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), ColFirst ? sb : sa);
            v[k] = _mm512_div_ps(_mm512_mul_ps(x, ColFirst ? sa : sb), _mm512_set1_ps(p[k]->out_scale));
            small &= _mm512_cmp_ps_mask(_mm512_abs_ps(v[k]), limit, _CMP_LT_OQ);  // (NaN: false)
        }
        __m512i w0, w1;
        if (small == all) {
            const auto zps = [&](int k) {  // rows k, k + 1's zero points as int16, as the packs order them
                return _mm512_maskz_unpacklo_epi64(0xff, _mm512_set1_epi16(static_cast<short>(p[k]->zp)),
                                                   _mm512_set1_epi16(static_cast<short>(p[k + 1]->zp)));
            };
            w0 = _mm512_adds_epi16(_mm512_packs_epi32(_mm512_maskz_cvtps_epi32(all, v[0]), _mm512_maskz_cvtps_epi32(all, v[1])),
                                   zps(0));
            w1 = _mm512_adds_epi16(_mm512_packs_epi32(_mm512_maskz_cvtps_epi32(all, v[2]), _mm512_maskz_cvtps_epi32(all, v[3])),
                                   zps(2));
        } else {
            const auto q = [&](int k) { return quantize16_directml(v[k], _mm512_set1_epi32(p[k]->zp), lo, hi); };
            w0 = _mm512_packs_epi32(q(0), q(1));
            w1 = _mm512_packs_epi32(q(2), q(3));
        }
        const __m512i bytes =
            _mm512_maskz_permutexvar_epi32(0xffff, order, is_signed ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1));
        const std::size_t n = std::min<std::size_t>(4, rows - r);
        for (std::size_t k = 0; k < n; ++k) {
            __m128i row;  // (the all-lanes maskz extracts: see rows16)
            switch (k) {
                case 0: row = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 0); break;
                case 1: row = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 1); break;
                case 2: row = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 2); break;
                default: row = _mm512_maskz_extracti32x4_epi32(0xf, bytes, 3); break;
            }
            if (count == 16)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k * rs), row);
            else
                _mm_mask_storeu_epi8(out + k * rs, mask, row);
        }
    }
}
}  // namespace detail

/// Rows m0..m0+rows-1 x columns n0..n0+15 from 16-lane int32 dot products
/// `c` (row r at c + 16 r) that hold the column bias when `has_col_bias`,
/// in the DirectML profile; false (and nothing stored) unless directml_store(e).
inline bool store_rows16_directml(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                                  const std::int32_t* c, bool has_col_bias = true) noexcept {
    if (!directml_store(e)) return false;
    e.col_first ? detail::rows16_directml<true>(e, m0, rows, n0, c, has_col_bias)
                : detail::rows16_directml<false>(e, m0, rows, n0, c, has_col_bias);
    return true;
}

/// Rows m0..m0+rows-1 x columns n0..n0+15 from 16-lane int32 dot products
/// `c` (row r at c + r * 16; AMX tile stores) that already hold the column
/// bias when `has_col_bias` (accumulators that started from it), else not:
/// store16's arithmetic with the per-column vectors loaded once for all rows
/// in the common case (uniform zero points, per-column multiplier,
/// contiguous output rows).
inline void store_rows16(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                                            const std::int32_t* c, bool has_col_bias = true) noexcept {
    if (store_rows16_directml(e, m0, rows, n0, c, has_col_bias)) return;
    const __m512i col_bias = _mm512_load_si512(e.col_bias.data() + n0);
    if (!e.common_store()) {
        for (std::size_t r = 0; r < rows; ++r) {  // store16 adds the column bias
            const __m512i dot = _mm512_load_si512(c + 16 * r);
            store16(e, m0 + r, n0, has_col_bias ? _mm512_sub_epi32(dot, col_bias) : dot);
        }
        return;
    }
    const std::size_t count = e.N - n0 < 16 ? e.N - n0 : 16;
    const auto mask = static_cast<__mmask16>((1u << count) - 1u);
    const __m512 mult = _mm512_load_ps(e.col_mult.data() + n0);
    const __m512i add = has_col_bias ? _mm512_setzero_si512() : col_bias;
    std::uint8_t* out = e.out + m0 * e.out_rs + n0;
    const RowParams* rp = e.rows.data() + m0;
    for (std::size_t r = 0; r < rows; ++r, out += e.out_rs, ++rp) {
        const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(_mm512_load_si512(c + 16 * r), add),
                                             _mm512_set1_epi32(static_cast<int>(rp->bias)));
        const __m512i q =
            requantize16(acc, mult, _mm512_set1_ps(rp->lo), _mm512_set1_ps(rp->hi), _mm512_set1_epi32(rp->zp));
        _mm512_mask_cvtepi32_storeu_epi8(out, mask, q);
    }
}

namespace detail {

/// One row of 16 columns for store_rows32: int32 of round(fp32(acc) * mult),
/// acc = the dot products + the row's bias (when not 0), the product clamped
/// to hi (Clamp).
template <bool PerColumn, bool Clamp>
inline __m512i q32(const RowParams& rp, __m512i acc, __m512 col_mult) noexcept {
    constexpr __mmask16 all = 0xffff;
    if (rp.bias != 0) acc = _mm512_add_epi32(acc, _mm512_set1_epi32(static_cast<int>(rp.bias)));
    __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), PerColumn ? col_mult : _mm512_set1_ps(rp.mult));
    if constexpr (Clamp) v = _mm512_maskz_min_ps(all, _mm512_set1_ps(rp.hi), v);
    return _mm512_maskz_cvtps_epi32(all, v);
}
template <bool PerColumn, bool Clamp>
inline __m512i q32(const RowParams& rp, const std::int32_t* c, __m512 col_mult) noexcept {
    return q32<PerColumn, Clamp>(rp, _mm512_load_si512(c), col_mult);
}

/// store_rows32's loop; AddColBias: the dot products lack the column bias.
template <bool PerColumn, bool Clamp, bool SameZp, bool AddColBias>
void rows32(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                               const std::int32_t* c0, const std::int32_t* c1) noexcept {
    const bool is_signed = e.out_lo < 0;
    const std::size_t count = std::min<std::size_t>(32, e.N - n0);
    const auto mask = static_cast<__mmask32>(count == 32 ? ~0u : (1u << count) - 1u);
    const __m512 cm0 = _mm512_load_ps(e.col_mult.data() + n0), cm1 = _mm512_load_ps(e.col_mult.data() + n0 + 16);
    const __m512i zp = _mm512_set1_epi16(static_cast<short>(e.rows[m0].zp));  // (SameZp: every row's)
    const __m512i cb0 = _mm512_load_si512(e.col_bias.data() + n0), cb1 = _mm512_load_si512(e.col_bias.data() + n0 + 16);
    const auto dots = [&](const std::int32_t* c, __m512i cb) {
        return AddColBias ? _mm512_add_epi32(_mm512_load_si512(c), cb) : _mm512_load_si512(c);
    };
    // One row: columns n0..n0+31 as int16 with the zero point added (saturating).
    const auto words = [&](std::size_t r) {
        const RowParams& rp = e.rows[m0 + r];
        const __m512i lo = q32<PerColumn, Clamp>(rp, dots(c0 + 16 * r, cb0), cm0);
        const __m512i hi = q32<PerColumn, Clamp>(rp, dots(c1 + 16 * r, cb1), cm1);
        return _mm512_adds_epi16(_mm512_packs_epi32(lo, hi), SameZp ? zp : _mm512_set1_epi16(static_cast<short>(rp.zp)));
    };
    // dword order after the packs: per 128-bit lane l, (row r, columns 4l..4l+3),
    // (r, 16+4l..), (r + 1, 4l..), (r + 1, 16+4l..).
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    for (std::size_t r = 0; r < rows; r += 2) {
        const std::size_t r1 = r + 1 < rows ? r + 1 : r;
        const __m512i w0 = words(r), w1 = words(r1);
        const __m512i packed = is_signed ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1);
        const __m512i bytes = _mm512_maskz_permutexvar_epi32(0xffff, order, packed);
        std::uint8_t* out = e.out + (m0 + r) * e.out_rs + n0;
        _mm256_mask_storeu_epi8(out, mask, _mm512_maskz_extracti64x4_epi64(0xf, bytes, 0));
        if (r1 != r) _mm256_mask_storeu_epi8(out + e.out_rs, mask, _mm512_maskz_extracti64x4_epi64(0xf, bytes, 1));
    }
}
}  // namespace detail

/// Whether store_rows32 (and the VNNI kernel's rows16) store this
/// epilogue: uniform zero points, a per-column or per-row multiplier,
/// contiguous output rows, an 8-bit output type's whole range.
inline bool packed_store(const Epilogue& e) noexcept {
    return !(e.var_a || e.var_b || e.int32_out || e.mode == MultMode::PerElement || e.out_cs != 1) &&
           ((e.out_lo == 0 && e.out_hi == 255) || (e.out_lo == -128 && e.out_hi == 127));
}

/// Rows m0..m0+rows-1 x columns n0..n0+31 from two tiles of 16-lane int32
/// dot products that already hold the column bias when `has_col_bias` (row r
/// of the columns n0.. at c0 + 16 r, of n0 + 16.. at c1 + 16 r), two rows at a time, in the
/// common case (uniform zero points, a per-column or per-row multiplier,
/// contiguous output rows); false (and nothing stored) otherwise. Q with
/// fewer steps, the same values: the low clamp and NaN come from
/// saturation, since rounding commutes with a clamp to integers: min(hi, v)
/// keeps NaN (minps returns its second operand), cvtps2dq maps NaN and
/// every v < -2^31 to -2^31, the int16 pack and the saturating zero point
/// add keep it far below the type, and the final saturating byte pack sends
/// it to the type's minimum, Q's lo + zp; values in range are unchanged by
/// the packs. When every multiplier has |mult| < 1 the high clamp goes the
/// same way: |v| < 2^31 converts without overflow, and the packs saturate
/// it to the type's maximum. A row's bias is added only when it is not 0
/// (B's zero point 0: every row's).
inline bool store_rows32(const Epilogue& e, std::size_t m0, std::size_t rows, std::size_t n0,
                                           const std::int32_t* c0, const std::int32_t* c1,
                                           bool has_col_bias = true) noexcept {
    if (!packed_store(e)) return false;
    const auto run = [&](auto same_zp, auto add_col_bias) {
        constexpr bool Z = decltype(same_zp)::value, B = decltype(add_col_bias)::value;
        if (e.mode == MultMode::PerColumn)
            e.cols_small ? detail::rows32<true, false, Z, B>(e, m0, rows, n0, c0, c1)
                         : detail::rows32<true, true, Z, B>(e, m0, rows, n0, c0, c1);
        else
            e.rows_small ? detail::rows32<false, false, Z, B>(e, m0, rows, n0, c0, c1)
                         : detail::rows32<false, true, Z, B>(e, m0, rows, n0, c0, c1);
    };
    const auto with_zp = [&](auto add_col_bias) {
        e.same_zp ? run(std::true_type{}, add_col_bias) : run(std::false_type{}, add_col_bias);
    };
    has_col_bias ? with_zp(std::false_type{}) : with_zp(std::true_type{});
    return true;
}

}  // namespace qdml::simd::gemm
QDML_REGION_END
#endif  // QDML_X86
