#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14 + ASan + UBSan) and runs each for a
# bounded time, starting from the seed corpora in tests/fuzz/corpus.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# FUZZ_JOBS=N runs N targets at a time (one core each). CI runs
# `FUZZ_JOBS=2 tools/fuzz.sh 90 fuzz_desc fuzz_diff` and
# `FUZZ_JOBS=2 tools/fuzz.sh 60 fuzz_npy fuzz_case` (in its ASan build). For a longer run (figures in docs/perf/history.md):
#   tools/fuzz.sh 600 fuzz_desc
#   tools/fuzz.sh 900 fuzz_diff_native   # the differential target, -march=native kernels
# UBSan's checks are traps (-fsanitize-trap=undefined, as CI's sanitizer
# build: a fraction of the compile time): a failed one is a crash (SIGILL)
# with its stack; replay the input in a build without the flag for UBSan's
# message. Needs: clang-14, libclang-rt-14-dev (Debian). Exits non-zero when a target
# ends on a crash, hang (-timeout), leak or sanitizer report (the others run
# to their time); the failing input is left in build-fuzz/artifacts/ (or
# $FUZZ_BUILD/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_npy fuzz_case fuzz_desc fuzz_diff)

# FUZZ_BUILD: an existing -Dfuzzing=true clang sanitizer build to use
# instead (CI fuzzes in its ASan build); else build-fuzz, set up here.
bd=${FUZZ_BUILD:-build-fuzz}
if [ ! -d "$bd" ]; then
  CXX=${CXX_FUZZ:-clang++-14} meson setup "$bd" -Dfuzzing=true -Doptimization=1 -Ddebug=false \
      -Dcpp_args="-gline-tables-only -fsanitize-trap=undefined" -Db_sanitize=address,undefined -Db_lundef=false
fi
meson compile -C "$bd" "${targets[@]/#/tests/fuzz/}"
mkdir -p "$bd/artifacts"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:handle_sigill=1
# FUZZ_JOBS targets at a time (default 1), each on one core: CI runs two
# at once on its 2 cores. Each target's report is printed when it ends.
jobs=${FUZZ_JOBS:-1}
fuzz_one() {
  local t=$1 seeds work rc=0 out
  seeds=tests/fuzz/corpus/${t#fuzz_}
  seeds=${seeds%_native}  # fuzz_diff_native starts from fuzz_diff's seeds
  work=$bd/corpus/${t#fuzz_}
  mkdir -p "$work"
  # (The target's own exit status decides: with pipefail, a `... | grep ||
  # true` pipeline's PIPESTATUS was true's, and a crash passed.)
  out=$("$bd/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$bd/artifacts/" "$work" "$seeds" 2>&1) || rc=$?
  echo "== $t: ${seconds}s"
  printf '%s\n' "$out" |
    grep -E '^(stat::number_of_executed_units|Done|==[0-9]+==|SUMMARY)|ERROR|runtime error|Test unit written|^ +#[0-9]+ ' || true
  if [ "$rc" -ne 0 ]; then echo "== $t failed (exit status $rc)"; fi
  return "$rc"
}
failed=0
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
  fuzz_one "$t" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit "$failed"
