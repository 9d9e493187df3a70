// python/qdml_module.cpp - the qdml._qdml extension (nanobind): runs one
// operator on numpy buffers in place, and computes case files in process
// with the runner's own loader (tools/case_io.hpp). The public Python API
// (one function per operator, write_case, run_case) is python/qdml/__init__.py;
// it turns numpy arrays into (type, address, sizes, strides) here.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "case_io.hpp"
#include "thread_pool.hpp"

namespace nb = nanobind;
using namespace qdml::cli;

namespace {

/// A numpy buffer as the Python side describes it: DML type name, address of
/// element [0, ..., 0], sizes, strides in elements (all >= 0).
using PyTensor = std::tuple<std::string, std::uintptr_t, std::vector<std::uint32_t>, std::vector<std::uint32_t>>;

/// The implementations by name: "reference" (the scalar oracle) and "simd"
/// (the fastest bit-identical path).
constexpr std::pair<const char*, qdml::Implementation> kImplementations[] = {
    {"reference", qdml::Implementation::Reference},
    {"simd", qdml::Implementation::Simd},
};

std::vector<std::string> implementations() {
    std::vector<std::string> r;
    for (const auto& [name, value] : kImplementations) r.emplace_back(name);
    return r;
}

/// The name of qdml::run's default (RunOptions{}.implementation): the
/// package's default follows the C++ one.
std::string default_implementation() {
    for (const auto& [name, value] : kImplementations)
        if (value == qdml::RunOptions{}.implementation) return name;
    throw std::logic_error("qdml::RunOptions{}.implementation has no name in kImplementations");
}

/// The profiles by name (qdml::Fidelity).
std::vector<std::string> fidelities() { return {"directml", "exact"}; }

/// `fidelity`: "directml", "exact", or "" (qdml::RunOptions' default).
qdml::RunOptions run_options(const std::string& impl, const std::string& level, const std::string& fidelity,
                             const std::string& where) {
    qdml::RunOptions o;
    const auto* found = std::find_if(std::begin(kImplementations), std::end(kImplementations),
                                     [&](const auto& i) { return impl == i.first; });
    if (found == std::end(kImplementations)) {
        std::string known;
        for (const auto& i : implementations()) known += (known.empty() ? "" : ", ") + i;
        throw InputError(where, "impl: unknown implementation '" + impl + "' (known: " + known + ")");
    }
    o.implementation = found->second;
    const auto fl = level == "latest" ? qdml::FeatureLevel::Latest : qdml::parse_feature_level(level);
    if (!fl)
        throw InputError(where, "feature_level: unknown level '" + level + "' (1.0 to " +
                                    qdml::to_string(qdml::FeatureLevel::Latest) + ", or latest)");
    o.feature_level = *fl;
    if (!fidelity.empty()) {
        const auto f = qdml::parse_fidelity(fidelity);
        if (!f) throw InputError(where, "fidelity: unknown profile '" + fidelity + "' (directml or exact)");
        o.fidelity = *f;
    }
    return o;
}

/// The executor of `threads` threads: the calling thread alone for 1, else
/// a pool of that size (tools/thread_pool.hpp), made on first use and kept
/// for the process (a forked child makes its own) (a pool busy with another Python thread's call makes
/// that call run on its own thread: no oversubscription).
qdml::Executor executor_of(unsigned threads) {
    if (threads <= 1) return {};
    static std::mutex m;
    static std::map<unsigned, std::unique_ptr<qdml::tools::ThreadPool>> pools;
    const std::lock_guard<std::mutex> lock(m);
#if defined(__unix__) || defined(__APPLE__)
    // A child of fork() (multiprocessing's default start on Linux) has none
    // of its parent's worker threads: it abandons the parent's pools (never
    // joined, never freed: their threads are not its own) and makes its own.
    static pid_t owner = getpid();
    if (getpid() != owner) {
        for (auto& entry : pools) (void)entry.second.release();
        pools.clear();
        owner = getpid();
    }
#endif
    auto& p = pools[threads];
    if (!p) p = std::make_unique<qdml::tools::ThreadPool>(threads);
    return p->executor();
}

/// Runs `op` on the given buffers (OutputTensor written in place). Member
/// names and param parsing are the case loader's, so a call and a case file
/// mean the same thing.
void run_operator(const std::string& op, const std::map<std::string, PyTensor>& tensors, const std::string& params_json,
                  const std::string& impl, const std::string& level, const std::string& fidelity, unsigned threads) {
    qdml::RunOptions options = run_options(impl, level, fidelity, op);
    options.executor = executor_of(threads);
    const OperatorSpec& spec = find_operator(op, op);
    Case c;
    c.file = op;
    c.operator_name = std::string(spec.name);
    c.params = parse_json(params_json, op + " params");
    std::map<const Buffer*, void*> data;
    // UINT4/INT4 members come as int8/uint8 arrays, one element an entry: each is
    // packed two a byte into a buffer of its own (packed row-major), and a 4-bit
    // output is unpacked into its array after the call.
    struct Nibbles {
        std::vector<std::uint64_t> packed;
        std::uint8_t* array;
        qdml::TensorDesc array_desc;  // the array's sizes and element strides (one byte each)
        bool is_output;
    };
    std::map<const Buffer*, Nibbles> nibbles;
    for (const auto& [member, t] : tensors) {
        const auto* m = [&]() -> const MemberSpec* {
            for (const auto& s : spec.members)
                if (s.name == member) return &s;
            return nullptr;
        }();
        if (m == nullptr) throw InputError(op, member + ": not a member of " + op);
        const auto& [type_name, address, sizes, strides] = t;
        Buffer b;
        b.is_output = m->kind == MemberKind::Output;
        const auto type = qdml::parse_data_type(type_name);
        if (!type) throw InputError(op, member + ": unknown data type '" + type_name + "'");
        b.desc.DataType = *type;
        if (sizes.empty() || sizes.size() > qdml::kMaxDimensions || strides.size() != sizes.size())
            throw InputError(op, member + ": must have 1 to 8 dimensions, got " + std::to_string(sizes.size()));
        b.desc.DimensionCount = static_cast<std::uint32_t>(sizes.size());
        std::copy(sizes.begin(), sizes.end(), b.desc.Sizes.begin());
        b.desc.Strides.emplace();
        std::copy(strides.begin(), strides.end(), b.desc.Strides->begin());
        // The minimum DMLCalcBufferTensorSize; qdml reads and writes only the
        // elements the tensor addresses, all inside the numpy array.
        b.desc.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(b.desc).value_or(0);
        auto [it, inserted] = c.tensors.emplace(member, std::move(b));
        data[&it->second] = reinterpret_cast<void*>(address);
        Buffer& nb4 = it->second;
        if (qdml::is_4bit(nb4.desc.DataType)) {
            Nibbles n{{}, reinterpret_cast<std::uint8_t*>(address), nb4.desc, nb4.is_output};
            n.array_desc.DataType = npy_storage_type(nb4.desc.DataType);  // the array: one byte an element
            nb4.desc.Strides.reset();
            nb4.desc.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(nb4.desc).value_or(0);
            n.packed.assign(static_cast<std::size_t>((nb4.desc.TotalTensorSizeInBytes + 7) / 8), 0);
            auto* bytes = reinterpret_cast<std::uint8_t*>(n.packed.data());
            if (!n.is_output) {
                const int lo = nb4.desc.DataType == qdml::TensorDataType::Int4 ? -8 : 0;
                std::uint64_t i = 0;
                for_each_element(n.array_desc, [&](std::uint64_t off) {
                    const int v = lo < 0 ? static_cast<std::int8_t>(n.array[off]) : n.array[off];
                    if (v < lo || v > lo + 15)
                        throw InputError(op, member + ": element " + std::to_string(i) + " is " + std::to_string(v) +
                                                 ", not a " + type_name + " value (" + std::to_string(lo) + ".." +
                                                 std::to_string(lo + 15) + ")");
                    qdml::NibbleView<false, 1>::write(bytes, i++, v);
                });
            }
            data[&nb4] = bytes;
            nibbles.emplace(&nb4, std::move(n));
        }
    }
    for (const auto& m : spec.members)
        if (m.kind != MemberKind::Optional && !c.tensors.count(std::string(m.name)))
            throw InputError(op, std::string(m.name) + ": missing (required by " + op + ")");
    const AnyDesc d = detail::build_desc(c, [&](Buffer& b) { return qdml::Tensor{b.desc, data.at(&b), 0}; });
    nb::gil_scoped_release unlocked;  // the caller's arrays stay referenced for the call
    run_desc(d, options);
    for (auto& [b, n] : nibbles) {
        if (!n.is_output) continue;
        const bool is_signed = b->desc.DataType == qdml::TensorDataType::Int4;
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(n.packed.data());
        std::uint64_t i = 0;
        for_each_element(n.array_desc, [&](std::uint64_t off) {
            const std::int32_t v = is_signed ? qdml::NibbleView<true, 1>::read(bytes, i) : qdml::NibbleView<false, 1>::read(bytes, i);
            n.array[off] = static_cast<std::uint8_t>(v);
            ++i;
        });
    }
}

nb::dlpack::dtype dlpack_dtype(qdml::TensorDataType t) {
    using T = qdml::TensorDataType;
    const auto bits = static_cast<std::uint8_t>(8 * qdml::element_size(t));
    switch (t) {
        case T::Float16:
        case T::Float32:
        case T::Float64: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), bits, 1};
        case T::Int8:
        case T::Int16:
        case T::Int32:
        case T::Int64: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int), bits, 1};
        default: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt), bits, 1};
    }
}

