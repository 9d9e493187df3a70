// tools/case_io.hpp - operator case files (docs/case-format.md):
// loading a case.json and its .npy buffers into qdml descs, running it, and
// comparing the output against the expected tensor. Used by the `qdml`
// runner, the fuzz targets, the Python module and the DirectML case tests. Every rejected input throws InputError
// (file: member: rule) or qdml::Error (validation); nothing else escapes.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "npy.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/qdml.hpp"

namespace qdml::cli {

using json = nlohmann::json;

/// Largest output buffer the runner allocates (inputs are bounded by their files).
inline constexpr std::uint64_t kMaxOutputBytes = std::uint64_t{1} << 30;

/// One tensor of a case: its desc and the memory it is bound to. An output's
/// storage stays empty until the case has been validated (allocate_output).
struct Buffer {
    TensorDesc desc;
    std::vector<std::uint64_t> storage;  // 8-byte aligned, TotalTensorSizeInBytes rounded up
    bool is_output = false;

    Tensor tensor() {
        return Tensor{desc, storage.data(), storage.size() * sizeof(std::uint64_t)};
    }
    std::uint8_t* bytes() { return reinterpret_cast<std::uint8_t*>(storage.data()); }
    const std::uint8_t* bytes() const { return reinterpret_cast<const std::uint8_t*>(storage.data()); }
};

/// One output's expected tensor. The .npy is checked when the case loads
/// and read only while comparing, a piece at a time.
struct ExpectedOutput {
    std::string member;          // the output member it is of ("OutputTensor", ...)
    std::filesystem::path data;  // the .npy file
    double tolerance = 0;
};

/// What a case expects of the run.
struct Expectation {
    enum class Kind { None, Data, Error } kind = Kind::None;
    /// Kind::Data: one per output member, in member order ("expected" itself
    /// for an operator with one output; keyed by member for several).
    std::vector<ExpectedOutput> outputs;
    /// The profile the expected output (or refusal) belongs to, "fidelity":
    /// "directml" or "exact" (absent: the runner's --fidelity, else its default).
    std::optional<Fidelity> fidelity;
};

/// A loaded case.
struct Case {
    std::string file;      // the case.json path, as given
    std::string operator_name;
    std::map<std::string, Buffer> tensors;  // by DESC member name
    json params = json::object();
    Expectation expected;
};

// ---------------------------------------------------------------------------
// Operators the case format knows: DESC tensor members and params.

enum class MemberKind { Required, Optional, Output };
struct MemberSpec {
    std::string_view name;
    MemberKind kind;
};
struct OperatorSpec {
    std::string_view name;
    std::vector<MemberSpec> members;
    std::vector<std::string_view> params;
};

inline const std::vector<OperatorSpec>& operator_specs() {
    using K = MemberKind;
    static const std::vector<OperatorSpec> specs = {
        {ElementWiseDequantizeLinearDesc::OperatorName,
         {{"InputTensor", K::Required}, {"ScaleTensor", K::Required}, {"ZeroPointTensor", K::Optional},
          {"OutputTensor", K::Output}},
         {}},
        {ElementWiseQuantizeLinearDesc::OperatorName,
         {{"InputTensor", K::Required}, {"ScaleTensor", K::Required}, {"ZeroPointTensor", K::Optional},
          {"OutputTensor", K::Output}},
         {}},
        {ElementWiseQuantizedLinearAddDesc::OperatorName,
         {{"ATensor", K::Required}, {"AScaleTensor", K::Required}, {"AZeroPointTensor", K::Optional},
          {"BTensor", K::Required}, {"BScaleTensor", K::Required}, {"BZeroPointTensor", K::Optional},
          {"OutputScaleTensor", K::Required}, {"OutputZeroPointTensor", K::Optional}, {"OutputTensor", K::Output}},
         {}},
        {QuantizedLinearMatrixMultiplyDesc::OperatorName,
         {{"ATensor", K::Required}, {"AScaleTensor", K::Required}, {"AZeroPointTensor", K::Optional},
          {"BTensor", K::Required}, {"BScaleTensor", K::Required}, {"BZeroPointTensor", K::Optional},
          {"OutputScaleTensor", K::Required}, {"OutputZeroPointTensor", K::Optional}, {"OutputTensor", K::Output}},
         {}},
        {QuantizedLinearConvolutionDesc::OperatorName,
         {{"InputTensor", K::Required}, {"InputScaleTensor", K::Required}, {"InputZeroPointTensor", K::Optional},
          {"FilterTensor", K::Required}, {"FilterScaleTensor", K::Required}, {"FilterZeroPointTensor", K::Optional},
          {"BiasTensor", K::Optional}, {"OutputScaleTensor", K::Required}, {"OutputZeroPointTensor", K::Optional},
          {"OutputTensor", K::Output}},
         {"DimensionCount", "Strides", "Dilations", "StartPadding", "EndPadding", "GroupCount"}},
        {ElementWiseClipDesc::OperatorName,
         {{"InputTensor", K::Required}, {"OutputTensor", K::Output}},
         {"ScaleBias", "Min", "Max"}},
        {ElementWiseClip1Desc::OperatorName,
         {{"InputTensor", K::Required}, {"OutputTensor", K::Output}},
         {"ScaleBias", "MinMaxDataType", "Min", "Max"}},
        {MatrixMultiplyIntegerDesc::OperatorName,
         {{"ATensor", K::Required}, {"AZeroPointTensor", K::Optional}, {"BTensor", K::Required},
          {"BZeroPointTensor", K::Optional}, {"OutputTensor", K::Output}},
         {}},
        {MatrixMultiplyIntegerToFloatDesc::OperatorName,
         {{"ATensor", K::Required}, {"AScaleTensor", K::Required}, {"AZeroPointTensor", K::Optional},
          {"BTensor", K::Required}, {"BScaleTensor", K::Required}, {"BZeroPointTensor", K::Optional},
          {"BiasTensor", K::Optional}, {"OutputTensor", K::Output}},
         {}},
        {ConvolutionIntegerDesc::OperatorName,
         {{"InputTensor", K::Required}, {"InputZeroPointTensor", K::Optional}, {"FilterTensor", K::Required},
          {"FilterZeroPointTensor", K::Optional}, {"OutputTensor", K::Output}},
         {"DimensionCount", "Strides", "Dilations", "StartPadding", "EndPadding", "GroupCount"}},
        {DynamicQuantizeLinearDesc::OperatorName,
         {{"InputTensor", K::Required}, {"OutputTensor", K::Output}, {"OutputScaleTensor", K::Output},
          {"OutputZeroPointTensor", K::Output}},
         {}},
        {QuantizedLinearAveragePoolingDesc::OperatorName,
         {{"InputTensor", K::Required}, {"InputScaleTensor", K::Required}, {"InputZeroPointTensor", K::Optional},
          {"OutputScaleTensor", K::Required}, {"OutputZeroPointTensor", K::Optional}, {"OutputTensor", K::Output}},
         {"DimensionCount", "Strides", "WindowSize", "StartPadding", "EndPadding", "Dilations", "IncludePadding"}},
        // QUANTIZE and DEQUANTIZE: "QuantizationTensors" is a JSON array (parse_case).
        {QuantizeDesc::OperatorName,
         {{"InputTensor", K::Required}, {"QuantizationTensors[0]", K::Optional},
          {"QuantizationTensors[1]", K::Optional}, {"OutputTensor", K::Output}},
         {"QuantizationType"}},
        {DequantizeDesc::OperatorName,
         {{"InputTensor", K::Required}, {"QuantizationTensors[0]", K::Optional},
          {"QuantizationTensors[1]", K::Optional}, {"OutputTensor", K::Output}},
         {"QuantizationType"}},
    };
    return specs;
}

inline std::string join_names(const std::vector<std::string_view>& v) {
    std::string r;
    for (auto s : v) r += (r.empty() ? "" : ", ") + std::string(s);
    return r;
}

// ---------------------------------------------------------------------------
// JSON values

namespace detail {

inline std::string json_kind(const json& j) { return j.type_name(); }

/// A float from a JSON number or one of the strings NaN, Infinity, -Infinity.
inline std::optional<double> json_float(const json& j) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
        const auto& s = j.get_ref<const std::string&>();
        if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    return std::nullopt;
}

template <class T>
void put(std::uint8_t* dst, std::uint64_t i, T v) {
    std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
}

template <class T>
bool put_int(std::uint8_t* dst, std::uint64_t i, const json& j) {
    if (j.is_number_unsigned()) {
        const auto u = j.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return false;
        put<T>(dst, i, static_cast<T>(u));
        return true;
    }
    if (j.is_number_integer()) {
        const auto s = j.get<std::int64_t>();
        if (s < 0 && !std::is_signed_v<T>) return false;
        if (std::is_signed_v<T> && (s < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                                    s > static_cast<std::int64_t>(std::numeric_limits<T>::max())))
            return false;
        put<T>(dst, i, static_cast<T>(s));
        return true;
    }
    return false;
}

/// Stores JSON value `j` as element `i` of a `t` buffer; false if it is not
/// a value of that type.
inline bool put_value(TensorDataType t, std::uint8_t* dst, std::uint64_t i, const json& j) {
    using T = TensorDataType;
    switch (t) {
        case T::Int8: return put_int<std::int8_t>(dst, i, j);
        case T::UInt8: return put_int<std::uint8_t>(dst, i, j);
        case T::Int16: return put_int<std::int16_t>(dst, i, j);
        case T::UInt16: return put_int<std::uint16_t>(dst, i, j);
        case T::Int32: return put_int<std::int32_t>(dst, i, j);
        case T::UInt32: return put_int<std::uint32_t>(dst, i, j);
        case T::Int64: return put_int<std::int64_t>(dst, i, j);
        case T::UInt64: return put_int<std::uint64_t>(dst, i, j);
        case T::Int4:
        case T::UInt4: {  // one nibble of the packed buffer (core/tensor.hpp's NibbleView)
            const std::int64_t lo = t == T::Int4 ? -8 : 0;
            if (!j.is_number_integer() || j.get<std::int64_t>() < lo || j.get<std::int64_t>() > lo + 15) return false;
            NibbleView<false, 1>::write(dst, i, static_cast<std::int32_t>(j.get<std::int64_t>()));
            return true;
        }
        case T::Float32:
        case T::Float64:
        case T::Float16: {
            const auto v = json_float(j);
            if (!v) return false;
            if (t == T::Float32) put<float>(dst, i, static_cast<float>(*v));
            else if (t == T::Float64) put<double>(dst, i, *v);
            else put<std::uint16_t>(dst, i, float16::from_double(*v).bits);
            return true;
        }
        default: return false;
    }
}

inline std::uint32_t json_u32(const json& j, const std::string& file, const std::string& member, std::uint32_t min) {
    if (!j.is_number_integer() || j.get<std::int64_t>() < static_cast<std::int64_t>(min) ||
        j.get<std::int64_t>() > std::numeric_limits<std::uint32_t>::max())
        throw InputError(file, member + ": must be an integer in [" + std::to_string(min) + ", 4294967295], got " + j.dump());
    return static_cast<std::uint32_t>(j.get<std::int64_t>());
}

inline std::vector<std::uint32_t> json_u32_list(const json& j, const std::string& file, const std::string& member,
                                                std::uint32_t min) {
    if (!j.is_array()) throw InputError(file, member + ": must be an array, got " + json_kind(j));
    std::vector<std::uint32_t> v;
    for (std::size_t i = 0; i < j.size(); ++i)
        v.push_back(json_u32(j[i], file, member + "[" + std::to_string(i) + "]", min));
    return v;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Loading

namespace detail {

inline Buffer load_tensor(const json& j, const std::string& member, bool is_output, const std::filesystem::path& dir,
                          const std::string& file) {
    const std::string m = "tensors." + member;
    if (!j.is_object()) throw InputError(file, m + ": must be an object, got " + json_kind(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& k = it.key();
        const bool known = k == "type" || k == "sizes" || k == "strides" || (!is_output && (k == "data" || k == "values"));
        if (!known)
            throw InputError(file, m + ": unknown field '" + k + "' (" +
                                       (is_output ? "an output has type, sizes, strides" : "allowed: type, sizes, strides, data, values") + ")");
    }
    Buffer b;
    b.is_output = is_output;
    if (!j.contains("type") || !j["type"].is_string()) throw InputError(file, m + ".type: missing (a data type name such as UINT8)");
    const auto type = parse_data_type(j["type"].get_ref<const std::string&>());
    if (!type) throw InputError(file, m + ".type: unknown data type '" + j["type"].get<std::string>() + "'");
    b.desc.DataType = *type;
    if (!j.contains("sizes")) throw InputError(file, m + ".sizes: missing");
    const auto sizes = json_u32_list(j["sizes"], file, m + ".sizes", 1);
    if (sizes.empty() || sizes.size() > kMaxDimensions)
        throw InputError(file, m + ".sizes: must have 1 to 8 entries, got " + std::to_string(sizes.size()));
    b.desc.DimensionCount = static_cast<std::uint32_t>(sizes.size());
    std::copy(sizes.begin(), sizes.end(), b.desc.Sizes.begin());
    if (j.contains("strides")) {
        const auto strides = json_u32_list(j["strides"], file, m + ".strides", 0);
        if (strides.size() != sizes.size())
            throw InputError(file, m + ".strides: must have as many entries as sizes (" + std::to_string(sizes.size()) +
                                       "), got " + std::to_string(strides.size()));
        b.desc.Strides.emplace();
        std::copy(strides.begin(), strides.end(), b.desc.Strides->begin());
    }
    if (!element_count(b.desc)) throw InputError(file, m + ".sizes: element count overflows 64 bits");
    const auto elems = min_buffer_elements(b.desc);
    const auto total = calc_buffer_tensor_size(b.desc);
    if (!elems || !total) throw InputError(file, m + ": buffer size dot(sizes-1, strides)+1 overflows 64 bits");
    b.desc.TotalTensorSizeInBytes = *total;
    if (is_output) return b;  // allocated after validation (allocate_output)
    const std::uint64_t es = element_size(*type);
    // A buffer holds at least dot(sizes-1, strides)+1 elements; any trailing
    // ones are ignored (DirectML's TotalTensorSizeInBytes may exceed the
    // minimum) and not kept.
    auto need = [&] { return std::to_string(*elems) + " (dot(sizes-1, strides)+1)"; };
    const bool has_data = j.contains("data"), has_values = j.contains("values");
    if (has_data == has_values)
        throw InputError(file, m + ": needs exactly one of 'data' (a .npy file) or 'values' (an inline array)");
    if (has_values) {
        const json& v = j["values"];
        if (!v.is_array()) throw InputError(file, m + ".values: must be an array, got " + json_kind(v));
        if (v.size() < *elems)
            throw InputError(file, m + ".values: has " + std::to_string(v.size()) + " elements, the buffer needs at least " + need());
        b.storage.assign((*total + 7) / 8, 0);
        std::uint64_t scratch = 0;  // trailing values are checked, not stored
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!put_value(*type, i < *elems ? b.bytes() : reinterpret_cast<std::uint8_t*>(&scratch), i < *elems ? i : 0, v[i]))
                throw InputError(file, m + ".values[" + std::to_string(i) + "]: " + v[i].dump() + " is not a " +
                                           std::string(name(*type)) + " value");
        return b;
    }
    if (!j["data"].is_string()) throw InputError(file, m + ".data: must be a file name");
    const auto npy_path = dir / j["data"].get<std::string>();
    NpyReader npy(npy_path, *type);
    if (npy.header().count < *elems)
        throw InputError(npy_path.string(), "holds " + std::to_string(npy.header().count) + " elements, " + m +
                                                " needs at least " + need());
    b.storage.assign((*total + 7) / 8, 0);
    if (is_4bit(*type)) {  // one element an entry in the file, two a byte in the buffer
        std::vector<std::uint8_t> raw(static_cast<std::size_t>(*elems));
        npy.read(raw.data(), raw.size());
        const int lo = *type == TensorDataType::Int4 ? -8 : 0;
        for (std::uint64_t i = 0; i < *elems; ++i) {
            const int v = *type == TensorDataType::Int4 ? static_cast<std::int8_t>(raw[i]) : raw[i];
            if (v < lo || v > lo + 15)
                throw InputError(npy_path.string(), "element " + std::to_string(i) + " is " + std::to_string(v) + ", not a " +
                                                        std::string(name(*type)) + " value (" + std::to_string(lo) + ".." +
                                                        std::to_string(lo + 15) + ")");
            NibbleView<false, 1>::write(b.bytes(), i, v);
        }
        return b;
    }
    npy.read(b.bytes(), *elems * es);
    return b;
}

/// One output's {"data": ..., "tolerance": ...}; `where` names it in messages
/// ("expected" or "expected.<Member>").
inline ExpectedOutput load_expected_output(const json& j, const std::filesystem::path& dir, const std::string& file,
                                           const std::string& where, const std::string& member, const Buffer& out) {
    ExpectedOutput e;
    e.member = member;
    if (!j.contains("data") || !j["data"].is_string()) throw InputError(file, where + ".data: missing (a .npy file name)");
    if (j.contains("tolerance")) {
        if (!j["tolerance"].is_number() || !(j["tolerance"].get<double>() >= 0))
            throw InputError(file, where + ".tolerance: must be a number >= 0");
        e.tolerance = j["tolerance"].get<double>();
    }
    e.data = dir / j["data"].get<std::string>();
    const NpyReader npy(e.data, out.desc.DataType);
    const auto n = element_count(out.desc).value_or(0);
    if (npy.header().count != n)
        throw InputError(e.data.string(), "holds " + std::to_string(npy.header().count) + " elements, the " +
                                              (member == "OutputTensor" ? std::string("output tensor") : member) +
                                              " has " + std::to_string(n));
    return e;
}

/// `expected`: {"error": true}, or the outputs' tensors: for an operator with
/// one output {"data", "tolerance"}, for several an object keyed by output
/// member, each {"data", "tolerance"}; "fidelity" beside either.
inline Expectation load_expected(const json& j, const std::filesystem::path& dir, const std::string& file,
                                 const Case& c, const OperatorSpec& spec) {
    Expectation e;
    if (!j.is_object()) throw InputError(file, "expected: must be an object, got " + json_kind(j));
    std::vector<std::string_view> outputs;
    for (const auto& m : spec.members)
        if (m.kind == MemberKind::Output) outputs.push_back(m.name);
    const bool several = outputs.size() > 1;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k == "error" || k == "fidelity") continue;
        if (several ? std::find(outputs.begin(), outputs.end(), k) != outputs.end() : (k == "data" || k == "tolerance"))
            continue;
        if (several && (k == "data" || k == "tolerance"))
            throw InputError(file, "expected." + k + ": " + c.operator_name + " has " + std::to_string(outputs.size()) +
                                       " outputs: give expected as an object keyed by output member (" +
                                       join_names(outputs) + "), each {\"data\": ..., \"tolerance\": ...}");
        throw InputError(file, "expected: unknown field '" + k + "' (allowed: " +
                                   (several ? join_names(outputs) : std::string("data, tolerance")) +
                                   ", error, fidelity)");
    }
    if (j.contains("fidelity")) {
        e.fidelity = j["fidelity"].is_string() ? parse_fidelity(j["fidelity"].get<std::string>()) : std::nullopt;
        if (!e.fidelity) throw InputError(file, "expected.fidelity: must be \"directml\" or \"exact\"");
    }
    if (j.contains("error")) {
        bool alone = j.contains("data") == false;
        for (const auto m : outputs)
            if (several && j.contains(std::string(m))) alone = false;
        if (!j["error"].is_boolean() || !j["error"].get<bool>() || !alone)
            throw InputError(file, std::string("expected.error: must be true, without ") +
                                       (several ? "output members" : "data"));
        e.kind = Expectation::Kind::Error;
        return e;
    }
    if (!several) {
        const std::string m(outputs.front());
        e.outputs.push_back(load_expected_output(j, dir, file, "expected", m, c.tensors.at(m)));
    } else {
        for (const auto name : outputs) {
            const std::string m(name), where = "expected." + m;
            if (!j.contains(m))
                throw InputError(file, where + ": missing (" + c.operator_name + "'s expected names every output: " +
                                           join_names(outputs) + ")");
            if (!j[m].is_object())
                throw InputError(file, where + ": must be an object {\"data\": ..., \"tolerance\": ...}, got " +
                                           json_kind(j[m]));
            for (auto it = j[m].begin(); it != j[m].end(); ++it)
                if (it.key() != "data" && it.key() != "tolerance")
                    throw InputError(file, where + ": unknown field '" + it.key() + "' (allowed: data, tolerance)");
            e.outputs.push_back(load_expected_output(j[m], dir, file, where, m, c.tensors.at(m)));
        }
    }
    e.kind = Expectation::Kind::Data;
    return e;
}

}  // namespace detail

