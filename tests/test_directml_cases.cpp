// The DML-struct entry against the case-file runner, over every case in
// tests/data (conformance vectors from ONNX Runtime and ONNX's node tests)
// and examples/cases: each case is loaded three times; one copy runs the way
// `qdml run` does (tools/case_io.hpp: make_desc, validate, run), the others
// are rebuilt as DirectML structs (tests/support/dml_structs.hpp) and go
// through qdml::dml::execute, with the reference and with the default
// implementation. Outputs must be identical bit for bit and equal the
// case's expected output, rejections identical message for message. Then
// every validation rule: each case at every feature level, and mutated
// member by member (type, rank, sizes, strides, sizes in bytes, flags,
// alignment, binding, overlap, parameters), must get the same verdict and
// message from qdml::validate and qdml::dml::validate.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "case_io.hpp"
#include "qdml/directml.hpp"
#include "support/dml_structs.hpp"

namespace {

namespace fs = std::filesystem;
using qdml::FeatureLevel;
using qdml::Tensor;
using qdml::cli::AnyDesc;

std::vector<std::string> case_files() {
    std::vector<std::string> files;
    for (const char* dir : {"tests/data", "examples/cases"})
        for (const auto& e : fs::recursive_directory_iterator(fs::path(QDML_SOURCE_ROOT) / dir))
            if (e.is_regular_file() && e.path().extension() == ".json" && e.path().filename() != "source.json")
                files.push_back(e.path().generic_string());  // ('/' between names on Windows too; tests/data/directml/source.json: provenance, not a case)
    std::sort(files.begin(), files.end());
    return files;
}

/// The message of the qdml::Error `f` throws, or "" when it returns.
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return {};
}

std::string dml_validate(const AnyDesc& d, FeatureLevel level, qdml::Fidelity fidelity) {
    return std::visit(
        [&](const auto& desc) {
            qtest::DmlOp op(desc);
            qdml::dml::ExecuteOptions o;
            o.feature_level = static_cast<DML_FEATURE_LEVEL>(level);
            o.fidelity = fidelity;
            return error_of([&] { qdml::dml::validate(op.op, op.bindings, o); });
        },
        d);
}

std::string qdml_validate(const AnyDesc& d, FeatureLevel level, qdml::Fidelity fidelity) {
    return error_of([&] { qdml::cli::validate_desc(d, level, fidelity); });
}

/// The profile a case's expected output belongs to, else the default.
qdml::Fidelity fidelity_of(const qdml::cli::Case& c) {
    return c.expected.fidelity.value_or(qdml::RunOptions{}.fidelity);
}

constexpr FeatureLevel kLevels[] = {
    FeatureLevel::L1_0, FeatureLevel::L2_0, FeatureLevel::L2_1, FeatureLevel::L3_0, FeatureLevel::L3_1,
    FeatureLevel::L4_0, FeatureLevel::L4_1, FeatureLevel::L5_0, FeatureLevel::L5_1, FeatureLevel::L5_2,
    FeatureLevel::L6_0, FeatureLevel::L6_1, FeatureLevel::L6_2, FeatureLevel::L6_3, FeatureLevel::L6_4};

