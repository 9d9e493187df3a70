// qdml/simd/matrix_multiply_integer_to_float.hpp - MATRIX_MULTIPLY_INTEGER_TO_FLOAT's
// fast paths, bit-identical to qdml::reference::matrix_multiply_integer_to_float
// (docs/semantics.md section 16):
//   exact profile, 8-bit A and B: MATRIX_MULTIPLY_INTEGER on the GEMM engine
//     (int32 sums, zero points folded through row and column sums), then per
//     output row y = fp32(acc) * fp32(AScale * BScale) (+ Bias);
//   directml profile, every type: each B slice dequantized once, A's rows
//     dequantized four at a time, then the binary32 sums in k order, 4 rows
//     by 2 vectors of columns per step (FloatSumRows, on the element-wise
//     paths' ISA: AVX-512, AVX2, SSE2 or NEON).
// The exact profile's 16- and 32-bit operands take the reference. Each step
// is one binary32 operation, whatever -ffp-contract says: the epilogue's
// products are stored before a compiler barrier and added after it, the
// sums' products pass VecOps::no_fuse before their add.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "qdml/core/executor.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/operators/matrix_multiply_integer_to_float.hpp"
#include "qdml/reference/matrix_multiply_integer_to_float.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/kernel/convert.hpp"
#include "qdml/simd/kernel/vec_ops.hpp"
#include "qdml/simd/matrix_multiply_integer.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// Whether the GEMM engine computes the integer sums of these operand types.
template <class TA, class TB>
inline constexpr bool mmitf_on_engine = sizeof(TA) == 1 && sizeof(TB) == 1;

/// Keeps the compiler from carrying a value computed before it (a product
/// stored to memory) into an operation after it (an add): no contraction.
inline void rounding_barrier() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

/// Rows of the output per task (the task grid depends on the shape only).
inline constexpr std::uint32_t kMmitfRows = 16;

/// Output row (b, c, m) from the binary32 values y[0..N) plus the bias.
template <class TA, class TB, class TF>
void mmitf_store_row(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, std::uint32_t b, std::uint32_t c,
                     std::uint32_t m, float* y, std::uint32_t N) {
    if (op.BiasTensor) {
        const auto& bias = *op.BiasTensor;
        for (std::uint32_t n = 0; n < N; ++n) y[n] = y[n] + to_float(bias[{b, c, m, n}]);
    }
    TF* out = &op.OutputTensor[{b, c, m, 0}];
    const std::uint64_t step = op.OutputTensor.strides[3];
    for (std::uint32_t n = 0; n < N; ++n) out[n * step] = from_float<TF>(y[n]);
}

/// BScale per column (validation: the same in every batch, channel and row).
template <class TA, class TB, class TF>
std::vector<float> mmitf_b_scales(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op) {
    std::vector<float> b_scale(op.OutputTensor.sizes[3]);
    for (std::uint32_t n = 0; n < b_scale.size(); ++n) b_scale[n] = to_float(op.BScaleTensor[{0, 0, 0, n}]);
    return b_scale;
}

/// The exact profile's B side for the engine: every distinct B slice packed
/// with its column sums, BZP' per column (or one), BScale per column. Made
/// per call by the stateless form, once by the prepared one.
struct MmitfRight {
    PackedRightSlices packed;
    std::vector<std::int32_t> b_zp;
    std::vector<float> b_scale;

    template <class TA, class TB, class TF>
    MmitfRight(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, simd::Isa isa) {
        const MatrixMultiplyInteger<TA, TB> mi = integer_part(op, nullptr);
        gemm::RequantSpec s;
        b_zero_points(mi, s);
        b_zp = std::move(s.b_zp);
        packed.pack(mi, isa);
        b_scale = mmitf_b_scales(op);
    }

