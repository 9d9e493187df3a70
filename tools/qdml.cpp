// qdml - the case runner: computes operator cases (docs/case-format.md) with
// qdml and checks them against expected outputs, so that any language's test
// suite can use qdml as its oracle.
//
//   qdml run CASE.json [--out OUT.npy | --out DIR] [--check-exact] [--feature-level 6.2] [--fidelity directml|exact] [--max-work N]
//   qdml validate CASE.json [--feature-level 6.2] [--fidelity directml|exact] [--max-work N]
//   qdml check PATH... [--verbose] [--feature-level 6.2] [--fidelity directml|exact] [--max-work N]
//   (run and check: [--impl reference|simd] [--isa PATH] [--threads N])
//
// The profile (docs/semantics.md section 10): --fidelity, else the case's
// "expected": {"fidelity": ...}, else qdml::RunOptions' default.
//
// Exit codes: 0 success; 1 an output disagrees with `expected` (or a check
// failed, or compared nothing); 2 bad input (case, .npy, desc, limits,
// command line). Errors are one line on stderr: "qdml: <file>: <what>".
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "case_io.hpp"
#include "thread_pool.hpp"

namespace {

using namespace qdml::cli;
namespace fs = std::filesystem;

constexpr int kOk = 0, kMismatch = 1, kBadInput = 2;

/// The outcome of one case.
struct Outcome {
    int code = kOk;
    std::string message;                 // "<file>: <what>" for errors and mismatches
    std::string op = "(unreadable case)";  // the operator, once the JSON names a known one
    bool expects_error = false;          // "expected": {"error": true}
    bool compared = false;               // an expected output was compared
    bool not_a_case = false;             // well-formed JSON without an "operator" field
};

struct Options {
    qdml::RunOptions run{qdml::Implementation::Reference};  // the runner's default: the oracle
    std::string out;
    bool check_exact = false;
    bool verbose = false;  // run: say which implementation, ISA path and form computed the case
    std::uint64_t max_work = kDefaultMaxWork;
    std::optional<qdml::Fidelity> fidelity;  // --fidelity, when given
};

enum class Mode { Validate, Run, Check };

std::string fmt(double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

/// Prints the exact checker's report; returns the number of unexplained
/// differences.
std::uint64_t print_exact_report(const std::string& path, const qdml::exact::Report& r) {
    for (const auto& d : r.differences) {
        std::cout << "  " << (d.member == "OutputTensor" ? "" : std::string(d.member) + " ") << "[";
        for (std::size_t k = 0; k < d.index.size(); ++k) std::cout << (k ? "," : "") << d.index[k];
        std::cout << "] got " << fmt(d.got) << ", exact " << fmt(d.exact) << " (value " << fmt(d.value);
        if (std::isfinite(d.boundary_distance)) std::cout << ", " << fmt(d.boundary_distance) << " from a rounding boundary";
        std::cout << ", binary32 " << fmt(d.binary32);
        if (d.reason >= qdml::exact::Reason::DirectMLDequantize) std::cout << ", DirectML's steps " << fmt(d.directml);
        std::cout << ") " << qdml::exact::name(d.reason) << "\n";
    }
    std::cout << path << ": exact check: " << r.elements << " elements, " << r.differences.size()
              << " differ from the exactly rounded result (" << r.differences.size() - r.unexplained()
              << " explained by docs/semantics.md's binary32 steps: near a tie, rounding, int32 wrap, overflow, underflow, NaN, "
                 "or, with --fidelity directml, a DirectML step of section 10; "
              << r.unexplained() << " unexplained); " << r.near_tie_elements
              << " elements lie within the tie window\n";
    return r.unexplained();
}

/// The files a case reads: the case itself, its .npy inputs and expected.
std::vector<fs::path> files_read(const json& j, const std::string& path) {
    std::vector<fs::path> r{path};
    const fs::path dir = fs::path(path).parent_path();
    auto add = [&](const json& o) {
        if (o.is_object() && o.contains("data") && o["data"].is_string()) r.push_back(dir / o["data"].get<std::string>());
    };
    if (j.is_object() && j.contains("tensors") && j["tensors"].is_object())
        for (const auto& t : j["tensors"]) add(t);
    if (j.is_object() && j.contains("expected")) {
        add(j["expected"]);
        if (j["expected"].is_object())
            for (const auto& e : j["expected"]) add(e);  // an operator with several outputs: one object each
    }
    return r;
}

/// The output members of the operator a parsed case names (empty if it names none the runner knows).
std::vector<std::string> case_outputs(const json& j) {
    std::vector<std::string> r;
    if (const auto op = case_operator(j))
        for (const auto& m : find_operator(*op, "").members)
            if (m.kind == MemberKind::Output) r.emplace_back(m.name);
    return r;
}

/// The files --out writes for this case: `out` itself for one output, out/<Member>.npy for several.
std::vector<fs::path> out_files(const std::string& out, const std::vector<std::string>& outputs) {
    if (outputs.size() <= 1) return {fs::path(out)};
    std::vector<fs::path> r;
    for (const auto& m : outputs) r.push_back(fs::path(out) / (m + ".npy"));
    return r;
}

/// Why --out cannot name `out` for this case, or an empty string.
std::string out_problem(const std::string& out, const json& j, const std::string& path) {
    const auto outputs = case_outputs(j);
    if (outputs.size() > 1) {
        std::error_code ec;
        const fs::path dir(out);
        if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
            return "is not a directory (" + j["operator"].get<std::string>() + " has " + std::to_string(outputs.size()) +
                   " outputs: --out takes a directory, written as DIR/<Member>.npy)";
        if (!fs::exists(dir, ec)) {
            const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
            if (!fs::is_directory(parent, ec)) return "directory '" + parent.string() + "' does not exist";
        }
    } else if (std::string why = output_path_problem(out); !why.empty()) {
        return why;
    }
    for (const auto& o : out_files(out, outputs))
        for (const auto& f : files_read(j, path)) {
            std::error_code ec;
            if (fs::equivalent(o, f, ec)) return (outputs.size() > 1 ? "holds " : "is ") + f.string() + ", a file the case reads";
        }
    return {};
}

/// Loads, validates, checks the limits and (in Run and Check mode) runs one case.
Outcome run_case(const std::string& path, const Options& o, Mode mode, bool skip_non_cases = false) {
    Outcome r;
    auto fail = [&](int code, std::string message) {
        r.code = code;
        r.message = std::move(message);
        return r;
    };
    try {
        const json j = read_case_json(path);
        if (skip_non_cases && !(j.is_object() && j.contains("operator"))) {
            r.not_a_case = true;
            return r;
        }
        r.op = case_operator(j).value_or(r.op);
        r.expects_error = case_expects_error(j);
        if (mode == Mode::Run && !o.out.empty())
            if (std::string why = out_problem(o.out, j, path); !why.empty())
                throw InputError(o.out, "cannot write output file: " + why);
        Case c = parse_case(j, path, fs::path(path).parent_path());
        qdml::RunOptions run = o.run;
        run.fidelity = o.fidelity ? *o.fidelity : c.expected.fidelity.value_or(run.fidelity);
        validate_case(c, run.feature_level, run.fidelity);
        if (c.expected.kind == Expectation::Kind::Error)
            return fail(kMismatch, path + ": expected an error, but the case is valid");
        check_limits(c, o.max_work);
        if (mode == Mode::Validate) return r;
        if (o.verbose)
            std::cout << path << ": computed by " << describe_desc(make_desc(c), run) << ", fidelity "
                      << qdml::to_string(run.fidelity) << "\n";
        run_desc(make_desc(c), run);
        const std::vector<std::string> outputs = output_members(c);
        if (!o.out.empty()) {
            std::error_code ec;
            if (outputs.size() > 1 && !fs::is_directory(o.out, ec) && !fs::create_directory(o.out, ec))
                throw InputError(o.out, "cannot create output directory" + (ec ? ": " + ec.message() : std::string()));
            const auto files = out_files(o.out, outputs);
            for (std::size_t i = 0; i < outputs.size(); ++i)
                write_file_atomic(files[i], [&](std::ostream& os) { write_output_npy(os, c.tensors.at(outputs[i])); });
        }
        if (o.check_exact && print_exact_report(path, check_exact_desc(make_desc(c), run.fidelity)) != 0)
            return fail(kMismatch, path + ": the exact check found unexplained differences");
        if (c.expected.kind == Expectation::Kind::Data) {
            r.compared = true;
            if (std::string diff = compare_outputs(c); !diff.empty())
                return fail(kMismatch, path + ": " + diff);
        }
        if (mode == Mode::Run && o.out.empty()) {
            std::cout << path << ": " << c.operator_name << ": computed";
            for (std::size_t i = 0; i < outputs.size(); ++i) {
                const qdml::TensorDesc& d = c.tensors.at(outputs[i]).desc;
                std::cout << (i ? ", " : " ") << outputs[i] << " " << name(d.DataType) << " " << qdml::detail::sizes_str(d);
            }
            std::cout << (r.compared ? ", equal to expected" : "") << "; not written (no --out)\n";
        }
    } catch (const InputError& e) {
        fail(kBadInput, e.what());
    } catch (const qdml::Error& e) {
        fail(kBadInput, path + ": " + e.what());
    }
    return r;
}

std::vector<std::string> collect_cases(const std::vector<std::string>& paths, std::vector<std::string>& missing,
                                       std::vector<bool>& from_directory) {
    std::vector<std::string> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<std::string> found;
            for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
                if (it->is_regular_file(ec) && it->path().extension() == ".json") found.push_back(it->path().string());
            if (ec) missing.push_back(p + ": cannot read directory: " + ec.message());
            std::sort(found.begin(), found.end());
            files.insert(files.end(), found.begin(), found.end());
            from_directory.resize(files.size(), true);
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
            from_directory.push_back(false);
        } else {
            missing.push_back(p + ": no such file or directory");
        }
    }
    return files;
}