TEST_CASE("every case: the case-file runner and qdml::dml::execute give identical bits", "[directml][cases][compute]") {
    std::map<std::string, int> computed, rejected;
    for (const auto& file : case_files()) {
        INFO(file);
        qdml::cli::Case runner_case = qdml::cli::load_case(file);
        // The runner's path (tools/qdml.cpp run_case): validate, then run (default implementation),
        // in the case's profile.
        qdml::RunOptions run;
        run.fidelity = fidelity_of(runner_case);
        const std::string runner_error = error_of([&] {
            const AnyDesc d = qdml::cli::make_desc(runner_case);
            qdml::cli::validate_desc(d, FeatureLevel::Latest, run.fidelity);
            qdml::cli::run_desc(d, run);
        });
        // DirectML structs bound to a fresh copy's buffers, through the
        // reference and through the default implementation.
        for (const auto implementation : {qdml::Implementation::Reference, qdml::RunOptions{}.implementation}) {
            qdml::cli::Case dml_case = qdml::cli::load_case(file);
            qdml::dml::ExecuteOptions o;
            o.implementation = implementation;
            o.fidelity = run.fidelity;
            const std::string dml_error = error_of([&] {
                std::visit(
                    [&](const auto& desc) {
                        qtest::DmlOp op(desc);
                        qdml::dml::execute(op.op, op.bindings, o);
                    },
                    qdml::cli::make_desc(dml_case));
            });
            CHECK(dml_error == runner_error);
            const auto& a = runner_case.tensors.at("OutputTensor").storage;
            const auto& b = dml_case.tensors.at("OutputTensor").storage;
            CHECK(a == b);  // every byte, including those outside the output view (zero in both)
        }
        (runner_error.empty() ? computed : rejected)[runner_case.operator_name] += 1;
        if (runner_case.expected.kind == qdml::cli::Expectation::Kind::Error) CHECK_FALSE(runner_error.empty());
        // ... and the expected output, as `qdml check` compares it (whatever
        // floating-point state main() left the thread in: QDML_TEST_FP_ENV).
        if (runner_error.empty() && runner_case.expected.kind == qdml::cli::Expectation::Kind::Data)
            CHECK(qdml::cli::compare_outputs(runner_case) == "");
    }
    for (const auto* op : {"ELEMENT_WISE_DEQUANTIZE_LINEAR", "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
                           "QUANTIZED_LINEAR_MATRIX_MULTIPLY", "QUANTIZED_LINEAR_CONVOLUTION", "ELEMENT_WISE_CLIP",
                           "MATRIX_MULTIPLY_INTEGER", "MATRIX_MULTIPLY_INTEGER_TO_FLOAT"}) {
        INFO(op);
        CHECK(computed[op] >= 5);
    }
    int total = 0;
    for (const auto& [op, n] : computed) total += n;
    WARN(total << " cases computed identically through both entries");
}

TEST_CASE("DirectML's cases: the exact checker explains every element in both profiles", "[directml][cases][fidelity]") {
    // tests/data/directml (docs/semantics.md section 10): computed in the
    // directml profile, every element that differs from the exactly rounded
    // result is explained, those moved by a DirectML step named after it; in
    // the exact profile every difference is explained by section 0's steps.
    std::map<qdml::exact::Reason, std::uint64_t> reasons;
    int cases = 0;
    for (const auto& file : case_files()) {
        if (file.find("/tests/data/directml/") == std::string::npos) continue;
        for (const auto fidelity : {qdml::Fidelity::DirectML, qdml::Fidelity::Exact}) {
            INFO(file << " fidelity " << qdml::to_string(fidelity));
            qdml::cli::Case c = qdml::cli::load_case(file);
            if (c.expected.kind != qdml::cli::Expectation::Kind::Data) continue;
            qdml::RunOptions o;
            o.fidelity = fidelity;
            const AnyDesc d = qdml::cli::make_desc(c);
            qdml::cli::run_desc(d, o);
            const qdml::exact::Report r = qdml::cli::check_exact_desc(d, fidelity);
            CHECK(r.unexplained() == 0);
            if (fidelity == qdml::Fidelity::DirectML) {
                ++cases;
                for (const auto& diff : r.differences) ++reasons[diff.reason];
            } else {
                for (const auto& diff : r.differences) CHECK(diff.reason < qdml::exact::Reason::Unexplained);
            }
        }
    }
    CHECK(cases >= 540);
    // Each DirectML step moves some element of the data.
    for (const auto step : {qdml::exact::Reason::DirectMLDequantize, qdml::exact::Reason::DirectMLRequantizeOrder,
                            qdml::exact::Reason::DirectMLQuantize, qdml::exact::Reason::DirectMLClip}) {
        INFO(qdml::exact::name(step));
        CHECK(reasons[step] > 0);
    }
}

