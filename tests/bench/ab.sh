#!/usr/bin/env bash
# Two commits of cloudlua side by side in one run: each built as Release from the
# commit's own tree, then the benchmarks named run in alternation (A B, B A, A B...),
# one round at a time, so that both see the same machine; the medians of each figure
# and the ratio B/A are printed. Not ctest; no test asserts a time. Run by hand:
#
#   tests/bench/ab.sh [-n TURNS] [-r STEP] A B BENCH [BENCH ...]
#   tests/bench/ab.sh main HEAD speed_bench tasks_bench     # what a change gains
#   tests/bench/ab.sh -n 5 v1.2 main serve_bench
#   tests/bench/ab.sh -r "group commit" main~1 main serve_state_bench   # kept for the docs
#
# A and B are anything git names (a commit, a branch, a tag; the work tree's uncommitted
# changes are not part of either). BENCH is a script of tests/bench (with or without
# .sh); both builds are measured by the scripts of the tree this one lives in, so the
# measurement is the same and only the binary differs. Each BENCH runs with its own
# default options (its variables, such as COUNTS or SIZE_MIB, pass through) and one
# round per turn (ROUNDS=1); -n TURNS turns per side (default 5). Builds
# are kept in build-ab/<commit> and reused; the figures of every turn go to
# build-ab/results/<A>-<B>.<bench>.jsonl (record's lines, tests/bench/lib.sh), never
# into tests/bench/results. With -r STEP, cloudlua's medians are also kept in
# tests/bench/results/ab.jsonl as STEP's (tests/bench/ab_summary.py), for
# docs/performance.md to render beside the goals.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TURNS=5 STEP=()
while [ "${1:-}" = -n ] || [ "${1:-}" = -r ]; do
  if [ "$1" = -n ]; then TURNS=${2:-}; else STEP=(--record "${2:-}"); fi
  shift 2 || break
done
usage() { echo "usage: tests/bench/ab.sh [-n TURNS] [-r STEP] A B BENCH [BENCH ...]" >&2; exit 2; }
[ "${STEP[1]-x}" != "" ] || { echo "ab: -r takes the name of the step measured, as the docs will show it" >&2; exit 2; }
[ $# -ge 3 ] || usage
[[ $TURNS =~ ^[1-9][0-9]*$ ]] || { echo "ab: -n takes a whole number from 1 on, got '$TURNS'" >&2; exit 2; }

# The full commit git names by $1, or a usage error naming it.
commit_of() {
  git -C "$ROOT" rev-parse --verify --quiet "$1^{commit}" ||
    { echo "ab: '$1' names no commit of $ROOT" >&2; exit 2; }
}
A=$(commit_of "$1") B=$(commit_of "$2")
shift 2
BENCHES=()
for name in "$@"; do
  script=$ROOT/tests/bench/${name%.sh}.sh
  [ -x "$script" ] && [ "${name%.sh}" != ab ] || {
    echo "ab: no benchmark '$name' in tests/bench (there: $(cd "$ROOT/tests/bench" && ls -- *_bench.sh | tr '\n' ' '))" >&2
    exit 2
  }
  BENCHES+=("$script")
done

OUT=$ROOT/build-ab
mkdir -p "$OUT/results"

# build COMMIT: the Release binary of COMMIT's tree, built once into build-ab/COMMIT
# (the tree exported with git archive, never checked out here); prints its path.
build() {
  local dir=$OUT/${1:0:12}
  if [ ! -x "$dir/build/cloudlua" ]; then
    echo "ab: building ${1:0:12} in $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir/src"
    git -C "$ROOT" archive "$1" | tar -x -C "$dir/src"
    cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release >&2
    cmake --build "$dir/build" -j2 --target cloudlua >&2
  fi
  echo "$dir/build/cloudlua"
}
BIN_A=$(build "$A") BIN_B=$(build "$B")

# turn SIDE BIN SCRIPT: one round of SCRIPT measuring BIN, its figures appended to
# SIDE's results file of that script.
turn() {
  local side=$1 bin=$2 script=$3 commit
  commit=$([ "$side" = A ] && echo "$A" || echo "$B")
  RESULTS=$OUT/results/${A:0:7}-${B:0:7}.$(basename "$script" .sh).$side.jsonl BENCH_COMMIT=${commit:0:7} \
    BENCH_RUN=ab ROUNDS=1 "$script" "$bin" >/dev/null 2>"$OUT/results/turn.err" ||
    { cat "$OUT/results/turn.err" >&2; echo "ab: $(basename "$script") failed on $side (${commit:0:12})" >&2; exit 1; }
}

for script in "${BENCHES[@]}"; do
  rm -f "$OUT/results/${A:0:7}-${B:0:7}.$(basename "$script" .sh)".[AB].jsonl
  for round in $(seq "$TURNS"); do
    echo "ab: $(basename "$script" .sh), round $round of $TURNS" >&2
    if [ $((round % 2)) -eq 1 ]; then turn A "$BIN_A" "$script"; turn B "$BIN_B" "$script"
    else turn B "$BIN_B" "$script"; turn A "$BIN_A" "$script"; fi
  done
done

# Each figure's median over the turns of each side, and B/A (below 1: B takes less).
"$ROOT/tests/bench/ab_summary.py" "${STEP[@]}" "$OUT/results" "${A:0:7}" "${B:0:7}" \
  "$(git -C "$ROOT" rev-parse --short "$A")" "$(git -C "$ROOT" rev-parse --short "$B")" "${BENCHES[@]}"
