// qdml/directml.hpp - the drop-in entry for DirectML code: hand qdml the same
// DML_OPERATOR_DESC a DirectML test suite builds to create its operator, with
// CPU copies of its buffers, and get the golden output.
//
//   qdml::dml::execute(opDesc, {bufferPerTensorMember...});   // throws qdml::Error
//   qdml::dml::try_execute(opDesc, bindings)                  // HRESULT-style, no exceptions
//   qdml::dml::validate(opDesc, bindings)                     // the checks only
//   qdml::dml::calc_buffer_tensor_size(type, count, sizes, strides)   // DMLCalcBufferTensorSize
//
// Declares DirectML's structs itself unless DirectML.h is available
// (qdml/directml/types.hpp). Unlike qdml/qdml.hpp, this header puts names in
// the global namespace (DirectML's DML_* types, and UINT/UINT64/FLOAT when
// there is no SDK), so it is not part of the umbrella header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>

#include "qdml/runtime/dispatch.hpp"
// After every other qdml header: it may include DirectML.h (and windows.h).
#include "qdml/directml/convert.hpp"

namespace qdml::dml {

/// DMLCalcBufferTensorSize as DirectML documents it (learn.microsoft.com,
/// "DirectML helper functions", and DirectMLX.h): (dot(Sizes - 1, Strides) + 1)
/// * element size, rounded up to a multiple of 4; without strides, the
/// product of Sizes times the element size, rounded up the same way. Returns
/// 0 for a data type without a size (UNKNOWN, or not a DML_TENSOR_DATA_TYPE).
/// Computed in 64 bits (the documented listing sums the index of the last
/// element in a 32-bit UINT; the results agree wherever that does not wrap);
/// returns 0 on 64-bit overflow, or for a null `sizes` or a DimensionCount
/// outside 1..8.
inline UINT64 calc_buffer_tensor_size(DML_TENSOR_DATA_TYPE data_type, UINT dimension_count, const UINT* sizes,
                                      const UINT* strides) noexcept {
    if (sizes == nullptr || dimension_count == 0 || dimension_count > kMaxDimensions) return 0;
    TensorDesc d;
    d.DataType = static_cast<TensorDataType>(data_type);
    d.DimensionCount = dimension_count;
    for (UINT i = 0; i < dimension_count; ++i) d.Sizes[i] = sizes[i];
    if (strides != nullptr) {
        d.Strides.emplace();
        for (UINT i = 0; i < dimension_count; ++i) (*d.Strides)[i] = strides[i];
    }
    return qdml::calc_buffer_tensor_size(d).value_or(0);
}

/// The same, for a buffer tensor desc.
inline UINT64 calc_buffer_tensor_size(const DML_BUFFER_TENSOR_DESC& d) noexcept {
    return calc_buffer_tensor_size(d.DataType, d.DimensionCount, d.Sizes, d.Strides);
}

/// A byte span of a contiguous container: Binding{data, size in bytes}.
template <class C>
Binding buffer(C& c) noexcept {
    return Binding{static_cast<void*>(c.data()), static_cast<std::uint64_t>(c.size() * sizeof(*c.data()))};
}

/// What execute runs and validates against.
struct ExecuteOptions {
    /// Validation target: narrows data types and dimension counts to that
    /// level's tables, and rejects an operator introduced later.
    DML_FEATURE_LEVEL feature_level = static_cast<DML_FEATURE_LEVEL>(qdml::FeatureLevel::Latest);
    Implementation implementation = RunOptions{}.implementation;  ///< as qdml::run's default
    Fidelity fidelity = RunOptions{}.fidelity;                    ///< the profile, as qdml::run's default
    Executor executor = {};  ///< the caller's thread pool (RunOptions::executor); default: the calling thread
};

namespace detail {
inline RunOptions run_options(const ExecuteOptions& o) {
    RunOptions r;
    r.implementation = o.implementation;
    r.feature_level = feature_level(o.feature_level);
    r.fidelity = o.fidelity;
    r.executor = o.executor;
    return r;
}
}  // namespace detail

/// Converts `op` to qdml's desc, validates it as DirectML would (and against
/// `options.feature_level`), then computes it with the chosen implementation.
/// `bindings` holds one byte span per tensor member of the operator desc, in
/// the desc's member order (DirectML's binding order: the inputs, then the
/// output); an absent optional tensor gets an empty span. Throws qdml::Error
/// naming the operator, the member and the rule (dml::NotImplemented for an
/// operator type qdml does not implement) before writing anything.
inline void execute(const DML_OPERATOR_DESC& op, Bindings bindings, const ExecuteOptions& options = {}) {
    const RunOptions o = detail::run_options(options);
    detail::visit_converted(op, bindings, [&](const auto& desc) { qdml::run(desc, o); });
}

/// execute's checks alone: converts and validates, computes nothing.
inline void validate(const DML_OPERATOR_DESC& op, Bindings bindings, const ExecuteOptions& options = {}) {
    const RunOptions o = detail::run_options(options);
    detail::visit_converted(op, bindings, [&](const auto& desc) { qdml::validate(desc, o.feature_level, o.fidelity); });
}

/// HRESULT values (the numbers winerror.h gives S_OK, E_INVALIDARG,
/// E_NOTIMPL and E_OUTOFMEMORY).
inline constexpr std::int32_t kOk = 0;
inline constexpr std::int32_t kInvalidArg = static_cast<std::int32_t>(0x80070057u);
inline constexpr std::int32_t kNotImpl = static_cast<std::int32_t>(0x80004001u);
inline constexpr std::int32_t kOutOfMemory = static_cast<std::int32_t>(0x8007000Eu);
inline constexpr std::int32_t kFail = static_cast<std::int32_t>(0x80004005u);

/// The outcome of try_execute: an HRESULT and, on failure, the message
/// ("OPERATOR: Member: rule").
struct Result {
    std::int32_t hr = kOk;
    std::string message;
    bool ok() const noexcept { return hr >= 0; }
};

/// execute without exceptions: kOk; kInvalidArg where DirectML returns
/// E_INVALIDARG (an invalid desc, binding or feature level); kNotImpl for a
/// valid operator type qdml does not implement; kOutOfMemory; kFail for
/// anything else.
inline Result try_execute(const DML_OPERATOR_DESC& op, Bindings bindings, const ExecuteOptions& options = {}) noexcept {
    Result r;
    try {
        execute(op, bindings, options);
        return r;
    } catch (const NotImplemented& e) {
        r.hr = kNotImpl;
        try { r.message = e.what(); } catch (...) {}
    } catch (const Error& e) {
        r.hr = kInvalidArg;
        try { r.message = e.what(); } catch (...) {}
    } catch (const std::bad_alloc&) {
        r.hr = kOutOfMemory;
    } catch (...) {
        r.hr = kFail;
    }
    return r;
}

}  // namespace qdml::dml
