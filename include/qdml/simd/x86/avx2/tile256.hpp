// qdml/simd/x86/avx2/tile256.hpp - the 256-bit micro-kernel skeleton of the
// AVX2 and AVX-VNNI kernels: MR rows x one 16-column panel, two ymm
// accumulators per row (columns 0-7, 8-15). Per k group the panel's 64 bytes
// (128 widened) are loaded (and prepared) once for all MR rows; the dot step of each row
// is the kernel's own (`Dot`). Compiles to nothing off x86-64.
//
// A Dot provides:
//   kUnit                    bytes of the left operand per row and k group
//   kGroupBytes              bytes of the panel per k group (64; AVX2's wide panels 128)
//   Panel                    one k group of the panel, as the step reads it
//   Panel load(const int8*)  from the group's packed bytes
//   step(acc, a, panel)      acc[0..1] += row a's group . panel
//   kBlockRows               0, or the rows of a whole block whose k loop is the Dot's own:
//   block(sums, a, b, groups)  sums[r][h] = row r's groups . columns 8h..8h+7 (int32[kBlockRows][2][8])
//
// The skeleton is compiled in the region of the file that includes it: once
// here, in the AVX2 region (namespace gemm::ymm); and where the target
// regions are not empty (g++, clang) but QDML_INLINE_ASM is 0, again in
// the AVX-VNNI kernel's region (x86/avxvnni/gemm_kernel.hpp), so that its
// dot step, the intrinsic (an AVX-VNNI target's), inlines into it: the file
// includes itself with QDML_TILE256_NAMESPACE set, which compiles only the
// skeleton, into that namespace.
#if !defined(QDML_TILE256_NAMESPACE)
#ifndef QDML_SIMD_X86_AVX2_TILE256_HPP
#define QDML_SIMD_X86_AVX2_TILE256_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "qdml/simd/x86/avx2/store.hpp"

