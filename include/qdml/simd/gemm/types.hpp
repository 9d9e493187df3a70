// qdml/simd/gemm/types.hpp - the GEMM engine's operands and panels: Matrix,
// PackedRight, PackedLeft and their layouts (pack.hpp packs them).
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
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "qdml/simd/isa.hpp"

namespace qdml::simd::gemm {

/// Calls f(std::integral_constant<int, n>) for a run-time 1 <= n <= Max: how
/// a driver reaches the micro-kernel instantiated for a block's row count.
template <int Max, class F>
void with_count(std::size_t n, F&& f) {
    if constexpr (Max > 1)
        if (n < static_cast<std::size_t>(Max)) return with_count<Max - 1>(n, static_cast<F&&>(f));
    f(std::integral_constant<int, Max>{});
}

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

}  // namespace qdml::simd::gemm
