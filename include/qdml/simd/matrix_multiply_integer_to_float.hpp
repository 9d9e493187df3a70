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

/// The exact profile on the engine: int32 sums into a packed scratch
/// (`sums(mi)` computes the MATRIX_MULTIPLY_INTEGER `mi`: the stateless
/// engine call, or a prepared form's), then the epilogue with BScale's N
/// values `b_scale` (mmitf_b_scales).
template <class TA, class TB, class TF, class Sums>
void mmitf_exact(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, const Executor& executor, const float* b_scale,
                 Sums&& sums) {
    const auto& sizes = op.OutputTensor.sizes;
    const std::uint32_t batches = sizes[0], channels = sizes[1], M = sizes[2], N = sizes[3];
    std::vector<std::int32_t> acc(std::size_t{batches} * channels * M * N);
    MatrixMultiplyInteger<TA, TB> mi;
    mi.ATensor = op.ATensor;
    mi.AZeroPointTensor = op.AZeroPointTensor;
    mi.BTensor = op.BTensor;
    mi.BZeroPointTensor = op.BZeroPointTensor;
    mi.OutputTensor.data = acc.data();
    mi.OutputTensor.sizes = sizes;
    mi.OutputTensor.strides = {std::uint64_t{channels} * M * N, std::uint64_t{M} * N, N, 1};
    sums(mi);

    const std::uint64_t rows = std::uint64_t{batches} * channels * M;
    qdml::detail::parallel_for(executor, static_cast<std::size_t>((rows + kMmitfRows - 1) / kMmitfRows),
                               [&](std::size_t task) {
        std::vector<float> scale(N), y(N);
        const std::uint64_t r1 = std::min<std::uint64_t>(rows, (task + 1) * std::uint64_t{kMmitfRows});
        for (std::uint64_t r = task * std::uint64_t{kMmitfRows}; r < r1; ++r) {
            const auto m = static_cast<std::uint32_t>(r % M), bc = static_cast<std::uint32_t>(r / M);
            const std::uint32_t b = bc / channels, c = bc % channels;
            const std::int32_t* a = &acc[r * N];
            const float sa = to_float(op.AScaleTensor[{b, c, m, 0}]);
            for (std::uint32_t n = 0; n < N; ++n) scale[n] = sa * b_scale[n];
            rounding_barrier();
            for (std::uint32_t n = 0; n < N; ++n) y[n] = static_cast<float>(a[n]) * scale[n];
            rounding_barrier();
            mmitf_store_row(op, b, c, m, y.data(), N);
        }
    });
}

/// The directml profile's sums for up to 4 rows of A at once (dequantized,
/// `a` rows of K floats) against B's dequantized slice (`b`, K rows of N):
/// s[r][n] = sum over k in order of a[r][k] * b[k][n], each product and each
/// add one binary32 rounding (VecOps::no_fuse between them), written to
/// s[r * N + n]. A row kernel of the element-wise paths (arch.hpp): a region
/// tag's Rows compiles it for AVX2 or AVX-512, Arch's for SSE2 or NEON; 4 rows
/// by 2 vectors of columns per step, the columns past the vectors scalar.
template <class A>
struct FloatSumRows {
    template <int R, int C>
    QDML_ALWAYS_INLINE static void block(const float* a, std::uint32_t K, const float* b, std::uint32_t N, float* s,
                                         std::uint32_t n0) noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::uint32_t W = static_cast<std::uint32_t>(F::size);
        F acc[R][C];
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) acc[r][c] = F(0.0f);
        for (std::uint32_t k = 0; k < K; ++k) {
            F bv[C];
            for (int c = 0; c < C; ++c) bv[c] = kernel::load_float<A>(b + std::size_t{k} * N + n0 + c * W);
            for (int r = 0; r < R; ++r) {
                const F av(a[static_cast<std::size_t>(r) * K + k]);
                for (int c = 0; c < C; ++c) acc[r][c] = acc[r][c] + VecOps<F>::no_fuse(av * bv[c]);
            }
        }
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) kernel::store_vec<A>(s + static_cast<std::size_t>(r) * N + n0 + c * W, acc[r][c]);
    }
    template <int R>
    QDML_ALWAYS_INLINE static void rows(const float* a, std::uint32_t K, const float* b, std::uint32_t N,
                                        float* s) noexcept {
        constexpr std::uint32_t W = static_cast<std::uint32_t>(kernel::fbatch<A>::size);
        std::uint32_t n = 0;
        for (; n + 2 * W <= N; n += 2 * W) block<R, 2>(a, K, b, N, s, n);
        for (; n + W <= N; n += W) block<R, 1>(a, K, b, N, s, n);
        for (; n < N; ++n)
            for (int r = 0; r < R; ++r) {
                float t = 0.0f;
                for (std::uint32_t k = 0; k < K; ++k) t = t + no_fuse(a[static_cast<std::size_t>(r) * K + k] * b[std::size_t{k} * N + n]);
                s[static_cast<std::size_t>(r) * N + n] = t;
            }
    }
    void operator()(const float* a, std::uint32_t R, std::uint32_t K, const float* b, std::uint32_t N,
                    float* s) const noexcept {
        switch (R) {
            case 1: rows<1>(a, K, b, N, s); break;
            case 2: rows<2>(a, K, b, N, s); break;
            case 3: rows<3>(a, K, b, N, s); break;
            default: rows<4>(a, K, b, N, s); break;
        }
    }
};

