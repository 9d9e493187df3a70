// qdml/reference/quantized_linear_convolution.hpp - the oracle (docs/semantics.md section 6):
//   acc = Bias[oc] + sum over (ic in oc's group, ky, kx) of
//         (X[n][ic][oy*sy + ky*dy - padTop][ox*sx + kx*dx - padLeft] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])
//   (int32, wraps mod 2^32; taps in the padding contribute 0)
//   Output = Q(fp32(acc) * (fp32(InputScale * FilterScale[oc]) / OutputScale), OutputZP, OutputType)
// Fidelity DirectML (section 10): requantize_directml(acc, FilterScale[oc], InputScale, OutputScale, OutputZP).
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"

namespace qdml::reference {

namespace detail {
/// The convolution's sum at output index `i` = {n, oc, oy, ox}, without Bias
/// (docs/semantics.md section 6), shared by QUANTIZED_LINEAR_CONVOLUTION and
/// CONVOLUTION_INTEGER: over the input channels of oc's group and the kernel
/// taps, (X - x_zp) * (F - f_zp), in uint32 (wraps mod 2^32); a tap in the
/// padding contributes 0. `op` gives the views and the parameters.
template <class Op, class Index>
std::uint32_t convolution_sum(const Op& op, const Index& i, std::int32_t x_zp, std::int32_t f_zp) {
    const auto& X = op.InputTensor;
    const auto& F = op.FilterTensor;
    const std::uint32_t H = X.sizes[2], W = X.sizes[3];
    const std::uint32_t group_in = F.sizes[1];                   // input channels per group
    const std::uint32_t group_out = F.sizes[0] / op.GroupCount;  // output channels per group
    const std::uint32_t kH = F.sizes[2], kW = F.sizes[3];
    const std::uint32_t n = i[0], oc = i[1], oy = i[2], ox = i[3];
    const std::uint32_t group = oc / group_out;
    std::uint32_t acc = 0;
    for (std::uint32_t icg = 0; icg < group_in; ++icg) {
        const std::uint32_t ic = group * group_in + icg;
        for (std::uint32_t ky = 0; ky < kH; ++ky) {
            const std::int64_t y =
                std::int64_t{oy} * op.Strides[0] + std::int64_t{ky} * op.Dilations[0] - op.StartPadding[0];
            if (y < 0 || y >= H) continue;  // padding: contributes 0
            for (std::uint32_t kx = 0; kx < kW; ++kx) {
                const std::int64_t x =
                    std::int64_t{ox} * op.Strides[1] + std::int64_t{kx} * op.Dilations[1] - op.StartPadding[1];
                if (x < 0 || x >= W) continue;
                const std::int32_t xv = X[{n, ic, static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(x)}] - x_zp;
                const std::int32_t fv = F[{oc, icg, ky, kx}] - f_zp;
                acc += static_cast<std::uint32_t>(xv * fv);
            }
        }
    }
    return acc;
}
}  // namespace detail

template <class TIn, class TFilter, class TOut>
void quantized_linear_convolution(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, Fidelity f = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const auto& Out = op.OutputTensor;
    for_each_index(Out.sizes, [&](const auto& i) {
        const std::int32_t x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[i] : 0;
        const std::int32_t f_zp = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[i] : 0;
        std::uint32_t acc = op.BiasTensor ? static_cast<std::uint32_t>((*op.BiasTensor)[i]) : 0u;
        acc += detail::convolution_sum(op, i, x_zp, f_zp);
        const std::int32_t out_zp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[i] : 0;
        if (f == Fidelity::DirectML) {
            Out[i] = requantize_directml<TOut>(wrap_int32(acc), op.FilterScaleTensor[i], op.InputScaleTensor[i],
                                               op.OutputScaleTensor[i], out_zp);
            return;
        }
        const float mult = requantize_multiplier(op.InputScaleTensor[i], op.FilterScaleTensor[i], op.OutputScaleTensor[i]);
        Out[i] = requantize<TOut>(wrap_int32(acc), mult, out_zp);
    });
}

}  // namespace qdml::reference
