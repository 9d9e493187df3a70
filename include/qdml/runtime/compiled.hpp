// qdml/runtime/compiled.hpp - the compiled form of an operator, mirroring
// DirectML's compile -> (initialize ->) execute: qdml::compile(desc) validates
// the desc and derives what depends on the descs alone once (the typed
// instantiation, the loop plan, clip's bounds; with constant weights, the
// packed matmul B or convolution filter); execute(desc) then computes with
// new Data pointers. The one compile-once mechanism of the library. The
// tensor descs and parameters given to execute must equal the compiled ones.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "qdml/core/fp_env.hpp"
#include "qdml/runtime/dispatch.hpp"
#include "qdml/operators/members.hpp"
#include "qdml/simd/convolution_integer_prepared.hpp"
#include "qdml/simd/matrix_multiply_integer_prepared.hpp"
#include "qdml/simd/matrix_multiply_integer_to_float_prepared.hpp"
#include "qdml/simd/quantized_linear_convolution_prepared.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply_prepared.hpp"

namespace qdml {

namespace detail {

/// How one compiled operator computes a desc that passed execute()'s checks.
template <class Desc>
struct Form {
    virtual ~Form() = default;
    virtual void run(const Desc& d, const qdml::Executor& ex) const = 0;
};

/// run() without validation: one switch over the types, one typed call on
/// every execute (the reference; the fast path where nothing is derived
/// ahead: matmul and convolution without constant weights).
template <class Desc>
struct StatelessForm final : Form<Desc> {
    Implementation impl;
    simd::GemmOptions gemm;
    Fidelity fidelity;
    StatelessForm(Implementation i, simd::GemmOptions g, Fidelity f) : impl(i), gemm(g), fidelity(f) {}
    void run(const Desc& d, const qdml::Executor& ex) const override {
        simd::GemmOptions g = gemm;
        g.executor = ex;
        compute(d, impl, g, fidelity);
    }
};

/// The element-wise operators' prepared forms (plan and constants derived at compile).
template <class T>
struct ClipForm final : Form<ElementWiseClipDesc> {
    simd::PreparedElementWiseClip<T> prepared;
    ClipForm(const ElementWiseClip<T>& op, simd::GemmOptions g) : prepared(op, g) {}
    void run(const ElementWiseClipDesc& d, const qdml::Executor& ex) const override {
        prepared.execute(d.OutputTensor.Data, d.InputTensor.Data, ex);
    }
};

/// DEQUANTIZE_LINEAR and QUANTIZE_LINEAR: the same four members (Input,
/// Scale, an optional ZeroPoint, Output), `Prepared` their simd state.
template <class Desc, class Prepared>
struct ScaleZeroPointForm final : Form<Desc> {
    Prepared prepared;
    template <class Op>
    ScaleZeroPointForm(const Op& op, simd::GemmOptions g) : prepared(op, g) {}
    void run(const Desc& d, const qdml::Executor& ex) const override {
        prepared.execute(d.OutputTensor.Data, d.InputTensor.Data, d.ScaleTensor.Data,
                         d.ZeroPointTensor ? d.ZeroPointTensor->Data : nullptr, ex);
    }
};

/// The value of a one-element tensor (its element is at Data).
template <class T>
T scalar_at(const void* data) noexcept {
    T v;
    std::memcpy(&v, data, sizeof v);
    return v;
}
template <class T>
std::int32_t zero_point_at(const OptionalTensor& t) noexcept {
    return t ? std::int32_t{scalar_at<T>(t->Data)} : 0;
}

/// ELEMENT_WISE_QUANTIZED_LINEAR_ADD: the scales and zero points are bound
/// data, so AddParams is derived on every execute (six loads), as
/// AddParams::derive does from the typed views.
template <class TA, class TB, class TOut>
struct AddForm final : Form<ElementWiseQuantizedLinearAddDesc> {
    simd::PreparedElementWiseQuantizedLinearAdd<TA, TB, TOut> prepared;
    AddForm(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op, simd::GemmOptions g) : prepared(op, g) {}
    void run(const ElementWiseQuantizedLinearAddDesc& d, const qdml::Executor& ex) const override {
        AddParams p;
        p.a_scale = scalar_at<float>(d.AScaleTensor.Data);
        p.b_scale = scalar_at<float>(d.BScaleTensor.Data);
        p.out_scale = scalar_at<float>(d.OutputScaleTensor.Data);
        p.a_zp = zero_point_at<TA>(d.AZeroPointTensor);
        p.b_zp = zero_point_at<TB>(d.BZeroPointTensor);
        p.out = QuantizeParams::make<TOut>(zero_point_at<TOut>(d.OutputZeroPointTensor));
        prepared.execute(d.OutputTensor.Data, d.ATensor.Data, d.BTensor.Data, p, ex);
    }
};

/// Matmul and convolution with constant weights: packed at compile
/// (DirectML's initialize), `Prepared` the simd state that holds them.
template <class Desc, class Prepared>
struct WeightsForm final : Form<Desc> {
    Prepared prepared;
    WeightsForm(const Desc& d, simd::GemmOptions g, FeatureLevel level) : prepared(d, g, level) {}
    void run(const Desc& d, const qdml::Executor& ex) const override { prepared.execute_unchecked(d, ex); }
};

// make_form(op): the executor of an element-wise typed operator (types deduced).
template <class T>
std::shared_ptr<const Form<ElementWiseClipDesc>> make_form(const ElementWiseClip<T>& op, simd::GemmOptions g) {
    return std::make_shared<ClipForm<T>>(op, g);
}
template <class TIn, class TOut>
std::shared_ptr<const Form<ElementWiseDequantizeLinearDesc>> make_form(
    const ElementWiseDequantizeLinear<TIn, TOut>& op, simd::GemmOptions g) {
    return std::make_shared<
        ScaleZeroPointForm<ElementWiseDequantizeLinearDesc, simd::PreparedElementWiseDequantizeLinear<TIn, TOut>>>(op, g);
}
template <class TIn, class TOut>
std::shared_ptr<const Form<ElementWiseQuantizeLinearDesc>> make_form(const ElementWiseQuantizeLinear<TIn, TOut>& op,
                                                                      simd::GemmOptions g) {
    return std::make_shared<
        ScaleZeroPointForm<ElementWiseQuantizeLinearDesc, simd::PreparedElementWiseQuantizeLinear<TIn, TOut>>>(op, g);
}
template <class TA, class TB, class TOut>
std::shared_ptr<const Form<ElementWiseQuantizedLinearAddDesc>> make_form(
    const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op, simd::GemmOptions g) {
    return std::make_shared<AddForm<TA, TB, TOut>>(op, g);
}

/// The executor of a validated desc: with Implementation::Simd, an
/// element-wise desc gets its prepared form, a matmul (convolution) whose
/// B (Filter) is flagged OWNED_BY_DML its weights packed here; everything
/// else the stateless call.
template <class Desc>
std::shared_ptr<const Form<Desc>> compile_form(const Desc& d, const RunOptions& o) {
    const simd::GemmOptions gemm{o.isa, o.fidelity};
    if (o.implementation == Implementation::Simd) {
        if constexpr (std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc>) {
            if (weights_owned_by_dml(d))
                return std::make_shared<WeightsForm<Desc, simd::PreparedQuantizedLinearMatrixMultiply>>(
                    d, gemm, o.feature_level);
        } else if constexpr (std::is_same_v<Desc, QuantizedLinearConvolutionDesc>) {
            if (weights_owned_by_dml(d))
                return std::make_shared<WeightsForm<Desc, simd::PreparedQuantizedLinearConvolution>>(
                    d, gemm, o.feature_level);
        } else if constexpr (std::is_same_v<Desc, MatrixMultiplyIntegerDesc>) {
            if (weights_owned_by_dml(d))
                return std::make_shared<WeightsForm<Desc, simd::PreparedMatrixMultiplyInteger>>(d, gemm,
                                                                                                 o.feature_level);
        } else if constexpr (std::is_same_v<Desc, MatrixMultiplyIntegerToFloatDesc>) {
            if (weights_owned_by_dml(d))
                return std::make_shared<WeightsForm<Desc, simd::PreparedMatrixMultiplyIntegerToFloat>>(
                    d, gemm, o.feature_level);
        } else if constexpr (std::is_same_v<Desc, ConvolutionIntegerDesc>) {
            if (weights_owned_by_dml(d))
                return std::make_shared<WeightsForm<Desc, simd::PreparedConvolutionInteger>>(d, gemm,
                                                                                              o.feature_level);
        } else if constexpr (std::is_same_v<Desc, ElementWiseClip1Desc> ||
                             std::is_same_v<Desc, DynamicQuantizeLinearDesc> ||
                             std::is_same_v<Desc, QuantizedLinearAveragePoolingDesc> ||
                             std::is_same_v<Desc, QuantizeDesc> || std::is_same_v<Desc, DequantizeDesc>) {
            // no prepared form yet: the stateless call below
        } else if constexpr (simd::kAvailable && !std::is_same_v<Desc, MatrixMultiplyIntegerDesc> &&
                             !std::is_same_v<Desc, MatrixMultiplyIntegerToFloatDesc> &&
                             !std::is_same_v<Desc, ConvolutionIntegerDesc>) {
            std::shared_ptr<const Form<Desc>> e;
            visit_typed(d, [&](const auto& op) { e = make_form(op, gemm); });
            return e;
        }
    }
    return std::make_shared<StatelessForm<Desc>>(o.implementation, gemm, o.fidelity);
}

}  // namespace detail

/// An operator compiled once and executed many times, as DirectML's
/// IDMLCompiledOperator: the constructor (or qdml::compile) validates the
/// desc and derives everything that depends on the descs alone; execute()
/// takes the same desc with new Data pointers (the bindings). Copies share
/// the compiled state; execute() is const and may run concurrently.
template <class Desc>
class Compiled {
public:
    /// Validates `desc` (throws qdml::Error) and compiles it. With
    /// Implementation::Simd, a QUANTIZED_LINEAR_MATRIX_MULTIPLY whose BTensor
    /// (a QUANTIZED_LINEAR_CONVOLUTION whose FilterTensor) has Flags
    /// kTensorFlagOwnedByDml is also initialized: B, BScaleTensor and
    /// BZeroPointTensor (the filter, its scale and zero point, and the bias)
    /// are read and packed here, once, and never again.
    explicit Compiled(const Desc& desc, const RunOptions& options = {}) : desc_(desc), options_(options) {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        path_ = describe(desc, options);  // (validates)
        exec_ = detail::compile_form(desc, options);
        const auto m = detail::members(desc);
        for (std::size_t i = 0; i < kMembers; ++i) {
            if (m[i].tensor == nullptr || (constant_weights() && detail::is_weight<Desc>(m[i].name))) {
                skip_[i] = true;
                continue;
            }
            const TensorDesc& t = m[i].tensor->Desc;
            const std::uint64_t es = element_alignment(t.DataType);
            align_mask_[i] = (t.GuaranteedBaseOffsetAlignment > es ? t.GuaranteedBaseOffsetAlignment : es) - 1;
            extent_[i] = byte_count(t.DataType, *min_buffer_elements(t));
            in_place_[i] = (std::is_same_v<Desc, ElementWiseClipDesc> || std::is_same_v<Desc, ElementWiseClip1Desc>) &&
                           i + 1 < kMembers && kOutputs == 1 &&
                           detail::same_layout(m[kMembers - 1].tensor->Desc, t);
        }
    }

