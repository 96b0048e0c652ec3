#!/usr/bin/env bash
# Every benchmark of tests/bench, one after another, each at sizes ten times apart and
# with rounds enough for a median, all within 20 minutes on a 2-core machine; then the
# tables of docs/performance.md and the README rendered from their results
# (render.py). `./setup.sh bench` runs it with a Release build. Each benchmark's
# output goes to $LOGS/<name>.log (build-release/bench-logs unless set) and its time
# is printed; one that fails is named at the end, and the others still run.
#
#   tests/bench/all.sh [build-release/cloudlua] [NAME...]   # NAME: speed_bench, tree_bench...
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(realpath "${1:-build-release/cloudlua}")
shift || true
LOGS=${LOGS:-$(dirname "$BIN")/bench-logs}
# The commit every figure of this run is recorded with (record, lib.sh): the tree's when
# the run began, whatever is committed while it goes on.
export BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$HERE" rev-parse --short HEAD)}
mkdir -p "$LOGS"

# The benchmarks and how each runs here: NAME, then the environment and arguments
# after the binary. Sizes ten times apart; a peer that takes minutes at a size
# (aws-cli's sync of 10,000 files) is left out of that size.
PLAN=(
  "speed_bench|ROUNDS=5|"
  "tasks_bench|ROUNDS=3|"
  "serve_bench|ROUNDS=3 CONNECTIONS='1 8 64'|3 3"
  "large_body_bench|ROUNDS=3|3 60"
  "serve_state_bench|ROUNDS=2 COUNTS='10000 100000' BIG=256M PUTS=500|"
  "transfer_bench|ROUNDS=2 SIZE_MIB=64|"
  "transfer_bench|ROUNDS=2 SIZE_MIB=640|"
  "large_file_bench|ROUNDS=3|3 100"
  "large_file_bench|ROUNDS=3|3 1000"
  "tree_bench|FILES=100 BIG=0|3"
  "tree_bench|FILES=1000 BIG=0|3"
  "scale_bench|SIZES='10000 100000'|1"
  "wait_cpu_bench|ROUNDS=3|"
  "limit_rate_bench|SIZE_MIB=20|"
  "limit_rate_bench|SIZE_MIB=200|"
  "coverage_bench|ROUNDS=3|"
)

wanted() { [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx "$NAME"; }

failed=()
start=$SECONDS
for entry in "${PLAN[@]}"; do
  IFS='|' read -r NAME ENVIRONMENT ARGS <<<"$entry"
  wanted "$@" || continue
  began=$SECONDS
  log="$LOGS/$NAME.log"
  printf '%-18s %-52s ' "$NAME" "$ENVIRONMENT $ARGS"
  # shellcheck disable=SC2086 # ARGS are words; ENVIRONMENT is assignments, eval'd
  if (cd "$HERE/../.." && eval "export $ENVIRONMENT" && exec bash "$HERE/$NAME.sh" "$BIN" $ARGS) >>"$log" 2>&1; then
    echo "$((SECONDS - began)) s"
  else
    echo "FAILED after $((SECONDS - began)) s (see $log)"
    failed+=("$NAME")
  fi
done
echo "all: $((SECONDS - start)) s"
python3 "$HERE/render.py"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
