// qdml/simd/gemm/pack.hpp - packing of the engine's operands from any
// strides into the layouts of gemm/types.hpp: the portable packers, and the
// choice of the vector ones (simd/x86/<isa>/gemm_pack.hpp) by ISA.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "qdml/simd/gemm/types.hpp"
#include "qdml/simd/x86/avx2/gemm_pack.hpp"
#include "qdml/simd/x86/avx512vnni/gemm_pack.hpp"

namespace qdml::simd::gemm {

template <class TB>
void pack_right(Matrix<TB> b, std::size_t K, std::size_t N, Isa isa, PackedRight& out, RightPacking how = {}) {
    out.isa = isa;
    out.K = K;
    out.N = N;
    out.panels = (N + kPanel - 1) / kPanel;
    out.groups = k_groups(K, isa);
    out.wide = false;
#if QDML_X86
    const bool wide = how.wide && isa == Isa::Avx2;
    if (wide) out.data.resize(out.panels * out.groups * 128);  // the room widen_right needs (kept by the resizes below)
    if (b.col_stride == 1 && isa_available(Isa::Avx2)) {
        out.data.resize(out.panels * out.groups * 64);
        out.col_sum.resize(out.panels * kPanel);
        const auto src = reinterpret_cast<const std::uint8_t*>(b.data);
        const auto flip = static_cast<std::uint8_t>(as_right(TB{0}));
        const std::size_t done =
            isa_available(Isa::Avx512Vnni) ? detail::pack_right_rows4(src, b.row_stride, K, N, flip, out) : 0;
        detail::pack_right_rows(src, b.row_stride, K, N, flip, out, done);
        if (wide) detail::widen_right(out);
        return;
    }
#else
    (void)how;
#endif
    out.data.resize_zero(out.panels * out.groups * 64);
    out.col_sum.resize_zero(out.panels * kPanel);
    // Four rows of B (one k group) at a time, as b' bytes; column j's four
    // bytes become one 32-bit word of its panel's group.
    const std::size_t width = out.panels * kPanel;
    std::vector<std::uint8_t> rows(4 * width, 0);
    std::uint32_t* sum = out.col_sum.data();
    for (std::size_t k0 = 0; k0 < K; k0 += 4) {
        for (std::size_t t = 0; t < 4; ++t) {
            std::uint8_t* row = rows.data() + t * width;
            if (k0 + t >= K) {
                std::fill(row, row + width, std::uint8_t{0});
                continue;
            }
            const TB* src = b.data + (k0 + t) * b.row_stride;
            for (std::size_t n = 0; n < N; ++n) row[n] = static_cast<std::uint8_t>(as_right(src[n * b.col_stride]));
            for (std::size_t n = 0; n < N; ++n) sum[n] += static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(row[n])});
        }
        const std::uint8_t *r0 = rows.data(), *r1 = r0 + width, *r2 = r1 + width, *r3 = r2 + width;
        for (std::size_t p = 0; p < out.panels; ++p) {
            std::uint32_t words[kPanel];
            for (std::size_t j = 0; j < kPanel; ++j) {
                const std::size_t n = p * kPanel + j;
                words[j] = std::uint32_t{r0[n]} | std::uint32_t{r1[n]} << 8 | std::uint32_t{r2[n]} << 16 |
                           std::uint32_t{r3[n]} << 24;
            }
            std::memcpy(out.data.data() + p * out.groups * 64 + (k0 / 4) * 64, words, 64);
        }
    }
#if QDML_X86
    if (wide) detail::widen_right(out);
#endif
}

