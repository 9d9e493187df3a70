// qdml/simd/gemm/pack.hpp - packing of the engine's operands from any strides.
//
// The engine multiplies an unsigned left operand by a signed right operand
// (the form of vpdpbusd and tdpbusd). Other sign mixes are shifted on the
// way into the panels, and the shift goes into the zero point, so that the
// spec's differences are unchanged (docs/semantics.md section 5):
//   A signed:   a' = A + 128 (u8),  azp' = azp + 128   (a' - azp' = A - azp)
//   B unsigned: b' = B - 128 (s8),  bzp' = bzp - 128   (b' - bzp' = B - bzp)
// Zero points never enter the panels: with ra[m] = sum_k a'[m][k] and
// cb[n] = sum_k b'[k][n] (both wrapping mod 2^32),
//   acc = sum_k a'b' - bzp'[n] * ra[m] - azp'[m] * (cb[n] - K * bzp'[n])   (mod 2^32).
//
// Layouts. K is cut into groups of 4 (zero-padded: a zero a' or b' adds 0).
// - B: panels of 16 columns; panel p, group g holds 64 bytes, column j's four
//   k values at 4j..4j+3 (an AVX-512 register, two AVX2 registers, or one row
//   of an AMX B tile). Columns past N are 0. For AMX the group count is a
//   multiple of 16 (a tile holds 16 groups). AVX2 may take the panels
//   widened (RightPacking::wide): each group's two 32-byte halves (columns
//   0-7, 8-15) as the int16 pairs (b0, b2) then (b1, b3) of their 8 columns,
//   128 bytes per group, the operands of vpmaddwd as they are.
// - A, by kernel: `Groups4` (blocks of `mr` rows, group g of a block holds
//   the rows' 4 bytes in row order: one dword broadcast per row and group);
//   `Pairs16` (AVX2: per group and row the int16 pairs (a0, a2) then
//   (a1, a3), the operands of vpmaddwd); `Rows` (AMX: rows padded to 16,
//   each row K padded to the group count * 4 bytes, a tile row per 64 bytes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "qdml/simd/gemm/isa.hpp"