/// Loads, validates and computes a case file as `qdml run` does; returns
/// each output tensor (in member order) packed in logical order, shape Sizes.
std::vector<nb::ndarray<nb::numpy>> run_case_file(const std::string& path, const std::string& impl,
                                                  const std::string& level, std::uint64_t max_work,
                                                  const std::string& fidelity, unsigned threads) {
    qdml::RunOptions options = run_options(impl, level, fidelity, path);
    options.executor = executor_of(threads);
    std::vector<std::unique_ptr<std::vector<std::uint8_t>>> packed;
    std::vector<qdml::TensorDesc> out_descs;
    {
        nb::gil_scoped_release unlocked;
        Case c = load_case(path);
        if (fidelity.empty()) options.fidelity = c.expected.fidelity.value_or(options.fidelity);
        try {
            validate_case(c, options.feature_level, options.fidelity);
            check_limits(c, max_work);
            run_desc(make_desc(c), options);
        } catch (const qdml::Error& e) {
            throw InputError(path, e.what());  // "<file>: OPERATOR: Member: rule", as qdml run says
        }
        for (const auto& member : output_members(c)) {
            const Buffer* outp = &c.tensors.at(member);
            Buffer unpacked;  // a 4-bit output: one element a byte, as its .npy holds it
            if (qdml::is_4bit(outp->desc.DataType)) outp = &(unpacked = detail::unpack_4bit(*outp));
            const Buffer& out = *outp;
            out_descs.push_back(out.desc);
            auto& p = *packed.emplace_back(std::make_unique<std::vector<std::uint8_t>>());
            const std::uint64_t es = qdml::element_size(out.desc.DataType);
            p.reserve(static_cast<std::size_t>(qdml::element_count(out.desc).value_or(0) * es));
            for_each_element(out.desc, [&](std::uint64_t off) { p.insert(p.end(), out.bytes() + off, out.bytes() + off + es); });
        }
    }
    std::vector<nb::ndarray<nb::numpy>> r;
    for (std::size_t i = 0; i < packed.size(); ++i) {
        const qdml::TensorDesc& d = out_descs[i];
        std::vector<std::size_t> shape(d.Sizes.begin(), d.Sizes.begin() + d.DimensionCount);
        void* data = packed[i]->data();
        nb::capsule owner(packed[i].release(), [](void* p) noexcept { delete static_cast<std::vector<std::uint8_t>*>(p); });
        r.emplace_back(data, shape.size(), shape.data(), owner, nullptr, dlpack_dtype(d.DataType));
    }
    return r;
}