    /// Computes `desc`, which must equal the compiled desc except for each
    /// tensor's Data and DataSizeInBytes (a difference is a qdml::Error naming
    /// the member). The bindings are checked as validation checks them (Data
    /// set and aligned, DataSizeInBytes, a writable output that overlaps no
    /// input), by comparisons only; a failing binding throws validation's
    /// message. With constant weights, the weight members' Data are not read
    /// (they may be null). The work runs on options().executor (the
    /// compile's RunOptions), or on `executor`; the bits are the same.
    void execute(const Desc& desc) const { execute(desc, options_.executor); }
    void execute(const Desc& desc, const Executor& executor) const {
        const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
        const auto got = detail::members(desc);
        const auto want = detail::members(desc_);
        for (std::size_t i = 0; i < kMembers; ++i) {
            const bool same = got[i].tensor == nullptr
                                  ? want[i].tensor == nullptr
                                  : want[i].tensor != nullptr && same_desc(got[i].tensor->Desc, want[i].tensor->Desc);
            if (!same) mismatch(got[i].name);
        }
        if (const char* p = detail::changed_param(desc, desc_)) mismatch(p);
        if (!bindings_ok(got)) reject_bindings(desc);
        exec_->run(desc, executor);
    }

    /// Which implementation, ISA path and form compute it (qdml::describe()).
    const std::string& path() const noexcept { return path_; }
    /// The compiled desc (with the Data pointers it was compiled with).
    const Desc& desc() const noexcept { return desc_; }
    const RunOptions& options() const noexcept { return options_; }

private:
    static constexpr std::size_t kMembers = std::tuple_size_v<decltype(detail::members(std::declval<const Desc&>()))>;
    static constexpr std::size_t kOutputs = detail::output_count<Desc>;

