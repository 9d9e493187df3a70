#!/usr/bin/env python3
"""A C++14 build of qdml fails with one clear #error naming C++17 (and
nothing from deeper inside the headers). Usage: cxx14_error.py INCLUDE_DIR COMPILER..."""
import os
import subprocess
import sys
import tempfile

include, compiler = sys.argv[1], sys.argv[2:]
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "use_qdml.cpp")
    with open(src, "w") as f:
        f.write('#include "qdml/qdml.hpp"\nint main() { return 0; }\n')
    r = subprocess.run(compiler + ["-std=c++14", "-fsyntax-only", "-I" + include, src],
                       capture_output=True, text=True)
errors = [line for line in r.stderr.splitlines() if "error" in line and ": " in line and "^" not in line]
hash_errors = [line for line in errors if "#error" in line or "qdml requires C++17" in line]
print(r.stderr)
ok = (r.returncode != 0 and len(hash_errors) >= 1 and "C++17" in hash_errors[0]
      and all("qdml requires C++17" in e or "qdml_stops_here" in e for e in errors))
print("OK" if ok else "FAIL: expected one #error naming C++17 and nothing else")
sys.exit(0 if ok else 1)
