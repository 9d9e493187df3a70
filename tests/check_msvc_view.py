#!/usr/bin/env python3
"""Every header of include/qdml as MSVC x64 sees it (docs/windows.md):

    python3 tests/check_msvc_view.py INCLUDE_DIR COMPILER...

COMPILER is a GNU-compatible C++ compiler (g++ or clang, any target; only
its preprocessor runs). Each header is preprocessed alone with
`-E -undef -nostdinc`: no GNU, compiler or platform macro is defined, only
MSVC x64's (_MSC_VER, _MSVC_LANG, _WIN32, _WIN64, _M_X64, _M_AMD64;
__cplusplus 199711L, as MSVC without /Zc:__cplusplus), and every system or
third-party header the tree includes is an empty stub (xsimd's defines
XSIMD_WITH_SSE2, as xsimd does for x64 MSVC; DirectML.h's its
DML_TARGET_VERSION; _OPENMP is /openmp's). The check fails when that
view of a header

  - still holds a GNU construct: __asm__ / asm statements, __attribute__,
    __builtin_*, __extension__, __restrict__, `#pragma GCC` or
    `#pragma clang` (_Pragma included: it is expanded by then);
  - includes <cpuid.h>, <unistd.h>, <pthread.h>, <x86intrin.h> or <sys/...>;

and when the union of the views lacks what the x86 engine compiles under
MSVC: the GEMM kernels' intrinsics (_mm512_dpbusd_epi32,
_mm256_dpbusd_avx_epi32, _mm256_madd_epi16, the AMX tile intrinsics) and
CPU detection by __cpuidex and _xgetbv. (Before the intrinsics-only forms,
that view was free of GNU constructs only because QDML_X86 compiled the
whole engine out under MSVC.)

Then it checks itself: the same check must fail on a copy of the tree with
an unguarded __asm__ statement in one kernel, and on a copy whose engine is
switched off under _M_X64.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

MSVC_MACROS = ["-D_MSC_VER=1938", "-D_MSC_FULL_VER=193833130", "-D_MSVC_LANG=201703L", "-D_WIN32=1", "-D_WIN64=1",
               "-D_M_X64=100", "-D_M_AMD64=100", "-U__cplusplus", "-D__cplusplus=199711L",
               "-D_OPENMP=200203"]  # (MSVC's /openmp: qdml/exec/openmp.hpp needs it)

# (name, pattern) of GNU constructs in the preprocessed text (linemarkers removed).
FORBIDDEN = [
    ("__asm__", re.compile(r"\b__asm__\b|\b__asm\b|\basm\s*(volatile\s*)?\(")),
    ("__attribute__", re.compile(r"\b__attribute__\b")),
    ("__builtin_", re.compile(r"\b__builtin_\w+")),
    ("__extension__", re.compile(r"\b__extension__\b")),
    ("__restrict__", re.compile(r"\b__restrict__\b")),
    ("GCC/clang pragma", re.compile(r"^\s*#\s*pragma\s+(GCC|clang)\b|\b_Pragma\s*\(", re.M)),
]
FORBIDDEN_HEADERS = re.compile(r"^(cpuid\.h|unistd\.h|pthread\.h|x86intrin\.h|sys/.*)$")
# What the engine's MSVC form must contain (kernels and CPU detection).
REQUIRED = ["_mm512_dpbusd_epi32", "_mm256_dpbusd_avx_epi32", "_mm256_madd_epi16", "_tile_loadd", "_tile_stream_loadd",
            "_tile_stored", "_tile_dpbusd", "_tile_zero", "_tile_loadconfig", "__cpuidex", "_xgetbv"]
STUB_CONTENT = {"xsimd/xsimd.hpp": "#define XSIMD_WITH_SSE2 1\n",
                "DirectML.h": "#define DIRECTML_H\n#define DML_TARGET_VERSION 0x6400\n"}


def headers(root):
    out = []
    for d, _, files in os.walk(os.path.join(root, "qdml")):
        out += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files if f.endswith(".hpp")]
    return sorted(out)


def make_stubs(root, stubs):
    """An empty file for every <...> the headers include."""
    names = set()
    for h in headers(root):
        with open(os.path.join(root, h), encoding="utf-8") as f:
            names.update(re.findall(r"^\s*#\s*include\s*<([^>]+)>", f.read(), re.M))
    for n in names:
        path = os.path.join(stubs, n)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(STUB_CONTENT.get(n, ""))


def check(root, compiler, only=None):
    """(problems, missing): what is wrong in the MSVC view of the headers
    under `root` (all, or `only`), and the REQUIRED names none of them has."""
    problems, seen = [], set()
    with tempfile.TemporaryDirectory(prefix="qdml_msvc_view_") as stubs:
        make_stubs(root, stubs)
        src = os.path.join(stubs, "qdml_msvc_view.cpp")
        for h in only or headers(root):
            with open(src, "w") as f:
                f.write('#include "%s"\n' % h)
            r = subprocess.run(compiler + ["-E", "-undef", "-nostdinc", "-std=c++17", "-I" + root, "-isystem", stubs]
                               + MSVC_MACROS + [src], capture_output=True, text=True)
            if r.returncode != 0:
                problems.append("%s: the preprocessor failed:\n%s" % (h, r.stderr.strip()))
                continue
            text = "\n".join(line for line in r.stdout.splitlines() if not line.startswith("# "))
            for name, pattern in FORBIDDEN:
                m = pattern.search(text)
                if m:
                    line = text[:m.start()].count("\n")
                    problems.append("%s: %s in MSVC's view: %r" % (h, name, text.splitlines()[line].strip()[:160]))
            for f in set(re.findall(r'^# \d+ "([^"]+)"', r.stdout, re.M)):
                if f.startswith(stubs + os.sep):
                    inc = os.path.relpath(f, stubs).replace(os.sep, "/")
                    if FORBIDDEN_HEADERS.match(inc):
                        problems.append("%s: includes <%s> in MSVC's view" % (h, inc))
            seen.update(n for n in REQUIRED if re.search(r"\b%s\b" % n, text))
    return problems, [n for n in REQUIRED if n not in seen]


def mutated(root, work, name, path, old, new):
    """A copy of the tree at work/name with `old` replaced by `new` in `path`."""
    copy = os.path.join(work, name)
    shutil.copytree(root, copy)
    p = os.path.join(copy, path)
    with open(p, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        sys.exit("check_msvc_view.py: the mutation %s found no %r in %s" % (name, old, path))
    with open(p, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))
    return copy


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root, compiler = os.path.abspath(sys.argv[1]), sys.argv[2:]
    problems, missing = check(root, compiler)
    problems += ["no header's MSVC view has %s (the x86 engine is not compiled there)" % n for n in missing]
    for p in problems:
        print("FAIL " + p)
    print("MSVC view of %d headers: %s" % (len(headers(root)), "%d problems" % len(problems) if problems else "clean"))
    # The check must see what it looks for.
    ok_mutants = True
    with tempfile.TemporaryDirectory(prefix="qdml_msvc_mutants_") as work:
        kernel = "qdml/simd/x86/avx2/gemm_kernel.hpp"
        engine = ["qdml/simd/x86/avx512vnni/gemm_kernel.hpp", "qdml/simd/x86/avxvnni/gemm_kernel.hpp", kernel,
                  "qdml/simd/x86/amx/gemm_kernel.hpp"]
        asm = mutated(root, work, "asm", kernel, "/// (The same, intrinsics only",
                      "inline void qdml_mutant() { __asm__(\"\"); }\n/// (The same, intrinsics only")
        found, _ = check(asm, compiler, [kernel])
        print("mutant 'an unguarded __asm__ in %s': %s" % (kernel, ("caught: " + found[0]) if found else "NOT caught"))
        ok_mutants = bool(found)
        off = mutated(root, work, "off", "qdml/simd/isa.hpp", "(defined(_M_X64) &&", "(defined(QDML_MUTANT_NEVER) &&")
        _, gone = check(off, compiler, engine)
        print("mutant 'the engine off under _M_X64': %s" % (("caught: missing " + ", ".join(gone)) if gone else "NOT caught"))
        ok_mutants = ok_mutants and bool(gone)
    return 0 if not problems and ok_mutants else 1


if __name__ == "__main__":
    sys.exit(main())
