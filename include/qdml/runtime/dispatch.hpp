// qdml/runtime/dispatch.hpp - the runtime-typed entry: validate a desc, then
// switch once over its data types (operators/visit.hpp) to one typed call of
// the chosen implementation.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "qdml/core/data_type.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/reference/run.hpp"
#include "qdml/simd/options.hpp"
#include "qdml/simd/element_wise_clip.hpp"
#include "qdml/simd/element_wise_dequantize_linear.hpp"
#include "qdml/simd/element_wise_quantized_linear_add.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"

namespace qdml {

/// Which implementation computes the operator.
enum class Implementation {
    Reference,  ///< the scalar oracle (qdml::reference)
    Simd,       ///< the fastest bit-identical path (qdml::simd)
};

struct RunOptions {
    Implementation implementation = Implementation::Simd;
    FeatureLevel feature_level = FeatureLevel::Latest;  ///< validation target
    /// Caps the fast path's ISA (as QDML_ISA does; Best: QDML_ISA, else the
    /// best the CPU runs): the GEMM engine's path (matrix multiplication and
    /// convolution) and the element-wise loops' (simd::select_elementwise_isa).
    simd::Isa isa = simd::Isa::Best;
};

namespace detail {
// compute(d, impl): run() after validation, one switch over the types and one
// typed call (qdml::Compiled's stateless executions call it too).

inline void compute(const ElementWiseDequantizeLinearDesc& d, Implementation impl, simd::GemmOptions gemm = {}) {
    if (impl == Implementation::Simd)
        visit_typed(d, [&](const auto& op) { simd::element_wise_dequantize_linear(op, gemm); });
    else
        reference::detail::compute(d);
}

inline void compute(const ElementWiseQuantizedLinearAddDesc& d, Implementation impl, simd::GemmOptions gemm = {}) {
    if (impl == Implementation::Simd)
        visit_typed(d, [&](const auto& op) { simd::element_wise_quantized_linear_add(op, gemm); });
    else
        reference::detail::compute(d);
}

inline void compute(const QuantizedLinearMatrixMultiplyDesc& d, Implementation impl, simd::GemmOptions gemm = {}) {
    if (impl == Implementation::Simd)
        visit_typed(d, [&](const auto& op) { simd::quantized_linear_matrix_multiply(op, gemm); });
    else
        reference::detail::compute(d);
}

inline void compute(const QuantizedLinearConvolutionDesc& d, Implementation impl, simd::GemmOptions gemm = {}) {
    if (impl == Implementation::Simd)
        visit_typed(d, [&](const auto& op) { simd::quantized_linear_convolution(op, gemm); });
    else
        reference::detail::compute(d);
}

inline void compute(const ElementWiseClipDesc& d, Implementation impl, simd::GemmOptions gemm = {}) {
    if (impl == Implementation::Simd)
        visit_typed(d, [&](const auto& op) { simd::element_wise_clip(op, gemm); });
    else
        reference::detail::compute(d);
}
}  // namespace detail

/// Validates `d` (throws qdml::Error, touching no data), then computes it
/// (any of the five operator descs).
template <class Desc, class = decltype(detail::compute(std::declval<const Desc&>(), Implementation::Simd))>
void run(const Desc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    detail::compute(d, o.implementation, simd::GemmOptions{o.isa});
}

/// Which implementation, ISA path and form compute `d` under `o`, as run()
/// and compile() would: "reference", or e.g. "simd gemm avx2", "simd
/// gemm-nhwc avx2" (conv/path.hpp's forms), "simd depthwise-plane avx2",
/// "simd element-wise avx2+f16c". Validates `d` (throws qdml::Error)
/// and reads none of its data. `qdml run --verbose` prints it.
template <class Desc, class = decltype(detail::compute(std::declval<const Desc&>(), Implementation::Simd))>
std::string describe(const Desc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level);
    if (o.implementation == Implementation::Reference) return "reference";
    std::string s;
    visit_typed(d, [&](const auto& op) { s = "simd " + simd::path(op, simd::GemmOptions{o.isa}); });
    return s;
}

}  // namespace qdml
