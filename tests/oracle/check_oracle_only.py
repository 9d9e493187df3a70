#!/usr/bin/env python3
"""The layering rules of the include tree, and the oracle-only consumer.

1. No header under qdml/simd/ includes qdml/runtime/; no header reachable
   from qdml/reference.hpp or qdml/check/exact.hpp is under qdml/simd/ or
   qdml/runtime/; every header under qdml/simd/x86/ includes, of qdml's own,
   only qdml/simd/isa.hpp, the engine's types and other x86 headers (the
   drivers above choose the ISA, the ISA code never calls up).
2. tests/oracle/consumer.cpp builds against a copy of include/qdml that has
   no simd/ and no runtime/, with an xsimd/xsimd.hpp first on the include
   path that stops the compilation if anything includes it; then it runs
   (not in a cross build: QDML_ORACLE_BUILD_ONLY=1).

usage: check_oracle_only.py SOURCE_ROOT BUILD_DIR COMPILER...
"""
import os
import re
import shutil
import subprocess
import sys

root, build = sys.argv[1], sys.argv[2]
cxx = sys.argv[3:]
inc = os.path.join(root, "include")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(qdml/[^"]+)"', re.M)


def includes(h):
    with open(os.path.join(inc, h), encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def closure(h):
    seen, todo = set(), [h]
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        todo += includes(x)
    return seen


errors = []
headers = []
for d, _, files in os.walk(os.path.join(inc, "qdml")):
    for f in files:
        if f.endswith(".hpp"):
            headers.append(os.path.relpath(os.path.join(d, f), inc).replace(os.sep, "/"))
for h in sorted(headers):
    if h.startswith("qdml/simd/"):
        for i in includes(h):
            if i.startswith("qdml/runtime/"):
                errors.append(f"{h} includes {i}: nothing under qdml/simd/ may include qdml/runtime/")
    if h.startswith("qdml/simd/x86/"):
        # The element-wise regions specialize core's VecOps and take the add's constants.
        allowed = ("qdml/simd/isa.hpp", "qdml/simd/gemm/types.hpp", "qdml/simd/gemm/epilogue.hpp",
                   "qdml/simd/conv/depthwise_kernels.hpp", "qdml/simd/conv/interleave.hpp", "qdml/simd/x86/",
                   "qdml/core/", "qdml/simd/kernel/add_pairs_constants.hpp")
        for i in includes(h):
            if not i.startswith(allowed):
                errors.append(f"{h} includes {i}: ISA code includes only core, the seam, the engines' types and other x86 code")
for top in ("qdml/reference.hpp", "qdml/check/exact.hpp"):
    for h in sorted(closure(top)):
        if h.startswith(("qdml/simd/", "qdml/runtime/")):
            errors.append(f"{top} reaches {h}: the oracle must need nothing of the fast paths")

# The oracle-only consumer.
work = os.path.join(build, "oracle-only")
shutil.rmtree(work, ignore_errors=True)
shutil.copytree(os.path.join(inc, "qdml"), os.path.join(work, "include", "qdml"),
                ignore=lambda d, names: [n for n in names if os.path.basename(d) == "qdml" and n in ("simd", "runtime")])
os.makedirs(os.path.join(work, "poison", "xsimd"))
with open(os.path.join(work, "poison", "xsimd", "xsimd.hpp"), "w") as f:
    f.write('#error "xsimd reached from qdml/reference.hpp"\n')
exe = os.path.join(work, "consumer")
cmd = cxx + ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(work, "poison"), "-I",
             os.path.join(work, "include"), os.path.join(root, "tests", "oracle", "consumer.cpp"), "-o", exe]
r = subprocess.run(cmd, capture_output=True, text=True)
if r.returncode != 0:
    errors.append("the oracle-only consumer does not build without simd/, runtime/ and xsimd:\n" + r.stderr[-4000:])
elif os.environ.get("QDML_ORACLE_BUILD_ONLY") != "1":  # (set in cross builds: the host's program cannot run here)
    r = subprocess.run([exe], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        errors.append("the oracle-only consumer failed")
for e in errors:
    print("error:", e)
sys.exit(1 if errors else 0)