TEST_CASE("every case at every feature level: same verdict and message through the DML entry",
          "[directml][cases]") {
    int rejections = 0;
    for (const auto& file : case_files()) {
        INFO(file);
        qdml::cli::Case c = qdml::cli::load_case(file);
        const AnyDesc d = qdml::cli::make_desc(c);
        for (const auto level : kLevels) {
            INFO(qdml::to_string(level));
            const std::string expected = qdml_validate(d, level, fidelity_of(c));
            CHECK(dml_validate(d, level, fidelity_of(c)) == expected);
            rejections += !expected.empty();
        }
    }
    CHECK(rejections > 100);  // the early levels' tables reject much of the data
}

/// Every bound tensor of a desc (null for an absent optional one), with its
/// member name, so mutations can reach each.
template <class Desc>
std::vector<std::pair<const char*, std::optional<Tensor>*>> optional_members(Desc& d) {
    if constexpr (std::is_same_v<Desc, qdml::ElementWiseDequantizeLinearDesc> ||
                  std::is_same_v<Desc, qdml::ElementWiseQuantizeLinearDesc>)
        return {{"ZeroPointTensor", &d.ZeroPointTensor}};
    else if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearConvolutionDesc>)
        return {{"InputZeroPointTensor", &d.InputZeroPointTensor},
                {"FilterZeroPointTensor", &d.FilterZeroPointTensor},
                {"BiasTensor", &d.BiasTensor},
                {"OutputZeroPointTensor", &d.OutputZeroPointTensor}};
    else if constexpr (std::is_same_v<Desc, qdml::ElementWiseClipDesc> || std::is_same_v<Desc, qdml::ElementWiseClip1Desc> ||
                       std::is_same_v<Desc, qdml::DynamicQuantizeLinearDesc>)
        return {};
    else if constexpr (std::is_same_v<Desc, qdml::MatrixMultiplyIntegerDesc>)
        return {{"AZeroPointTensor", &d.AZeroPointTensor}, {"BZeroPointTensor", &d.BZeroPointTensor}};
    else if constexpr (std::is_same_v<Desc, qdml::ConvolutionIntegerDesc>)
        return {{"InputZeroPointTensor", &d.InputZeroPointTensor}, {"FilterZeroPointTensor", &d.FilterZeroPointTensor}};
    else if constexpr (std::is_same_v<Desc, qdml::MatrixMultiplyIntegerToFloatDesc>)
        return {{"AZeroPointTensor", &d.AZeroPointTensor},
                {"BZeroPointTensor", &d.BZeroPointTensor},
                {"BiasTensor", &d.BiasTensor}};
    else if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearAveragePoolingDesc>)
        return {{"InputZeroPointTensor", &d.InputZeroPointTensor}, {"OutputZeroPointTensor", &d.OutputZeroPointTensor}};
    else if constexpr (std::is_base_of_v<qdml::QuantizationDescBase, Desc>)  // the scale is required: present_tensors
        return {{"QuantizationTensors[1]", &d.QuantizationTensors[1]}};
    else
        return {{"AZeroPointTensor", &d.AZeroPointTensor},
                {"BZeroPointTensor", &d.BZeroPointTensor},
                {"OutputZeroPointTensor", &d.OutputZeroPointTensor}};
}

