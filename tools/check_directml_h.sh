#!/usr/bin/env bash
# Builds the DML-struct tests and example against DirectML's own DirectML.h
# instead of qdml's declarations (-DQDML_USE_DIRECTML_H), on Linux, with the
# WSL stubs of a DirectX-Headers checkout (microsoft/DirectX-Headers,
# which ships include/directx/DirectML.h and include/wsl/), and runs them.
# The layout asserts of qdml/directml/types.hpp then check the real header.
#   tools/check_directml_h.sh PATH/TO/DirectX-Headers [BUILD_DIR]
# BUILD_DIR (default: build) must hold a configured build with
# tests/libcatch_main.a built (meson compile -C build tests/catch_main).
set -euo pipefail
cd "$(dirname "$0")/.."
dx=${1:?usage: tools/check_directml_h.sh PATH/TO/DirectX-Headers [BUILD_DIR]}
build=${2:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c++17 -O1 -ffp-contract=off -Wall -Wextra -DQDML_USE_DIRECTML_H
       -isystem "$dx/include/wsl/stubs" -isystem "$dx/include/directx" -isystem "$dx/include" -include "$dx/include/wsl/winadapter.h"
       -Iinclude -Itests -Itools $(pkg-config --cflags xsimd catch2 nlohmann_json) -DQDML_SOURCE_ROOT="\"$PWD\"")
c++ "${flags[@]}" tests/test_directml.cpp tests/test_directml_cases.cpp "$build/tests/libcatch_main.a" -o "$out/tests"
c++ "${flags[@]}" examples/directml_example.cpp -o "$out/example"
"$out/tests"
"$out/example"
echo "DirectML.h from $dx: layout asserts hold, tests and example pass"
