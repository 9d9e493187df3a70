// qdml/runtime/dispatch.hpp - the runtime-typed entry: validate a desc, then
// switch once over its data types (operators/visit.hpp) to one typed call of
// the chosen implementation.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "qdml/core/data_type.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/operators/fidelity.hpp"
#include "qdml/operators/visit.hpp"
#include "qdml/reference/run.hpp"
#include "qdml/simd/options.hpp"
#include "qdml/simd/element_wise_clip.hpp"
#include "qdml/simd/element_wise_clip1.hpp"
#include "qdml/simd/element_wise_dequantize_linear.hpp"
#include "qdml/simd/element_wise_quantize_linear.hpp"
#include "qdml/simd/element_wise_quantized_linear_add.hpp"
#include "qdml/simd/convolution_integer.hpp"
#include "qdml/simd/dynamic_quantize_linear.hpp"
#include "qdml/simd/matrix_multiply_integer.hpp"
#include "qdml/simd/matrix_multiply_integer_to_float.hpp"
#include "qdml/simd/quantized_linear_average_pooling.hpp"
#include "qdml/simd/quantized_linear_convolution.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply.hpp"
#include "qdml/simd/quantize.hpp"

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
    /// The profile (docs/semantics.md section 10): DirectML (the default,
    /// kDefaultFidelity), DirectML's own bits and refusals, or Exact, the
    /// exactly rounded arithmetic and documented rules; the reference and
    /// every fast path compute both.
    Fidelity fidelity = kDefaultFidelity;
    /// The caller's thread pool (core/executor.hpp; the adapters of
    /// qdml/exec/, or qdml::make_executor over your own): the fast path runs
    /// as tasks on it. Default: the calling thread only (qdml creates no
    /// thread). The reference always computes on the calling thread. The
    /// bits never depend on it.
    Executor executor = {};
};

namespace detail {
// dispatch(d, impl, gemm, f): run() after validation, one switch over the
// types and one typed call (qdml::Compiled's stateless executions call it
// too). A template, not one inline function per operator, so that a program can compile it once
// (QDML_EXTERN_DISPATCH below); compute() names the operator descs for run()'s
// and describe()'s overload checks.
template <class Desc>
void dispatch(const Desc& d, Implementation impl, simd::GemmOptions gemm, Fidelity f) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if (impl != Implementation::Simd) {
        reference::detail::compute(d, f);
        return;
    }
    gemm.fidelity = f;
    visit_typed(d, [&](const auto& op) {
        if constexpr (std::is_same_v<Desc, ElementWiseDequantizeLinearDesc>)
            simd::element_wise_dequantize_linear(op, gemm);
        else if constexpr (std::is_same_v<Desc, ElementWiseQuantizeLinearDesc>)
            simd::element_wise_quantize_linear(op, gemm);
        else if constexpr (std::is_same_v<Desc, ElementWiseQuantizedLinearAddDesc>)
            simd::element_wise_quantized_linear_add(op, gemm);
        else if constexpr (std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc>)
            simd::quantized_linear_matrix_multiply(op, gemm);
        else if constexpr (std::is_same_v<Desc, QuantizedLinearConvolutionDesc>)
            simd::quantized_linear_convolution(op, gemm);
        else if constexpr (std::is_same_v<Desc, MatrixMultiplyIntegerDesc>)
            simd::matrix_multiply_integer(op, gemm);
        else if constexpr (std::is_same_v<Desc, MatrixMultiplyIntegerToFloatDesc>)
            simd::matrix_multiply_integer_to_float(op, gemm);
        else if constexpr (std::is_same_v<Desc, ConvolutionIntegerDesc>)
            simd::convolution_integer(op, gemm);
        else if constexpr (std::is_same_v<Desc, ElementWiseClip1Desc>)
            simd::element_wise_clip1(op, gemm);
        else if constexpr (std::is_same_v<Desc, DynamicQuantizeLinearDesc>)
            simd::dynamic_quantize_linear(op, gemm);
        else if constexpr (std::is_same_v<Desc, QuantizedLinearAveragePoolingDesc>)
            simd::quantized_linear_average_pooling(op, gemm);
        else if constexpr (std::is_same_v<Desc, QuantizeDesc>)
            simd::quantize(op, gemm);
        else if constexpr (std::is_same_v<Desc, DequantizeDesc>)
            simd::dequantize(op, gemm);
        else
            simd::element_wise_clip(op, gemm);
    });
}

inline void compute(const ElementWiseDequantizeLinearDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const ElementWiseQuantizeLinearDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const ElementWiseQuantizedLinearAddDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const QuantizedLinearMatrixMultiplyDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const QuantizedLinearConvolutionDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const MatrixMultiplyIntegerDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const MatrixMultiplyIntegerToFloatDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const ConvolutionIntegerDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const DynamicQuantizeLinearDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const QuantizedLinearAveragePoolingDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const QuantizeDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const DequantizeDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const ElementWiseClipDesc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
inline void compute(const ElementWiseClip1Desc& d, Implementation impl, simd::GemmOptions gemm = {},
                    Fidelity f = kDefaultFidelity) {
    dispatch(d, impl, gemm, f);
}
}  // namespace detail

/// Validates `d` (throws qdml::Error, touching no data), then computes it
/// (any operator desc).
template <class Desc, class = decltype(detail::compute(std::declval<const Desc&>(), Implementation::Simd))>
void run(const Desc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level, o.fidelity);
    detail::compute(d, o.implementation, simd::GemmOptions{o.isa, o.fidelity, o.executor}, o.fidelity);
}