inline const OperatorSpec& find_operator(const std::string& name, const std::string& file) {
    for (const auto& s : operator_specs())
        if (s.name == name) return s;
    std::vector<std::string_view> names;
    for (const auto& s : operator_specs()) names.push_back(s.name);
    throw InputError(file, "operator: unknown operator '" + name + "' (known: " + join_names(names) + ")");
}

/// Parses JSON text, rejecting an object that repeats a key (JSON leaves
/// duplicates undefined; a case must say each thing once).
inline json parse_json(const std::string& text, const std::string& file) {
    const FpEnvironment fp_env;  // numbers read in qdml's floating-point state (docs/semantics.md section 0)
    std::vector<std::vector<std::string>> keys;  // keys seen, per open object
    auto callback = [&](int, json::parse_event_t ev, json& parsed) {
        if (ev == json::parse_event_t::object_start) keys.emplace_back();
        else if (ev == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        else if (ev == json::parse_event_t::key && !keys.empty()) {
            const auto& k = parsed.get_ref<const std::string&>();
            if (std::find(keys.back().begin(), keys.back().end(), k) != keys.back().end())
                throw InputError(file, "malformed JSON: key '" + k + "' appears twice in one object");
            keys.back().push_back(k);
        }
        return true;
    };
    try {
        return json::parse(text, callback);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers that overflow
        std::string w = e.what();
        const auto p = w.find("] ");
        throw InputError(file, "malformed JSON: " + (p == std::string::npos ? w : w.substr(p + 2)));
    }
}

/// The operator a parsed case names, if it names one the runner knows
/// (used to file a case that fails to load under its operator).
inline std::optional<std::string> case_operator(const json& j) {
    if (!j.is_object() || !j.contains("operator") || !j["operator"].is_string()) return std::nullopt;
    for (const auto& s : operator_specs())
        if (s.name == j["operator"].get_ref<const std::string&>()) return std::string(s.name);
    return std::nullopt;
}

/// Whether a parsed case says `"expected": {"error": true}`.
inline bool case_expects_error(const json& j) {
    return j.is_object() && j.contains("expected") && j["expected"].is_object() && j["expected"].contains("error") &&
           j["expected"]["error"] == true;
}

/// Builds a case from its parsed JSON; .npy paths are relative to `dir`.
inline Case parse_case(const json& j, const std::string& file, const std::filesystem::path& dir) {
    const FpEnvironment fp_env;  // numbers read in qdml's floating-point state (docs/semantics.md section 0)
    if (!j.is_object()) throw InputError(file, "the case must be a JSON object, got " + detail::json_kind(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& k = it.key();
        if (k != "operator" && k != "tensors" && k != "params" && k != "expected" && k != "comment" && k != "description")
            throw InputError(file, "unknown top-level field '" + k + "' (allowed: operator, tensors, params, expected, description)");
    }
    Case c;
    c.file = file;
    if (!j.contains("operator") || !j["operator"].is_string()) throw InputError(file, "operator: missing (a string)");
    const OperatorSpec& spec = find_operator(j["operator"].get<std::string>(), file);
    c.operator_name = std::string(spec.name);
    if (!j.contains("tensors") || !j["tensors"].is_object()) throw InputError(file, "tensors: missing (an object)");
    json ts = j["tensors"];
    // A tensor array member (QUANTIZE's and DEQUANTIZE's QuantizationTensors): a
    // JSON array of tensors, loaded as members QuantizationTensors[0], [1].
    const bool has_list = std::any_of(spec.members.begin(), spec.members.end(),
                                      [](const MemberSpec& m) { return m.name == "QuantizationTensors[0]"; });
    if (has_list && ts.contains("QuantizationTensors")) {
        const json list = ts["QuantizationTensors"];
        if (!list.is_array() || list.size() > 2)
            throw InputError(file, "tensors.QuantizationTensors: must be an array of at most 2 tensors (the scale, "
                                   "then the zero point), got " + (list.is_array() ? std::to_string(list.size()) + " entries" : detail::json_kind(list)));
        ts.erase("QuantizationTensors");
        for (std::size_t i = 0; i < list.size(); ++i) ts["QuantizationTensors[" + std::to_string(i) + "]"] = list[i];
    }
    std::vector<std::string_view> members;
    for (const auto& m : spec.members) members.push_back(m.name);
    for (auto it = ts.begin(); it != ts.end(); ++it)
        if (std::find(members.begin(), members.end(), it.key()) == members.end())
            throw InputError(file, "tensors." + it.key() + ": not a member of " + c.operator_name + " (members: " +
                                       join_names(members) + ")");
    for (const auto& m : spec.members) {
        const std::string name(m.name);
        if (!ts.contains(name)) {
            if (m.kind == MemberKind::Optional) continue;
            throw InputError(file, "tensors." + name + ": missing (required by " + c.operator_name + ")");
        }
        c.tensors.emplace(name, detail::load_tensor(ts[name], name, m.kind == MemberKind::Output, dir, file));
    }
    if (j.contains("params")) {
        if (!j["params"].is_object()) throw InputError(file, "params: must be an object");
        for (auto it = j["params"].begin(); it != j["params"].end(); ++it)
            if (std::find(spec.params.begin(), spec.params.end(), it.key()) == spec.params.end())
                throw InputError(file, "params." + it.key() + ": not a parameter of " + c.operator_name +
                                           (spec.params.empty() ? " (it has none)" : " (parameters: " + join_names(spec.params) + ")"));
        c.params = j["params"];
    }
    if (j.contains("expected")) c.expected = detail::load_expected(j["expected"], dir, file, c, spec);
    return c;
}

/// Parses case JSON text; .npy paths are relative to `dir`.
inline Case parse_case(const std::string& text, const std::string& file, const std::filesystem::path& dir) {
    return parse_case(parse_json(text, file), file, dir);
}

/// Reads and parses a case file's JSON.
inline json read_case_json(const std::string& path) {
    return parse_json(detail::read_file_bytes(path, "case file"), path);
}

inline Case load_case(const std::string& path) {
    return parse_case(read_case_json(path), path, std::filesystem::path(path).parent_path());
}

// ---------------------------------------------------------------------------
// Descs

using AnyDesc = std::variant<ElementWiseDequantizeLinearDesc, ElementWiseQuantizedLinearAddDesc,
                             QuantizedLinearMatrixMultiplyDesc, QuantizedLinearConvolutionDesc, ElementWiseClipDesc,
                             MatrixMultiplyIntegerDesc, ElementWiseQuantizeLinearDesc, ElementWiseClip1Desc,
                             ConvolutionIntegerDesc, MatrixMultiplyIntegerToFloatDesc, DynamicQuantizeLinearDesc,
                             QuantizedLinearAveragePoolingDesc, QuantizeDesc, DequantizeDesc>;

namespace detail {

/// QUANTIZE's and DEQUANTIZE's QuantizationType: required, a DML_QUANTIZATION_TYPE name.
inline QuantizationType param_quantization_type(const Case& c) {
    if (!c.params.contains("QuantizationType"))
        throw InputError(c.file, "params.QuantizationType: missing (SCALE or SCALE_ZERO_POINT)");
    const json& j = c.params["QuantizationType"];
    const auto t = j.is_string() ? parse_quantization_type(j.get<std::string>()) : std::nullopt;
    if (!t) throw InputError(c.file, "params.QuantizationType: " + j.dump() + " is not NONE, SCALE or SCALE_ZERO_POINT");
    return *t;
}

inline float param_float(const Case& c, const char* key) {
    if (!c.params.contains(key)) throw InputError(c.file, std::string("params.") + key + ": missing (required by " + c.operator_name + ")");
    const auto v = json_float(c.params[key]);
    if (!v) throw InputError(c.file, std::string("params.") + key + ": must be a number (or \"Infinity\", \"-Infinity\")");
    return static_cast<float>(*v);
}

/// A value of type `t` (a JSON number of t's range, or for float types also
/// "NaN", "Infinity", "-Infinity"; FLOAT16 rounded once to binary16).
inline ScalarUnion param_scalar(const Case& c, const char* key, TensorDataType t) {
    if (!c.params.contains(key)) throw InputError(c.file, std::string("params.") + key + ": missing (required by " + c.operator_name + ")");
    ScalarUnion u{};
    if (!put_value(t, u.Bytes, 0, c.params[key]))
        throw InputError(c.file, std::string("params.") + key + ": " + c.params[key].dump() + " is not a value of " +
                                     std::string(name(t)) + " (MinMaxDataType)");
    return u;
}

inline std::optional<ScaleBiasDesc> param_scale_bias(const Case& c) {
    if (!c.params.contains("ScaleBias")) return std::nullopt;
    const json& sb = c.params["ScaleBias"];
    if (!sb.is_object() || sb.size() != 2 || !sb.contains("Scale") || !sb.contains("Bias") ||
        !json_float(sb["Scale"]) || !json_float(sb["Bias"]))
        throw InputError(c.file, "params.ScaleBias: must be {\"Scale\": number, \"Bias\": number}");
    return ScaleBiasDesc{static_cast<float>(*json_float(sb["Scale"])), static_cast<float>(*json_float(sb["Bias"]))};
}

/// A convolution's (N = 2) or pooling's (N = 3) parameter array:
/// DimensionCount entries (N - 1 or N); with N - 1 the desc's last entry
/// keeps its default (it is not read).
template <std::size_t N>
void param_pair(const Case& c, const char* key, std::uint32_t count, std::array<std::uint32_t, N>& out) {
    if (!c.params.contains(key)) return;
    const auto v = json_u32_list(c.params[key], c.file, std::string("params.") + key, 0);
    if ((count == N - 1 || count == N) && v.size() != count)
        throw InputError(c.file, std::string("params.") + key + ": must have " + std::to_string(count) +
                                     " entries (DimensionCount " + std::to_string(count) + "), got " +
                                     std::to_string(v.size()));
    if (v.size() > N)
        throw InputError(c.file, std::string("params.") + key + ": has " + std::to_string(v.size()) +
                                     " entries; DimensionCount " + std::to_string(count) + " is not " +
                                     std::to_string(N - 1) + " or " + std::to_string(N));
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i];
}

/// The convolution parameters of a case (QUANTIZED_LINEAR_CONVOLUTION, CONVOLUTION_INTEGER).
/// DimensionCount defaults to the InputTensor's dimensions - 2 (2 for 4-D, 1 for 3-D).
template <class Conv>
void convolution_params(const Case& c, Conv& d) {
    const std::uint32_t in_dims = d.InputTensor.Desc.DimensionCount;
    d.DimensionCount = in_dims == 3 ? 1 : 2;
    if (c.params.contains("DimensionCount"))
        d.DimensionCount = json_u32(c.params["DimensionCount"], c.file, "params.DimensionCount", 0);
    param_pair(c, "Strides", d.DimensionCount, d.Strides);
    param_pair(c, "Dilations", d.DimensionCount, d.Dilations);
    param_pair(c, "StartPadding", d.DimensionCount, d.StartPadding);
    param_pair(c, "EndPadding", d.DimensionCount, d.EndPadding);
    if (c.params.contains("GroupCount")) d.GroupCount = json_u32(c.params["GroupCount"], c.file, "params.GroupCount", 0);
}

/// The pooling parameters of a case (QUANTIZED_LINEAR_AVERAGE_POOLING).
/// DimensionCount defaults to the InputTensor's dimensions - 2 (2 for 4-D, 3 for 5-D; validation
/// names any other count).
inline void pooling_params(const Case& c, QuantizedLinearAveragePoolingDesc& d) {
    const std::uint32_t in_dims = d.InputTensor.Desc.DimensionCount;
    d.DimensionCount = in_dims >= 2 ? in_dims - 2 : 0;
    if (c.params.contains("DimensionCount"))
        d.DimensionCount = json_u32(c.params["DimensionCount"], c.file, "params.DimensionCount", 0);
    param_pair(c, "Strides", d.DimensionCount, d.Strides);
    param_pair(c, "WindowSize", d.DimensionCount, d.WindowSize);
    param_pair(c, "StartPadding", d.DimensionCount, d.StartPadding);
    param_pair(c, "EndPadding", d.DimensionCount, d.EndPadding);
    param_pair(c, "Dilations", d.DimensionCount, d.Dilations);
    if (c.params.contains("IncludePadding")) {
        if (!c.params["IncludePadding"].is_boolean())
            throw InputError(c.file, "params.IncludePadding: must be true or false, got " +
                                         c.params["IncludePadding"].dump());
        d.IncludePadding = c.params["IncludePadding"].get<bool>();
    }
}

/// The desc of a loaded case, each tensor bound by `bind(Buffer&)`.
template <class Bind>
AnyDesc build_desc(Case& c, Bind&& bind) {
    const FpEnvironment fp_env;  // numbers read in qdml's floating-point state (docs/semantics.md section 0)
    auto req = [&](const char* m) -> Tensor { return bind(c.tensors.at(m)); };
    auto opt = [&](const char* m) -> std::optional<Tensor> {
        auto it = c.tensors.find(m);
        if (it == c.tensors.end()) return std::nullopt;
        return bind(it->second);
    };
    const std::string& op = c.operator_name;
    if (op == ElementWiseDequantizeLinearDesc::OperatorName)
        return ElementWiseDequantizeLinearDesc{req("InputTensor"), req("ScaleTensor"), opt("ZeroPointTensor"), req("OutputTensor")};
    if (op == ElementWiseQuantizeLinearDesc::OperatorName)
        return ElementWiseQuantizeLinearDesc{req("InputTensor"), req("ScaleTensor"), opt("ZeroPointTensor"), req("OutputTensor")};
    if (op == ElementWiseQuantizedLinearAddDesc::OperatorName)
        return ElementWiseQuantizedLinearAddDesc{req("ATensor"), req("AScaleTensor"), opt("AZeroPointTensor"),
                                                 req("BTensor"), req("BScaleTensor"), opt("BZeroPointTensor"),
                                                 req("OutputScaleTensor"), opt("OutputZeroPointTensor"), req("OutputTensor")};
    if (op == QuantizedLinearMatrixMultiplyDesc::OperatorName)
        return QuantizedLinearMatrixMultiplyDesc{req("ATensor"), req("AScaleTensor"), opt("AZeroPointTensor"),
                                                 req("BTensor"), req("BScaleTensor"), opt("BZeroPointTensor"),
                                                 req("OutputScaleTensor"), opt("OutputZeroPointTensor"), req("OutputTensor")};
    if (op == MatrixMultiplyIntegerDesc::OperatorName)
        return MatrixMultiplyIntegerDesc{req("ATensor"), opt("AZeroPointTensor"), req("BTensor"), opt("BZeroPointTensor"),
                                         req("OutputTensor")};
    if (op == MatrixMultiplyIntegerToFloatDesc::OperatorName)
        return MatrixMultiplyIntegerToFloatDesc{req("ATensor"), req("AScaleTensor"), opt("AZeroPointTensor"),
                                                req("BTensor"), req("BScaleTensor"), opt("BZeroPointTensor"),
                                                opt("BiasTensor"), req("OutputTensor")};
    if (op == DynamicQuantizeLinearDesc::OperatorName)
        return DynamicQuantizeLinearDesc{req("InputTensor"), req("OutputTensor"), req("OutputScaleTensor"),
                                         req("OutputZeroPointTensor")};
    if (op == QuantizeDesc::OperatorName || op == DequantizeDesc::OperatorName) {
        QuantizationDescBase d;
        d.InputTensor = req("InputTensor");
        d.QuantizationType = detail::param_quantization_type(c);
        d.QuantizationTensors = {opt("QuantizationTensors[0]"), opt("QuantizationTensors[1]")};
        d.OutputTensor = req("OutputTensor");
        if (op == QuantizeDesc::OperatorName) return QuantizeDesc{d};
        return DequantizeDesc{d};
    }
    if (op == QuantizedLinearConvolutionDesc::OperatorName) {
        QuantizedLinearConvolutionDesc d;
        d.InputTensor = req("InputTensor");
        d.InputScaleTensor = req("InputScaleTensor");
        d.InputZeroPointTensor = opt("InputZeroPointTensor");
        d.FilterTensor = req("FilterTensor");
        d.FilterScaleTensor = req("FilterScaleTensor");
        d.FilterZeroPointTensor = opt("FilterZeroPointTensor");
        d.BiasTensor = opt("BiasTensor");
        d.OutputScaleTensor = req("OutputScaleTensor");
        d.OutputZeroPointTensor = opt("OutputZeroPointTensor");
        d.OutputTensor = req("OutputTensor");
        detail::convolution_params(c, d);
        return d;
    }
    if (op == ConvolutionIntegerDesc::OperatorName) {
        ConvolutionIntegerDesc d;
        d.InputTensor = req("InputTensor");
        d.InputZeroPointTensor = opt("InputZeroPointTensor");
        d.FilterTensor = req("FilterTensor");
        d.FilterZeroPointTensor = opt("FilterZeroPointTensor");
        d.OutputTensor = req("OutputTensor");
        detail::convolution_params(c, d);
        return d;
    }
    if (op == QuantizedLinearAveragePoolingDesc::OperatorName) {
        QuantizedLinearAveragePoolingDesc d;
        d.InputTensor = req("InputTensor");
        d.InputScaleTensor = req("InputScaleTensor");
        d.InputZeroPointTensor = opt("InputZeroPointTensor");
        d.OutputScaleTensor = req("OutputScaleTensor");
        d.OutputZeroPointTensor = opt("OutputZeroPointTensor");
        d.OutputTensor = req("OutputTensor");
        detail::pooling_params(c, d);
        return d;
    }
    if (op == ElementWiseClip1Desc::OperatorName) {
        ElementWiseClip1Desc d;
        d.InputTensor = req("InputTensor");
        d.OutputTensor = req("OutputTensor");
        d.ScaleBias = detail::param_scale_bias(c);
        d.MinMaxDataType = d.OutputTensor.Desc.DataType;
        if (c.params.contains("MinMaxDataType")) {
            const json& t = c.params["MinMaxDataType"];
            const auto parsed = t.is_string() ? parse_data_type(t.get<std::string>()) : std::nullopt;
            if (!parsed) throw InputError(c.file, "params.MinMaxDataType: must be a data type name, got " + t.dump());
            d.MinMaxDataType = *parsed;
        }
        d.Min = detail::param_scalar(c, "Min", d.MinMaxDataType);
        d.Max = detail::param_scalar(c, "Max", d.MinMaxDataType);
        return d;
    }
    ElementWiseClipDesc d;
    d.InputTensor = req("InputTensor");
    d.OutputTensor = req("OutputTensor");
    d.Min = detail::param_float(c, "Min");
    d.Max = detail::param_float(c, "Max");
    d.ScaleBias = detail::param_scale_bias(c);
    return d;
}

}  // namespace detail

inline void validate_desc(const AnyDesc& d, FeatureLevel level, Fidelity fidelity = kDefaultFidelity) {
    std::visit([&](const auto& x) { qdml::validate(x, level, fidelity); }, d);
}

/// Validates a loaded case before its output buffer exists, so that an
/// invalid case costs no output memory. The output is bound to a placeholder
/// address past the end of every input buffer, never dereferenced: the
/// runner's buffers are separate allocations, so validation answers as it
/// will for the real buffer (run validates again, on the real one).
inline void validate_case(Case& c, FeatureLevel level, Fidelity fidelity = kDefaultFidelity) {
    std::uintptr_t end = 64;
    for (auto& [name, b] : c.tensors)
        if (!b.storage.empty())
            end = std::max(end, reinterpret_cast<std::uintptr_t>(b.bytes()) + b.storage.size() * sizeof(std::uint64_t));
    end = (end + 63) & ~std::uintptr_t{63};
    // Each output its own placeholder, one after another (several outputs must
    // not overlap); a size beyond 2^46 (refused later by the limits) spaced as 2^46.
    validate_desc(detail::build_desc(c,
                                     [&](Buffer& b) {
                                         if (!b.is_output || !b.storage.empty()) return b.tensor();
                                         const std::uintptr_t at = end;
                                         end += (std::min<std::uint64_t>(b.desc.TotalTensorSizeInBytes, std::uint64_t{1} << 46) + 64) &
                                                ~std::uint64_t{63};
                                         return Tensor{b.desc, reinterpret_cast<void*>(at), 0};
                                     }),
                  level, fidelity);
}

namespace detail {

inline void check_output_size(const Case& c) {
    std::uint64_t total = 0;  // every output's buffer
    for (const auto& [name, b] : c.tensors) {
        if (!b.is_output) continue;
        if (b.desc.TotalTensorSizeInBytes > kMaxOutputBytes)
            throw InputError(c.file, "tensors." + name + ": output buffer of " +
                                         std::to_string(b.desc.TotalTensorSizeInBytes) +
                                         " bytes exceeds the runner's limit of 1 GiB");
        total += b.desc.TotalTensorSizeInBytes;
    }
    if (total > kMaxOutputBytes)
        throw InputError(c.file, "tensors: the output buffers' " + std::to_string(total) +
                                     " bytes exceed the runner's limit of 1 GiB");
}

}  // namespace detail

/// Allocates the output buffers of a validated case (at most kMaxOutputBytes in all).
inline void allocate_output(Case& c) {
    bool checked = false;
    for (auto& [name, out] : c.tensors) {
        if (!out.is_output || !out.storage.empty()) continue;
        if (!checked) detail::check_output_size(c);
        checked = true;
        out.storage.assign(static_cast<std::size_t>((out.desc.TotalTensorSizeInBytes + 7) / 8), 0);
    }
}

/// The output members of a case's operator, in member order.
inline std::vector<std::string> output_members(const Case& c) {
    std::vector<std::string> r;
    for (const auto& m : find_operator(c.operator_name, c.file).members)
        if (m.kind == MemberKind::Output) r.emplace_back(m.name);
    return r;
}

/// The desc of a loaded case, bound to its buffers (allocating the output).
inline AnyDesc make_desc(Case& c) {
    allocate_output(c);
    return detail::build_desc(c, [](Buffer& b) { return b.tensor(); });
}

/// The runner's default work limit (--max-work): 2^34 multiply-adds, a
/// few seconds of the reference.
inline constexpr std::uint64_t kDefaultMaxWork = std::uint64_t{1} << 34;

/// What a validated case costs: multiply-adds for matmul (output elements
/// times K) and convolution (output elements times the filter elements of
/// one output channel), output elements for the element-wise operators.
inline std::uint64_t work_units(const Case& c) {
    const TensorDesc& out = c.tensors.at("OutputTensor").desc;
    const std::uint64_t n = element_count(out).value_or(0);  // < 2^32 once valid
    if (c.operator_name == QuantizedLinearMatrixMultiplyDesc::OperatorName ||
        c.operator_name == MatrixMultiplyIntegerDesc::OperatorName ||
        c.operator_name == MatrixMultiplyIntegerToFloatDesc::OperatorName) {
        const TensorDesc& a = c.tensors.at("ATensor").desc;
        return n * a.Sizes[a.DimensionCount - 1];
    }
    if (c.operator_name == QuantizedLinearConvolutionDesc::OperatorName ||
        c.operator_name == ConvolutionIntegerDesc::OperatorName) {
        const TensorDesc& f = c.tensors.at("FilterTensor").desc;
        return n * (element_count(f).value_or(0) / f.Sizes[0]);
    }
    if (c.operator_name == QuantizedLinearAveragePoolingDesc::OperatorName && c.params.contains("WindowSize") &&
        c.params["WindowSize"].is_array()) {
        std::uint64_t taps = 1;  // a validated case's window: at most 3 sizes, each within its padded input
        for (const auto& w : c.params["WindowSize"])
            if (w.is_number_unsigned()) taps = std::min<std::uint64_t>(taps * w.get<std::uint64_t>(), 1ull << 40);
        return n * taps;
    }
    return n;
}

/// Refuses a validated case whose output buffer or work exceeds the
/// runner's limits, before anything is allocated or computed.
inline void check_limits(const Case& c, std::uint64_t max_work) {
    detail::check_output_size(c);
    const std::uint64_t w = work_units(c);
    if (w > max_work) {
        const bool macs = c.operator_name == QuantizedLinearMatrixMultiplyDesc::OperatorName ||
                          c.operator_name == MatrixMultiplyIntegerDesc::OperatorName ||
                          c.operator_name == MatrixMultiplyIntegerToFloatDesc::OperatorName ||
                          c.operator_name == QuantizedLinearConvolutionDesc::OperatorName ||
                          c.operator_name == ConvolutionIntegerDesc::OperatorName;
        const bool taps = c.operator_name == QuantizedLinearAveragePoolingDesc::OperatorName;
        throw InputError(c.file, std::string("work limit: the case needs ") + std::to_string(w) +
                                     (macs ? " multiply-adds" : taps ? " window taps" : " output elements") + ", more than the limit of " +
                                     std::to_string(max_work) + " (raise it with --max-work)");
    }
}

inline void run_desc(const AnyDesc& d, const RunOptions& o) {
    std::visit([&](const auto& x) { qdml::run(x, o); }, d);
}

/// qdml::describe() of the desc: the implementation, ISA path and form that compute it.
inline std::string describe_desc(const AnyDesc& d, const RunOptions& o) {
    return std::visit([&](const auto& x) { return qdml::describe(x, o); }, d);
}

inline exact::Report check_exact_desc(const AnyDesc& d, Fidelity fidelity = kDefaultFidelity) {
    return std::visit([&](const auto& x) { return exact::check_exact(x, fidelity); }, d);
}

// ---------------------------------------------------------------------------
// Output

/// Calls f(byte offset) for every element of `d` in logical (row-major) order.
template <class F>
void for_each_element(const TensorDesc& d, F&& f) {
    const auto st = effective_strides(d);
    const std::uint64_t es = element_size(d.DataType);
    const std::uint64_t n = element_count(d).value_or(0);
    std::array<std::uint32_t, kMaxDimensions> idx{};
    std::uint64_t off = 0;  // in elements
    for (std::uint64_t i = 0; i < n; ++i) {
        f(off * es);
        for (std::uint32_t k = d.DimensionCount; k-- > 0;) {
            off += st[k];
            if (++idx[k] < d.Sizes[k]) break;
            off -= std::uint64_t{idx[k]} * st[k];
            idx[k] = 0;
        }
    }
}

namespace detail {
/// A 4-bit output as a packed INT8 or UINT8 buffer of its values in logical
/// order: the form its .npy files take (npy_storage_type).
inline Buffer unpack_4bit(const Buffer& out) {
    Buffer r;
    r.is_output = true;
    r.desc = out.desc;
    r.desc.DataType = npy_storage_type(out.desc.DataType);
    r.desc.Strides.reset();
    r.desc.TotalTensorSizeInBytes = calc_buffer_tensor_size(r.desc).value_or(0);
    r.storage.assign(static_cast<std::size_t>((r.desc.TotalTensorSizeInBytes + 7) / 8), 0);
    const auto st = effective_strides(out.desc);
    const bool is_signed = out.desc.DataType == TensorDataType::Int4;
    std::array<std::uint32_t, kMaxDimensions> idx{};
    const std::uint64_t n = element_count(out.desc).value_or(0);
    for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t o = 0;  // in elements (nibbles)
        for (std::uint32_t k = 0; k < out.desc.DimensionCount; ++k) o += std::uint64_t{idx[k]} * st[k];
        const std::int32_t v = is_signed ? NibbleView<true, 1>::read(out.bytes(), o) : NibbleView<false, 1>::read(out.bytes(), o);
        r.bytes()[i] = static_cast<std::uint8_t>(v);
        for (std::uint32_t k = out.desc.DimensionCount; k-- > 0;) {
            if (++idx[k] < out.desc.Sizes[k]) break;
            idx[k] = 0;
        }
    }
    return r;
}
}  // namespace detail

