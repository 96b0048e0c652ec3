#!/usr/bin/env bash
# The cost of `cloudlua test --coverage DIR` (the line hook, repl/coverage.cpp), runs
# with and without it alternating round by round, the medians of the wall times and
# their ratio printed (the goal: under 2x). Not ctest; no test asserts a time.
#  (a) the tests of scripts/ (tests/scripts, in the runner's process): what a user's
#      run costs, mostly calls to the embedded emulator;
#  (b) the worst case: a test whose time is all Lua lines of a counted file (a loop
#      over a small function, LOOPS times), each line one call of the hook.
# Run by hand from the repository: tests/bench/coverage_bench.sh [build/cloudlua] [rounds]
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build/cloudlua}")
ROUNDS=${2:-${ROUNDS:-5}}
LOOPS=${LOOPS:-2000000}
source "$(dirname "$0")/lib.sh"  # WORK, removed at exit

# Seconds for `cloudlua test ARGS...` run in the current folder.
timed_run() {
  local start end
  start=$(date +%s.%N)
  CLOUDLUA_TEST_BIN=$CLOUDLUA CLOUDLUA_CONFIG_FILE=/dev/null "$CLOUDLUA" test "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

# compare NAME ARGS...: the runs of ARGS with and without --coverage, alternating; the
# medians and their ratio.
compare() {
  local name=$1 plain covered
  shift
  : > "$WORK/plain"; : > "$WORK/covered"
  for _ in $(seq "$ROUNDS"); do
    timed_run "$@" >> "$WORK/plain"
    timed_run --coverage "$WORK/coverage" "$@" >> "$WORK/covered"
  done
  plain=$(median < "$WORK/plain"); covered=$(median < "$WORK/covered")
  printf '%s: without --coverage %.2f s, with %.2f s: %.2fx (goal: under 2x)\n' "$name" "$plain" "$covered" \
    "$(echo "$covered / $plain" | bc -l)"
}

echo "$ROUNDS rounds"
compare "(a) tests/scripts" tests/scripts
mkdir -p "$WORK/loop"
cat > "$WORK/loop/work.lua" <<'LUA'
local work = {}
function work.step(total, i)
  if i % 3 == 0 then
    total = total + i
  else
    total = total - 1
  end
  return total
end
return work
LUA
cat > "$WORK/loop/loop_test.lua" <<LUA
local work = dofile("work.lua")
test("a loop", function()
  local total = 0
  for i = 1, $LOOPS do total = work.step(total, i) end
  expect(total ~= 0).to_be(true)
end)
LUA
(cd "$WORK/loop" && compare "(b) $LOOPS calls of a five-line function" loop_test.lua)
