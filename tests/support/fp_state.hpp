// tests/support/fp_state.hpp - the floating-point states other code leaves
// a thread in, set here independently of qdml's own guard
// (qdml/core/fp_env.hpp): flush-to-zero with denormals-are-zero (what
// -ffast-math binaries, PyTorch's set_flush_denormal(True) and ONNX
// Runtime's denormal-as-zero option set) and the three directed rounding
// modes. tests/main.cpp sets one for a whole run from QDML_TEST_FP_ENV
// (ftz, down, up, zero); tests/test_fp_env.cpp sets each around single calls.
#pragma once

#include <cfenv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#endif

namespace qtest {

enum class FpState { Nearest, FlushToZero, Downward, Upward, TowardZero };

inline constexpr FpState kForeignFpStates[] = {FpState::FlushToZero, FpState::Downward, FpState::Upward,
                                               FpState::TowardZero};

inline const char* name(FpState s) {
    switch (s) {
        case FpState::Nearest: return "nearest";
        case FpState::FlushToZero: return "ftz";
        case FpState::Downward: return "down";
        case FpState::Upward: return "up";
        case FpState::TowardZero: return "zero";
    }
    return "?";
}

inline std::optional<FpState> parse_fp_state(std::string_view s) {
    for (FpState f : {FpState::Nearest, FpState::FlushToZero, FpState::Downward, FpState::Upward, FpState::TowardZero})
        if (s == name(f)) return f;
    return std::nullopt;
}

/// Whether this machine can flush subnormals (x86-64: MXCSR FTZ/DAZ;
/// AArch64: FPCR.FZ, which flushes inputs and results alike).
inline constexpr bool kCanFlush =
#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__)
    true;
#else
    false;
#endif

namespace detail {
inline void set_flush(bool on) {
#if defined(__x86_64__) || defined(_M_X64)
    constexpr unsigned kFtzDaz = 0x8040u;  // FTZ (bit 15), DAZ (bit 6)
    _mm_setcsr(on ? (_mm_getcsr() | kFtzDaz) : (_mm_getcsr() & ~kFtzDaz));
#elif defined(__aarch64__)
    constexpr std::uint64_t kFz = (1u << 24) | (1u << 19);  // FZ, FZ16
    std::uint64_t c;
    asm volatile("mrs %0, fpcr" : "=r"(c));
    c = on ? (c | kFz) : (c & ~kFz);
    asm volatile("msr fpcr, %0" : : "r"(c));
#else
    (void)on;
#endif
}
}  // namespace detail

/// Puts the calling thread in state `s` (Nearest: round to nearest, no flush).
inline void set_fp_state(FpState s) {
    detail::set_flush(s == FpState::FlushToZero);
    std::fesetround(s == FpState::Downward     ? FE_DOWNWARD
                    : s == FpState::Upward     ? FE_UPWARD
                    : s == FpState::TowardZero ? FE_TOWARDZERO
                                               : FE_TONEAREST);
}

/// The thread's floating-point control state, comparable before and after a
/// call: x86-64 MXCSR without its sticky flags, AArch64 FPCR, else the
/// rounding mode.
inline std::uint64_t fp_control() {
#if defined(__x86_64__) || defined(_M_X64)
    return _mm_getcsr() & ~0x3Fu;
#elif defined(__aarch64__)
    std::uint64_t c;
    asm volatile("mrs %0, fpcr" : "=r"(c));
    return c;
#else
    return static_cast<std::uint64_t>(std::fegetround());
#endif
}

/// QDML_TEST_FP_ENV's state (unset or empty: Nearest); nothing for an unknown name.
inline std::optional<FpState> fp_state_from_env() {
    const char* v = std::getenv("QDML_TEST_FP_ENV");
    if (v == nullptr || *v == '\0') return FpState::Nearest;
    return parse_fp_state(v);
}

}  // namespace qtest
