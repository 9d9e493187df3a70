// qdml/runtime/compiled.hpp - the compiled form of an operator, mirroring
// DirectML's compile -> (initialize ->) execute: qdml::compile(desc) validates
// the desc and derives what depends on the descs alone once (the typed
// instantiation, the loop plan, clip's bounds; with a constant B, the packed
// matmul weights); execute(desc) then computes with new Data pointers. The
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

#include "qdml/runtime/dispatch.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply_prepared.hpp"

namespace qdml {

namespace detail {

/// One tensor member of a desc as execute sees it: null when absent.
struct BoundMember {
    std::string_view name;
    const Tensor* tensor;
};
inline const Tensor* bound(const Tensor& t) noexcept { return &t; }
inline const Tensor* bound(const OptionalTensor& t) noexcept { return t ? &*t : nullptr; }

// members(d): the tensor members in DirectML's binding order (inputs, then the output, always last).
inline std::array<BoundMember, 4> members(const ElementWiseDequantizeLinearDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"ScaleTensor", bound(d.ScaleTensor)},
             {"ZeroPointTensor", bound(d.ZeroPointTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
template <class D>  // ELEMENT_WISE_QUANTIZED_LINEAR_ADD and QUANTIZED_LINEAR_MATRIX_MULTIPLY: the same members
std::array<BoundMember, 9> quantized_binary_members(const D& d) noexcept {
    return {{{"ATensor", bound(d.ATensor)}, {"AScaleTensor", bound(d.AScaleTensor)},
             {"AZeroPointTensor", bound(d.AZeroPointTensor)}, {"BTensor", bound(d.BTensor)},
             {"BScaleTensor", bound(d.BScaleTensor)}, {"BZeroPointTensor", bound(d.BZeroPointTensor)},
             {"OutputScaleTensor", bound(d.OutputScaleTensor)}, {"OutputZeroPointTensor", bound(d.OutputZeroPointTensor)},
             {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 9> members(const ElementWiseQuantizedLinearAddDesc& d) noexcept {
    return quantized_binary_members(d);
}
inline std::array<BoundMember, 9> members(const QuantizedLinearMatrixMultiplyDesc& d) noexcept {
    return quantized_binary_members(d);
}
inline std::array<BoundMember, 10> members(const QuantizedLinearConvolutionDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"InputScaleTensor", bound(d.InputScaleTensor)},
             {"InputZeroPointTensor", bound(d.InputZeroPointTensor)}, {"FilterTensor", bound(d.FilterTensor)},
             {"FilterScaleTensor", bound(d.FilterScaleTensor)}, {"FilterZeroPointTensor", bound(d.FilterZeroPointTensor)},
             {"BiasTensor", bound(d.BiasTensor)}, {"OutputScaleTensor", bound(d.OutputScaleTensor)},
             {"OutputZeroPointTensor", bound(d.OutputZeroPointTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}
inline std::array<BoundMember, 2> members(const ElementWiseClipDesc& d) noexcept {
    return {{{"InputTensor", bound(d.InputTensor)}, {"OutputTensor", bound(d.OutputTensor)}}};
}

// changed_param(a, b): the first non-tensor member that differs (bit for bit), or null.
template <class T>
bool same_bits(const T& a, const T& b) noexcept {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}
inline const char* changed_param(const ElementWiseDequantizeLinearDesc&, const ElementWiseDequantizeLinearDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const ElementWiseQuantizedLinearAddDesc&, const ElementWiseQuantizedLinearAddDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const QuantizedLinearMatrixMultiplyDesc&, const QuantizedLinearMatrixMultiplyDesc&) noexcept {
    return nullptr;
}
inline const char* changed_param(const QuantizedLinearConvolutionDesc& a, const QuantizedLinearConvolutionDesc& b) noexcept {
    if (a.DimensionCount != b.DimensionCount) return "DimensionCount";
    if (a.Strides != b.Strides) return "Strides";
    if (a.Dilations != b.Dilations) return "Dilations";
    if (a.StartPadding != b.StartPadding) return "StartPadding";
    if (a.EndPadding != b.EndPadding) return "EndPadding";
    if (a.GroupCount != b.GroupCount) return "GroupCount";
    return nullptr;
}
inline const char* changed_param(const ElementWiseClipDesc& a, const ElementWiseClipDesc& b) noexcept {
    if (a.ScaleBias.has_value() != b.ScaleBias.has_value() ||
        (a.ScaleBias && !(same_bits(a.ScaleBias->Scale, b.ScaleBias->Scale) &&
                          same_bits(a.ScaleBias->Bias, b.ScaleBias->Bias))))
        return "ScaleBias";
    if (!same_bits(a.Min, b.Min)) return "Min";
    if (!same_bits(a.Max, b.Max)) return "Max";
    return nullptr;
}

/// How one compiled operator computes a desc that passed execute()'s checks.
template <class Desc>
struct Executor {
    virtual ~Executor() = default;
    virtual void run(const Desc& d) const = 0;
};

/// run() without validation: one switch over the types, one typed call on
/// every execute (the reference; matmul without constant weights;
/// convolution, whose prepared form is still to come: replace this
/// executor in compile_executor below when it lands).
template <class Desc>
struct StatelessExecutor final : Executor<Desc> {
    Implementation impl;
    explicit StatelessExecutor(Implementation i) : impl(i) {}
    void run(const Desc& d) const override { compute(d, impl); }
};

inline char* byte_ptr(const void* p) noexcept {
    return const_cast<char*>(static_cast<const char*>(p));
}

/// ELEMENT_WISE_CLIP on element type T: loop plan and bounds derived at compile.
template <class T>
struct ClipExecutor final : Executor<ElementWiseClipDesc> {
    simd::LoopPlan<2> plan;
    ClipParams<T> params;
    explicit ClipExecutor(const ElementWiseClip<T>& op)
        : plan(simd::detail::clip_plan(op)), params(ClipParams<T>::derive(op)) {}
    void run(const ElementWiseClipDesc& d) const override {
        simd::detail::clip_rows<T>(plan, {byte_ptr(d.OutputTensor.Data), byte_ptr(d.InputTensor.Data)}, params);
    }
};

/// ELEMENT_WISE_DEQUANTIZE_LINEAR: loop plan derived at compile.
template <class TIn, class TOut>
struct DequantizeExecutor final : Executor<ElementWiseDequantizeLinearDesc> {
    simd::LoopPlan<4> plan;
    explicit DequantizeExecutor(const ElementWiseDequantizeLinear<TIn, TOut>& op)
        : plan(simd::detail::dequantize_plan(op)) {}
    void run(const ElementWiseDequantizeLinearDesc& d) const override {
        const void* zp = d.ZeroPointTensor ? d.ZeroPointTensor->Data : &simd::detail::kNoZeroPoint<TIn>;
        simd::detail::dequantize_rows<TIn, TOut>(plan, {byte_ptr(d.OutputTensor.Data), byte_ptr(d.InputTensor.Data),
                                                        byte_ptr(d.ScaleTensor.Data), byte_ptr(zp)});
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

/// ELEMENT_WISE_QUANTIZED_LINEAR_ADD: loop plan derived at compile; the
/// scales and zero points are bound data, so AddParams is derived on every
/// execute (six loads), as AddParams::derive does from the typed views.
template <class TA, class TB, class TOut>
struct AddExecutor final : Executor<ElementWiseQuantizedLinearAddDesc> {
    simd::LoopPlan<3> plan;
    explicit AddExecutor(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op) : plan(simd::detail::add_plan(op)) {}
    void run(const ElementWiseQuantizedLinearAddDesc& d) const override {
        AddParams p;
        p.a_scale = scalar_at<float>(d.AScaleTensor.Data);
        p.b_scale = scalar_at<float>(d.BScaleTensor.Data);
        p.out_scale = scalar_at<float>(d.OutputScaleTensor.Data);
        p.a_zp = zero_point_at<TA>(d.AZeroPointTensor);
        p.b_zp = zero_point_at<TB>(d.BZeroPointTensor);
        p.out = QuantizeParams::make<TOut>(zero_point_at<TOut>(d.OutputZeroPointTensor));
        simd::detail::add_rows<TA, TB, TOut>(
            plan, {byte_ptr(d.OutputTensor.Data), byte_ptr(d.ATensor.Data), byte_ptr(d.BTensor.Data)}, p);
    }
};

/// QUANTIZED_LINEAR_MATRIX_MULTIPLY with constant weights: B packed at compile.
struct PreparedMatmulExecutor final : Executor<QuantizedLinearMatrixMultiplyDesc> {
    simd::PreparedQuantizedLinearMatrixMultiply prepared;
    PreparedMatmulExecutor(const QuantizedLinearMatrixMultiplyDesc& d, FeatureLevel level)
        : prepared(d, simd::GemmOptions{}, level) {}
    void run(const QuantizedLinearMatrixMultiplyDesc& d) const override { prepared.execute_unchecked(d); }
};

// make_executor(op): the executor of an element-wise typed operator (types deduced).
template <class T>
std::shared_ptr<const Executor<ElementWiseClipDesc>> make_executor(const ElementWiseClip<T>& op) {
    return std::make_shared<ClipExecutor<T>>(op);
}
template <class TIn, class TOut>
std::shared_ptr<const Executor<ElementWiseDequantizeLinearDesc>> make_executor(
    const ElementWiseDequantizeLinear<TIn, TOut>& op) {
    return std::make_shared<DequantizeExecutor<TIn, TOut>>(op);
}
template <class TA, class TB, class TOut>
std::shared_ptr<const Executor<ElementWiseQuantizedLinearAddDesc>> make_executor(
    const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op) {
    return std::make_shared<AddExecutor<TA, TB, TOut>>(op);
}

/// The executor of a validated element-wise desc: the SIMD path with its
/// plan derived here, or the stateless call.
template <class Desc>
std::shared_ptr<const Executor<Desc>> compile_executor(const Desc& d, const RunOptions& o) {
    if constexpr (simd::kAvailable) {
        if (o.implementation == Implementation::Simd) {
            std::shared_ptr<const Executor<Desc>> e;
            visit_typed(d, [&](const auto& op) { e = make_executor(op); });
            return e;
        }
    }
    return std::make_shared<StatelessExecutor<Desc>>(o.implementation);
}

inline std::shared_ptr<const Executor<QuantizedLinearMatrixMultiplyDesc>> compile_executor(
    const QuantizedLinearMatrixMultiplyDesc& d, const RunOptions& o) {
    if (o.implementation == Implementation::Simd && (d.BTensor.Desc.Flags & kTensorFlagOwnedByDml))
        return std::make_shared<PreparedMatmulExecutor>(d, o.feature_level);
    return std::make_shared<StatelessExecutor<QuantizedLinearMatrixMultiplyDesc>>(o.implementation);
}

inline std::shared_ptr<const Executor<QuantizedLinearConvolutionDesc>> compile_executor(
    const QuantizedLinearConvolutionDesc&, const RunOptions& o) {
    // The seam for a prepared convolution (the filter packed once when
    // FilterTensor is OWNED_BY_DML): until it lands, the stateless call.
    return std::make_shared<StatelessExecutor<QuantizedLinearConvolutionDesc>>(o.implementation);
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
    /// has Flags kTensorFlagOwnedByDml is also initialized: B, BScaleTensor
    /// and BZeroPointTensor are read here, once, and never again.
    explicit Compiled(const Desc& desc, const RunOptions& options = {}) : desc_(desc), options_(options) {
        validate(desc, options.feature_level);
        exec_ = detail::compile_executor(desc, options);
        const auto m = detail::members(desc);
        for (std::size_t i = 0; i < kMembers; ++i) {
            if (m[i].tensor == nullptr || (constant_weights() && is_weight(m[i].name))) {
                skip_[i] = true;
                continue;
            }
            const TensorDesc& t = m[i].tensor->Desc;
            const std::uint64_t es = element_size(t.DataType);
            align_mask_[i] = (t.GuaranteedBaseOffsetAlignment > es ? t.GuaranteedBaseOffsetAlignment : es) - 1;
            extent_[i] = *min_buffer_elements(t) * es;
            in_place_[i] = std::is_same_v<Desc, ElementWiseClipDesc> && i + 1 < kMembers &&
                           detail::same_layout(m[kMembers - 1].tensor->Desc, t);
        }
    }

    /// Computes `desc`, which must equal the compiled desc except for each
    /// tensor's Data and DataSizeInBytes (a difference is a qdml::Error naming
    /// the member). The bindings are checked as validation checks them (Data
    /// set and aligned, DataSizeInBytes, a writable output that overlaps no
    /// input), by comparisons only; a failing binding throws validation's
    /// message. With constant matmul weights, B's, BScale's and BZeroPoint's
    /// Data are not read (they may be null).
    void execute(const Desc& desc) const {
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
        exec_->run(desc);
    }

    /// The compiled desc (with the Data pointers it was compiled with).
    const Desc& desc() const noexcept { return desc_; }
    const RunOptions& options() const noexcept { return options_; }

private:
    static constexpr std::size_t kMembers = std::tuple_size_v<decltype(detail::members(std::declval<const Desc&>()))>;

    bool constant_weights() const noexcept {
        if constexpr (std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc>)
            return options_.implementation == Implementation::Simd && (desc_.BTensor.Desc.Flags & kTensorFlagOwnedByDml);
        return false;
    }
    static bool is_weight(std::string_view m) noexcept {
        return m == "BTensor" || m == "BScaleTensor" || m == "BZeroPointTensor";
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
        const Tensor& out = *m[kMembers - 1].tensor;
        if (out.ReadOnly) return false;
        const auto o0 = reinterpret_cast<std::uintptr_t>(out.Data), o1 = o0 + extent_[kMembers - 1];
        for (std::size_t i = 0; i + 1 < kMembers; ++i) {
            if (skip_[i]) continue;
            const auto i0 = reinterpret_cast<std::uintptr_t>(m[i].tensor->Data), i1 = i0 + extent_[i];
            if (o0 < i1 && i0 < o1 && !(in_place_[i] && out.Data == m[i].tensor->Data)) return false;
        }
        return true;
    }

    /// A binding failed: validation of the desc (constant weights as
    /// compiled) throws the message run() would give.
    [[noreturn]] void reject_bindings(const Desc& desc) const {
        Desc full = desc;
        if constexpr (std::is_same_v<Desc, QuantizedLinearMatrixMultiplyDesc>)
            if (constant_weights()) {
                full.BTensor = desc_.BTensor;
                full.BScaleTensor = desc_.BScaleTensor;
                full.BZeroPointTensor = desc_.BZeroPointTensor;
            }
        validate(full, options_.feature_level);
        throw Error(std::string(Desc::OperatorName), "execute",
                    "a binding failed Compiled's checks but passed validation (a qdml bug)");
    }

    Desc desc_;
    RunOptions options_;
    std::shared_ptr<const detail::Executor<Desc>> exec_;
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