/// Which implementation, ISA path and form compute `d` under `o`, as run()
/// and compile() would: "reference", or e.g. "simd gemm avx2", "simd
/// gemm-nhwc avx2" (conv/path.hpp's forms), "simd depthwise-plane avx2",
/// "simd element-wise avx2+f16c". Validates `d` (throws qdml::Error)
/// and reads none of its data. `qdml run --verbose` prints it.
template <class Desc, class = decltype(detail::compute(std::declval<const Desc&>(), Implementation::Simd))>
std::string describe(const Desc& d, const RunOptions& o = {}) {
    validate(d, o.feature_level, o.fidelity);
    if (o.implementation == Implementation::Reference) return "reference";
    std::string s;
    visit_typed(d, [&](const auto& op) { s = "simd " + simd::path(op, simd::GemmOptions{o.isa, o.fidelity}); });
    return s;
}

}  // namespace qdml

// Compiling the dispatch once. A program that calls qdml::run or
// qdml::compile in many translation units compiles each operator's typed
// switch (every type combination on every ISA path) in each of them. With
// QDML_EXTERN_DISPATCH defined in all of its translation units, these
// templates are declared as explicit instantiations made elsewhere, and the
// program makes them once: one translation unit per operator that includes
// qdml/qdml.hpp and writes QDML_INSTANTIATE_DISPATCH(qdml::<Operator>Desc)
// (runtime/compiled.hpp; qdml's own runner, tests and examples build this
// way, from src/dispatch_*.cpp). Without the macro nothing changes: qdml is
// header-only.
#define QDML_DETAIL_DISPATCH_INSTANCE(EXT, Desc) \
    EXT template void qdml::detail::dispatch<Desc>(const Desc&, qdml::Implementation, qdml::simd::GemmOptions, \
                                                   qdml::Fidelity);
#if defined(QDML_EXTERN_DISPATCH)
QDML_DETAIL_FOR_EACH_DESC(QDML_DETAIL_DISPATCH_INSTANCE, extern)
#endif

// The GEMM engine's int32 driver (simd::detail::run_matmul over a
// MatrixMultiplyInteger, the 4 8-bit mixes) serves two operators:
// MATRIX_MULTIPLY_INTEGER and MATRIX_MULTIPLY_INTEGER_TO_FLOAT's exact
// profile (CONVOLUTION_INTEGER runs the convolution forms, conv/). A program
// that compiles their dispatch once can also compile it once: with
// QDML_EXTERN_INTEGER_MATMUL defined in all of its translation units, it is
// declared as made elsewhere, and one translation unit writes
// QDML_INSTANTIATE_INTEGER_MATMUL() (qdml's own programs: in
// src/dispatch_matrix_multiply_integer.cpp; it saves the engine's second
// copy in each build of the dispatch: with the third, CONVOLUTION_INTEGER's
// former patch matrix, about 45 s of g++ 12 -O3 CPU).
#define QDML_DETAIL_INTEGER_MATMUL_INSTANCE(EXT, TA, TB)                                                  \
    EXT template void qdml::simd::detail::run_matmul<qdml::MatrixMultiplyInteger<TA, TB>>(              \
        const qdml::MatrixMultiplyInteger<TA, TB>&, qdml::simd::Isa, const qdml::simd::gemm::RequantSpec&, \
        const qdml::Executor&);
#define QDML_DETAIL_INTEGER_MATMUL_INSTANCES(EXT)                          \
    QDML_DETAIL_INTEGER_MATMUL_INSTANCE(EXT, std::uint8_t, std::uint8_t) \
    QDML_DETAIL_INTEGER_MATMUL_INSTANCE(EXT, std::uint8_t, std::int8_t)  \
    QDML_DETAIL_INTEGER_MATMUL_INSTANCE(EXT, std::int8_t, std::uint8_t)  \
    QDML_DETAIL_INTEGER_MATMUL_INSTANCE(EXT, std::int8_t, std::int8_t)
#if defined(QDML_EXTERN_INTEGER_MATMUL)
QDML_DETAIL_INTEGER_MATMUL_INSTANCES(extern)
#endif
/// Makes the int32 driver in this translation unit, for the programs built
/// with QDML_EXTERN_INTEGER_MATMUL: write it once in the whole program.
#define QDML_INSTANTIATE_INTEGER_MATMUL() QDML_DETAIL_INTEGER_MATMUL_INSTANCES()

// The GEMM engine's x86 tiles (the micro-kernels with their epilogues:
// AVX-512 VNNI's, AVX-VNNI's and AVX2's), which every GEMM operator's
// dispatch calls (matrix multiplications and convolutions, with the same
// tiles), are made once the same way: with QDML_EXTERN_GEMM_KERNELS defined
// in all of a program's translation units they are declared as made
// elsewhere (x86/*/gemm_kernel.hpp), and one translation unit writes
// QDML_INSTANTIATE_GEMM_KERNELS() (qdml's own programs: in
// src/dispatch_gemm_kernels.cpp). Each GEMM operator's dispatch compiled
// them again before (g++ 12 -O3: MATRIX_MULTIPLY_INTEGER_TO_FLOAT's dispatch
// 105.6 -> 66.7 s with them declared; docs/perf/history.md#ci).
#if QDML_X86
#define QDML_INSTANTIATE_GEMM_KERNELS() \
    QDML_DETAIL_AVX512VNNI_TILES() QDML_DETAIL_AVXVNNI_TILES() QDML_DETAIL_AVX2_TILES()
#else
#define QDML_INSTANTIATE_GEMM_KERNELS()
#endif
