// libFuzzer target: case-file loading (JSON + .npy), validation, the
// runner's limits, desc construction and, for small cases, execution with
// the reference, .npy writing and comparison. Every input must be computed
// or rejected with a message; .npy references
// resolve against QDML_FUZZ_NPY_DIR (a few small files in tests/fuzz/npy).
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "case_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace qdml::cli;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        Case c = parse_case(text, "fuzz.json", QDML_FUZZ_NPY_DIR);
        validate_case(c, qdml::FeatureLevel::Latest);
        check_limits(c, 1 << 16);  // keep each run short: at most 64K multiply-adds or elements
        const AnyDesc d = make_desc(c);
        run_desc(d, {});
        std::ostringstream npy;
        write_output_npy(npy, c.tensors.at("OutputTensor"));
        if (c.expected.kind == Expectation::Kind::Data) (void)compare_outputs(c);
    } catch (const InputError& e) {
        if (std::string(e.what()).empty()) std::abort();
    } catch (const qdml::Error& e) {
        if (std::string(e.what()).empty()) std::abort();
    }
    return 0;
}