    bool constant_weights() const noexcept {
        return options_.implementation == Implementation::Simd && detail::weights_owned_by_dml(desc_);
    }

    [[noreturn]] static void mismatch(std::string_view member) {
        throw Error(std::string(Desc::OperatorName), std::string(member),
                    "differs from the compiled desc (execute may change only Data and DataSizeInBytes)");
    }

    /// Validation's binding rules for descs equal to the compiled one, by
    /// comparisons against values derived at compile.
    bool bindings_ok(const std::array<detail::BoundMember, kMembers>& m) const noexcept {
        for (std::size_t i = 0; i < kMembers; ++i) {
            if (skip_[i]) continue;
            const Tensor& t = *m[i].tensor;
            const auto a = reinterpret_cast<std::uintptr_t>(t.Data);
            if (a == 0 || (a & align_mask_[i]) != 0) return false;
            if (t.DataSizeInBytes != 0 && t.DataSizeInBytes < t.Desc.TotalTensorSizeInBytes) return false;
        }
        // Each output (the last kOutputs members) writable and overlapping no
        // member before it (the inputs and the earlier outputs).
        for (std::size_t j = kMembers - kOutputs; j < kMembers; ++j) {
            const Tensor& out = *m[j].tensor;
            if (out.ReadOnly) return false;
            const auto o0 = reinterpret_cast<std::uintptr_t>(out.Data), o1 = o0 + extent_[j];
            for (std::size_t i = 0; i < j; ++i) {
                if (skip_[i]) continue;
                const auto i0 = reinterpret_cast<std::uintptr_t>(m[i].tensor->Data), i1 = i0 + extent_[i];
                if (o0 < i1 && i0 < o1 && !(in_place_[i] && out.Data == m[i].tensor->Data)) return false;
            }
        }
        return true;
    }