namespace qdml::simd::gemm {

inline constexpr std::size_t kPanel = 16;  ///< columns per packed B panel

/// A 64-byte aligned array of trivially copyable T, zero-filled on resize.
template <class T>
class AlignedArray {
public:
    /// n elements, contents unspecified (the buffer is reused when large enough).
    void resize(std::size_t n) {
        if (n > capacity_) {
            data_.reset(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64})));
            capacity_ = n;
        }
        size_ = n;
    }
    void resize_zero(std::size_t n) {
        resize(n);
        if (n) std::memset(static_cast<void*>(data_.get()), 0, n * sizeof(T));
    }
    T* data() noexcept { return data_.get(); }
    const T* data() const noexcept { return data_.get(); }
    std::size_t size() const noexcept { return size_; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    const T& operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    struct Free {
        void operator()(T* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
    };
    std::unique_ptr<T[], Free> data_;
    std::size_t size_ = 0, capacity_ = 0;
};

/// A 2-D operand: element (r, c) at data[r * row_stride + c * col_stride]
/// (strides in elements; 0 repeats).
template <class T>
struct Matrix {
    const T* data = nullptr;
    std::uint64_t row_stride = 0, col_stride = 0;
    const T& operator()(std::uint64_t r, std::uint64_t c) const noexcept { return data[r * row_stride + c * col_stride]; }
};

/// The value an 8-bit element takes in a panel: the left operand unsigned
/// (signed + 128), the right operand signed (unsigned - 128).
template <class T>
constexpr std::uint8_t as_left(T v) noexcept {
    return static_cast<std::uint8_t>(std::is_signed_v<T> ? static_cast<std::uint8_t>(v) ^ 0x80u : static_cast<std::uint8_t>(v));
}
template <class T>
constexpr std::int8_t as_right(T v) noexcept {
    return static_cast<std::int8_t>(std::is_signed_v<T> ? static_cast<std::uint8_t>(v) : static_cast<std::uint8_t>(v) ^ 0x80u);
}
/// The zero point shift that goes with as_left / as_right.
template <class T>
constexpr std::int32_t left_shift() noexcept { return std::is_signed_v<T> ? 128 : 0; }
template <class T>
constexpr std::int32_t right_shift() noexcept { return std::is_signed_v<T> ? 0 : -128; }

inline std::size_t k_groups(std::size_t K, Isa isa) noexcept {
    const std::size_t g = (K + 3) / 4;
    return isa == Isa::Amx ? (g + 15) / 16 * 16 : g;
}

/// The right operand (K x N) in 16-column panels, with its column sums.
struct PackedRight {
    Isa isa = Isa::Generic;
    std::size_t K = 0, N = 0, panels = 0, groups = 0;
    bool wide = false;                     ///< groups widened to int16 pairs (AVX2; RightPacking::wide)
    AlignedArray<std::int8_t> data;        ///< panel p at p * groups * group_bytes()
    AlignedArray<std::uint32_t> col_sum;   ///< cb[n] = sum_k b' (mod 2^32), panels * 16 entries

    std::size_t group_bytes() const noexcept { return wide ? 128 : 64; }
    const std::int8_t* panel(std::size_t p) const noexcept { return data.data() + p * groups * group_bytes(); }
};

/// How pack_right packs. `wide`: for the AVX2 kernel (ignored by the
/// others), the groups widened to int16 pairs once here rather than in the
/// kernel once per row block; twice the bytes, so for left operands of more
/// than one row (a one-row product is bound by reading the panels).
struct RightPacking {
    bool wide = false;
};

namespace detail {

#if QDML_GEMM_X86
/// pack_right for rows of contiguous bytes (col_stride 1), panel by panel:
/// per group the 16 bytes of four rows are interleaved into column dwords
/// (unpack 8, then 16 bits); the column sums come from the packed dwords
/// (vpmaddubsw of 1 x b' is exact: at most 2 * 128 per pair; vpmaddwd then
/// adds the pairs). `flip` is 0x80 for an unsigned B (as_right), else 0.
QDML_TARGET_AVX2 inline void pack_right_rows(const std::uint8_t* src, std::uint64_t row_stride, std::size_t K,
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

/// pack_right_rows for the first N / 64 * 4 panels, four at a time: one
/// 64-byte load per row of B, the same unpacks per 128-bit lane (a lane is
/// one panel's 16 columns), then a 4 x 4 transpose of the lanes
/// (vshufi64x2) into the four panels' group rows; vpdpbusd of 1 x b' sums
/// the columns (exact: four products of at most 128). Returns the panels
/// done.
QDML_TARGET_AVX512 inline std::size_t pack_right_rows4(const std::uint8_t* src, std::uint64_t row_stride,
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

/// The packed panels widened in place, last group first (group i's 64 bytes
/// at 64 i are read before its 128 bytes go to 128 i): per 32-byte half the
/// even bytes (b0, b2 of each column) and the odd ones (b1, b3) sign-extended
/// to int16 by shifts. `out.data` has room for the wide panels.
QDML_TARGET_AVX2 inline void widen_right(PackedRight& out) noexcept {
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
#endif

}  // namespace detail

template <class TB>
void pack_right(Matrix<TB> b, std::size_t K, std::size_t N, Isa isa, PackedRight& out, RightPacking how = {}) {
    out.isa = isa;
    out.K = K;
    out.N = N;
    out.panels = (N + kPanel - 1) / kPanel;
    out.groups = k_groups(K, isa);
    out.wide = false;
#if QDML_GEMM_X86
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
#if QDML_GEMM_X86
    if (wide) detail::widen_right(out);
#endif
}

enum class LeftLayout { Groups4, Pairs16, Rows };

/// The left operand (M x K) in the layout of one kernel, with its row sums.
struct PackedLeft {
    LeftLayout layout = LeftLayout::Groups4;
    std::size_t M = 0, K = 0, groups = 0, mr = 1;
    AlignedArray<std::uint8_t> data;
    AlignedArray<std::uint32_t> row_sum;  ///< ra[m] = sum_k a' (mod 2^32)
    /// Read in place (LeftPacking::in_place): rows below `borrowed_rows`
    /// (whole tiles of 16 of the Rows layout, or whole 8- or 6-row blocks
    /// of Groups4) at borrowed + m * borrowed_stride, `data` holds the rest
    /// (packed) from row borrowed_rows on.
    const std::uint8_t* borrowed = nullptr;
    std::size_t borrowed_rows = 0, borrowed_stride = 0;

    /// Bytes per row and group in the layout.
    std::size_t unit() const noexcept { return layout == LeftLayout::Pairs16 ? 8 : 4; }
    /// The block of rows starting at m0 (a multiple of mr; Rows: of 16).
    const std::uint8_t* rows(std::size_t m0) const noexcept {
        return m0 < borrowed_rows ? borrowed + m0 * borrowed_stride : data.data() + (m0 - borrowed_rows) * groups * unit();
    }
    /// Bytes from one row to the next in the block at m0 (Rows layout).
    std::size_t row_bytes(std::size_t m0) const noexcept { return m0 < borrowed_rows ? borrowed_stride : groups * 4; }
};

/// How pack_left packs. `sums`: compute row_sum (without, row_sum is
/// unspecified: Epilogue::needs_row_sums says when the epilogue reads it).
/// `in_place`: the Rows layout (AMX) may read the whole 16-row tiles of an
/// unsigned A with contiguous rows and K a multiple of 64 where they are
/// (a' = A, no padding), packing only the last partial tile, and Groups4
/// with 8-row blocks (AVX-512 VNNI) or 6-row ones (AVX-VNNI) its whole
/// blocks when K is a multiple of 4; A must then stay unchanged and alive until every multiply() with
/// the result is done.
struct LeftPacking {
    bool sums = true;
    bool in_place = false;
};

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

#if QDML_GEMM_X86
/// A contiguous row of K bytes as a' (xor `flip`) into `dst`, zero-padded to
/// `padded` bytes (a multiple of 64); returns the sum of the a' bytes mod 2^32
/// (Sum), else 0. Without Store, only the sum (dst unused).
template <bool Sum, bool Store = true>
QDML_TARGET_AVX512 std::uint32_t left_row_avx512(const std::uint8_t* src, std::size_t K, std::size_t padded,
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

/// The four 64-bit lanes of `s` (vpsadbw sums) added, mod 2^32.
QDML_TARGET_AVX2 inline std::uint32_t lane_sum(__m256i s) noexcept {
    const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return static_cast<std::uint32_t>(_mm_cvtsi128_si64(_mm_add_epi64(s2, _mm_unpackhi_epi64(s2, s2))));
}

/// The sum of K unsigned bytes mod 2^32 (an in-place row's sum for the
/// AVX-VNNI kernel, whose CPUs may lack AVX-512).
QDML_TARGET_AVX2 inline std::uint32_t byte_sum_avx2(const std::uint8_t* src, std::size_t K) noexcept {
    __m256i s = _mm256_setzero_si256();
    std::size_t k = 0;
    for (; k + 32 <= K; k += 32)
        s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)),
                                                _mm256_setzero_si256()));
    std::uint32_t sum = lane_sum(s);
    for (; k < K; ++k) sum += src[k];
    return sum;
}

/// One Groups4 block of 6 contiguous rows (the AVX-VNNI kernel's; row r at
/// src + r * stride, K bytes): a' (each byte XOR `flip`) into dst, group g's
/// six dwords at dst + 24 g (zeros past K), the rows' sums of a' into `sums`
/// when not null; 8 groups a step (a short last step through a zeroed copy).
QDML_TARGET_AVX2 inline void groups4_block6(const std::uint8_t* src, std::uint64_t stride, std::size_t K,
                                            std::size_t groups, std::uint8_t flip, std::uint8_t* dst,
                                            std::uint32_t* sums) noexcept {
    const __m256i x = _mm256_set1_epi8(static_cast<char>(flip)), zero = _mm256_setzero_si256();
    __m256i sum[6];
    for (int r = 0; r < 6; ++r) sum[r] = zero;
    // Groups g and g + 1 (24 bytes each) from three 16-byte pieces; only g's when g + 1 is past the end.
    const auto put = [&](std::size_t g, __m128i p0, __m128i p1, __m128i p2) QDML_TARGET_AVX2 {
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
            if (n == 32) {
                v[r] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)), x);
            } else {
                alignas(32) std::uint8_t tail[32] = {};
                for (std::size_t j = 0; j < n; ++j) tail[j] = static_cast<std::uint8_t>(row[j] ^ flip);
                v[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tail));
            }
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
        const auto two = [&](const __m256i (&pq)[3], std::size_t g) QDML_TARGET_AVX2 {  // g, g + 1; g + 4, g + 5
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

/// One Groups4 block of 8 contiguous rows (row r at src + r * stride, K
/// bytes) as a' (xor `flip`) into `dst` (groups * 32 bytes): per 64 bytes of
/// K (16 groups) an 8 x 16 dword transpose (unpack 32, then 64 bits, then
/// 128-bit lanes of two registers), so that group g holds the 8 rows' dwords
/// at dst + 32 g. Bytes past K are 0. With `sums` (else nullptr), the rows'
/// sums of a' (mod 2^32) into sums[0..7].
QDML_TARGET_AVX512 inline void groups4_block8(const std::uint8_t* src, std::uint64_t stride, std::size_t K,
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

/// One Pairs16 block of 4 contiguous rows (row r at src + r * stride, K
/// bytes) as a' (xor `flip`) into `dst` (groups * 32 bytes), 8 groups (32
/// bytes of K) at a time: per row the dwords' even bytes (a0, a2) and odd
/// bytes (a1, a3) as int16 pairs (and, shift), interleaved per group
/// (unpack 32), then the four rows' qwords of each group together (unpack
/// 64, then 128-bit lanes), group g at dst + 32 g. The last partial 32 bytes
/// of K go through a zeroed copy. With `sums` (else nullptr), the rows' sums
/// of a' (mod 2^32) into sums[0..3].
QDML_TARGET_AVX2 inline void pairs16_block4(const std::uint8_t* src, std::uint64_t stride, std::size_t K,
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
    const auto step = [&](__m256i v0, __m256i v1, __m256i v2, __m256i v3, std::size_t g0) QDML_TARGET_AVX2 {
        if (sums) {
            sum0 = _mm256_add_epi64(sum0, _mm256_sad_epu8(v0, zero));
            sum1 = _mm256_add_epi64(sum1, _mm256_sad_epu8(v1, zero));
            sum2 = _mm256_add_epi64(sum2, _mm256_sad_epu8(v2, zero));
            sum3 = _mm256_add_epi64(sum3, _mm256_sad_epu8(v3, zero));
        }
        // Per row: (a0, a2) even and (a1, a3) odd int16 pairs, per group (unpack 32).
        const auto pairs = [&](__m256i v, __m256i& l, __m256i& h) QDML_TARGET_AVX2 {
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
    const auto load = [&](const std::uint8_t* row, std::size_t k) QDML_TARGET_AVX2 {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + k)), x);
    };
    std::size_t g0 = 0;
    for (; g0 < groups && 4 * g0 + 32 <= K; g0 += 8) {
        const std::size_t k = 4 * g0;
        step(load(r0, k), load(r1, k), load(r2, k), load(r3, k), g0);
    }
    // The last partial 32 bytes of K (and the zero groups up to `groups`) through a zeroed copy.
    for (; g0 < groups; g0 += 8) {
        const std::size_t k = 4 * g0;
        alignas(32) std::uint8_t tail[4][32] = {};
        const std::uint8_t* rows[4] = {r0, r1, r2, r3};
        for (int r = 0; r < 4; ++r)
            for (std::size_t j = 0; k + j < K && j < 32; ++j) tail[r][j] = static_cast<std::uint8_t>(rows[r][k + j] ^ flip);
        const auto t = [&](int r) QDML_TARGET_AVX2 { return _mm256_load_si256(reinterpret_cast<const __m256i*>(tail[r])); };
        step(t(0), t(1), t(2), t(3), g0);
    }
    if (sums) {
        const __m256i s[4] = {sum0, sum1, sum2, sum3};
        for (int r = 0; r < 4; ++r) sums[r] = lane_sum(s[r]);
    }
}
#endif

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
#if QDML_GEMM_X86
    // Rows (AMX, whose CPUs have AVX-512) from contiguous rows: a vector copy
    // with the sign flip, no zero fill but the padding; or, in place, the
    // whole tiles read where they are (their sums, when wanted, from there).
    if (layout == LeftLayout::Rows && a.col_stride == 1 && groups % 16 == 0 && isa_available(Isa::Avx512Vnni)) {
        const std::size_t bytes = groups * 4;
        const auto src = [&](std::size_t m) { return reinterpret_cast<const std::uint8_t*>(a.data + m * a.row_stride); };
        std::size_t m0 = 0;
        out.row_sum.resize(rows);
        if (how.in_place && !std::is_signed_v<TA> && K == bytes && M >= 16) {
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
#if QDML_GEMM_X86
    const auto src = [&](std::size_t m) { return reinterpret_cast<const std::uint8_t*>(a.data + m * a.row_stride); };
    // In place (Groups4 of the AVX-512 VNNI kernel's 8-row blocks or of the
    // AVX-VNNI kernel's 6-row ones, an unsigned A with contiguous rows, K a
    // multiple of 4): the kernel reads the whole blocks' rows where they
    // are; only the last M % mr rows are packed. Row sums, when wanted,
    // from the rows.
    const bool vnni512 = mr == 8 && isa_available(Isa::Avx512Vnni), vnni256 = mr == 6 && isa_available(Isa::AvxVnni);
    if (layout == LeftLayout::Groups4 && (vnni512 || vnni256) && how.in_place && !std::is_signed_v<TA> &&
        a.col_stride == 1 && K == groups * 4 && M >= mr) {
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
#if QDML_GEMM_X86
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
