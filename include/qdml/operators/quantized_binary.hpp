// qdml/operators/quantized_binary.hpp - what ELEMENT_WISE_QUANTIZED_LINEAR_ADD
// and QUANTIZED_LINEAR_MATRIX_MULTIPLY share: the same nine tensor members
// (A, B and Output, each with a scale and an optional zero point), checked
// the same way before each operator's own shape rules.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "qdml/core/tensor.hpp"
#include "qdml/core/validate.hpp"

namespace qdml::detail {

/// The eight input members of `d` in DML order, with their bound tensors
/// (null for an absent optional zero point).
template <class Desc>
std::array<std::pair<std::string_view, const Tensor*>, 8> quantized_binary_inputs(const Desc& d) {
    const auto opt = [](const std::optional<Tensor>& t) { return t ? &*t : nullptr; };
    return {{{"ATensor", &d.ATensor},
             {"AScaleTensor", &d.AScaleTensor},
             {"AZeroPointTensor", opt(d.AZeroPointTensor)},
             {"BTensor", &d.BTensor},
             {"BScaleTensor", &d.BScaleTensor},
             {"BZeroPointTensor", opt(d.BZeroPointTensor)},
             {"OutputScaleTensor", &d.OutputScaleTensor},
             {"OutputZeroPointTensor", opt(d.OutputZeroPointTensor)}}};
}

/// Structure of the nine tensors (A, B, Output: `data`; scales: `scale`;
/// zero points: `zero_point`), and each zero point has its tensor's type.
template <class Desc>
void validate_quantized_binary_tensors(const Validator& v, const Desc& d, const MemberSupport& data,
                                       const MemberSupport& scale, const MemberSupport& zero_point) {
    v.tensor("ATensor", d.ATensor, data);
    v.tensor("AScaleTensor", d.AScaleTensor, scale);
    if (d.AZeroPointTensor) v.tensor("AZeroPointTensor", *d.AZeroPointTensor, zero_point);
    v.tensor("BTensor", d.BTensor, data);
    v.tensor("BScaleTensor", d.BScaleTensor, scale);
    if (d.BZeroPointTensor) v.tensor("BZeroPointTensor", *d.BZeroPointTensor, zero_point);
    v.tensor("OutputScaleTensor", d.OutputScaleTensor, scale);
    if (d.OutputZeroPointTensor) v.tensor("OutputZeroPointTensor", *d.OutputZeroPointTensor, zero_point);
    v.tensor("OutputTensor", d.OutputTensor, data);

    if (d.AZeroPointTensor) v.same_type("AZeroPointTensor", *d.AZeroPointTensor, "ATensor", d.ATensor);
    if (d.BZeroPointTensor) v.same_type("BZeroPointTensor", *d.BZeroPointTensor, "BTensor", d.BTensor);
    if (d.OutputZeroPointTensor)
        v.same_type("OutputZeroPointTensor", *d.OutputZeroPointTensor, "OutputTensor", d.OutputTensor);
}

}  // namespace qdml::detail
