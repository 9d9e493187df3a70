// qdml/simd/convolution_integer.hpp - CONVOLUTION_INTEGER for
// Implementation::Simd, bit-identical to qdml::reference::convolution_integer
// (docs/semantics.md section 14):
//   Output = sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])   (INT32, wraps mod 2^32)
// On the GEMM engine's int32 store (MATRIX_MULTIPLY_INTEGER's driver,
// simd/matrix_multiply_integer.hpp), per image and group:
// - left operand: the group's filter rows, M = Cout/G output channels by
//   K = Cin/G * kH * kW taps (copied packed), FZP per row;
// - right operand: the image's patch matrix, K taps by P = oH * oW output
//   pixels, materialised (im2col), with the input zero point where a tap
//   falls into the padding, so that it contributes exactly 0; XZP per tensor;
// - output: rows through the output's channel stride, pixels through its
//   width stride when the output's rows are one run (else a scratch copied out).
// The sum is an integer sum mod 2^32 in any order: the engine's is the
// reference's. A first form: the patch matrix costs K * P bytes per image
// and group, and the packer reads it again (QUANTIZED_LINEAR_CONVOLUTION's
// forms, conv/, read tap rows in place; they store 8-bit outputs only).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/operators/matrix_multiply_integer.hpp"
#include "qdml/simd/matrix_multiply_integer.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// Image n's patch matrix of group `group`: row k = (ic, ky, kx) of the
/// group's taps, column p = oy * oW + ox; the input zero point in the padding.
template <class TIn, class TFilter>
void patches(const ConvolutionInteger<TIn, TFilter>& op, std::uint32_t n, std::uint32_t group, TIn x_zp, TIn* dst) {
    const auto& X = op.InputTensor;
    const auto& F = op.FilterTensor.sizes;
    const std::uint32_t H = X.sizes[2], W = X.sizes[3], oH = op.OutputTensor.sizes[2], oW = op.OutputTensor.sizes[3];
    const std::uint32_t cin_g = F[1], kH = F[2], kW = F[3];
    for (std::uint32_t icg = 0; icg < cin_g; ++icg)
        for (std::uint32_t ky = 0; ky < kH; ++ky)
            for (std::uint32_t kx = 0; kx < kW; ++kx)
                for (std::uint32_t oy = 0; oy < oH; ++oy) {
                    const std::int64_t y = std::int64_t{oy} * op.Strides[0] + std::int64_t{ky} * op.Dilations[0] -
                                           op.StartPadding[0];
                    for (std::uint32_t ox = 0; ox < oW; ++ox) {
                        const std::int64_t x = std::int64_t{ox} * op.Strides[1] + std::int64_t{kx} * op.Dilations[1] -
                                               op.StartPadding[1];
                        const bool inside = y >= 0 && y < H && x >= 0 && x < W;
                        *dst++ = inside ? X[{n, group * cin_g + icg, static_cast<std::uint32_t>(y),
                                             static_cast<std::uint32_t>(x)}]
                                        : x_zp;
                    }
                }
}

}  // namespace detail

/// Computes a validated integer convolution on the GEMM engine; the
/// reference's bits (there is no float step, so in both profiles).
template <class TIn, class TFilter>
void convolution_integer(const ConvolutionInteger<TIn, TFilter>& op, const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // (no float step; kept as every entry does)
    const auto& F = op.FilterTensor;
    const auto& Out = op.OutputTensor;
    const std::uint32_t batch = Out.sizes[0], groups = op.GroupCount, cout_g = F.sizes[0] / groups;
    const std::uint32_t K = F.sizes[1] * F.sizes[2] * F.sizes[3], oH = Out.sizes[2], oW = Out.sizes[3];
    const std::uint32_t P = oH * oW;
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
    // The output's pixels as one run of the width's stride, or a packed scratch.
    const bool flat = oH == 1 || Out.strides[2] == std::uint64_t{oW} * Out.strides[3];
    std::vector<TFilter> rows(std::size_t{cout_g} * K);
    std::vector<TFilter> fzp(cout_g);
    std::vector<TIn> patch(std::size_t{K} * P);
    std::vector<std::int32_t> scratch(flat ? 0 : std::size_t{cout_g} * P);
    const Isa isa = simd::select_isa(options.isa);
    for (std::uint32_t group = 0; group < groups; ++group) {
        TFilter* r = rows.data();
        for (std::uint32_t m = 0; m < cout_g; ++m) {
            const std::uint32_t oc = group * cout_g + m;
            for (std::uint32_t ic = 0; ic < F.sizes[1]; ++ic)
                for (std::uint32_t ky = 0; ky < F.sizes[2]; ++ky)
                    for (std::uint32_t kx = 0; kx < F.sizes[3]; ++kx) *r++ = F[{oc, ic, ky, kx}];
            fzp[m] = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[{0, oc, 0, 0}] : TFilter{0};
        }
        MatrixMultiplyInteger<TFilter, TIn> mm;
        mm.ATensor = {rows.data(), {1, 1, cout_g, K}, {0, 0, K, 1}};
        mm.AZeroPointTensor = TensorView<const TFilter, 4>{fzp.data(), {1, 1, cout_g, P}, {0, 0, 1, 0}};
        mm.BTensor = {patch.data(), {1, 1, K, P}, {0, 0, P, 1}};
        if (x_zp != TIn{0}) mm.BZeroPointTensor = TensorView<const TIn, 4>{&x_zp, {1, 1, cout_g, P}, {0, 0, 0, 0}};
        mm.OutputTensor.sizes = {1, 1, cout_g, P};  // (the zero points' counts come from the output's sizes)
        gemm::RequantSpec s;
        detail::a_zero_points(mm, s);
        detail::b_zero_points(mm, s);
        s.int32_out = true;
        for (std::uint32_t n = 0; n < batch; ++n) {
            detail::patches(op, n, group, x_zp, patch.data());
            if (flat)
                mm.OutputTensor = {&Out[{n, group * cout_g, 0, 0}], {1, 1, cout_g, P}, {0, 0, Out.strides[1], Out.strides[3]}};
            else
                mm.OutputTensor = {scratch.data(), {1, 1, cout_g, P}, {0, 0, P, 1}};
            detail::run_matmul(mm, isa, s, options.executor);
            if (!flat)
                for (std::uint32_t m = 0; m < cout_g; ++m)
                    for (std::uint32_t p = 0; p < P; ++p)
                        Out[{n, group * cout_g + m, p / oW, p % oW}] = scratch[std::size_t{m} * P + p];
        }
    }
}

/// The implementation path that computes `op` under `options`, as
/// qdml::describe() prints it: the patch matrix on the GEMM engine.
template <class TIn, class TFilter>
std::string path(const ConvolutionInteger<TIn, TFilter>&, const GemmOptions& options = {}) {
    return "patches gemm " + std::string(isa_name(simd::select_isa(options.isa)));
}

}  // namespace qdml::simd
