// qdml/simd/conv/patches.hpp - packs the GEMM engine's right operand
// (gemm::PackedRight, the layout pack.hpp describes: panels of 16 columns x
// 4-deep k groups, b' = the signed form, column sums mod 2^32) from rows that
// a callback hands over, for convolution's implicit im2col: tap rows come
// straight from a padded copy of the input where they are contiguous, or
// from a gather into a buffer. The same bytes as gemm::pack_right of the
// matrix those rows form (the simd-conv test checks it through every path).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "qdml/simd/conv/interleave.hpp"
#include "qdml/simd/gemm/pack.hpp"
#include "qdml/simd/x86/avx2/patches.hpp"
#include "qdml/simd/x86/avx512vnni/patches.hpp"

namespace qdml::simd::conv {

/// gemm::pack_right for a K x N right operand whose rows come from a callback:
/// `row(k, buffer)` returns a pointer to row k's elements (type TB, as in
/// the tensor): either `buffer`, which it filled with the N elements
/// buffer[0..N), or any other memory holding the N elements and readable for
/// panels * 16 bytes (elements past N are ignored: they only reach columns
/// past N, which no store reads). The packer turns the rows into b' bytes,
/// sums the columns and interleaves each group of 4 rows into the panels.
/// This is the seam for operands that are not matrices in memory
/// (convolution's implicit im2col: one block of output pixels at a time,
/// rows straight from a padded copy of the input where they are contiguous).
/// Columns past N and rows past K pack as 0.
template <class TB, class RowFn>
void pack_rows(std::size_t K, std::size_t N, simd::Isa isa, gemm::PackedRight& out, RowFn&& row_fn) {
    static_assert(sizeof(TB) == 1, "8-bit right operands only");
    const std::size_t panel_count = (N + gemm::kPanel - 1) / gemm::kPanel, groups = gemm::k_groups(K, isa);
    // Every group below (K + 3) / 4 is written below; the ones past it (AMX
    // pads to 16) must be 0: they are when `out` last held this shape (no
    // pack writes them), else the whole array is zeroed once.
    if (!(out.isa == isa && out.K == K && out.panels == panel_count && out.data.size() == panel_count * groups * 64))
        out.data.resize_zero(panel_count * groups * 64);
    out.isa = isa;
    out.K = K;
    out.N = N;
    out.panels = panel_count;
    out.groups = groups;
    out.col_sum.resize_zero(out.panels * gemm::kPanel);
    // Four rows of B (one k group) at a time, as in the tensor (in the
    // buffers, columns past N and rows past K hold the value whose b' is 0);
    // then per group the interleave into panel words, b' and the column sums.
    const std::size_t width = out.panels * gemm::kPanel;
    constexpr std::uint8_t flip = std::is_signed_v<TB> ? 0 : 0x80;  // as_right
    std::vector<std::uint8_t> rows(4 * width, flip);
    std::uint32_t* sum = out.col_sum.data();
    std::int8_t* panels = out.data.data();
    for (std::size_t k0 = 0; k0 < K; k0 += 4) {
        const std::uint8_t* r[4];
        for (std::size_t t = 0; t < 4; ++t) {
            std::uint8_t* row = rows.data() + t * width;
            if (k0 + t >= K) {
                std::fill(row, row + width, flip);
                r[t] = row;
            } else {
                r[t] = reinterpret_cast<const std::uint8_t*>(row_fn(k0 + t, reinterpret_cast<TB*>(row)));
            }
        }
        const std::uint8_t *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
        switch (isa) {
#if QDML_X86
            case simd::Isa::Amx:
#if defined(QDML_GEMM_TEST_AMX_EMULATION)  // (testing aid, x86/amx/emulation.hpp: no AVX-512 VNNI here)
                if (!simd::isa_available(simd::Isa::Avx512Vnni)) {
                    detail::interleave_group_avx2(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
                    break;
                }
                [[fallthrough]];
#endif
            case simd::Isa::Avx512Vnni:
                detail::interleave_group_avx512(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
                break;
            case simd::Isa::AvxVnni:
            case simd::Isa::Avx2:
                detail::interleave_group_avx2(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
                break;
#endif
            default: detail::interleave_group(r0, r1, r2, r3, width, flip, panels, out.groups, k0 / 4, sum);
        }
    }
}

}  // namespace qdml::simd::conv
