#!/usr/bin/env python3
"""The installed package files require exactly what the installed headers include.

usage: check_requires.py SOURCE_ROOT BUILD_ROOT

Scans include/qdml for #include <...> of anything outside the C++ standard
library, maps it to its pkg-config name, and compares that set with the
Requires of the generated qdml.pc and the find_dependency() calls of the
generated qdmlConfig.cmake. Exits 1 with a message naming each disagreement.
"""
import pathlib
import re
import sys

# Include prefix -> pkg-config name (and CMake package name) of the library it belongs to.
KNOWN = {"xsimd/": "xsimd"}
# Platform SDK headers included only on request, which no package provides:
# qdml/directml/types.hpp includes the Windows SDK's DirectML.h on Windows or
# with QDML_USE_DIRECTML_H, and declares the same structs itself otherwise.
# The GEMM engine's ISA seam (qdml/simd/isa.hpp) includes compiler and
# OS headers: <cpuid.h>, <immintrin.h> (x86-64 with GCC/Clang only), <arm_neon.h> (AArch64) and
# <sys/syscall.h>, <unistd.h> (Linux, for the AMX tile permission).
# qdml/core/fp_env.hpp reads and sets the floating-point control register:
# <xmmintrin.h> (x86-64's MXCSR), <intrin.h> (MSVC on ARM64: FPCR).
# qdml/simd/quantize.hpp packs and unpacks 4-bit tensors with SSE2
# (<emmintrin.h>, every x86-64 compiler's) or NEON (<arm_neon.h>).
PLATFORM = {"DirectML.h", "arm_neon.h", "cpuid.h", "emmintrin.h", "immintrin.h", "intrin.h", "sys/syscall.h",
            "unistd.h", "xmmintrin.h"}


# The executor adapters (qdml/exec/*.hpp) are opt-in: each includes its
# engine (<omp.h>, oneTBB, <pthreadpool.h>), which a program that includes
# it brings itself; the package requires none of them.
OPT_IN_DIR = "exec"


def header_requires(include_dir):
    found, problems = {}, []
    for h in sorted(include_dir.rglob("*.hpp")):
        if h.parent.name == OPT_IN_DIR:
            continue
        for line in h.read_text().splitlines():
            m = re.match(r'\s*#\s*include\s*<([^>]+)>', line)
            if not m:
                continue
            inc = m.group(1)
            if "/" not in inc and "." not in inc:
                continue  # the standard library (<cstdint>, <vector>, ...)
            if inc in PLATFORM:
                continue
            name = next((pc for prefix, pc in KNOWN.items() if inc.startswith(prefix)), None)
            if name is None:
                problems.append(f"{h}: includes <{inc}>, which maps to no pkg-config package (add it to KNOWN)")
            else:
                found.setdefault(name, f"{h.relative_to(include_dir.parent)} includes <{inc}>")
    return found, problems


def pc_requires(pc_file):
    for line in pc_file.read_text().splitlines():
        if line.startswith("Requires:"):
            return {re.split(r"[\s<>=]", r.strip())[0] for r in line[len("Requires:"):].split(",") if r.strip()}
    return set()


def cmake_requires(config_file):
    return set(re.findall(r"find_dependency\((\w+)", config_file.read_text()))


def main():
    src, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    found, problems = header_requires(src / "include" / "qdml")
    want = set(found)
    for what, have in (("qdml.pc Requires", pc_requires(build / "meson-private" / "qdml.pc")),
                       ("qdmlConfig.cmake find_dependency", cmake_requires(build / "qdmlConfig.cmake"))):
        for name in sorted(want - have):
            problems.append(f"{what} lacks {name}, yet {found[name]} (add it to header_requires in meson.build)")
        for name in sorted(have - want):
            problems.append(f"{what} has {name}, yet no installed header includes it (remove it from header_requires)")
    for p in problems:
        print("FAIL", p)
    print(f"headers require: {sorted(want) or 'nothing beyond the C++17 standard library'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
