// bench/cpu.hpp - what the CPU runs, from CPUID and XCR0 (never by catching
// SIGILL): the dot-product instructions of the hw/dot rows, and the model
// name and flags that qdml-bench reports in its context.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define QDML_BENCH_X86 1
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace qdml_bench {

struct CpuFeatures {
    bool avx2 = false;
    bool avx512bw = false;    // AVX-512 F + BW (vpmaddwd zmm)
    bool avx512vnni = false;  // + VNNI (vpdpbusd zmm)
    bool avxvnni = false;     // VEX vpdpbusd ymm
    bool amx_int8 = false;    // AMX-TILE + AMX-INT8, tile state enabled by the OS
    bool f16c = false;
    bool fma = false;

    /// "avx2 fma f16c avx512bw ..." (the flags the rows depend on).
    std::string flags() const {
        std::string s;
        const auto add = [&](bool on, const char* name) {
            if (on) s += (s.empty() ? "" : " ") + std::string(name);
        };
        add(avx2, "avx2");
        add(fma, "fma");
        add(f16c, "f16c");
        add(avx512bw, "avx512bw");
        add(avx512vnni, "avx512vnni");
        add(avxvnni, "avxvnni");
        add(amx_int8, "amx-int8");
        return s.empty() ? "baseline" : s;
    }
};

#if QDML_BENCH_X86
inline std::uint64_t read_xcr0() {
    std::uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (std::uint64_t{hi} << 32) | lo;
}
#endif

inline CpuFeatures detect_cpu() {
    CpuFeatures f;
#if QDML_BENCH_X86
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    f.f16c = (c >> 29) & 1;
    f.fma = (c >> 12) & 1;
    if (!osxsave || !avx) return f;
    const std::uint64_t xcr0 = read_xcr0();
    const bool ymm_os = (xcr0 & 0x6) == 0x6;
    const bool zmm_os = (xcr0 & 0xe6) == 0xe6;
    const bool tile_os = (xcr0 & 0x60000) == 0x60000;
    unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0;
    if (__get_cpuid_count(7, 0, &a, &b7, &c7, &d7)) {
        unsigned b71 = 0, c71 = 0, d71 = 0;
        if (a >= 1) __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71);
    }
    f.f16c = f.f16c && ymm_os;
    f.fma = f.fma && ymm_os;
    f.avx2 = ymm_os && ((b7 >> 5) & 1);
    f.avx512bw = zmm_os && ((b7 >> 16) & 1) && ((b7 >> 30) & 1);
    f.avx512vnni = f.avx512bw && ((c7 >> 11) & 1);
    f.avxvnni = f.avx2 && ((a71 >> 4) & 1);
    f.amx_int8 = tile_os && ((d7 >> 24) & 1) && ((d7 >> 25) & 1);
#endif
    return f;
}

inline const CpuFeatures& cpu() {
    static const CpuFeatures f = detect_cpu();
    return f;
}

/// Linux gives a process AMX tile data only on request; false if refused.
inline bool request_amx() {
#if QDML_BENCH_X86 && defined(__linux__)
    static const bool granted = [] {
        constexpr long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
        return cpu().amx_int8 && syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
    }();
    return granted;
#else
    return false;
#endif
}

/// The CPU model from /proc/cpuinfo ("unknown" elsewhere).
inline std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown";
}

}  // namespace qdml_bench