/// FloatSumRows on the element-wise path `isa` (arch.hpp's on_arch).
inline void float_sum_rows(ElementWiseIsa isa, const float* a, std::uint32_t R, std::uint32_t K, const float* b,
                           std::uint32_t N, float* s) {
#if QDML_X86
    if (isa == ElementWiseIsa::Avx512) return on_arch<x86::avx512bw::ElementWise>(FloatSumRows<x86::avx512bw::ElementWise>{})(a, R, K, b, N, s);
    if (isa == ElementWiseIsa::Avx2) return on_arch<x86::avx2::ElementWise>(FloatSumRows<x86::avx2::ElementWise>{})(a, R, K, b, N, s);
#endif
    (void)isa;
    FloatSumRows<Arch>{}(a, R, K, b, N, s);
}

/// B's slice (b, c) dequantized as the directml profile reads it:
/// bd[k * N + n] = (fp32(B[k][n]) - fp32(BZP[n])) * BScale[n], K x N floats.
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
    for (std::uint32_t k = 0; k < K; ++k)
        for (std::uint32_t n = 0; n < N; ++n)
            bd[std::size_t{k} * N + n] = dequantize_directml(op.BTensor[{b, c, k, n}], b_zp[n], b_scale[n]);
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
            qdml::detail::parallel_for(options.executor, (M + kMmitfRows - 1) / kMmitfRows, [&](std::size_t task) {
                std::vector<float> ad(std::size_t{4} * K), s(std::size_t{4} * N);
                const std::uint32_t m0 = static_cast<std::uint32_t>(task * kMmitfRows);
                const std::uint32_t m1 = std::min<std::uint32_t>(M, m0 + kMmitfRows);
                for (std::uint32_t m = m0; m < m1; m += 4) {
                    const std::uint32_t R = std::min<std::uint32_t>(4, m1 - m);
                    for (std::uint32_t r = 0; r < R; ++r) {
                        const std::int64_t zp =
                            op.AZeroPointTensor ? std::int64_t{(*op.AZeroPointTensor)[{b, c, m + r, 0}]} : 0;
                        const float sa = to_float(op.AScaleTensor[{b, c, m + r, 0}]);
                        for (std::uint32_t k = 0; k < K; ++k)
                            ad[static_cast<std::size_t>(r) * K + k] = dequantize_directml(op.ATensor[{b, c, m + r, k}], zp, sa);
                    }
                    float_sum_rows(isa, ad.data(), R, K, bd, N, s.data());
                    for (std::uint32_t r = 0; r < R; ++r) mmitf_store_row(op, b, c, m + r, s.data() + static_cast<std::size_t>(r) * N, N);
                }
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
        detail::mmitf_exact(op, options.executor, detail::mmitf_b_scales(op).data(),
                            [&](const MatrixMultiplyInteger<TA, TB>& mi) { simd::matrix_multiply_integer(mi, options); });
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
