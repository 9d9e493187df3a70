// qdml/reference/convolution_integer.hpp - the oracle (docs/semantics.md section 14):
//   Output[n][oc][oy][ox] = sum over (ic in oc's group, ky, kx) of
//         (X[n][ic][oy*sy + ky*dy - padTop][ox*sx + kx*dx - padLeft] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])
//   (int32, wraps mod 2^32; taps in the padding contribute 0)
// QUANTIZED_LINEAR_CONVOLUTION's sum (detail::convolution_sum); the same in
// both profiles (no float step).
#pragma once

#include <cstdint>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/convolution_integer.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"

namespace qdml::reference {

template <class TIn, class TFilter>
void convolution_integer(const ConvolutionInteger<TIn, TFilter>& op, Fidelity = kDefaultFidelity) {
    for_each_index(op.OutputTensor.sizes, [&](const auto& i) {
        const std::int32_t x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[i] : 0;
        const std::int32_t f_zp = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[i] : 0;
        op.OutputTensor[i] = wrap_int32(detail::convolution_sum(op, i, x_zp, f_zp));
    });
}

}  // namespace qdml::reference
