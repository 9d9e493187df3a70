// Catch2's main, shared by the test programs. QDML_TEST_FP_ENV=ftz|down|up|zero
// first puts the thread in that foreign floating-point state
// (support/fp_state.hpp): every qdml entry must still give the same bits
// (docs/semantics.md section 0; the Meson entries *-fp-*).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "support/fp_state.hpp"

int main(int argc, char* argv[]) {
    const auto state = qtest::fp_state_from_env();
    if (!state) {
        std::fprintf(stderr, "QDML_TEST_FP_ENV: unknown state (nearest, ftz, down, up, zero)\n");
        return 2;
    }
    if (*state == qtest::FpState::FlushToZero && !qtest::kCanFlush) {
        std::printf("QDML_TEST_FP_ENV=ftz: this machine cannot flush subnormals; skipped\n");
        return 77;
    }
    if (*state != qtest::FpState::Nearest) {
        qtest::set_fp_state(*state);
        std::printf("floating-point state of the test thread: %s\n", qtest::name(*state));
    }
    return Catch::Session().run(argc, argv);
}