    /// The MATRIX_MULTIPLY_INTEGER of `op`'s operands into the int32 output
    /// `acc` (packed: its sizes, strides {C*M*N, M*N, N, 1}; null: unbound).
    template <class TA, class TB, class TF>
    static MatrixMultiplyInteger<TA, TB> integer_part(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op,
                                                      std::int32_t* acc) {
        const auto& sizes = op.OutputTensor.sizes;
        MatrixMultiplyInteger<TA, TB> mi;
        mi.ATensor = op.ATensor;
        mi.AZeroPointTensor = op.AZeroPointTensor;
        mi.BTensor = op.BTensor;
        mi.BZeroPointTensor = op.BZeroPointTensor;
        mi.OutputTensor.data = acc;
        mi.OutputTensor.sizes = sizes;
        mi.OutputTensor.strides = {std::uint64_t{sizes[1]} * sizes[2] * sizes[3], std::uint64_t{sizes[2]} * sizes[3],
                                   sizes[3], 1};
        return mi;
    }
};

/// The epilogue of output rows [m0, m0 + rows) of product (b, c) from their
/// int32 sums `acc` (rows x N, packed): y = fp32(acc) * fp32(AScale[m] *
/// BScale[n]) (+ Bias), each step one binary32 rounding.
template <class TA, class TB, class TF>
void mmitf_epilogue(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, const float* b_scale, std::uint32_t b,
                    std::uint32_t c, std::uint32_t m0, std::uint32_t rows, const std::int32_t* acc, float* scale,
                    float* y) {
    const std::uint32_t N = op.OutputTensor.sizes[3];
    for (std::uint32_t r = 0; r < rows; ++r) {
        const std::uint32_t m = m0 + r;
        const std::int32_t* a = acc + std::size_t{r} * N;
        const float sa = to_float(op.AScaleTensor[{b, c, m, 0}]);
        for (std::uint32_t n = 0; n < N; ++n) scale[n] = sa * b_scale[n];
        rounding_barrier();
        for (std::uint32_t n = 0; n < N; ++n) y[n] = static_cast<float>(a[n]) * scale[n];
        rounding_barrier();
        mmitf_store_row(op, b, c, m, y, N);
    }
}

/// Rows of a block of the exact profile: its int32 sums (rows x N) about
/// 256 KiB, in L2 while the epilogue reads them; 32 rows at least.
inline std::uint32_t mmitf_block_rows(std::uint32_t M, std::uint32_t N) noexcept {
    const std::uint32_t rows = std::max<std::uint32_t>(32, (std::uint32_t{1} << 16) / std::max<std::uint32_t>(N, 1));
    return std::min(M, rows);
}