inline std::vector<std::uint64_t> shape_of(const TensorDesc& d) {
    return std::vector<std::uint64_t>(d.Sizes.begin(), d.Sizes.begin() + d.DimensionCount);
}

/// Whether the elements of `d` lie one after another in logical order
/// (packed row-major; dimensions of size 1 may have any stride).
inline bool is_packed_row_major(const TensorDesc& d) {
    TensorDesc packed = d;
    packed.Strides.reset();
    const auto s = effective_strides(d), p = effective_strides(packed);
    for (std::uint32_t i = 0; i < d.DimensionCount; ++i)
        if (d.Sizes[i] > 1 && s[i] != p[i]) return false;
    return true;
}

/// Writes the output tensor as a .npy file: packed, shape `sizes`, logical
/// order, whatever its strides; from the buffer itself when it is packed,
/// else gathered a piece at a time, so writing costs no copy of the output.
inline void write_output_npy(std::ostream& os, const Buffer& out) {
    if (is_4bit(out.desc.DataType)) return write_output_npy(os, detail::unpack_4bit(out));
    const std::uint64_t es = element_size(out.desc.DataType);
    os << npy_header(out.desc.DataType, shape_of(out.desc));
    if (is_packed_row_major(out.desc)) {
        os.write(reinterpret_cast<const char*>(out.bytes()),
                 static_cast<std::streamsize>(element_count(out.desc).value_or(0) * es));
        return;
    }
    std::vector<std::uint8_t> piece;
    piece.reserve(1 << 16);
    for_each_element(out.desc, [&](std::uint64_t off) {
        piece.insert(piece.end(), out.bytes() + off, out.bytes() + off + es);
        if (piece.size() >= (1 << 16)) {
            os.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(piece.size()));
            piece.clear();
        }
    });
    os.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(piece.size()));
}

