// qdml/simd/convolution_integer.hpp - CONVOLUTION_INTEGER for
// Implementation::Simd, bit-identical to qdml::reference::convolution_integer
// (docs/semantics.md section 14):
//   Output = sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])   (INT32, wraps mod 2^32)
// On the GEMM engine's int32 store (MATRIX_MULTIPLY_INTEGER's driver,
// simd/matrix_multiply_integer.hpp), per image and group:
// - left operand: the group's filter rows, M = Cout/G output channels by
//   K = Cin/G * kH * kW taps (copied packed), FZP per row;
// - right operand: the image's patch matrix, K taps by P = oH * oW output
//   pixels, materialised (im2col) by QUANTIZED_LINEAR_CONVOLUTION's
//   conv::patch_row, with the input zero point where a tap falls into the
//   padding, so that it contributes exactly 0; XZP per tensor;
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
#include "qdml/simd/quantized_linear_convolution.hpp"

namespace qdml::simd {


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
    // The convolution's sizes as QUANTIZED_LINEAR_CONVOLUTION's patch rows read them (conv::patch_row).
    conv::Geometry g;
    g.cin_g = F.sizes[1];
    g.H = op.InputTensor.sizes[2], g.W = op.InputTensor.sizes[3], g.oH = oH, g.oW = oW;
    g.sy = op.Strides[0], g.sx = op.Strides[1], g.dy = op.Dilations[0], g.dx = op.Dilations[1];
    g.pt = op.StartPadding[0], g.pl = op.StartPadding[1];
    const std::uint32_t taps = F.sizes[2] * F.sizes[3];
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
            for (std::uint32_t k = 0; k < K; ++k)  // tap row k = (ic, ky, kx) over the P output pixels
                conv::patch_row(op.InputTensor, g, x_zp, n, group * g.cin_g + k / taps, k % taps / F.sizes[3],
                                k % F.sizes[3], 0, P, patch.data() + std::size_t{k} * P);
            if (flat)
                mm.OutputTensor = {&Out[{n, group * cout_g, 0, 0}], {1, 1, cout_g, P}, {0, 0, Out.strides[1], Out.strides[3]}};
            else
                mm.OutputTensor = {scratch.data(), {1, 1, cout_g, P}, {0, 0, P, 1}};
            detail::run_matmul(mm, isa, s, options.executor);
            if (!flat)
                for (std::uint32_t m = 0; m < cout_g; ++m)
                    for (std::uint32_t oy = 0; oy < oH; ++oy)
                        for (std::uint32_t ox = 0; ox < oW; ++ox)
                            Out[{n, group * cout_g + m, oy, ox}] = scratch[(std::size_t{m} * oH + oy) * oW + ox];
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