/// The exact profile on the engine with B's side `right`: the products cut
/// into blocks of rows (mmitf_block_rows), each a task that computes its
/// int32 sums into a scratch of its thread and then its epilogue (the grid
/// depends on the shape only). Fewer blocks than four on a pool: the whole
/// int32 output first, the engine's own tasks splitting the columns (GEMV),
/// then the epilogue in tasks of kMmitfRows rows. Integer sums are exact and
/// the epilogue is per element: the same bits either way.
template <class TA, class TB, class TF>
void mmitf_exact(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, const Executor& executor,
                 const MmitfRight& right) {
    const auto& sizes = op.OutputTensor.sizes;
    const std::uint32_t batches = sizes[0], channels = sizes[1], M = sizes[2], N = sizes[3];
    const std::uint32_t K = op.ATensor.sizes[3];
    const std::uint32_t block = mmitf_block_rows(M, N), per_product = (M + block - 1) / std::max<std::uint32_t>(block, 1);
    const std::size_t products = std::size_t{batches} * channels, blocks = products * per_product;
    if (M == 0 || N == 0) return;
    if (blocks < 4 && threaded(executor, std::uint64_t{products} * M * N * K)) {
        std::vector<std::int32_t> acc(products * M * N);
        const MatrixMultiplyInteger<TA, TB> mi = MmitfRight::integer_part(op, acc.data());
        gemm::RequantSpec s;
        a_zero_points(mi, s);
        s.b_zp = right.b_zp;
        s.int32_out = true;
        right.packed.run(mi, s, executor);
        const std::uint64_t rows = std::uint64_t{products} * M;
        qdml::detail::parallel_for(executor, static_cast<std::size_t>((rows + kMmitfRows - 1) / kMmitfRows),
                                   [&](std::size_t task) {
            std::vector<float> scale(N), y(N);
            const std::uint64_t r1 = std::min<std::uint64_t>(rows, (task + 1) * std::uint64_t{kMmitfRows});
            for (std::uint64_t r = task * std::uint64_t{kMmitfRows}; r < r1; ++r) {
                const auto m = static_cast<std::uint32_t>(r % M), bc = static_cast<std::uint32_t>(r / M);
                mmitf_epilogue(op, right.b_scale.data(), bc / channels, bc % channels, m, 1, &acc[r * N],
                               scale.data(), y.data());
            }
        });
        return;
    }
    qdml::detail::parallel_for(executor, blocks, [&](std::size_t t) {
        const auto bc = static_cast<std::uint32_t>(t / per_product);
        const std::uint32_t b = bc / channels, c = bc % channels;
        const std::uint32_t m0 = static_cast<std::uint32_t>(t % per_product) * block;
        const std::uint32_t rows = std::min(block, M - m0);
        thread_local std::vector<std::int32_t> acc;
        thread_local std::vector<float> scale, y;
        acc.resize(std::size_t{block} * N);
        scale.resize(N);
        y.resize(N);
        MatrixMultiplyInteger<TA, TB> mi;
        mi.ATensor = {&op.ATensor[{b, c, m0, 0}], {1, 1, rows, K}, op.ATensor.strides};
        if (op.AZeroPointTensor)
            mi.AZeroPointTensor = TensorView<const TA, 4>{&(*op.AZeroPointTensor)[{b, c, m0, 0}], {1, 1, rows, N},
                                                          op.AZeroPointTensor->strides};
        mi.BTensor = {&op.BTensor[{b, c, 0, 0}], {1, 1, K, N}, op.BTensor.strides};  // (not read: `right` holds it)
        mi.OutputTensor = {acc.data(), {1, 1, rows, N}, {0, 0, N, 1}};
        gemm::RequantSpec s;
        a_zero_points(mi, s);
        s.b_zp = right.b_zp;
        s.int32_out = true;
        const gemm::PackedRight& pb = right.packed.slice_of(b, c);
        run_products(
            mi, right.packed.isa(), s,
            [&](std::uint32_t, std::uint32_t, const void*& key) -> const gemm::PackedRight& {
                key = &pb;
                return pb;
            },
            task_workspace<TA>());
        mmitf_epilogue(op, right.b_scale.data(), b, c, m0, rows, acc.data(), scale.data(), y.data());
    });
}

/// The directml profile's sums for up to 4 rows of A at once (dequantized,
/// `a` rows of K floats) against `cols` columns of B's dequantized slice
/// (`b`, K rows `ldb` floats apart): s[r][n] = sum over k in order of
/// a[r][k] * b[k][n], each product and each add one binary32 rounding
/// (VecOps::no_fuse between them), written to s[r * lds + n]. A row kernel
/// of the element-wise paths (arch.hpp): a region tag's Rows compiles it for
/// AVX2 or AVX-512, Arch's for SSE2 or NEON; 4 rows by 2 vectors of columns
/// per step, the columns past the vectors scalar.
template <class A>
struct FloatSumRows {
    template <int R, int C>
    QDML_ALWAYS_INLINE static void block(const float* a, std::uint32_t K, const float* b, std::size_t ldb, float* s,
                                         std::size_t lds, std::uint32_t n0) noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::uint32_t W = static_cast<std::uint32_t>(F::size);
        F acc[R][C];
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) acc[r][c] = F(0.0f);
        for (std::uint32_t k = 0; k < K; ++k) {
            F bv[C];
            for (int c = 0; c < C; ++c) bv[c] = kernel::load_float<A>(b + k * ldb + n0 + c * W);
            for (int r = 0; r < R; ++r) {
                const F av(a[static_cast<std::size_t>(r) * K + k]);
                for (int c = 0; c < C; ++c) acc[r][c] = acc[r][c] + VecOps<F>::no_fuse(av * bv[c]);
            }
        }
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) kernel::store_vec<A>(s + static_cast<std::size_t>(r) * lds + n0 + c * W, acc[r][c]);
    }
    template <int R>
    QDML_ALWAYS_INLINE static void rows(const float* a, std::uint32_t K, const float* b, std::size_t ldb,
                                        std::uint32_t cols, float* s, std::size_t lds) noexcept {
        constexpr std::uint32_t W = static_cast<std::uint32_t>(kernel::fbatch<A>::size);
        std::uint32_t n = 0;
        for (; n + 2 * W <= cols; n += 2 * W) block<R, 2>(a, K, b, ldb, s, lds, n);
        for (; n + W <= cols; n += W) block<R, 1>(a, K, b, ldb, s, lds, n);
        for (; n < cols; ++n)
            for (int r = 0; r < R; ++r) {
                float t = 0.0f;
                for (std::uint32_t k = 0; k < K; ++k) t = t + no_fuse(a[static_cast<std::size_t>(r) * K + k] * b[k * ldb + n]);
                s[static_cast<std::size_t>(r) * lds + n] = t;
            }
    }
    void operator()(const float* a, std::uint32_t R, std::uint32_t K, const float* b, std::size_t ldb,
                    std::uint32_t cols, float* s, std::size_t lds) const noexcept {
        switch (R) {
            case 1: rows<1>(a, K, b, ldb, cols, s, lds); break;
            case 2: rows<2>(a, K, b, ldb, cols, s, lds); break;
            case 3: rows<3>(a, K, b, ldb, cols, s, lds); break;
            default: rows<4>(a, K, b, ldb, cols, s, lds); break;
        }
    }
};