namespace detail {

/// Element i of a packed buffer as a double (exact for all but 64-bit
/// integers beyond 2^53, which compare() handles separately).
inline long double element_value(TensorDataType t, const std::uint8_t* p, std::uint64_t i) {
    auto get = [&](auto tag) {
        decltype(tag) v;
        std::memcpy(&v, p + i * sizeof v, sizeof v);
        return v;
    };
    switch (t) {
        case TensorDataType::Int8: return get(std::int8_t{});
        case TensorDataType::UInt8: return get(std::uint8_t{});
        case TensorDataType::Int16: return get(std::int16_t{});
        case TensorDataType::UInt16: return get(std::uint16_t{});
        case TensorDataType::Int32: return get(std::int32_t{});
        case TensorDataType::UInt32: return get(std::uint32_t{});
        case TensorDataType::Int64: return get(std::int64_t{});  // exact in long double (64-bit mantissa)
        case TensorDataType::UInt64: return get(std::uint64_t{});
        case TensorDataType::Float32: return get(float{});
        case TensorDataType::Float64: return get(double{});
        case TensorDataType::Float16: return static_cast<float>(float16::from_bits(get(std::uint16_t{})));
        default: return 0;
    }
}

inline std::string format_value(long double v) {
    if (std::isnan(v)) return "NaN";
    std::ostringstream s;
    s.precision(std::floor(v) == v && std::fabs(v) < 1e20L ? 20 : 9);
    s << v;
    return s.str();
}

inline std::string format_index(std::uint64_t i, const TensorDesc& d) {
    std::vector<std::uint64_t> idx(d.DimensionCount);
    for (std::uint32_t k = d.DimensionCount; k-- > 0;) {
        idx[k] = i % d.Sizes[k];
        i /= d.Sizes[k];
    }
    std::string r = "[";
    for (std::size_t k = 0; k < idx.size(); ++k) r += (k ? "," : "") + std::to_string(idx[k]);
    return r + "]";
}

}  // namespace detail

