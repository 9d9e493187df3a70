// qdml - the case runner: computes operator cases (../shared/spec/case-format.md)
// with qdml and checks them against expected outputs, so that any language's
// test suite can use qdml as its oracle.
//
//   qdml run CASE.json [--out OUT.npy] [--feature-level 6.2]
//   qdml validate CASE.json [--feature-level 6.2]
//   qdml check PATH... [--verbose] [--feature-level 6.2]
//
// Exit codes: 0 success; 1 an output disagrees with `expected` (or a check
// failed); 2 bad input (case, .npy, desc, command line). Errors are one line
// on stderr: "qdml: <file>: <what>".
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "case_io.hpp"

namespace {

using namespace qdml::cli;
namespace fs = std::filesystem;

constexpr int kOk = 0, kMismatch = 1, kBadInput = 2;

/// The outcome of one case.
struct Outcome {
    int code = kOk;
    std::string message;  // "<file>: <what>" for errors and mismatches
};

struct Options {
    qdml::RunOptions run;
    std::string out;
    bool check_exact = false;
};

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
        std::cout << "  [";
        for (std::size_t k = 0; k < d.index.size(); ++k) std::cout << (k ? "," : "") << d.index[k];
        std::cout << "] got " << fmt(d.got) << ", exact " << fmt(d.exact) << " (value " << fmt(d.value);
        if (std::isfinite(d.boundary_distance)) std::cout << ", " << fmt(d.boundary_distance) << " from a rounding boundary";
        std::cout << ")" << (d.near_tie ? " near-tie" : " UNEXPLAINED") << (d.accumulator_wrapped ? " int32-wrapped" : "")
                  << "\n";
    }
    std::cout << path << ": exact check: " << r.elements << " elements, " << r.differences.size()
              << " differ from the exactly rounded result (" << r.differences.size() - r.unexplained()
              << " near a tie, within one ulp or int32-wrapped, " << r.unexplained() << " unexplained); " << r.near_tie_elements
              << " elements lie within the tie window\n";
    return r.unexplained();
}

/// Loads, validates and (unless validate_only) runs one case.
Outcome run_case(const std::string& path, const Options& o, bool validate_only, std::string* op_name = nullptr) {
    Case c;
    try {
        c = load_case(path);
        if (op_name) *op_name = c.operator_name;
        const AnyDesc d = make_desc(c);
        validate_desc(d, o.run.feature_level);
    } catch (const InputError& e) {
        return {kBadInput, e.what()};
    } catch (const qdml::Error& e) {
        return {kBadInput, path + ": " + e.what()};
    }
    if (c.expected.kind == Expectation::Kind::Error)
        return {kMismatch, path + ": expected an error, but the case is valid"};
    if (validate_only) return {};
    try {
        run_desc(make_desc(c), o.run);
        Buffer& out = c.tensors.at("OutputTensor");
        const auto packed = gather_output(out);
        if (!o.out.empty()) write_file_atomic(o.out, format_npy(out.desc.DataType, shape_of(out.desc), packed));
        if (o.check_exact && print_exact_report(path, check_exact_desc(make_desc(c))) != 0)
            return {kMismatch, path + ": the exact check found unexplained differences"};
        if (c.expected.kind == Expectation::Kind::Data) {
            const std::string diff = compare(out.desc, packed, c.expected);
            if (!diff.empty()) return {kMismatch, path + ": " + diff};
        }
    } catch (const InputError& e) {
        return {kBadInput, e.what()};
    } catch (const qdml::Error& e) {
        return {kBadInput, path + ": " + e.what()};
    }
    return {};
}

/// Whether `path` is an expected-error case (false if unreadable).
bool expects_error(const std::string& path) {
    try {
        std::ifstream f(path);
        const auto j = json::parse(f);
        return j.is_object() && j.contains("expected") && j["expected"].is_object() &&
               j["expected"].value("error", false) == true;
    } catch (...) {
        return false;
    }
}

std::vector<std::string> collect_cases(const std::vector<std::string>& paths, std::vector<std::string>& missing) {
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
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else {
            missing.push_back(p + ": no such file or directory");
        }
    }
    return files;
}

int check(const std::vector<std::string>& paths, const Options& o, bool verbose) {
    std::vector<std::string> problems;
    const auto files = collect_cases(paths, problems);
    for (const auto& p : problems) std::cerr << "qdml: " << p << "\n";
    std::map<std::string, std::pair<int, int>> counts;  // operator -> (passed, failed)
    int passed = 0, failed = 0;
    for (const auto& f : files) {
        std::string op = "(unreadable case)";
        const Outcome r = run_case(f, o, false, &op);
        const bool want_error = expects_error(f);
        const bool ok = want_error ? r.code == kBadInput : r.code == kOk;
        auto& cnt = counts[op];
        (ok ? cnt.first : cnt.second)++;
        (ok ? passed : failed)++;
        if (!ok) std::cout << "FAIL " << r.message << "\n";
        else if (verbose) std::cout << "PASS " << f << (want_error ? " (rejected: " + r.message + ")" : "") << "\n";
    }
    for (const auto& [op, c] : counts)
        std::cout << op << ": " << c.first << " passed, " << c.second << " failed\n";
    std::cout << "total: " << passed << " passed, " << failed << " failed\n";
    if (files.empty()) std::cerr << "qdml: no case files (*.json) found\n";
    return failed == 0 && !files.empty() && problems.empty() ? kOk : kMismatch;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"qdml: DirectML quantized operators on the CPU - case runner"};
    app.require_subcommand(1);
    Options o;
    std::string level = "latest";
    std::string case_path;
    auto add_level = [&](CLI::App* c) {
        c->add_option("--feature-level", level, "target DML_FEATURE_LEVEL for validation, e.g. 6.2 (default: latest)");
    };

    auto* run = app.add_subcommand("run", "compute one case with the reference and write its output as .npy");
    run->add_option("case", case_path, "case JSON file")->required();
    run->add_option("--out", o.out, "output .npy (packed, shape = output sizes)");
    std::string impl = "reference";
    run->add_option("--impl", impl, "implementation (reference)")->check(CLI::IsMember({"reference"}));
    run->add_flag("--check-exact", o.check_exact,
                  "also recompute exactly (int64, binary64) and list every element that differs from the exactly "
                  "rounded result, marking near-tie ones; exit 1 if any difference is unexplained");
    add_level(run);

    auto* val = app.add_subcommand("validate", "load a case and validate its desc only");
    val->add_option("case", case_path, "case JSON file")->required();
    add_level(val);

    auto* chk = app.add_subcommand("check", "run every case under the given paths against its expected output");
    std::vector<std::string> paths;
    bool verbose = false;
    chk->add_option("paths", paths, "case files or directories (searched recursively for *.json)")->required();
    chk->add_flag("-v,--verbose", verbose, "print a line for every case");
    add_level(chk);

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

    try {
        if (chk->parsed()) return check(paths, o, verbose);
        const Outcome r = run_case(case_path, o, /*validate_only=*/val->parsed());
        if (r.code != kOk) std::cerr << "qdml: " << r.message << "\n";
        else if (val->parsed()) std::cout << "valid\n";
        return r.code;
    } catch (const std::exception& e) {  // out of memory and the like
        std::cerr << "qdml: " << e.what() << "\n";
        return kBadInput;
    }
}