/// FloatSumRows on the element-wise path `isa` (arch.hpp's on_arch).
inline void float_sum_rows(ElementWiseIsa isa, const float* a, std::uint32_t R, std::uint32_t K, const float* b,
                           std::size_t ldb, std::uint32_t cols, float* s, std::size_t lds) {
#if QDML_X86
    if (isa == ElementWiseIsa::Avx512)
        return on_arch<x86::avx512bw::ElementWise>(FloatSumRows<x86::avx512bw::ElementWise>{})(a, R, K, b, ldb, cols, s, lds);
    if (isa == ElementWiseIsa::Avx2)
        return on_arch<x86::avx2::ElementWise>(FloatSumRows<x86::avx2::ElementWise>{})(a, R, K, b, ldb, cols, s, lds);
#endif
    (void)isa;
    FloatSumRows<Arch>{}(a, R, K, b, ldb, cols, s, lds);
}

/// The directml profile's blocks: tasks of kMmitfFloatRows rows of a
/// product, each summing against B's dequantized slice kMmitfFloatCols
/// columns at a time (K x 64 floats: 256 KiB at K = 1024, kept in L2 while
/// every row of the task reads it; the whole slice streamed per 4 rows was
/// the path's limit; each block contiguous: mmitf_dequantize_b). Each
/// output's sum is in k order whatever the blocks.
inline constexpr std::uint32_t kMmitfFloatRows = 64, kMmitfFloatCols = 64;

/// B's slice (b, c) dequantized as the directml profile reads it:
/// (fp32(B[k][n]) - fp32(BZP[n])) * BScale[n], K x N floats in blocks of
/// columns (below).
template <class TA, class TB, class TF>
void mmitf_dequantize_b(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, std::uint32_t b, std::uint32_t c,
                        float* bd) {
    const std::uint32_t K = op.ATensor.sizes[3], N = op.OutputTensor.sizes[3];
    // B's scale and zero point per column (validation: one value per column, in every batch and channel).
    std::vector<float> b_scale(N);
    std::vector<std::int64_t> b_zp(N, 0);
    for (std::uint32_t n = 0; n < N; ++n) {
        b_scale[n] = to_float(op.BScaleTensor[{0, 0, 0, n}]);
        if (op.BZeroPointTensor) b_zp[n] = (*op.BZeroPointTensor)[{0, 0, 0, n}];
    }
    // In blocks of kMmitfFloatCols columns, each K x cols floats contiguous
    // (block n0 at n0 * K): the layout the sums read (mmitf_directml).
    for (std::uint32_t n0 = 0; n0 < N; n0 += kMmitfFloatCols) {
        const std::uint32_t cols = std::min<std::uint32_t>(N - n0, kMmitfFloatCols);
        float* block = bd + std::size_t{n0} * K;
        for (std::uint32_t k = 0; k < K; ++k)
            for (std::uint32_t n = 0; n < cols; ++n)
                block[std::size_t{k} * cols + n] =
                    dequantize_directml(op.BTensor[{b, c, k, n0 + n}], b_zp[n0 + n], b_scale[n0 + n]);
    }
}