namespace detail {

/// Row m of the left operand as panel bytes a' into `row` (K bytes, the
/// padding past K stays 0); returns their sum mod 2^32.
template <class TA>
std::uint32_t left_row(Matrix<TA> a, std::size_t m, std::size_t K, std::uint8_t* row) noexcept {
    const TA* src = a.data + m * a.row_stride;
    std::uint32_t sum = 0;
    if (a.col_stride == 1) {
        for (std::size_t k = 0; k < K; ++k) {
            row[k] = as_left(src[k]);
            sum += row[k];
        }
    } else {
        for (std::size_t k = 0; k < K; ++k) {
            row[k] = as_left(src[k * a.col_stride]);
            sum += row[k];
        }
    }
    return sum;
}

inline std::uint32_t load32(const std::uint8_t* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

}  // namespace detail

template <class TA>
void pack_left(Matrix<TA> a, std::size_t M, std::size_t K, LeftLayout layout, std::size_t mr, std::size_t groups,
               PackedLeft& out, [[maybe_unused]] LeftPacking how = {}) {
    out.layout = layout;
    out.M = M;
    out.K = K;
    out.groups = groups;
    out.mr = mr;
    out.borrowed = nullptr;
    out.borrowed_rows = out.borrowed_stride = 0;
    const std::size_t rows = layout == LeftLayout::Rows ? (M + 15) / 16 * 16 : M;
#if QDML_X86
    // Rows (AMX, whose CPUs have AVX-512) from contiguous rows: a vector copy
    // with the sign flip, no zero fill but the padding; or, in place, the
    // whole tiles read where they are (their sums, when wanted, from there).
    if (layout == LeftLayout::Rows && a.col_stride == 1 && groups % 16 == 0 && isa_available(Isa::Avx512Vnni)) {
        const std::size_t bytes = groups * 4;
        const auto src = [&](std::size_t m) { return reinterpret_cast<const std::uint8_t*>(a.data + m * a.row_stride); };
        std::size_t m0 = 0;
        out.row_sum.resize(rows);
        if (how.in_place && !std::is_signed_v<TA> && K == bytes && M >= 16 && a.row_stride != 0) {
            m0 = M / 16 * 16;
            out.borrowed = src(0);
            out.borrowed_rows = m0;
            out.borrowed_stride = a.row_stride;
            if (how.sums)
                for (std::size_t m = 0; m < m0; ++m)
                    out.row_sum[m] = detail::left_row_avx512<true, false>(src(m), K, bytes, 0, nullptr);
        }
        out.data.resize((rows - m0) * bytes);
        const auto dst = [&](std::size_t m) { return out.data.data() + (m - m0) * bytes; };
        if (how.sums)
            for (std::size_t m = m0; m < M; ++m)
                out.row_sum[m] = detail::left_row_avx512<true>(src(m), K, bytes, as_left(TA{0}), dst(m));
        else
            for (std::size_t m = m0; m < M; ++m) detail::left_row_avx512<false>(src(m), K, bytes, as_left(TA{0}), dst(m));
        if (rows > M) std::memset(dst(M), 0, (rows - M) * bytes);
        for (std::size_t m = M; m < rows; ++m) out.row_sum[m] = 0;
        return;
    }
#endif
    if (layout == LeftLayout::Rows) {  // plain rows: a' straight into place
        out.data.resize_zero(rows * groups * 4);
        out.row_sum.resize_zero(rows);
        for (std::size_t m = 0; m < M; ++m)
            out.row_sum[m] = detail::left_row(a, m, K, out.data.data() + m * groups * 4);
        return;
    }
    // Groups4 and Pairs16: every byte of the M rows' blocks is written below
    // (from row `base` on: the rows before it are read in place).
    std::size_t done = 0, base = 0;
    out.row_sum.resize(rows);
#if QDML_X86
    const auto src = [&](std::size_t m) { return reinterpret_cast<const std::uint8_t*>(a.data + m * a.row_stride); };
    // In place (Groups4 of the AVX-512 VNNI kernel's 8-row blocks or of the
    // AVX-VNNI kernel's 6-row ones, an unsigned A with contiguous rows, K a
    // multiple of 4): the kernel reads the whole blocks' rows where they
    // are; only the last M % mr rows are packed. Row sums, when wanted,
    // from the rows. Not rows broadcast by a row stride of 0 (here and for
    // AMX above): the kernels take a row step of 0 for packed data
    // (avx512vnni::Rows8).
    const bool vnni512 = mr == 8 && isa_available(Isa::Avx512Vnni), vnni256 = mr == 6 && isa_available(Isa::AvxVnni);
    if (layout == LeftLayout::Groups4 && (vnni512 || vnni256) && how.in_place && !std::is_signed_v<TA> &&
        a.col_stride == 1 && a.row_stride != 0 && K == groups * 4 && M >= mr) {
        done = base = M / mr * mr;
        out.borrowed = src(0);
        out.borrowed_rows = base;
        out.borrowed_stride = a.row_stride;
        if (how.sums)
            for (std::size_t m = 0; m < base; ++m)
                out.row_sum[m] = vnni512 ? detail::left_row_avx512<true, false>(src(m), K, (K + 63) / 64 * 64, 0, nullptr)
                                         : detail::byte_sum_avx2(src(m), K);
    }
#endif
    out.data.resize((rows - base) * groups * out.unit());
#if QDML_X86
    // Whole blocks of contiguous rows by vector code: 8 rows (the AVX-512
    // VNNI kernel's) transposed 16 groups at a time, 6 (AVX-VNNI) and 4
    // (AVX2) 8 groups at a time.
    const auto dst = [&](std::size_t m) { return out.data.data() + (m - base) * groups * out.unit(); };
    const auto sums = [&](std::size_t m) { return how.sums ? &out.row_sum[m] : nullptr; };
    const auto flip = as_left(TA{0});
    if (layout == LeftLayout::Groups4 && mr == 8 && a.col_stride == 1 && isa_available(Isa::Avx512Vnni))
        for (; done + 8 <= M; done += 8) detail::groups4_block8(src(done), a.row_stride, K, groups, flip, dst(done), sums(done));
    if (layout == LeftLayout::Groups4 && mr == 6 && a.col_stride == 1 && isa_available(Isa::Avx2))
        for (; done + 6 <= M; done += 6) detail::groups4_block6(src(done), a.row_stride, K, groups, flip, dst(done), sums(done));
    if (layout == LeftLayout::Pairs16 && mr == 4 && a.col_stride == 1 && isa_available(Isa::Avx2))
        for (; done + 4 <= M; done += 4) detail::pairs16_block4(src(done), a.row_stride, K, groups, flip, dst(done), sums(done));
#endif
    // Otherwise through one contiguous row, 4 bytes (one group) at a time.
    std::vector<std::uint8_t> row(groups * 4, 0);
    for (std::size_t m = done; m < M; ++m) {
        const std::size_t m0 = m / mr * mr, r = m - m0, block_rows = std::min(mr, M - m0);
        std::uint8_t* block = out.data.data() + (m0 - base) * groups * out.unit();
        out.row_sum[m] = detail::left_row(a, m, K, row.data());
        if (layout == LeftLayout::Groups4) {
            for (std::size_t g = 0; g < groups; ++g) std::memcpy(block + (g * block_rows + r) * 4, &row[4 * g], 4);
        } else {  // Pairs16: (a0, a2), (a1, a3) as int16 (little-endian)
            for (std::size_t g = 0; g < groups; ++g) {
                const std::uint32_t x = detail::load32(&row[4 * g]);
                const std::uint64_t pairs =
                    (x & 0x00ff00ffu) | (std::uint64_t{(x >> 8) & 0x00ff00ffu} << 32);
                std::memcpy(block + (g * block_rows + r) * 8, &pairs, 8);
            }
        }
    }
}

}  // namespace qdml::simd::gemm