#!/usr/bin/env python3
"""The header_checks list (tests/meson.build) names every public header:
    python3 tests/check_header_list.py <include/qdml> <listed header>...
"""

import os
import sys

root, listed = sys.argv[1], set(sys.argv[2:])
found = {os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
         for d, _, files in os.walk(root) for f in files if f.endswith((".hpp", ".h"))}
for h in sorted(found - listed):
    print("%s is not in tests/meson.build's public_headers: it gets no header check" % h)
for h in sorted(listed - found):
    print("public_headers lists %s, which does not exist" % h)
sys.exit(1 if found != listed else 0)
