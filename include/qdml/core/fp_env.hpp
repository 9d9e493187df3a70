// qdml/core/fp_env.hpp - the floating-point environment qdml computes in
// (docs/semantics.md section 0): round to nearest, ties to even; subnormals
// kept (no flush to zero, no denormals-are-zero); every exception masked.
// FpEnvironment sets it for a scope and gives the calling thread's back.
//   x86-64:  MXCSR: RC = nearest, FTZ = DAZ = 0, all six exceptions masked
//            (MinGW-w64: and the x87 control word's RC = nearest: its libm
//            rounds there).
//   AArch64: FPCR: RMode = RN, FZ = FZ16 = 0, FIZ = AH = AHP = 0, no traps.
//   else:    <cfenv>: FE_TONEAREST (flushing, where it exists, is left alone).
// Only the control bits are qdml's: the status (sticky exception) flags are
// never saved or restored, so a flag qdml raises stays raised, as after any
// other call, whether or not the guard had to change the mode.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#define QDML_DETAIL_FP_ENV_MXCSR 1
#include <xmmintrin.h>
#elif defined(__aarch64__) || defined(_M_ARM64)
#define QDML_DETAIL_FP_ENV_FPCR 1
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif
#else
#include <cfenv>
#endif

namespace qdml {

namespace detail {
#if defined(QDML_DETAIL_FP_ENV_MXCSR) && defined(__MINGW32__)
// MinGW-w64: its libm rounds on the x87 unit (nearbyint and lrint, hence
// round_half_even, follow the x87 control word's rounding control, which
// fesetround sets together with MXCSR's), so qdml's state is also x87 RC =
// nearest. Bits 0-31: MXCSR as below; bits 32-47: the x87 control word,
// of which only RC (bits 10-11) is qdml's: its other bits (exception
// masks, precision) are kept like the sticky flags.
using FpControl = std::uint64_t;
inline constexpr FpControl kFpStatusBits = 0x003Fu | (FpControl{0xF3FFu} << 32);
inline constexpr FpControl kFpControlBits = 0xFFC0u | (FpControl{0x0C00u} << 32);
inline constexpr FpControl kFpQdml = 0x1F80u;  // MXCSR as below, x87 RC = 00 (nearest)
inline FpControl fp_control_read() noexcept {
    std::uint16_t cw;
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    return _mm_getcsr() | (FpControl{cw} << 32);
}
inline void fp_control_write(FpControl c) noexcept {
    const auto cw = static_cast<std::uint16_t>(c >> 32);
    _mm_setcsr(static_cast<unsigned int>(c));
    __asm__ volatile("fldcw %0" : : "m"(cw));
}
#elif defined(QDML_DETAIL_FP_ENV_MXCSR)
using FpControl = unsigned int;
inline constexpr FpControl kFpStatusBits = 0x003Fu;   // IE DE ZE OE UE PE: sticky flags, not ours
inline constexpr FpControl kFpControlBits = 0xFFC0u;  // DAZ, the six masks, RC, FTZ
inline constexpr FpControl kFpQdml = 0x1F80u;         // all masked, RC = 00 (nearest), DAZ = FTZ = 0
inline FpControl fp_control_read() noexcept { return _mm_getcsr(); }
inline void fp_control_write(FpControl c) noexcept { _mm_setcsr(c); }
#elif defined(QDML_DETAIL_FP_ENV_FPCR)
using FpControl = std::uint64_t;
inline constexpr FpControl kFpStatusBits = 0;  // (FPSR holds them)
// FIZ (0), AH (1), IOE DZE OFE UFE IXE (8-12), IDE (15), FZ16 (19), RMode (22-23), FZ (24), AHP (26).
inline constexpr FpControl kFpControlBits = 0x3u | (0x1Fu << 8) | (1u << 15) | (1u << 19) | (3u << 22) | (1u << 24) |
                                            (1u << 26);
inline constexpr FpControl kFpQdml = 0;  // all of them clear: RN, no flushing, IEEE half, no traps
#if defined(_MSC_VER) && !defined(__clang__)
inline constexpr int kArm64Fpcr = 0x5A20;  // ARM64_SYSREG(3, 3, 4, 4, 0): winnt.h's ARM64_FPCR, without windows.h
inline FpControl fp_control_read() noexcept { return static_cast<FpControl>(_ReadStatusReg(kArm64Fpcr)); }
inline void fp_control_write(FpControl c) noexcept { _WriteStatusReg(kArm64Fpcr, static_cast<__int64>(c)); }
#elif defined(__clang__)
inline FpControl fp_control_read() noexcept { return __builtin_arm_rsr64("fpcr"); }
inline void fp_control_write(FpControl c) noexcept { __builtin_arm_wsr64("fpcr", c); }
#else  // GCC: the 32-bit builtins (every GCC since 5; FPCR's upper half is RES0)
inline FpControl fp_control_read() noexcept { return __builtin_aarch64_get_fpcr(); }
inline void fp_control_write(FpControl c) noexcept { __builtin_aarch64_set_fpcr(static_cast<unsigned>(c)); }
#endif
#else
using FpControl = int;  // the rounding mode, as fegetround() gives it
inline constexpr FpControl kFpStatusBits = 0;
inline constexpr FpControl kFpControlBits = ~0;
#if defined(FE_TONEAREST)
inline constexpr FpControl kFpQdml = FE_TONEAREST;
inline FpControl fp_control_read() noexcept { return std::fegetround(); }
inline void fp_control_write(FpControl c) noexcept { std::fesetround(c); }
#else  // no rounding control at all: nothing to set
inline constexpr FpControl kFpQdml = 0;
inline FpControl fp_control_read() noexcept { return 0; }
inline void fp_control_write(FpControl) noexcept {}
#endif
#endif
}  // namespace detail

/// The floating-point environment docs/semantics.md section 0 requires, for
/// the lifetime of the object, on the calling thread: the constructor saves
/// the thread's control state and sets qdml's (round to nearest, no
/// flush-to-zero or denormals-are-zero, exceptions masked); the destructor
/// restores the saved control state. Every qdml entry that computes holds
/// one, so callers need it only for code of their own that computes as qdml
/// does, e.g. a task that calls qdml's kernels from a thread pool:
///
///     pool.parallel_for(n, [&](std::size_t i) { qdml::FpEnvironment fp; work(i); });
///
/// Cheap when the state is already right (one register read; the register
/// is written only when it differs), so guards nest freely. Not copyable or
/// movable: it belongs to the scope and thread that made it.
class FpEnvironment {
public:
    FpEnvironment() noexcept : saved_(detail::fp_control_read()) {
        changed_ = (saved_ & detail::kFpControlBits) != detail::kFpQdml;
        if (changed_) detail::fp_control_write((saved_ & detail::kFpStatusBits) | detail::kFpQdml);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the guarded code inside
    }
    ~FpEnvironment() {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (changed_)
            detail::fp_control_write((detail::fp_control_read() & detail::kFpStatusBits) |
                                     (saved_ & ~detail::kFpStatusBits));
    }
    FpEnvironment(const FpEnvironment&) = delete;
    FpEnvironment& operator=(const FpEnvironment&) = delete;

    /// Whether the caller's state differed from qdml's (and was changed).
    bool changed() const noexcept { return changed_; }

private:
    detail::FpControl saved_;
    bool changed_;
};

}  // namespace qdml
