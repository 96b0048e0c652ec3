#!/usr/bin/env bash
# What --state costs: the mean time of a small PutObject answered by `cloudlua serve`
# without a state file, with one, and with one that already holds a 12 MiB object
# (every change rewrites the whole file). Run by hand: tests/bench/serve_state_bench.sh
# build/cloudlua. Not part of ctest; no test asserts a time.
source "$(dirname "$0")/../serve/lib.sh"

measure() {
  "$CLOUDLUA" -e '
    local n, total = 200, 0
    for i = 1, n do
      local _, meta = cloud.storage.put_object{ Bucket = "demo-bucket", Object = "small/" .. i, Body = "hello" }
      total = total + meta.elapsed
    end
    print(("%-40s %6.2f ms per PutObject (mean of %d)"):format(os.getenv("LABEL"), total / n * 1000, n))'
}

start_serve
LABEL="no state file" measure
stop_serve TERM

start_serve --state "$WORK/state.json"
LABEL="state file, small state" measure
"$CLOUDLUA" -e 'cloud.storage.put_object{ Bucket = "demo-bucket", Object = "big", Body = ("x"):rep(12 * 1024 * 1024) }'
LABEL="state file holding a 12 MiB object" measure
stop_serve TERM
