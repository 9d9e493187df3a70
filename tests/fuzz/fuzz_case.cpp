// libFuzzer target: case-file loading (JSON + .npy), desc construction,
// validation and, for small outputs, execution with the reference. Every
// input must be computed or rejected with a message; .npy references
// resolve against QDML_FUZZ_NPY_DIR (a few small files in tests/fuzz/npy).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "case_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace qdml::cli;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        Case c = parse_case(text, "fuzz.json", QDML_FUZZ_NPY_DIR);
        const AnyDesc d = make_desc(c);
        validate_desc(d, qdml::FeatureLevel::Latest);
        for (const auto& [name, b] : c.tensors)  // keep each run short: at most ~1M multiply-adds
            if (qdml::element_count(b.desc).value_or(0) > 1024) return 0;
        Buffer& out = c.tensors.at("OutputTensor");
        run_desc(d, {});
        const auto packed = gather_output(out);
        if (c.expected.kind == Expectation::Kind::Data) (void)compare(out.desc, packed, c.expected);
    } catch (const InputError& e) {
        if (std::string(e.what()).empty()) std::abort();
    } catch (const qdml::Error& e) {
        if (std::string(e.what()).empty()) std::abort();
    }
    return 0;
}