template <class Desc>
std::vector<Tensor*> present_tensors(Desc& d) {
    std::vector<Tensor*> r;
    auto add = [&](Tensor& t) { r.push_back(&t); };
    if constexpr (std::is_same_v<Desc, qdml::ElementWiseDequantizeLinearDesc> ||
                  std::is_same_v<Desc, qdml::ElementWiseQuantizeLinearDesc>) {
        add(d.InputTensor);
        add(d.ScaleTensor);
    } else if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearConvolutionDesc>) {
        add(d.InputTensor);
        add(d.InputScaleTensor);
        add(d.FilterTensor);
        add(d.FilterScaleTensor);
        add(d.OutputScaleTensor);
    } else if constexpr (std::is_same_v<Desc, qdml::ElementWiseClipDesc> || std::is_same_v<Desc, qdml::ElementWiseClip1Desc>) {
        add(d.InputTensor);
    } else if constexpr (std::is_same_v<Desc, qdml::DynamicQuantizeLinearDesc>) {
        add(d.InputTensor);  // the scale and zero point outputs below, before OutputTensor
        add(d.OutputScaleTensor);
        add(d.OutputZeroPointTensor);
    } else if constexpr (std::is_same_v<Desc, qdml::MatrixMultiplyIntegerDesc>) {
        add(d.ATensor);
        add(d.BTensor);
    } else if constexpr (std::is_same_v<Desc, qdml::ConvolutionIntegerDesc>) {
        add(d.InputTensor);
        add(d.FilterTensor);
    } else if constexpr (std::is_base_of_v<qdml::QuantizationDescBase, Desc>) {
        add(d.InputTensor);
        if (d.QuantizationTensors[0]) add(*d.QuantizationTensors[0]);
    } else if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearAveragePoolingDesc>) {
        add(d.InputTensor);
        add(d.InputScaleTensor);
        add(d.OutputScaleTensor);
    } else if constexpr (std::is_same_v<Desc, qdml::MatrixMultiplyIntegerToFloatDesc>) {
        add(d.ATensor);
        add(d.AScaleTensor);
        add(d.BTensor);
        add(d.BScaleTensor);
    } else {
        add(d.ATensor);
        add(d.AScaleTensor);
        add(d.BTensor);
        add(d.BScaleTensor);
        add(d.OutputScaleTensor);
    }
    for (auto& [name, t] : optional_members(d))
        if (*t) r.push_back(&**t);
    add(d.OutputTensor);
    return r;
}

/// Mutations of one tensor that each break (or probe) one validation rule.
std::vector<std::function<void(Tensor&, const Tensor& first_input)>> tensor_mutations() {
    std::vector<std::function<void(Tensor&, const Tensor&)>> m;
    for (std::uint32_t type = 0; type <= 11; ++type)
        m.push_back([type](Tensor& t, const Tensor&) { t.Desc.DataType = static_cast<qdml::TensorDataType>(type); });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.DimensionCount -= t.Desc.DimensionCount > 1 ? 1 : 0; });
    m.push_back([](Tensor& t, const Tensor&) {
        if (t.Desc.DimensionCount < 8) t.Desc.Sizes[t.Desc.DimensionCount++] = 1;
    });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.Sizes[0] = 0; });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.Sizes[t.Desc.DimensionCount - 1] += 1; });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.Strides = std::array<std::uint32_t, 8>{}; });
    m.push_back([](Tensor& t, const Tensor&) {
        if (t.Desc.TotalTensorSizeInBytes >= 4) t.Desc.TotalTensorSizeInBytes -= 4;
    });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.Flags = qdml::kTensorFlagOwnedByDml; });  // outputs: rejected
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.Flags = 6; });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.GuaranteedBaseOffsetAlignment = 3; });
    m.push_back([](Tensor& t, const Tensor&) { t.Desc.GuaranteedBaseOffsetAlignment = 1u << 20; });
    m.push_back([](Tensor& t, const Tensor&) { t.DataSizeInBytes = t.Desc.TotalTensorSizeInBytes - 1; });
    m.push_back([](Tensor& t, const Tensor&) { t.Data = static_cast<char*>(t.Data) + 1; });
    m.push_back([](Tensor& t, const Tensor& first) { t.Data = first.Data; });  // overlap (or in place)
    return m;
}