/// Compares the output tensor with the expected one, reading the expected
/// .npy a piece at a time. Returns an empty string when they agree, else a
/// message naming the first mismatch. Tolerance is an absolute difference
/// in output units; 0 means identical bits (any NaN matches any NaN).
inline std::string compare(const Buffer& out, const ExpectedOutput& e) {
    if (is_4bit(out.desc.DataType)) return compare(detail::unpack_4bit(out), e);
    const TensorDesc& d = out.desc;
    const TensorDataType t = d.DataType;
    const std::uint64_t es = element_size(t), n = element_count(d).value_or(0);
    NpyReader npy(e.data, t);
    std::vector<std::uint8_t> piece;
    std::uint64_t i = 0, bad = 0, first = 0, in_piece = 0;
    long double worst = 0, first_got = 0, first_want = 0;
    for_each_element(d, [&](std::uint64_t off) {
        if (in_piece * es == piece.size()) {
            piece.resize(static_cast<std::size_t>(std::min<std::uint64_t>(n - i, 1 << 14) * es));
            npy.read(piece.data(), piece.size());
            in_piece = 0;
        }
        const std::uint8_t* want = piece.data() + in_piece++ * es;
        const long double g = detail::element_value(t, out.bytes() + off, 0);
        const long double x = detail::element_value(t, want, 0);
        bool ok;
        if (std::isnan(g) || std::isnan(x)) ok = std::isnan(g) && std::isnan(x);
        else if (e.tolerance == 0) ok = std::memcmp(out.bytes() + off, want, es) == 0;
        else ok = g == x || std::fabs(g - x) <= static_cast<long double>(e.tolerance);
        if (!ok) {
            if (bad++ == 0) first = i, first_got = g, first_want = x;
            if (!std::isnan(g) && !std::isnan(x)) worst = std::max(worst, std::fabs(g - x));
        }
        ++i;
    });
    if (bad == 0) return {};
    std::ostringstream s;
    s << "mismatch at element " << detail::format_index(first, d) << ": got " << detail::format_value(first_got)
      << ", expected " << detail::format_value(first_want) << " (" << bad << " of " << n
      << " elements differ, largest difference " << detail::format_value(worst) << ", tolerance " << e.tolerance << ")";
    return s.str();
}

/// Compares every output of a run case with its expected tensor; the first
/// disagreement's message (naming the member when the operator has several
/// outputs), or an empty string.
inline std::string compare_outputs(const Case& c) {
    const bool several = c.expected.outputs.size() > 1;
    for (const auto& e : c.expected.outputs)
        if (std::string diff = compare(c.tensors.at(e.member), e); !diff.empty())
            return several ? e.member + ": " + diff : diff;
    return {};
}

}  // namespace qdml::cli