#if QDML_X86
QDML_REGION_AVX2
#define QDML_TILE256_NAMESPACE ymm
#include "qdml/simd/x86/avx2/tile256.hpp"
#undef QDML_TILE256_NAMESPACE
QDML_REGION_END
#endif  // QDML_X86
#endif  // QDML_SIMD_X86_AVX2_TILE256_HPP
#else   // the skeleton, in the includer's region
namespace qdml::simd::gemm::QDML_TILE256_NAMESPACE {

template <class Dot, int MR>
void tile(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0,
                           std::size_t p) {
    const std::uint8_t* pa = a.rows(m0);
    const std::int8_t* pb = b.panel(p);
    __m256i acc[MR][2];
    if constexpr (Dot::kBlockRows == MR) {  // the Dot's own k loop for a whole block (AVX2: asm)
        alignas(32) std::int32_t sums[MR][2][8];
        Dot::block(sums, pa, pb, b.groups);
        QDML_UNROLL
        for (int r = 0; r < MR; ++r)
            for (int h = 0; h < 2; ++h) acc[r][h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sums[r][h]));
    } else {
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
        // The k loop, row r's group at pa + r * row_step, groups group_step
        // apart: packed, or a block of AVX-VNNI's read in place (A's own
        // rows). Two groups per iteration: fewer loop uops on the vector
        // ports (AVX2: 1024^3 ~4% faster with 32 registers, ~15% with 16).
        const bool in_place = Dot::kUnit == 4 && m0 < a.borrowed_rows;
        const std::size_t row_step = in_place ? a.borrowed_stride : Dot::kUnit;
        const std::size_t group_step = in_place ? 4 : Dot::kUnit * MR;
#if defined(__clang__)
        _Pragma("unroll 2")
#elif defined(__GNUC__)
        _Pragma("GCC unroll 2")
#endif
        for (std::size_t g = 0; g < b.groups; ++g, pa += group_step, pb += Dot::kGroupBytes) {
            const typename Dot::Panel vb = Dot::load(pb);
            QDML_UNROLL
            for (int r = 0; r < MR; ++r) Dot::step(acc[r], pa + r * row_step, vb);
        }
    }
    // Stored row by row from here (passing the accumulator array by reference
    // to a helper made g++ 12 keep it in memory and store it every k group).
    const std::size_t n0 = p * kPanel;
    if (e.directml && !(e.var_a || e.var_b || e.int32_out || e.out_cs != 1) && e.N - n0 >= kPanel &&
        ((e.out_lo == 0 && e.out_hi == 255) || (e.out_lo == -128 && e.out_hi == 127))) {
        // The DirectML profile, uniform zero points, contiguous rows, a whole
        // panel: store8's value (the scales one at a time, the division),
        // the column vectors loaded once; the quantize step by the
        // saturating packs of the common store below where both halves'
        // values are below 2^30 in magnitude (no saturation, wrap or NaN
        // for quantize_directml there: it is clamp(rne(v) + zp)), else
        // quantize8_directml (values in range: the packs keep them).
        const __m256 sb[2] = {_mm256_load_ps(e.col_scale.data() + n0), _mm256_load_ps(e.col_scale.data() + n0 + 8)};
        const __m256i cb[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_bias.data() + n0)),
                               _mm256_load_si256(reinterpret_cast<const __m256i*>(e.col_bias.data() + n0 + 8))};
        const __m256 limit = _mm256_set1_ps(1073741824.0f), magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        const bool is_signed = e.out_lo < 0;
        const std::uint64_t out_rs = e.out_rs;
        std::uint8_t* out = e.out + m0 * out_rs + n0;
        // (dml_small: every value below 2^30 for any acc, known per call:
        // the packs alone, no test per row.)
        const auto rows = [&](auto fits) {
            QDML_UNROLL
            for (int r = 0; r < MR; ++r, out += out_rs) {
                const RowParams& rp = e.rows[m0 + r];
                const __m256 sa = _mm256_set1_ps(rp.a_scale), os = _mm256_set1_ps(rp.out_scale);
                __m256 v[2];
                QDML_UNROLL
                for (int h = 0; h < 2; ++h) {
                    const __m256i sum =
                        _mm256_add_epi32(_mm256_add_epi32(acc[r][h], _mm256_set1_epi32(static_cast<int>(rp.bias))), cb[h]);
                    const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(sum), e.col_first ? sb[h] : sa);
                    v[h] = _mm256_div_ps(_mm256_mul_ps(x, e.col_first ? sa : sb[h]), os);
                }
                __m256i w;
                if (decltype(fits)::value ||
                    _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(v[0], magnitude), limit, _CMP_LT_OQ),
                                                     _mm256_cmp_ps(_mm256_and_ps(v[1], magnitude), limit, _CMP_LT_OQ))) == 0xff) {
                    w = _mm256_adds_epi16(_mm256_packs_epi32(_mm256_cvtps_epi32(v[0]), _mm256_cvtps_epi32(v[1])),
                                          _mm256_set1_epi16(static_cast<short>(rp.zp)));
                } else {
                    const __m256i zp = _mm256_set1_epi32(rp.zp), lo = _mm256_set1_epi32(e.out_lo), hi = _mm256_set1_epi32(e.out_hi);
                    w = _mm256_packs_epi32(quantize8_directml(v[0], zp, lo, hi), quantize8_directml(v[1], zp, lo, hi));
                }
                const __m256i b8 = is_signed ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(b8, order)));
            }
        };
        if (e.dml_small)
            rows(std::true_type{});
        else
            rows(std::false_type{});
        return;
    }
    if (!e.common_store() || e.N - n0 < kPanel) {
        QDML_UNROLL
        for (int r = 0; r < MR; ++r) {
            store8(e, m0 + r, n0, acc[r][0]);
            if (n0 + 8 < e.N) store8(e, m0 + r, n0 + 8, acc[r][1]);
        }
        return;
    }
    // The common case (uniform zero points, per-column multiplier, contiguous
    // output rows, a whole panel): store8's arithmetic without its tests, each
    // row's constants broadcast once for both halves, the 16 low bytes packed
    // together (values in the output range: masked, two non-saturating packs,
    // then the dwords in column order) into one 16-byte store.
    // (The epilogue's fields read into locals first: the byte stores may alias them.)
    const auto* col_bias = reinterpret_cast<const __m256i*>(e.col_bias.data() + n0);
    const float* col_mult = e.col_mult.data() + n0;
    const RowParams* rows = e.rows.data() + m0;
    const std::uint64_t out_rs = e.out_rs;
    std::uint8_t* out = e.out + m0 * out_rs + n0;
    const __m256i low = _mm256_set1_epi32(0xff), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    if (e.cols_small && ((e.out_lo == 0 && e.out_hi == 255) || (e.out_lo == -128 && e.out_hi == 127))) {
        // Every multiplier below 1 in magnitude: |fp32(acc) * mult| < 2^31
        // converts without overflow, and saturating packs give Q's clamps
        // (as store_rows32 does): to int16, plus the zero point with
        // saturation, to the output type; no max, min or mask.
        const bool is_signed = e.out_lo < 0;
        QDML_UNROLL
        for (int r = 0; r < MR; ++r, out += out_rs) {
            const RowParams& rp = rows[r];
            __m256i q[2];
            QDML_UNROLL
            for (int h = 0; h < 2; ++h) {
                const __m256i v = _mm256_add_epi32(_mm256_add_epi32(acc[r][h], _mm256_set1_epi32(static_cast<int>(rp.bias))),
                                                   _mm256_load_si256(col_bias + h));
                q[h] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_load_ps(col_mult + 8 * h)));
            }
            const __m256i w = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_set1_epi16(static_cast<short>(rp.zp)));
            const __m256i b8 = is_signed ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(b8, order)));
        }
        return;
    }
    QDML_UNROLL
    for (int r = 0; r < MR; ++r, out += out_rs) {
        const RowParams& rp = rows[r];
        const __m256i bias = _mm256_set1_epi32(static_cast<int>(rp.bias)), zp = _mm256_set1_epi32(rp.zp);
        const __m256 lo = _mm256_set1_ps(rp.lo), hi = _mm256_set1_ps(rp.hi);
        __m256i q[2];
        QDML_UNROLL
        for (int h = 0; h < 2; ++h) {
            const __m256i v = _mm256_add_epi32(_mm256_add_epi32(acc[r][h], bias), _mm256_load_si256(col_bias + h));
            const __m256 f = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_load_ps(col_mult + 8 * h)), lo),
                                           hi);  // max(NaN, lo) is lo
            q[h] = _mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(f), zp), low);
        }
        // Bytes: dwords (cols 0-3, 8-11, ...) per lane after the packs; permuted into column order.
        const __m256i w = _mm256_packus_epi32(q[0], q[1]);
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(w, w), order);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(bytes));
    }
}

/// Rows m0..m0+mr-1 (mr <= Rows) times panel p.
template <class Dot, int Rows>
inline void tiles(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m0, std::size_t mr,
                  std::size_t p) {
    with_count<Rows>(mr, [&](auto rows) { tile<Dot, decltype(rows)::value>(a, b, e, m0, p); });
}

}  // namespace qdml::simd::gemm::QDML_TILE256_NAMESPACE
#endif  // QDML_TILE256_NAMESPACE