int check(const std::vector<std::string>& paths, const Options& o, bool verbose) {
    std::vector<std::string> problems;
    std::vector<bool> from_directory;
    const auto files = collect_cases(paths, problems, from_directory);
    for (const auto& p : problems) std::cerr << "qdml: " << p << "\n";
    struct Counts {
        int passed = 0, failed = 0, not_compared = 0;
    };
    std::map<std::string, Counts> counts;
    Counts total;
    int skipped = 0;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const std::string& f = files[i];
        const Outcome r = run_case(f, o, Mode::Check, from_directory[i]);
        if (r.not_a_case) {
            ++skipped;
            if (verbose) std::cout << "SKIP " << f << " (JSON without an \"operator\" field: not a case)\n";
            continue;
        }
        const bool ok = r.expects_error ? r.code == kBadInput : r.code == kOk;
        const bool compared = r.expects_error || r.compared;
        int Counts::*slot = !ok ? &Counts::failed : compared ? &Counts::passed : &Counts::not_compared;
        ++(counts[r.op].*slot);
        ++(total.*slot);
        if (!ok) std::cout << "FAIL " << r.message << "\n";
        else if (!compared && verbose) std::cout << "NOT COMPARED " << f << " (no expected output)\n";
        else if (verbose) std::cout << "PASS " << f << (r.expects_error ? " (rejected: " + r.message + ")" : "") << "\n";
    }
    auto line = [](const Counts& c) {
        return std::to_string(c.passed) + " passed, " + std::to_string(c.failed) + " failed, " +
               std::to_string(c.not_compared) + " not compared";
    };
    for (const auto& [op, c] : counts) std::cout << op << ": " << line(c) << "\n";
    std::cout << "total: " << line(total);
    if (skipped) std::cout << "; " << skipped << " JSON file" << (skipped == 1 ? "" : "s") << " without \"operator\" skipped";
    std::cout << "\n";
    if (total.passed + total.failed + total.not_compared == 0) std::cerr << "qdml: no case files found\n";
    else if (total.passed == 0 && total.failed == 0) std::cerr << "qdml: no case had an expected output to compare\n";
    return total.failed == 0 && total.passed > 0 && problems.empty() ? kOk : kMismatch;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"qdml: DirectML quantized operators on the CPU - case runner"};
    // Options are --name and -n everywhere: CLI11 on Windows would also take
    // /name as an option, and so refuse a path that starts with '/' (wine's
    // and MSYS2's paths; the subcommands inherit this before they are added).
    app.allow_windows_style_options(false);
    app.require_subcommand(1);
    Options o;
    std::string level = "latest";
    std::string case_path;
    std::string fidelity;
    auto add_level = [&](CLI::App* c) {
        c->add_option("--feature-level", level, "target DML_FEATURE_LEVEL for validation, e.g. 6.2 (default: latest)");
        c->add_option("--fidelity", fidelity,
                      "profile: directml (DirectML's own bits and refusals) or exact (docs/semantics.md sections 0-9); "
                      "default: the case's expected.fidelity, else directml")
            ->check(CLI::IsMember({"directml", "exact"}));
    };

    auto* run = app.add_subcommand("run", "compute one case with the reference and write its output as .npy");
    run->add_option("case", case_path, "case JSON file")->required();
    run->add_option("--out", o.out,
                    "output .npy (packed, shape = output sizes); for an operator with several outputs a directory, "
                    "written as DIR/<Member>.npy; without it, a summary line on stdout and no file");
    std::string impl = "reference", isa = "best";
    unsigned threads = 1;
    auto add_impl = [&](CLI::App* c) {
        c->add_option("--impl", impl, "implementation: reference (default) or simd (the fast path, bit-identical)")
            ->check(CLI::IsMember({"reference", "simd"}));
        c->add_option("--threads", threads,
                      "with --impl simd, compute on N threads (a pool of this program's; the bits do not change; "
                      "default 1: the reference needs none)")
            ->check(CLI::Range(1u, 1024u));
        c->add_option("--isa", isa,
                      "with --impl simd, cap the GEMM engine's ISA path as QDML_ISA does: generic, avx2, avxvnni, "
                      "avx512vnni, amx or best (default: QDML_ISA, else the best this CPU runs)");
    };
    add_impl(run);
    auto add_work = [&](CLI::App* c) {
        c->add_option("--max-work", o.max_work,
                      "refuse a case needing more multiply-adds (matmul, convolution) or output elements "
                      "(element-wise) than this (default 2^34 = 17179869184)");
    };
    run->add_flag("-v,--verbose", o.verbose,
                  "print which implementation, ISA path and form compute the case (e.g. 'simd gemm-nhwc avx2')");
    run->add_flag("--check-exact", o.check_exact,
                  "also recompute exactly (int64, binary64) and list every element that differs from the exactly "
                  "rounded result, marking near-tie ones; exit 1 if any difference is unexplained");
    add_level(run);
    add_work(run);

    auto* val = app.add_subcommand("validate", "load a case and validate its desc only");
    val->add_option("case", case_path, "case JSON file")->required();
    add_level(val);
    add_work(val);

    auto* chk = app.add_subcommand("check", "run every case under the given paths against its expected output");
    std::vector<std::string> paths;
    bool verbose = false;
    chk->add_option("paths", paths, "case files, or directories searched recursively for *.json files that are JSON objects with an \"operator\" field")->required();
    chk->add_flag("-v,--verbose", verbose, "print a line for every case");
    add_level(chk);
    add_work(chk);
    add_impl(chk);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "qdml: command line: " << e.what() << "\n";
        return kBadInput;
    }
    if (level == "latest") level = std::string(qdml::to_string(qdml::FeatureLevel::Latest));
    const auto fl = qdml::parse_feature_level(level);
    if (!fl) {
        std::cerr << "qdml: command line: --feature-level: unknown level '" << level << "' (1.0 to " << qdml::to_string(qdml::FeatureLevel::Latest) << ", or latest)\n";
        return kBadInput;
    }
    o.run.feature_level = *fl;
    if (!fidelity.empty()) o.fidelity = qdml::parse_fidelity(fidelity);
    o.run.implementation = impl == "simd" ? qdml::Implementation::Simd : qdml::Implementation::Reference;
    if (!qdml::simd::parse_isa(isa, o.run.isa)) {
        std::cerr << "qdml: command line: --isa: unknown path '" << isa
                  << "' (generic, avx2, avxvnni, avx512vnni, amx or best)\n";
        return kBadInput;
    }

    std::optional<qdml::tools::ThreadPool> pool;  // --threads N: N - 1 workers and this thread
    if (threads > 1 && o.run.implementation != qdml::Implementation::Simd) {
        std::cerr << "qdml: command line: --threads " << threads
                  << " needs --impl simd (the reference computes on the calling thread)\n";
        return kBadInput;
    }
    if (threads > 1) {
        pool.emplace(threads);
        o.run.executor = pool->executor();
    }

    try {
        if (chk->parsed()) return check(paths, o, verbose);
        const Outcome r = run_case(case_path, o, val->parsed() ? Mode::Validate : Mode::Run);
        if (r.code != kOk) std::cerr << "qdml: " << r.message << "\n";
        else if (val->parsed()) std::cout << "valid\n";
        return r.code;
    } catch (const std::exception& e) {  // out of memory and the like
        std::cerr << "qdml: " << e.what() << "\n";
        return kBadInput;
    }
}