/// The case format's operators: name -> ([(member, "required" | "optional" | "output")], [param]).
std::map<std::string, std::tuple<std::vector<std::tuple<std::string, std::string>>, std::vector<std::string>>> operators() {
    std::map<std::string, std::tuple<std::vector<std::tuple<std::string, std::string>>, std::vector<std::string>>> r;
    for (const auto& spec : operator_specs()) {
        auto& [members, params] = r[std::string(spec.name)];
        for (const auto& m : spec.members)
            members.emplace_back(std::string(m.name), m.kind == MemberKind::Required   ? "required"
                                                      : m.kind == MemberKind::Optional ? "optional"
                                                                                       : "output");
        params.assign(spec.params.begin(), spec.params.end());
    }
    return r;
}

}  // namespace

NB_MODULE(_qdml, m) {
    m.doc() = "qdml extension module; use the qdml package";
    // qdml.Error (a ValueError) carries qdml's message: "OPERATOR: Member: rule"
    // for invalid descs, "<file>: <what>" for case files.
    static nb::exception<qdml::Error> error(m, "Error", PyExc_ValueError);
    nb::register_exception_translator(
        [](const std::exception_ptr& p, void*) {
            try {
                std::rethrow_exception(p);
            } catch (const InputError& e) {
                PyErr_SetString(error.ptr(), e.what());
            }
        });
    m.def("run_operator", &run_operator, nb::arg("operator"), nb::arg("tensors"), nb::arg("params_json"),
          nb::arg("impl"), nb::arg("feature_level"), nb::arg("fidelity"), nb::arg("threads"));
    m.def("run_case", &run_case_file, nb::arg("path"), nb::arg("impl"), nb::arg("feature_level"), nb::arg("max_work"),
          nb::arg("fidelity"), nb::arg("threads"));
    m.def("operators", &operators);
    m.attr("IMPLEMENTATIONS") = implementations();
    m.attr("DEFAULT_IMPLEMENTATION") = default_implementation();
    m.attr("DEFAULT_MAX_WORK") = kDefaultMaxWork;
    m.attr("FIDELITIES") = fidelities();
    m.attr("DEFAULT_FIDELITY") = std::string(qdml::to_string(qdml::RunOptions{}.fidelity));
    m.attr("LATEST_FEATURE_LEVEL") = qdml::to_string(qdml::FeatureLevel::Latest);
}
