// qdml/simd/loops.hpp - the loop plan shared by the element-wise kernels:
// right-aligned operands, dimensions merged where every operand allows, an
// odometer over the outer nest that advances byte offsets by strides (64-bit,
// no per-element index arithmetic), and the innermost row in one of three
// forms: all contiguous, some operands stride 0 (a value repeated along the
// row), or general strided (gathered into / scattered from a small
// contiguous chunk); an operand interleaved across rows (NHWC walked as
// NCHW) is transposed a tile of rows at a time instead. Row kernels
// therefore only ever see contiguous or repeated operands.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <utility>

#include "qdml/core/executor.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/tensor.hpp"
#include "qdml/simd/tuning.hpp"
#include "qdml/simd/kernel/transpose.hpp"

namespace qdml::simd {

/// The loop nest of K operands (operand 0 is the output) after merging.
template <std::size_t K>
struct LoopPlan {
    std::uint32_t outer_rank = 0;                                  ///< dimensions outside the row
    std::array<std::uint64_t, kMaxDimensions> outer_sizes{};       ///< outermost first
    std::array<std::array<std::int64_t, kMaxDimensions>, K> outer_strides{};  ///< in bytes
    std::uint64_t row = 1;                                         ///< elements per innermost row
    std::array<std::int64_t, K> row_stride{};                      ///< in bytes

