#!/usr/bin/env bash
# Tasks over the one curl multi loop, measured side by side (not ctest; no test
# asserts a time). Run by hand: tests/bench/tasks_bench.sh [build/cloudlua] [rounds]
#
#  (a) eight calls each answered 0.2 s late by the embedded emulator (a delay fault):
#      one after another, then through cloud.map{ concurrency = 8 };
#  (b) calls per second against nginx on loopback answering a canned body: cloudlua
#      (signed cloud.request through cloud.map) with 8, 64 and 1,024 tasks, beside wrk
#      -c8, -c64 and -c1024 on the same server, and the rate at 1,024 tasks over the
#      rate at 64 (a loop that scans every task on each turn falls as tasks grow).
#      cloudlua keeps at most 16 connections to one host (the rest of its tasks wait
#      in curl's queue); wrk opens as many connections as it is told.
# Commands alternate round by round; the medians and their ratios are printed. With
# BEFORE naming another build of cloudlua (the code before a change), (b) runs it in
# the same rounds too and prints its rates and the ratios of the first build's to them.
# Setup for (b), Debian: apt-get install -y --no-install-recommends nginx-light wrk
# ((b) is skipped when nginx or wrk is missing).
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build/cloudlua}")
ROUNDS=${2:-${ROUNDS:-5}}
BEFORE=${BEFORE:+$(realpath "$BEFORE")}
source "$(dirname "$0")/lib.sh"  # WORK, removed at exit with the servers started

# (a) seconds for eight delayed calls, MODE = seq or map.
fanout() {
  MODE=$1 CLOUDLUA_CONFIG_FILE=/dev/null "$CLOUDLUA" -e '
    local names = { "snap-1", "snap-2", "snap-1", "snap-2", "snap-1", "snap-2", "snap-1", "snap-2" }
    local function call(name) return cloud.cluster.update_snapshot{ SnapshotName = name, snapshot = {} } end
    cloud.emulator.fault{ operation = "UpdateSnapshot", delay = 0.2, times = 8 }
    local start = cloud.clock()
    if os.getenv("MODE") == "map" then cloud.map(names, call, { concurrency = 8 })
    else for _, n in ipairs(names) do call(n) end end
    print(cloud.clock() - start)' 2>/dev/null
}

echo "(a) eight calls answered after 0.2 s, $ROUNDS rounds"
: > "$WORK/seq"; : > "$WORK/map"
for _ in $(seq "$ROUNDS"); do fanout seq >> "$WORK/seq"; fanout map >> "$WORK/map"; done
SEQ=$(median < "$WORK/seq"); MAP=$(median < "$WORK/map")
record "eight calls answered 0.2 s late, through cloud.map" cloudlua "$MAP" s
record "eight calls answered 0.2 s late, through cloud.map" "one after another" "$SEQ" s
awk -v s="$SEQ" -v m="$MAP" 'BEGIN { printf "    sequential %.3f s, cloud.map %.3f s: %.1fx faster\n", s, m, s / m }'

if ! command -v nginx >/dev/null || ! command -v wrk >/dev/null; then
  echo "(b) skipped: install nginx-light and wrk"; exit 0
fi

PORT=$(free_port)
NGINX_CONNECTIONS=4096 start_nginx "$PORT" 'location / { default_type application/xml; return 200 "<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>"; }'

# (b) calls per second from cloudlua with TASKS tasks, over about 3 s (maps of 4,096
# calls, the same for every TASKS): cloudlua_rate TASKS [BINARY].
cloudlua_rate() {
  local binary=${2:-$CLOUDLUA}
  TASKS=$1 CLOUDLUA_ENDPOINT_STORAGE="http://127.0.0.1:$PORT" CLOUDLUA_ACCESS_KEY_ID=bench \
    CLOUDLUA_SECRET_ACCESS_KEY=bench-secret CLOUDLUA_CONFIG_FILE=/dev/null "$binary" -e '
    local tasks = tonumber(os.getenv("TASKS"))
    local function one() return cloud.request{ api = "storage", path = "/" }.status end
    cloud.map({ 1 }, one)  -- connect once before timing
    local n, start = 0, cloud.clock()
    while cloud.clock() - start < 3 do
      local items = {}
      for i = 1, 4096 do items[i] = i end
      cloud.map(items, one, { concurrency = tasks })
      n = n + #items
    end
    print(n / (cloud.clock() - start))'
}
wrk_rate() { wrk -t2 -c"$1" -d3s "http://127.0.0.1:$PORT/" | awk '/Requests\/sec/ { print $2 }'; }

echo "(b) calls per second against nginx-light on loopback, $ROUNDS rounds of 3 s"
ulimit -n 4096 2>/dev/null || true  # wrk -c1024 needs more descriptors than the usual 1,024
for c in 8 64 1024; do
  : > "$WORK/cl$c"; : > "$WORK/wrk$c"; : > "$WORK/before$c"
  for _ in $(seq "$ROUNDS"); do
    cloudlua_rate "$c" >> "$WORK/cl$c"; wrk_rate "$c" >> "$WORK/wrk$c"
    [ -z "$BEFORE" ] || cloudlua_rate "$c" "$BEFORE" >> "$WORK/before$c"
  done
  CL=$(median < "$WORK/cl$c"); WRK=$(median < "$WORK/wrk$c")
  record "signed calls to nginx on loopback, $c at once" cloudlua "$CL" calls/s
  record "signed calls to nginx on loopback, $c at once" wrk "$WRK" calls/s
  awk -v c="$c" -v a="$CL" -v w="$WRK" \
    'BEGIN { printf "    %4d at once: cloudlua %8.0f/s, wrk -c%-4d %8.0f/s: cloudlua at %.0f%% of wrk\n", c, a, c, w, 100 * a / w }'
  [ -z "$BEFORE" ] || awk -v c="$c" -v a="$CL" -v b="$(median < "$WORK/before$c")" -v w="$WRK" \
    'BEGIN { printf "    %4d at once: before   %8.0f/s (%.0f%% of wrk); cloudlua now %.2fx of before\n", c, b, 100 * b / w, a / b }'
done
awk -v a="$(median < "$WORK/cl1024")" -v b="$(median < "$WORK/cl64")" \
  'BEGIN { printf "    cloudlua at 1,024 tasks: %.2fx its rate at 64\n", a / b }'
[ -z "$BEFORE" ] || awk -v a="$(median < "$WORK/before1024")" -v b="$(median < "$WORK/before64")" \
  'BEGIN { printf "    before at 1,024 tasks: %.2fx its rate at 64\n", a / b }'