template <class Desc>
std::vector<std::function<void(Desc&)>> param_mutations() {
    std::vector<std::function<void(Desc&)>> m;
    if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearConvolutionDesc>) {
        m.push_back([](Desc& d) { d.Strides[1] = 0; });
        m.push_back([](Desc& d) { d.Dilations[0] = 0; });
        m.push_back([](Desc& d) { d.Dilations[1] = 1000; });
        m.push_back([](Desc& d) { d.StartPadding[0] += 1; });
        m.push_back([](Desc& d) { d.EndPadding[1] += 3; });
        m.push_back([](Desc& d) { d.GroupCount = 0; });
        m.push_back([](Desc& d) { d.GroupCount += 1; });
        m.push_back([](Desc& d) { d.DimensionCount = 1; });
        m.push_back([](Desc& d) { d.DimensionCount = 3; });
    }
    if constexpr (std::is_base_of_v<qdml::QuantizationDescBase, Desc>) {
        using QT = qdml::QuantizationType;
        m.push_back([](Desc& d) { d.QuantizationType = QT::None; });
        m.push_back([](Desc& d) {
            d.QuantizationType = d.QuantizationType == QT::Scale ? QT::ScaleZeroPoint : QT::Scale;
        });
        m.push_back([](Desc& d) { d.QuantizationType = static_cast<QT>(7); });
    }
    if constexpr (std::is_same_v<Desc, qdml::ElementWiseClipDesc>) {
        m.push_back([](Desc& d) { d.Min = std::numeric_limits<float>::quiet_NaN(); });
        m.push_back([](Desc& d) { d.Max = std::numeric_limits<float>::quiet_NaN(); });
        m.push_back([](Desc& d) { std::swap(d.Min, d.Max); });
    }
    return m;
}

TEST_CASE("every validation rule reaches the caller through the DML entry (mutated cases)", "[directml][cases]") {
    int checked = 0, rejected = 0;
    qdml::Fidelity fidelity = qdml::RunOptions{}.fidelity;  // each case's own
    auto compare = [&](const AnyDesc& d, bool data_null) {
        const std::string expected = qdml_validate(d, FeatureLevel::Latest, fidelity);
        const std::string got = dml_validate(d, FeatureLevel::Latest, fidelity);
        ++checked;
        rejected += !expected.empty();
        if (data_null) {
            // qdml says "Data is null"; DirectML's form is an empty binding. Both reject.
            CHECK_FALSE(got.empty());
            CHECK(got.find("has no buffer bound") != std::string::npos);
        } else {
            CHECK(got == expected);
        }
    };
    const auto files = case_files();
    for (std::size_t f = 0; f < files.size(); f += 5) {  // a fifth of the cases: every operator, type mix and layout kind
        INFO(files[f]);
        qdml::cli::Case c = qdml::cli::load_case(files[f]);
        fidelity = fidelity_of(c);
        const AnyDesc original = qdml::cli::make_desc(c);
        std::visit(
            [&](const auto& desc) {
                using Desc = std::decay_t<decltype(desc)>;
                Desc probe = desc;
                const auto members = present_tensors(probe).size();
                const auto optionals = optional_members(probe).size();
                const auto mutations = tensor_mutations();
                for (std::size_t i = 0; i < members; ++i) {
                    for (std::size_t k = 0; k < mutations.size(); ++k) {
                        Desc d = desc;
                        auto tensors = present_tensors(d);
                        INFO("tensor " << i << " mutation " << k);
                        mutations[k](*tensors[i], *tensors[0]);
                        compare(AnyDesc{d}, false);
                    }
                    Desc d = desc;
                    present_tensors(d)[i]->Data = nullptr;
                    compare(AnyDesc{d}, true);
                }
                for (std::size_t j = 0; j < optionals; ++j) {
                    Desc d = desc;
                    optional_members(d)[j].second->reset();
                    compare(AnyDesc{d}, false);
                }
                for (const auto& mutate : param_mutations<Desc>()) {
                    Desc d = desc;
                    mutate(d);
                    compare(AnyDesc{d}, false);
                }
            },
            original);
    }
    CHECK(rejected > checked / 2);
    WARN(checked << " mutated descs, " << rejected << " rejected, each with the same message through both entries");
}

}  // namespace