    /// Elements the plan visits: the output's element count.
    std::uint64_t elements() const noexcept {
        std::uint64_t n = row;
        for (std::uint32_t d = 0; d < outer_rank; ++d) n *= outer_sizes[d];
        return n;
    }
};

/// Builds the plan of K operands of equal `sizes` (rank N) with the given
/// element strides and element sizes. Dimensions of size 1 are dropped;
/// neighbours i, i+1 merge when every operand has
/// stride[i] == stride[i+1] * size[i+1] (two stride-0 dimensions included).
template <std::size_t K, std::size_t N>
LoopPlan<K> make_plan(const std::array<std::uint32_t, N>& sizes,
                      const std::array<const std::array<std::uint64_t, N>*, K>& strides,
                      const std::array<std::size_t, K>& elem_bytes) noexcept {
    std::array<std::uint64_t, kMaxDimensions> sz{};
    std::array<std::array<std::int64_t, kMaxDimensions>, K> st{};
    std::uint32_t n = 0;  // merged dimensions so far, outermost first
    for (std::size_t d = 0; d < N; ++d) {
        if (sizes[d] == 1) continue;
        bool merge = n > 0;
        for (std::size_t k = 0; k < K && merge; ++k)
            merge = st[k][n - 1] == static_cast<std::int64_t>((*strides[k])[d] * sizes[d]);
        if (merge) {
            sz[n - 1] *= sizes[d];
            for (std::size_t k = 0; k < K; ++k) st[k][n - 1] = static_cast<std::int64_t>((*strides[k])[d]);
        } else {
            sz[n] = sizes[d];
            for (std::size_t k = 0; k < K; ++k) st[k][n] = static_cast<std::int64_t>((*strides[k])[d]);
            ++n;
        }
    }
    LoopPlan<K> p;
    if (n == 0) {  // a single element
        p.row = 1;
        for (std::size_t k = 0; k < K; ++k) p.row_stride[k] = static_cast<std::int64_t>(elem_bytes[k]);
        return p;
    }
    p.outer_rank = n - 1;
    p.row = sz[n - 1];
    for (std::size_t k = 0; k < K; ++k) {
        p.row_stride[k] = st[k][n - 1] * static_cast<std::int64_t>(elem_bytes[k]);
        for (std::uint32_t d = 0; d + 1 < n; ++d) {
            p.outer_strides[k][d] = st[k][d] * static_cast<std::int64_t>(elem_bytes[k]);
        }
    }
    for (std::uint32_t d = 0; d + 1 < n; ++d) p.outer_sizes[d] = sz[d];
    return p;
}

/// Calls row(ptrs, row_strides, n) once per innermost row, with each
/// operand's address of the row's first element (odometer over the outer
/// dimensions, offsets in 64 bits).
template <std::size_t K, class Row>
void for_each_row(const LoopPlan<K>& p, const std::array<char*, K>& base, Row&& row) {
    std::array<std::uint64_t, kMaxDimensions> idx{};
    std::array<std::int64_t, K> off{};
    for (;;) {
        std::array<char*, K> ptrs;
        for (std::size_t k = 0; k < K; ++k) ptrs[k] = base[k] + off[k];
        row(ptrs, p.row_stride, p.row);
        std::uint32_t d = p.outer_rank;
        for (;;) {
            if (d == 0) return;
            --d;
            for (std::size_t k = 0; k < K; ++k) off[k] += p.outer_strides[k][d];
            if (++idx[d] < p.outer_sizes[d]) break;
            for (std::size_t k = 0; k < K; ++k)
                off[k] -= p.outer_strides[k][d] * static_cast<std::int64_t>(p.outer_sizes[d]);
            idx[d] = 0;
        }
    }
}

/// The rows of a plan by number (0 .. rows() - 1, the outermost dimension
/// slowest, as for_each_row walks them): seek(r), then next() row by row
/// (the tasks of a threaded call walk a range of them).
template <std::size_t K>
class RowCursor {
public:
    RowCursor(const LoopPlan<K>& p, const std::array<char*, K>& base) noexcept : p_(p), base_(base) {}
    static std::uint64_t rows(const LoopPlan<K>& p) noexcept {
        std::uint64_t n = 1;
        for (std::uint32_t d = 0; d < p.outer_rank; ++d) n *= p.outer_sizes[d];
        return n;
    }
    void seek(std::uint64_t r) noexcept {
        off_ = {};
        for (std::uint32_t d = p_.outer_rank; d-- > 0;) {
            idx_[d] = r % p_.outer_sizes[d];
            r /= p_.outer_sizes[d];
            for (std::size_t k = 0; k < K; ++k) off_[k] += static_cast<std::int64_t>(idx_[d]) * p_.outer_strides[k][d];
        }
    }
    void next() noexcept {
        for (std::uint32_t d = p_.outer_rank; d-- > 0;) {
            for (std::size_t k = 0; k < K; ++k) off_[k] += p_.outer_strides[k][d];
            if (++idx_[d] < p_.outer_sizes[d]) return;
            for (std::size_t k = 0; k < K; ++k)
                off_[k] -= p_.outer_strides[k][d] * static_cast<std::int64_t>(p_.outer_sizes[d]);
            idx_[d] = 0;
        }
    }
    /// Each operand's address of the row's element `column`.
    std::array<char*, K> at(std::uint64_t column) const noexcept {
        std::array<char*, K> ptrs;
        for (std::size_t k = 0; k < K; ++k)
            ptrs[k] = base_[k] + off_[k] + static_cast<std::int64_t>(column) * p_.row_stride[k];
        return ptrs;
    }

private:
    const LoopPlan<K>& p_;
    const std::array<char*, K>& base_;
    std::array<std::uint64_t, kMaxDimensions> idx_{};
    std::array<std::int64_t, K> off_{};
};

/// How a threaded element-wise call cuts its units (rows, or a tile's
/// kTileRows rows) into tasks of at least `grain` bytes of output: whole
/// units `per` at a time, or, where one unit reaches the grain, each unit
/// in column chunks of `columns` elements (a multiple of 64). A function of
/// the plan's shape only.
struct RowTasks {
    std::uint64_t per = 1, chunks = 1, columns = 0, units = 0;
    std::uint64_t tasks() const noexcept { return (units + per - 1) / per * chunks; }
};

inline RowTasks row_tasks(std::uint64_t units, std::uint64_t rows_per_unit, std::uint64_t n, std::size_t out_elem,
                          std::uint64_t grain = kTaskBytes) noexcept {
    RowTasks t;
    t.units = units;
    t.columns = n;
    const std::uint64_t unit_bytes = rows_per_unit * n * out_elem;
    if (unit_bytes >= grain) {
        const std::uint64_t want = (grain + rows_per_unit * out_elem - 1) / (rows_per_unit * out_elem);
        t.columns = (want + 63) / 64 * 64;
        t.chunks = (n + t.columns - 1) / t.columns;
    } else {
        t.per = (grain + unit_bytes - 1) / std::max<std::uint64_t>(unit_bytes, 1);
    }
    return t;
}

/// Whether a call writing `bytes` of output streams it.
constexpr bool streams(std::uint64_t bytes) noexcept { return bytes >= kStreamBytes; }

/// Walks a contiguous output row of n elements in W-lane vectors: `block(i,
/// stream)` computes and stores the 4 vectors at [i, i + 4W) (`stream` a
/// std::bool_constant: non-temporal stores at an address aligned to
/// min(64, 4W * sizeof(TOut)) bytes), `vec(i)` one vector at i with a normal
/// store, `one(i)` the single element i. A row of at least kStreamRowBytes
/// (streamed or not) sends the elements before its first block at
/// that alignment through `one` (stores straddling cache lines cost L2 bandwidth).
template <std::size_t W, class TOut, class Block, class Vec, class One>
QDML_ALWAYS_INLINE inline void row_blocks(TOut* out, std::size_t n, bool stream, const Block& block, const Vec& vec, const One& one) {
    constexpr std::size_t kBlock = 4 * W;
    std::size_t i = 0;
    if (n * sizeof(TOut) >= kStreamRowBytes) {
        constexpr std::size_t align = kBlock * sizeof(TOut) < 64 ? kBlock * sizeof(TOut) : 64;
        const std::size_t misalign = reinterpret_cast<std::uintptr_t>(out) % align;
        const std::size_t head = misalign == 0 ? 0 : (align - misalign) / sizeof(TOut);
        for (; i < head; ++i) one(i);
        if (stream)
            for (; i + kBlock <= n; i += kBlock) block(i, std::true_type{});
        else
            for (; i + kBlock <= n; i += kBlock) block(i, std::false_type{});
    } else {
        for (; i + kBlock <= n; i += kBlock) block(i, std::false_type{});
    }
    for (; i + W <= n; i += W) vec(i);
    for (; i < n; ++i) one(i);
}

/// One operand of a row kernel: `p` points at element 0; `step` is 1 for a
/// contiguous operand and 0 for a value repeated along the row (whose
/// element 0 is then followed by at least `kRepeat` copies, see RowForms).
template <class T>
struct RowIn {
    const T* p;
    std::size_t step;
    const T* at(std::size_t i) const noexcept { return p + i * step; }
};

/// Copies of a repeated value a row kernel may read at once (>= the widest
/// vector of 8-bit lanes; kChunk, the gathered form's chunk: tuning.hpp).
inline constexpr std::size_t kRepeat = 64;

namespace detail {
/// An operand's chunk of N elements (a gathered strided chunk, or kRepeat
/// copies of a repeated value).
template <class T, std::size_t N = kChunk>
struct alignas(64) Staging {
    static_assert(N >= kRepeat, "a repeated operand needs kRepeat copies");
    Staging() noexcept {}  // (not value-initialized in a std::tuple: no memset per row)
    T v[N];
    bool repeats = false;  // v holds kRepeat copies of v[0] (a stride-0 operand)
};
}  // namespace detail

namespace detail {
/// Operand k of type T, elements [start, start + count <= N) of the row, as a RowIn.
template <class T, std::size_t N, std::size_t K>
RowIn<T> prepare_operand(Staging<T, N>& buf, const std::array<char*, K>& ptrs, const std::array<std::int64_t, K>& st,
                         std::size_t k, std::uint64_t start, std::uint64_t count) noexcept {
    const char* src = ptrs[k] + static_cast<std::int64_t>(start) * st[k];
    if (st[k] == 0) {  // the same value along the row: kRepeat copies (made again only for other bits)
        T v;
        std::memcpy(&v, src, sizeof(T));
        if (!buf.repeats || std::memcmp(&buf.v[0], &v, sizeof(T)) != 0) {
            for (std::size_t i = 0; i < kRepeat; ++i) buf.v[i] = v;
            buf.repeats = true;
        }
        return {buf.v, 0};
    }
    if (st[k] == static_cast<std::int64_t>(sizeof(T))) return {reinterpret_cast<const T*>(src), 1};
    for (std::uint64_t i = 0; i < count; ++i)  // strided: gather the chunk
        std::memcpy(&buf.v[i], src + static_cast<std::int64_t>(i) * st[k], sizeof(T));
    buf.repeats = false;
    return {buf.v, 1};
}

/// The strided output chunk's count elements of `src` to dst, `stride` bytes apart.
template <class T>
void scatter(char* dst, std::int64_t stride, const T* src, std::uint64_t count) noexcept {
    for (std::uint64_t i = 0; i < count; ++i) std::memcpy(dst + static_cast<std::int64_t>(i) * stride, &src[i], sizeof(T));
}

/// Runs a row of n elements through `kernel(out, ins..., n)` (contiguous
/// output, each input a RowIn), after bringing every operand into a form it
/// accepts: a stride-0 input becomes a repeated buffer, a strided input is
/// gathered chunk by chunk (kChunk elements), a strided output is computed
/// into a chunk and scattered. The output may be the same memory as an input
/// (in-place clip): each chunk is read before it is written.
template <class TOut, class... TIn, std::size_t... I, class Kernel>
void run_row_impl(const std::array<char*, 1 + sizeof...(TIn)>& ptrs, const std::array<std::int64_t, 1 + sizeof...(TIn)>& st,
             std::uint64_t n, std::index_sequence<I...>, Kernel& kernel) {
    const bool out_direct = st[0] == static_cast<std::int64_t>(sizeof(TOut));
    const bool direct =
        out_direct && ((st[I + 1] == 0 || st[I + 1] == static_cast<std::int64_t>(sizeof(TIn))) && ...);
    std::tuple<Staging<TIn>...> stage;  // per input: its repeated value or a gathered chunk
    Staging<TOut> out_stage;
    // Contiguous and repeated operands (direct): the whole row in one call;
    // else chunk by chunk. (One call site: the kernel is inlined once here.)
    const std::uint64_t chunk = direct ? n : kChunk;
    for (std::uint64_t start = 0; start < n; start += chunk) {
        const std::uint64_t count = n - start < chunk ? n - start : chunk;
        TOut* out = out_direct ? reinterpret_cast<TOut*>(ptrs[0]) + start : out_stage.v;
        kernel(out, prepare_operand(std::get<I>(stage), ptrs, st, I + 1, start, count)...,
               static_cast<std::size_t>(count));
        if (!out_direct) scatter(ptrs[0] + static_cast<std::int64_t>(start) * st[0], st[0], out_stage.v, count);
    }
}
}  // namespace detail

namespace detail {
template <class T, std::size_t Chunk>
struct alignas(64) Tile {
    Tile() noexcept {}  // (as Staging)
    T v[kTileRows][Chunk];
};

/// Whether an operand is interleaved across rows (rows adjacent along an
/// outer dimension, `outer_stride` = one element; its own elements
/// `row_stride` apart): read (written) a tile of rows at a time,
/// transposed. An output only where its elements cannot overlap
/// (row_stride >= rows * elem).
inline bool interleaved(std::int64_t row_stride, std::int64_t outer_stride, std::size_t elem, bool output,
                        std::uint64_t rows) noexcept {
    const auto e = static_cast<std::int64_t>(elem);
    if (outer_stride != e || row_stride == 0 || row_stride == e) return false;
    return !output || (row_stride > 0 && static_cast<std::uint64_t>(row_stride) >= rows * elem);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
// (out_tile is read only where tr[0], after the row kernel has written it
// through its pointer, which g++ 12 cannot follow: QUANTIZE's 4-bit rows)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// `rows` (<= kTileRows) rows of n elements that start os[k] bytes apart,
/// the interleaved operands (`tr`) transposed through tiles Chunk elements
/// wide at a time, the others as run_row_impl brings them.
template <class TOut, class... TIn, std::size_t... I, class Kernel>
void run_tile_impl(const std::array<char*, 1 + sizeof...(TIn)>& ptrs, const std::array<std::int64_t, 1 + sizeof...(TIn)>& st,
                   const std::array<std::int64_t, 1 + sizeof...(TIn)>& os, const std::array<bool, 1 + sizeof...(TIn)>& tr,
                   std::size_t rows, std::uint64_t n, std::index_sequence<I...>, Kernel& kernel, simd::Isa isa) {
    constexpr std::size_t K = 1 + sizeof...(TIn);
#if defined(__GNUC__)
    if (rows > kTileRows) __builtin_unreachable();  // (g++ 12 -Warray-bounds: the transposition's wider blocks never run)
#endif
    // (The other operands' staging is Chunk elements too: a row kernel call
    // gets 512 elements of 8-bit operands, 64 of 64-bit ones.)
    constexpr std::size_t Chunk = kTileBytes / kTileRows / std::max({sizeof(TOut), sizeof(TIn)...});
    std::tuple<Tile<TIn, Chunk>...> tiles;     // interleaved inputs: the chunk of every row
    std::tuple<Staging<TIn, Chunk>...> stage;  // the others: one row's repeated value or gathered chunk
    Tile<TOut, Chunk> out_tile;
    Staging<TOut, Chunk> out_stage;
    const bool out_direct = st[0] == static_cast<std::int64_t>(sizeof(TOut));
    for (std::uint64_t start = 0; start < n; start += Chunk) {
        const std::size_t count = static_cast<std::size_t>(n - start < Chunk ? n - start : Chunk);
        (void)std::initializer_list<int>{
            (tr[I + 1] ? (simd::kernel::transpose_elements<sizeof(TIn)>(ptrs[I + 1] + static_cast<std::int64_t>(start) * st[I + 1],
                                                                    static_cast<std::size_t>(st[I + 1]), std::get<I>(tiles).v,
                                                                    sizeof(TIn) * Chunk, count, rows, isa),
                          0)
                       : 0)...};
        for (std::size_t r = 0; r < rows; ++r) {
            std::array<char*, K> row_ptrs;
            for (std::size_t k = 0; k < K; ++k) row_ptrs[k] = ptrs[k] + static_cast<std::int64_t>(r) * os[k];
            TOut* out = tr[0]       ? out_tile.v[r]
                        : out_direct ? reinterpret_cast<TOut*>(row_ptrs[0]) + start
                                     : out_stage.v;
            kernel(out,
                   (tr[I + 1] ? RowIn<TIn>{std::get<I>(tiles).v[r], 1}
                              : prepare_operand(std::get<I>(stage), row_ptrs, st, I + 1, start, count))...,
                   count);
            if (!tr[0] && !out_direct) scatter(row_ptrs[0] + static_cast<std::int64_t>(start) * st[0], st[0], out_stage.v, count);
        }
        if (tr[0])
            simd::kernel::transpose_elements<sizeof(TOut)>(out_tile.v, sizeof(TOut) * Chunk,
                                                     ptrs[0] + static_cast<std::int64_t>(start) * st[0],
                                                     static_cast<std::size_t>(st[0]), rows, count, isa);
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}  // namespace detail


namespace detail {
/// A row kernel behind two function pointers, so that the loop nest around
/// it (run_rows_erased: the plan's odometer, the staging of strided and
/// repeated operands, the threaded tasks) is compiled once per operand type
/// signature rather than once per kernel: `row` is one kernel call on a row
/// (run_row_impl's), `tile` a tile of rows (run_tile_impl, in the kernel's
/// region where it has one). A call through them costs a few nanoseconds a
/// row or chunk, what a -Dnative=false build always paid for the region's
/// kernels.
template <class TOut, class... TIn>
struct RowKernelRef {
    static constexpr std::size_t K = 1 + sizeof...(TIn);
    void* kernel;
    void (*row)(void* kernel, TOut* out, RowIn<TIn>... in, std::size_t n);
    void (*tile)(const RowKernelRef& self, const std::array<char*, K>& ptrs, const std::array<std::int64_t, K>& st,
                 const std::array<std::int64_t, K>& os, const std::array<bool, K>& tr, std::size_t rows, std::uint64_t n,
                 simd::Isa isa);
    void operator()(TOut* out, RowIn<TIn>... in, std::size_t n) const { row(kernel, out, in..., n); }
};

/// Whether the row kernel has a region (x86 Rows::region: the tile loop
/// compiled for the kernel's target, as in a -march=native build, rather
/// than for the build's baseline around a kernel call per row).
template <class Kernel, class F>
constexpr auto has_region(int) -> decltype(std::declval<const Kernel&>().region(std::declval<F&>()), true) {
    return true;
}
template <class Kernel, class F>
constexpr bool has_region(long) {
    return false;
}

/// One row through a kernel: a region's row() (compiled for it, out of
/// line), else the kernel inlined here.
template <class Kernel, bool Region, class TOut, class... TIn>
void row_thunk(void* kernel, TOut* out, RowIn<TIn>... in, std::size_t n) {
    if constexpr (Region)
        static_cast<Kernel*>(kernel)->row(out, in..., n);
    else
        (*static_cast<Kernel*>(kernel))(out, in..., n);
}

/// A tile of rows through a kernel with a region (Rows::region): the tile
/// loop compiled in it, the kernel inlined.
template <class Kernel, class TOut, class... TIn>
void tile_thunk(const RowKernelRef<TOut, TIn...>& self, const std::array<char*, 1 + sizeof...(TIn)>& ptrs,
                const std::array<std::int64_t, 1 + sizeof...(TIn)>& st, const std::array<std::int64_t, 1 + sizeof...(TIn)>& os,
                const std::array<bool, 1 + sizeof...(TIn)>& tr, std::size_t rows, std::uint64_t n, simd::Isa isa) {
    Kernel& k = *static_cast<Kernel*>(self.kernel);
    const auto one_tile = [&] {
        run_tile_impl<TOut, TIn...>(ptrs, st, os, tr, rows, n, std::index_sequence_for<TIn...>{}, k, isa);
    };
    k.region(one_tile);
}

/// A tile of rows through any other kernel (the portable path's): the tile
/// loop compiled once per operand types, the kernel called per row and chunk.
template <class TOut, class... TIn>
void tile_erased(const RowKernelRef<TOut, TIn...>& self, const std::array<char*, 1 + sizeof...(TIn)>& ptrs,
                 const std::array<std::int64_t, 1 + sizeof...(TIn)>& st, const std::array<std::int64_t, 1 + sizeof...(TIn)>& os,
                 const std::array<bool, 1 + sizeof...(TIn)>& tr, std::size_t rows, std::uint64_t n, simd::Isa isa) {
    run_tile_impl<TOut, TIn...>(ptrs, st, os, tr, rows, n, std::index_sequence_for<TIn...>{}, self, isa);
}


/// run_rows' loop nest over an erased kernel.
template <class TOut, class... TIn>
void run_rows_erased(const LoopPlan<1 + sizeof...(TIn)>& plan, const std::array<char*, 1 + sizeof...(TIn)>& base,
                     const RowKernelRef<TOut, TIn...>& kernel, simd::Isa isa, const Executor& executor) {
    constexpr std::size_t K = 1 + sizeof...(TIn);
    constexpr std::array<std::size_t, K> elem{sizeof(TOut), sizeof(TIn)...};
    // The innermost outer dimension along which an operand is interleaved
    // becomes the tile's (the last outer one; element-wise, the order of the
    // outer dimensions is free).
    std::array<bool, K> tr{};
    std::uint32_t d = plan.outer_rank;
    while (d-- > 0) {
        bool any = false;
        for (std::size_t k = 0; k < K; ++k) {
            tr[k] = detail::interleaved(plan.row_stride[k], plan.outer_strides[k][d], elem[k], k == 0, plan.outer_sizes[d]);
            any = any || tr[k];
        }
        if (any) break;
    }
    const bool tile = d < plan.outer_rank;
    LoopPlan<K> q = plan;  // the rows walked: without the tile's dimension
    std::uint64_t R = 1;   // rows of the tile's dimension
    std::array<std::int64_t, K> os{};
    if (tile) {
        R = plan.outer_sizes[d];
        for (std::size_t k = 0; k < K; ++k) os[k] = plan.outer_strides[k][d];
        for (std::uint32_t j = d; j + 1 < plan.outer_rank; ++j) {
            q.outer_sizes[j] = q.outer_sizes[j + 1];
            for (std::size_t k = 0; k < K; ++k) q.outer_strides[k][j] = q.outer_strides[k][j + 1];
        }
        q.outer_rank = plan.outer_rank - 1;
    }
    const std::uint64_t n = plan.row;
    // The tile rows r0 .. r0 + kTileRows - 1 of the row at `ptrs`, columns
    // [c0, c0 + count).
    const auto tile_rows = [&](const std::array<char*, K>& ptrs, std::uint64_t r0, std::uint64_t count) {
        std::array<char*, K> tile_ptrs;
        for (std::size_t k = 0; k < K; ++k) tile_ptrs[k] = ptrs[k] + static_cast<std::int64_t>(r0) * os[k];
        const auto rows = static_cast<std::size_t>(R - r0 < kTileRows ? R - r0 : kTileRows);
        kernel.tile(kernel, tile_ptrs, q.row_stride, os, tr, rows, count, isa);
    };
    if (!executor.calling_thread_only() && plan.elements() * sizeof(TOut) >= kMinThreadedBytes) {
        // As tasks (core/executor.hpp): units are the walked rows (the tile
        // form: each row's groups of kTileRows tile rows), cut by row_tasks.
        // (A streamed call's tasks are larger: each ends with a fence that
        // waits for its non-temporal stores to drain.)
        const std::uint64_t out_bytes = plan.elements() * sizeof(TOut);
        const std::uint64_t groups = tile ? (R + kTileRows - 1) / kTileRows : 1;
        const RowTasks t = row_tasks(RowCursor<K>::rows(q) * groups, tile ? kTileRows : 1, n, sizeof(TOut),
                                     streams(out_bytes) ? kStreamTaskBytes : kTaskBytes);
        qdml::detail::parallel_for(executor, static_cast<std::size_t>(t.tasks()), [&](std::size_t task) {
            const std::uint64_t u0 = task / t.chunks * t.per, u1 = std::min(t.units, u0 + t.per);
            const std::uint64_t c0 = task % t.chunks * t.columns, count = std::min(n - c0, t.columns);
            RowCursor<K> cursor(q, base);
            cursor.seek(u0 / groups);
            for (std::uint64_t u = u0; u < u1; ++u) {
                if (u != u0 && u % groups == 0) cursor.next();
                if (tile)
                    tile_rows(cursor.at(c0), u % groups * kTileRows, count);
                else
                    detail::run_row_impl<TOut, TIn...>(cursor.at(c0), q.row_stride, count,
                                                       std::index_sequence_for<TIn...>{}, kernel);
            }
            std::atomic_thread_fence(std::memory_order_seq_cst);  // (a task's non-temporal stores, before the join)
        });
        return;
    }
    if (tile) {
        for_each_row(q, base, [&](const std::array<char*, K>& ptrs, const std::array<std::int64_t, K>&, std::uint64_t) {
            for (std::uint64_t r0 = 0; r0 < R; r0 += kTileRows) tile_rows(ptrs, r0, n);
        });
        return;
    }
    for_each_row(plan, base, [&](const std::array<char*, K>& ptrs, const std::array<std::int64_t, K>& st, std::uint64_t m) {
        detail::run_row_impl<TOut, TIn...>(ptrs, st, m, std::index_sequence_for<TIn...>{}, kernel);
    });
}
}  // namespace detail

/// Every row of `plan` (operand 0 the output, of TOut; then inputs of
/// TIn...) through `kernel(out, ins..., n)` as run_row_impl runs a row, from
/// the operands' bases. Where an operand is interleaved across the rows of
/// an outer dimension (an NHWC tensor walked as NCHW: each row's elements C
/// apart, the channels' rows adjacent), rows along it go kTileRows at a time
/// and that operand is transposed into (out of) a tile of their chunks
/// rather than gathered one element per cache line row by row (the
/// transposition on `isa`, a GEMM path the CPU runs: Avx2 or Generic).
/// Given a pool (`executor`) and at least kMinThreadedBytes of output, the
/// rows run as tasks (row_tasks); `kernel` is then called concurrently.
/// (The loop nest is compiled per operand types, the kernel reached through
/// RowKernelRef.)
template <class TOut, class... TIn, class Kernel>
void run_rows(const LoopPlan<1 + sizeof...(TIn)>& plan, const std::array<char*, 1 + sizeof...(TIn)>& base, Kernel&& kernel,
              simd::Isa isa = simd::Isa::Generic, const Executor& executor = {}) {
    using Kn = std::remove_reference_t<Kernel>;
    using Ref = detail::RowKernelRef<TOut, TIn...>;
    const auto nothing = [] {};
    constexpr bool region = detail::has_region<Kn, decltype(nothing)>(0);
    Ref ref{const_cast<void*>(static_cast<const void*>(&kernel)), &detail::row_thunk<Kn, region, TOut, TIn...>, nullptr};
    if constexpr (region)
        ref.tile = &detail::tile_thunk<Kn, TOut, TIn...>;
    else
        ref.tile = &detail::tile_erased<TOut, TIn...>;
    detail::run_rows_erased<TOut, TIn...>(plan, base, ref, isa, executor);
}

}  // namespace qdml::simd
