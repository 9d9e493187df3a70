// qdml/simd/gemm/pack.hpp - packing of the engine's operands from any strides.
//
// The engine multiplies an unsigned left operand by a signed right operand
// (the form of vpdpbusd and tdpbusd). Other sign mixes are shifted on the
// way into the panels, and the shift goes into the zero point, so that the
// spec's differences are unchanged (SPEC.md section 5):
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
//   multiple of 16 (a tile holds 16 groups).
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

#include "qdml/simd/gemm/isa.hpp"

namespace qdml::simd::gemm {

inline constexpr std::size_t kPanel = 16;  ///< columns per packed B panel

/// A 64-byte aligned array of trivially copyable T, zero-filled on resize.
template <class T>
class AlignedArray {
public:
    void resize_zero(std::size_t n) {
        if (n > capacity_) {
            data_.reset(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64})));
            capacity_ = n;
        }
        size_ = n;
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
    AlignedArray<std::int8_t> data;        ///< panel p at p * groups * 64
    AlignedArray<std::uint32_t> col_sum;   ///< cb[n] = sum_k b' (mod 2^32), panels * 16 entries

    const std::int8_t* panel(std::size_t p) const noexcept { return data.data() + p * groups * 64; }
};

template <class TB>
void pack_right(Matrix<TB> b, std::size_t K, std::size_t N, Isa isa, PackedRight& out) {
    out.isa = isa;
    out.K = K;
    out.N = N;
    out.panels = (N + kPanel - 1) / kPanel;
    out.groups = k_groups(K, isa);
    out.data.resize_zero(out.panels * out.groups * 64);
    out.col_sum.resize_zero(out.panels * kPanel);
    for (std::size_t p = 0; p < out.panels; ++p) {
        const std::size_t n0 = p * kPanel, nc = std::min(kPanel, N - n0);
        std::int8_t* dst = out.data.data() + p * out.groups * 64;
        std::uint32_t* sum = out.col_sum.data() + n0;
        for (std::size_t k = 0; k < K; ++k) {
            std::int8_t* d = dst + (k / 4) * 64 + (k % 4);
            for (std::size_t j = 0; j < nc; ++j) {
                const std::int8_t v = as_right(b(k, n0 + j));
                d[4 * j] = v;
                sum[j] += static_cast<std::uint32_t>(std::int32_t{v});
            }
        }
    }
}

enum class LeftLayout { Groups4, Pairs16, Rows };

/// The left operand (M x K) in the layout of one kernel, with its row sums.
struct PackedLeft {
    LeftLayout layout = LeftLayout::Groups4;
    std::size_t M = 0, K = 0, groups = 0, mr = 1;
    AlignedArray<std::uint8_t> data;
    AlignedArray<std::uint32_t> row_sum;  ///< ra[m] = sum_k a' (mod 2^32)

    /// Bytes per row and group in the layout.
    std::size_t unit() const noexcept { return layout == LeftLayout::Pairs16 ? 8 : 4; }
    /// The block of rows starting at m0 (a multiple of mr; Rows: of 16).
    const std::uint8_t* rows(std::size_t m0) const noexcept { return data.data() + m0 * groups * unit(); }
};

template <class TA>
void pack_left(Matrix<TA> a, std::size_t M, std::size_t K, LeftLayout layout, std::size_t mr, std::size_t groups,
               PackedLeft& out) {
    out.layout = layout;
    out.M = M;
    out.K = K;
    out.groups = groups;
    out.mr = mr;
    const std::size_t rows = layout == LeftLayout::Rows ? (M + 15) / 16 * 16 : M;
    out.data.resize_zero(rows * groups * out.unit());
    out.row_sum.resize_zero(rows);
    for (std::size_t m = 0; m < M; ++m) {
        const std::size_t m0 = m / mr * mr, r = m - m0, block_rows = std::min(mr, M - m0);
        std::uint8_t* block = out.data.data() + m0 * groups * out.unit();
        std::uint32_t sum = 0;
        for (std::size_t k = 0; k < K; ++k) {
            const std::uint8_t v = as_left(a(m, k));
            sum += v;
            const std::size_t g = k / 4, t = k % 4;
            switch (layout) {
                case LeftLayout::Groups4: block[(g * block_rows + r) * 4 + t] = v; break;
                case LeftLayout::Pairs16: block[(g * block_rows + r) * 8 + (t % 2) * 4 + (t / 2) * 2] = v; break;
                case LeftLayout::Rows: out.data[m * groups * 4 + k] = v; break;
            }
        }
        out.row_sum[m] = sum;
    }
}

}  // namespace qdml::simd::gemm
