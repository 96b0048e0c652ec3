#!/usr/bin/env bash
# Builds and runs cloudlua's libFuzzer targets (tests/fuzz/fuzz_*.cpp).
#
#   tests/fuzz/run.sh [options] [target...]    every target when none is named
#     --seconds N     how long each target mutates (default 10)
#     --runs N        mutate N inputs from a fixed seed instead (the same inputs run after
#                     run, so that a pass or failure repeats; --seconds still caps the time)
#     --max-len N     the longest input tried, in bytes (default 65536)
#     --build-dir D   the clang build (default build/fuzz; configured when missing)
#     --fresh         start from the seeds alone and keep nothing learnt (the
#                     ctest entries: their time does not grow with past runs)
#     --no-build      use the build as it is; a target not built is skipped (77)
#     --build-only    build the targets, run none
#
# A target is named as its file (fuzz_uri) or without the prefix (uri). Each run
# replays the seeds of tests/fuzz/corpus/<target>/ first, then mutates (with the
# tokens of tests/fuzz/<target>.dict when there is one); what it learns
# goes to <build>/corpus/<target>/ (never into the repository), and an input that
# crashes is written to <build>/artifacts/<target>/ and the run fails (exit 1). The
# ctest entries fuzz.* run this with --no-build; CLOUDLUA_REQUIRE_FUZZ=1 (set by
# ./setup.sh test) turns a target that was not built into a failure.
set -euo pipefail
SOURCE_DIR=$(cd "$(dirname "$0")/../.." && pwd)

seconds=10
runs=
max_len=65536
build_dir=$SOURCE_DIR/${BUILD_DIR:-build}/fuzz
build=1
run=1
fresh=0
targets=()

usage() {
  echo "usage: tests/fuzz/run.sh [--seconds N] [--runs N] [--max-len N] [--build-dir DIR] [--no-build|--build-only] [target...]" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --max-len) max_len=${2:?}; shift 2 ;;
    --build-dir) build_dir=${2:?}; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --no-build) build=0; shift ;;
    --build-only) run=0; shift ;;
    -h|--help) usage ;;
    -*) echo "run.sh: unknown option '$1'" >&2; usage ;;
    *) targets+=("fuzz_${1#fuzz_}"); shift ;;
  esac
done

if [ ${#targets[@]} -eq 0 ]; then
  for f in "$SOURCE_DIR"/tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
for t in "${targets[@]}"; do
  [ -f "$SOURCE_DIR/tests/fuzz/$t.cpp" ] || { echo "run.sh: no fuzz target '$t' (tests/fuzz/$t.cpp)" >&2; exit 2; }
done

# Configures the clang build once (libFuzzer needs clang), then builds the targets.
build_targets() {
  if ! command -v clang++ >/dev/null; then
    echo "run.sh: clang++ not found: apt-get install clang" >&2
    exit 2
  fi
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    CC=clang CXX=clang++ cmake -S "$SOURCE_DIR" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLOUDLUA_FUZZ=ON
  fi
  cmake --build "$build_dir" -j2 --target fuzz
}

# Runs one target for $seconds; its exit status is libFuzzer's (0: nothing found).
run_target() {
  local t=$1 bin=$build_dir/tests/fuzz/$1
  if [ ! -x "$bin" ]; then
    if [ "${CLOUDLUA_REQUIRE_FUZZ:-0}" = 1 ]; then
      echo "run.sh: $bin is not built (tests/fuzz/run.sh --build-only --build-dir $build_dir builds it)" >&2
      return 1
    fi
    echo "run.sh: $bin is not built; skipped (tests/fuzz/run.sh --build-only --build-dir $build_dir builds it)" >&2
    return 77
  fi
  local work=$build_dir/corpus/$t artifacts=$build_dir/artifacts/$t/
  mkdir -p "$work" "$artifacts"
  if [ "$fresh" = 1 ]; then work=$(mktemp -d "$work.fresh.XXXXXX"); fi
  # libFuzzer's own exit status for a finding is 77, which ctest would take for a skip.
  local options=(-max_total_time="$seconds" -max_len="$max_len" -timeout=25 -rss_limit_mb=2048
                 -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$artifacts" -print_final_stats=1)
  local dict=$SOURCE_DIR/tests/fuzz/$t.dict
  [ -f "$dict" ] && options+=(-dict="$dict")
  if [ -n "$runs" ]; then
    options+=(-runs="$runs" -seed=1)
    echo "run.sh: $t for $runs inputs from seed 1 (at most ${seconds}s), inputs up to $max_len bytes"
  else
    echo "run.sh: $t for ${seconds}s, inputs up to $max_len bytes"
  fi
  local rc=0
  "$bin" "${options[@]}" "$work" "$SOURCE_DIR/tests/fuzz/corpus/$t" || rc=$?
  if [ "$fresh" = 1 ]; then rm -rf "$work"; fi
  return "$rc"
}

[ "$build" = 1 ] && build_targets
[ "$run" = 1 ] || exit 0
# 1 when a target failed, else 77 when one was skipped, else 0.
failed=0 skipped=0
for t in "${targets[@]}"; do
  rc=0
  run_target "$t" || rc=$?
  if [ "$rc" = 77 ]; then skipped=1; elif [ "$rc" != 0 ]; then failed=1; fi
done
[ "$failed" = 1 ] && exit 1
[ "$skipped" = 1 ] && exit 77
exit 0