    /// A binding failed: validation of the desc (constant weights as
    /// compiled) throws the message run() would give.
    [[noreturn]] void reject_bindings(const Desc& desc) const {
        Desc full = desc;
        if constexpr (detail::has_prepared_form<Desc>)
            if (constant_weights()) detail::copy_weights(desc_, full);
        validate(full, options_.feature_level, options_.fidelity);
        throw Error(std::string(Desc::OperatorName), "execute",
                    "a binding failed Compiled's checks but passed validation (a qdml bug)");
    }

    Desc desc_;
    RunOptions options_;
    std::string path_;
    std::shared_ptr<const detail::Form<Desc>> exec_;
    std::array<bool, kMembers> skip_{};                 // absent, or a constant weight
    std::array<std::uintptr_t, kMembers> align_mask_{};  // max(element size, GuaranteedBaseOffsetAlignment) - 1
    std::array<std::uint64_t, kMembers> extent_{};       // bytes the elements span
    std::array<bool, kMembers> in_place_{};             // clip's input: may be the output's identical region
};

/// Validates and compiles `desc` (see Compiled); `options` as for run().
template <class Desc>
Compiled<Desc> compile(const Desc& desc, const RunOptions& options = {}) {
    return Compiled<Desc>(desc, options);
}

}  // namespace qdml

// QDML_EXTERN_DISPATCH (runtime/dispatch.hpp): compile()'s forms are made
// elsewhere too, with the dispatch, by QDML_INSTANTIATE_DISPATCH(Desc) in one
// translation unit per operator.
#define QDML_DETAIL_COMPILE_INSTANCE(EXT, Desc)                                                       \
    EXT template std::shared_ptr<const qdml::detail::Form<Desc>> qdml::detail::compile_form<Desc>( \
        const Desc&, const qdml::RunOptions&);
#if defined(QDML_EXTERN_DISPATCH)
QDML_DETAIL_FOR_EACH_DESC(QDML_DETAIL_COMPILE_INSTANCE, extern)
#endif
/// Makes one operator's dispatch and executors in this translation unit, for
/// the programs built with QDML_EXTERN_DISPATCH: write it at namespace scope,
/// after including qdml/qdml.hpp, once per operator in the whole program.
#define QDML_INSTANTIATE_DISPATCH(Desc) QDML_DETAIL_DISPATCH_INSTANCE(, Desc) QDML_DETAIL_COMPILE_INSTANCE(, Desc)
