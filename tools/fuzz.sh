#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14 + ASan + UBSan) and runs each for a
# bounded time, starting from the seed corpora in tests/fuzz/corpus.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# CI runs `tools/fuzz.sh 120 fuzz_npy fuzz_case fuzz_desc` and
# `tools/fuzz.sh 180 fuzz_diff`. For a longer run (figures in docs/perf/history.md):
#   tools/fuzz.sh 600 fuzz_desc
#   tools/fuzz.sh 900 fuzz_diff_native   # the differential target, -march=native kernels
# Needs: clang-14, libclang-rt-14-dev (Debian). Exits non-zero on the first
# crash, hang (-timeout), leak or sanitizer report; the failing input is left
# in build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_npy fuzz_case fuzz_desc fuzz_diff)

if [ ! -d build-fuzz ]; then
  CXX=${CXX_FUZZ:-clang++-14} meson setup build-fuzz -Dfuzzing=true -Doptimization=1 -Ddebug=false \
      -Dcpp_args=-gline-tables-only -Db_sanitize=address,undefined -Db_lundef=false
fi
meson compile -C build-fuzz "${targets[@]/#/tests/fuzz/}"
mkdir -p build-fuzz/artifacts
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
for t in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/${t#fuzz_}
  seeds=${seeds%_native}  # fuzz_diff_native starts from fuzz_diff's seeds
  work=build-fuzz/corpus/${t#fuzz_}
  mkdir -p "$work"
  echo "== $t: ${seconds}s"
  # (The target's own exit status decides: with pipefail, a `... | grep ||
  # true` pipeline's PIPESTATUS was true's, and a crash passed.)
  rc=0
  out=$(build-fuzz/tests/fuzz/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/artifacts/ "$work" "$seeds" 2>&1) || rc=$?
  printf '%s\n' "$out" |
    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==|SUMMARY)|ERROR|runtime error|Test unit written|^ +#[0-9]+ ' || true
  if [ "$rc" -ne 0 ]; then echo "== $t failed (exit status $rc)"; exit 1; fi
done