/// The directml profile: dequantized operands, the binary32 sum in k order.
/// `dequantized_b(b, c, scratch)` gives B's slice (b, c) dequantized
/// (mmitf_dequantize_b, into `scratch`, K x N floats, or a prepared form's copy).
template <class TA, class TB, class TF, class DequantizedB>
void mmitf_directml(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, const GemmOptions& options,
                    DequantizedB&& dequantized_b) {
    const auto& sizes = op.OutputTensor.sizes;
    const std::uint32_t batches = sizes[0], channels = sizes[1], M = sizes[2], N = sizes[3];
    const std::uint32_t K = op.ATensor.sizes[3];
    const ElementWiseIsa isa = select_elementwise_isa(options.isa);
    std::vector<float> scratch;
    for (std::uint32_t b = 0; b < batches; ++b)
        for (std::uint32_t c = 0; c < channels; ++c) {
            const float* bd = dequantized_b(b, c, scratch);
            qdml::detail::parallel_for(options.executor, (M + kMmitfFloatRows - 1) / kMmitfFloatRows,
                                       [&](std::size_t task) {
                const std::uint32_t m0 = static_cast<std::uint32_t>(task * kMmitfFloatRows);
                const std::uint32_t rows = std::min<std::uint32_t>(M - m0, kMmitfFloatRows);
                thread_local std::vector<float> ad, s;
                ad.resize(std::size_t{rows} * K);
                s.resize(std::size_t{rows} * N);
                for (std::uint32_t r = 0; r < rows; ++r) {  // A's rows dequantized once
                    const std::int64_t zp =
                        op.AZeroPointTensor ? std::int64_t{(*op.AZeroPointTensor)[{b, c, m0 + r, 0}]} : 0;
                    const float sa = to_float(op.AScaleTensor[{b, c, m0 + r, 0}]);
                    for (std::uint32_t k = 0; k < K; ++k)
                        ad[std::size_t{r} * K + k] = dequantize_directml(op.ATensor[{b, c, m0 + r, k}], zp, sa);
                }
                for (std::uint32_t n0 = 0; n0 < N; n0 += kMmitfFloatCols) {
                    const std::uint32_t cols = std::min<std::uint32_t>(N - n0, kMmitfFloatCols);
                    for (std::uint32_t r = 0; r < rows; r += 4)
                        float_sum_rows(isa, ad.data() + std::size_t{r} * K, std::min<std::uint32_t>(4, rows - r), K,
                                       bd + std::size_t{n0} * K, cols, cols, s.data() + std::size_t{r} * N + n0, N);
                }
                for (std::uint32_t r = 0; r < rows; ++r) mmitf_store_row(op, b, c, m0 + r, s.data() + std::size_t{r} * N, N);
            });
        }
}

}  // namespace detail

/// Computes a validated MATRIX_MULTIPLY_INTEGER_TO_FLOAT; same bits as the reference.
template <class TA, class TB, class TF>
void matrix_multiply_integer_to_float(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op,
                                      const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if (options.fidelity == Fidelity::DirectML) {
        detail::mmitf_directml(op, options, [&](std::uint32_t b, std::uint32_t c, std::vector<float>& scratch) {
            scratch.resize(std::size_t{op.ATensor.sizes[3]} * op.OutputTensor.sizes[3]);
            detail::mmitf_dequantize_b(op, b, c, scratch.data());
            return static_cast<const float*>(scratch.data());
        });
    } else if constexpr (detail::mmitf_on_engine<TA, TB>) {
        detail::mmitf_exact(op, options.executor, detail::MmitfRight(op, simd::select_isa(options.isa)));
    } else {
        reference::matrix_multiply_integer_to_float(op, options.fidelity);
    }
}

/// The implementation path that computes `op` under `options`, as
/// qdml::describe() prints it.
template <class TA, class TB, class TF>
std::string path(const MatrixMultiplyIntegerToFloat<TA, TB, TF>&, const GemmOptions& options = {}) {
    if (options.fidelity == Fidelity::DirectML)
        return std::string("binary32 k-order rows ") + elementwise_isa_name(select_elementwise_isa(options.isa));
    if constexpr (detail::mmitf_on_engine<TA, TB>)
        return "gemm " + std::string(isa_name(simd::select_isa(options.isa))) + " + float epilogue";
    else
        return "reference";
}

}  // namespace qdml::simd
