// qdml/runtime/dispatch.hpp - the runtime-typed entry: validate a desc, then
// switch once over (data types, rank) to one typed instantiation.
#pragma once

#include <cstdint>

#include "qdml/core/data_type.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/reference/element_wise_clip.hpp"
#include "qdml/reference/element_wise_dequantize_linear.hpp"
#include "qdml/reference/element_wise_quantized_linear_add.hpp"
#include "qdml/reference/quantized_linear_convolution.hpp"
#include "qdml/reference/quantized_linear_matrix_multiply.hpp"

namespace qdml {

/// Which implementation computes the operator.
enum class Implementation {
    Reference,  ///< the scalar oracle (qdml::reference)
};

struct RunOptions {
    Implementation implementation = Implementation::Reference;
    FeatureLevel feature_level = FeatureLevel::Latest;  ///< validation target
};

/// Validates `d` (throws qdml::Error, touching no data), then computes it.
inline void run(const ElementWiseDequantizeLinearDesc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    visit_one_of<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t>(
        d.InputTensor.Desc.DataType, [&](auto in) {
            visit_one_of<float16, float>(d.OutputTensor.Desc.DataType, [&](auto out) {
                visit_rank<1, 8>(d.InputTensor.Desc.DimensionCount, [&](auto rank) {
                    using Op = ElementWiseDequantizeLinear<typename decltype(in)::type, typename decltype(out)::type,
                                                           decltype(rank)::value>;
                    reference::element_wise_dequantize_linear(Op::bind(d));
                });
            });
        });
}

inline void run(const ElementWiseQuantizedLinearAddDesc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    visit_one_of<std::int8_t, std::uint8_t>(d.ATensor.Desc.DataType, [&](auto a) {
        visit_one_of<std::int8_t, std::uint8_t>(d.BTensor.Desc.DataType, [&](auto b) {
            visit_one_of<std::int8_t, std::uint8_t>(d.OutputTensor.Desc.DataType, [&](auto out) {
                visit_rank<1, 8>(d.ATensor.Desc.DimensionCount, [&](auto rank) {
                    using Op = ElementWiseQuantizedLinearAdd<typename decltype(a)::type, typename decltype(b)::type,
                                                             typename decltype(out)::type, decltype(rank)::value>;
                    reference::element_wise_quantized_linear_add(Op::bind(d));
                });
            });
        });
    });
}

inline void run(const QuantizedLinearMatrixMultiplyDesc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    visit_one_of<std::int8_t, std::uint8_t>(d.ATensor.Desc.DataType, [&](auto a) {
        visit_one_of<std::int8_t, std::uint8_t>(d.BTensor.Desc.DataType, [&](auto b) {
            visit_one_of<std::int8_t, std::uint8_t>(d.OutputTensor.Desc.DataType, [&](auto out) {
                using Op = QuantizedLinearMatrixMultiply<typename decltype(a)::type, typename decltype(b)::type,
                                                         typename decltype(out)::type>;
                reference::quantized_linear_matrix_multiply(Op::bind(d));
            });
        });
    });
}

inline void run(const QuantizedLinearConvolutionDesc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    visit_one_of<std::int8_t, std::uint8_t>(d.InputTensor.Desc.DataType, [&](auto in) {
        visit_one_of<std::int8_t, std::uint8_t>(d.FilterTensor.Desc.DataType, [&](auto f) {
            visit_one_of<std::int8_t, std::uint8_t>(d.OutputTensor.Desc.DataType, [&](auto out) {
                using Op = QuantizedLinearConvolution<typename decltype(in)::type, typename decltype(f)::type,
                                                      typename decltype(out)::type>;
                reference::quantized_linear_convolution(Op::bind(d));
            });
        });
    });
}

inline void run(const ElementWiseClipDesc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    visit_data_type(d.InputTensor.Desc.DataType, [&](auto t) {
        visit_rank<1, 8>(d.InputTensor.Desc.DimensionCount, [&](auto rank) {
            using Op = ElementWiseClip<typename decltype(t)::type, decltype(rank)::value>;
            reference::element_wise_clip(Op::bind(d));
        });
    });
}

}  // namespace qdml
