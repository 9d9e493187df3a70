#!/usr/bin/env python3
"""Every link in the repository's Markdown files names a file or directory
inside the repository (a clone has no ../shared/ or other outside files, and
a link to a web address leaves the repository too: cite an address as text),
and every #anchor-free target exists. The README stays short enough to read
(at most 350 lines; the rest belongs in docs/).

    python3 tests/check_doc_links.py <source-root>
"""

import os
import re
import subprocess
import sys

ROOT = os.path.realpath(sys.argv[1])
LINK = re.compile(r"\]\(([^)\s]+)\)")
AUTOLINK = re.compile(r"<([a-z][a-z0-9+.-]*:(?!:)[^>\s]+)>")  # <https://...>, not C++'s <qdml::Tensor>


def markdown_files():
    try:  # the tracked files of a git checkout; else every .md below ROOT
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md"], capture_output=True, text=True, check=True)
        return [os.path.join(ROOT, f) for f in out.stdout.split()]
    except (OSError, subprocess.CalledProcessError):
        return [os.path.join(d, f) for d, _, fs in os.walk(ROOT) if "/build" not in d for f in fs if f.endswith(".md")]


bad = []
for md in markdown_files():
    with open(md, encoding="utf-8") as f:
        text = f.read()
    where = os.path.relpath(md, ROOT)
    for target in LINK.findall(text) + AUTOLINK.findall(text):
        if target.startswith("#"):
            continue  # in-page anchors
        if re.match(r"[a-z]+:", target):
            bad.append("%s: link %s leaves the repository" % (where, target))
            continue
        path = os.path.realpath(os.path.join(os.path.dirname(md), target.split("#")[0]))
        if not (path == ROOT or path.startswith(ROOT + os.sep)):
            bad.append("%s: link %s leaves the repository" % (where, target))
        elif not os.path.exists(path):
            bad.append("%s: link %s names no file" % (where, target))
README_LIMIT = 350
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    readme_lines = len(f.read().splitlines())
if readme_lines > README_LIMIT:
    bad.append("README.md: %d lines, more than %d (move the detail to docs/)" % (readme_lines, README_LIMIT))
for b in bad:
    print(b)
print("check_doc_links: %d problem(s)" % len(bad))
sys.exit(1 if bad else 0)
