#!/usr/bin/env bash
# What --state costs as the state grows: for each count of objects stored (COUNTS,
# default "1000 10000 100000"), the rate of small PutObjects (PUTS of them, one after
# the other, as one client sends them) answered by `cloudlua serve --state`, and of
# PutObjects of 1 KiB sent 16 at once (CONCURRENT_PUTS of them, by cloud.map: the
# changes that arrive together share a commit), the time a restart on that state takes
# to its first answer (the unsigned discovery request, polled every 10 ms from the
# start of serve), per object stored, and serve's peak memory then (VmHWM), and the
# time of a ListObjectsV2 page of 1,000 at the start and at the end of the bucket. The objects are stored by importing a state
# file of the JSON format made here (100-byte objects in a file each, as serve wrote
# them before the database): putting 100,000 one at a time would take minutes. With
# OLD=path/to/cloudlua (a build before a change), the same for it in the same run, on
# its own copy of the state (its byte files hard-linked: never changed once written):
# restarts, pages and the embedded rate alternate between the two, ROUNDS times
# (default 3), medians printed. Also the same PutObjects without --state. Then serve's
# memory with a BIG object (default 4G; "" skips it) stored with upload_file (8 MiB
# parts) under --state, after a restart and after sending it back (VmRSS, VmHWM: its
# bytes stay in their file), and the embedded emulator's rate of 1 KiB
# put_object/get_object calls (EMBEDDED_CALLS of each). Run by hand:
# tests/bench/serve_state_bench.sh build/cloudlua. Not part of ctest; no test asserts a time.
source "$(dirname "$0")/../serve/lib.sh"
source "$(dirname "$0")/lib.sh"  # record (results/serve_state_bench.jsonl); its median is replaced below
COUNTS=${COUNTS:-"1000 10000 100000"}
export SERVE_START_SECONDS=600
PUTS=${PUTS:-500}
CONCURRENT_PUTS=${CONCURRENT_PUTS:-2000}
BIG=${BIG-4G}
EMBEDDED_CALLS=${EMBEDDED_CALLS:-10000}
ROUNDS=${ROUNDS:-3}
NEW=$CLOUDLUA
BUILDS="new${OLD:+ old}"

# The binary of build $1 (new, old).
binary_of() { if [ "$1" = old ]; then echo "$OLD"; else echo "$NEW"; fi; }

# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# serve's VmRSS and VmHWM, in MiB.
memory_of_serve() {
  awk '$1 == "VmRSS:" { rss = $2 } $1 == "VmHWM:" { hwm = $2 } END { printf "VmRSS %d MiB, VmHWM %d MiB", rss / 1024, hwm / 1024 }' \
    "/proc/$SERVE_PID/status"
}

# PUTS PutObjects of 5 bytes, under keys not stored yet; prints their rate. They are
# deleted after (1,000 a request), so that a restart finds the count stored.
measure() {
  PUTS=$PUTS "$CLOUDLUA" -e '
    local n = tonumber(os.getenv("PUTS"))
    local start = cloud.clock()
    for i = 1, n do cloud.storage.put_object{ Bucket = "kept", Object = "new/" .. i, Body = "hello" } end
    local took = cloud.clock() - start
    print(("%-34s %7.0f PutObject/s (%d in %.2f s)"):format(os.getenv("LABEL"), n / took, n, took))
    for first = 1, n, 1000 do
      local batch = {}
      for i = first, math.min(first + 999, n) do batch[#batch + 1] = { Key = "new/" .. i } end
      cloud.storage.delete_objects{ Bucket = "kept", Object = batch, Quiet = true }
    end'
}

# CONCURRENT_PUTS PutObjects of 1 KiB, 16 at once, under keys not stored yet; prints
# their rate (PutObject/s) alone. They are deleted after, so that the next restart
# finds the count stored.
measure_concurrent() {
  PUTS=$CONCURRENT_PUTS "$CLOUDLUA" -e '
    local keys, body = {}, ("x"):rep(1024)
    for i = 1, tonumber(os.getenv("PUTS")) do keys[i] = "at-once/" .. i end
    local start = cloud.clock()
    cloud.map(keys, function(key) cloud.storage.put_object{ Bucket = "kept", Object = key, Body = body } end,
      { concurrency = 16 })
    print(("%.0f"):format(#keys / (cloud.clock() - start)))
    for first = 1, #keys, 1000 do
      local batch = {}
      for i = first, math.min(first + 999, #keys) do batch[#batch + 1] = { Key = keys[i] } end
      cloud.storage.delete_objects{ Bucket = "kept", Object = batch, Quiet = true }
    end'
}

# A JSON state file with COUNT objects of 100 bytes in bucket "kept", in $1 (and
# $1.bytes/); the other services as tests/data/state_json_v1 has them.
make_state() {
  COUNT=$2 python3 - "$1" "$(dirname "$0")/../data/state_json_v1/state.json" <<'PY'
import json, os, sys
path, template, count = sys.argv[1], sys.argv[2], int(os.environ["COUNT"])
os.makedirs(path + ".bytes", exist_ok=True)
objects, files = {}, {}
for i in range(count):
    name = "v%012x" % (i + 1)
    files[name] = name + ".1"
    with open(os.path.join(path + ".bytes", files[name]), "wb") as f:
        f.write(b"x" * 100)
    objects["obj/%08d" % i] = {"etag": '"%s"' % ("0" * 32), "last_modified": "Thu, 26 Nov 2026 12:00:00 GMT",
                               "version_id": name, "checksum": {}, "upload_id": ""}
doc = json.load(open(template))
doc.update({"counter": count + 1, "byte_files": files})
doc["services"]["storage"] = {"buckets": {"kept": objects}, "bucket_created": {"kept": "2026-11-26T12:00:00Z"},
                              "uploads": {}}
json.dump(doc, open(path, "w"))
PY
}

# Starts serve on $1; STARTED_MS: the milliseconds until its endpoints were printed
# (not in a $(...) subshell: the server must be this shell's).
start_timed() {
  local start=${EPOCHREALTIME/[.,]/}
  start_serve --state "$1"
  STARTED_MS=$(((10#${EPOCHREALTIME/[.,]/} - 10#$start) / 1000))
}

# Starts serve on the state $1 at port PORT and waits for its first answer (the
# unsigned discovery request, tried every 10 ms); FIRST_MS: the milliseconds from the
# start to that answer; PEAK_MIB: serve's peak resident memory by then (VmHWM). The
# storage API's endpoint is exported for the calls that follow.
start_answered() {
  local start=${EPOCHREALTIME/[.,]/}
  "$CLOUDLUA" serve --port "$PORT" --state "$1" >"$WORK/restart.out" 2>"$WORK/restart.err" &
  SERVE_PID=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$PORT/_cloudlua/discover"; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "serve did not start: $(cat "$WORK/restart.err")"
    sleep 0.01
  done
  FIRST_MS=$(((10#${EPOCHREALTIME/[.,]/} - 10#$start) / 1000))
  PEAK_MIB=$(awk '$1 == "VmHWM:" { printf "%.1f", $2 / 1024 }' "/proc/$SERVE_PID/status")
  export CLOUDLUA_ENDPOINT_STORAGE="http://127.0.0.1:$PORT"
}
PORT=$(free_ports 4)

start_serve
"$CLOUDLUA" -e 'cloud.storage.create_bucket{ Bucket = "kept" }'
LABEL="no --state" measure
stop_serve TERM

# The milliseconds a ListObjectsV2 page of 1,000 takes in bucket "kept" after key $1
# ("" : the first page), the best of 5.
page_ms() {
  AFTER=$1 "$CLOUDLUA" -e '
    local best = math.huge
    for _ = 1, 5 do
      local start = cloud.clock()
      local page = cloud.storage.list_objects_v2{ Bucket = "kept", MaxKeys = 1000, StartAfter = os.getenv("AFTER") }
      assert(page.KeyCount > 0)
      best = math.min(best, cloud.clock() - start)
    end
    print(("%.1f"):format(best * 1000))'
}

for count in $COUNTS; do
  echo "--- $count objects stored"
  make_state "$WORK/state-$count-new" "$count"
  # The state file copied (serve refuses a state file with a second name), its bytes linked.
  if [ -n "${OLD:-}" ]; then cp "$WORK/state-$count-new" "$WORK/state-$count-old" && cp -al "$WORK/state-$count-new.bytes" "$WORK/state-$count-old.bytes"; fi
  for build in $BUILDS; do
    CLOUDLUA=$(binary_of "$build")
    start_timed "$WORK/state-$count-$build"
    echo "$build: import of the JSON state file: $STARTED_MS ms"
    LABEL="$build: --state, $count stored" measure
    stop_serve TERM
  done
  declare -A restarts=() firsts=() lasts=() memory=() answers=() peaks=() concurrent=()
  last_key=$(printf 'obj/%08d' $((count > 1000 ? count - 1001 : 0)))
  for round in $(seq "$ROUNDS"); do
    for build in $BUILDS; do
      CLOUDLUA=$(binary_of "$build")
      start_timed "$WORK/state-$count-$build"
      restarts[$build]+=" $STARTED_MS"
      memory[$build]=$(memory_of_serve)
      firsts[$build]+=" $(page_ms "")"
      lasts[$build]+=" $(page_ms "$last_key")"
      stop_serve TERM
      start_answered "$WORK/state-$count-$build"
      answers[$build]+=" $FIRST_MS"
      peaks[$build]+=" $PEAK_MIB"
      concurrent[$build]+=" $(measure_concurrent)"
      stop_serve TERM
    done
  done
  for build in $BUILDS; do
    echo "$build: restart: median $(median ${restarts[$build]}) ms of$(printf ' %s' ${restarts[$build]}) ms; ${memory[$build]}"
    echo "$build: ListObjectsV2 page of 1,000: first $(median ${firsts[$build]}) ms, last $(median ${lasts[$build]}) ms (medians)"
    peer=$([ "$build" = new ] && echo cloudlua || echo "build before")
    echo "$build: restart to the first answer: median $(median ${answers[$build]}) ms, peak memory (VmHWM) $(median ${peaks[$build]}) MiB"
    echo "$build: PutObject of 1 KiB, 16 at once: median $(median ${concurrent[$build]}) /s of$(printf ' %s' ${concurrent[$build]})"
    record "serve --state restart on $count objects" "$peer" "$(median ${restarts[$build]})" ms
    record "serve --state restart on $count objects, to the first answer, per object" "$peer" \
      "$(awk -v ms="$(median ${answers[$build]})" -v n="$count" 'BEGIN { printf "%.2f", ms * 1000 / n }')" µs
    record "serve --state restart on $count objects, peak memory (VmHWM)" "$peer" "$(median ${peaks[$build]})" MiB
    record "serve --state, PutObject of 1 KiB, 16 at once, $count stored" "$peer" "$(median ${concurrent[$build]})" /s
    record "serve --state, a ListObjectsV2 page at the end of $count keys" "$peer" "$(median ${lasts[$build]})" ms
  done
  unset restarts firsts lasts memory answers peaks concurrent
  rm -rf "$WORK"/state-"$count"-*
done
CLOUDLUA=$NEW

if [ -n "$BIG" ]; then
  echo "--- a $BIG object under --state"
  truncate -s "$BIG" "$WORK/big.bin"
  start_serve --state "$WORK/big-state"
  "$CLOUDLUA" -e "cloud.storage.create_bucket{ Bucket = 'big' }
    cloud.storage.upload_file{ Bucket = 'big', Object = 'big.bin', file = '$WORK/big.bin' }"
  echo "stored: $(memory_of_serve)"
  stop_serve TERM
  start_timed "$WORK/big-state"
  echo "restart: $STARTED_MS ms, $(memory_of_serve)"
  "$CLOUDLUA" -e "cloud.storage.get_object{ Bucket = 'big', Object = 'big.bin', file = '$WORK/back.bin' }"
  echo "sent back: $(memory_of_serve)"
  cmp "$WORK/big.bin" "$WORK/back.bin" || fail "the object came back different"
  stop_serve TERM
  rm -rf "$WORK"/big*  "$WORK/back.bin"
fi

echo "--- the embedded emulator"
# CALLS put_object and get_object calls of 1 KiB by the embedded emulator of $1; prints the rate.
embedded_rate() {
  (
    for v in $(compgen -e | grep '^CLOUDLUA_'); do unset "$v"; done  # no account: the embedded emulator serves
    CLOUDLUA_CONFIG_FILE= CALLS="$EMBEDDED_CALLS" "$1" -e '
    local n, body = tonumber(os.getenv("CALLS")), ("x"):rep(1024)
    cloud.storage.create_bucket{ Bucket = "rate" }
    local start = cloud.clock()
    for i = 1, n do
      cloud.storage.put_object{ Bucket = "rate", Object = "k" .. i, Body = body }
      cloud.storage.get_object{ Bucket = "rate", Object = "k" .. i }
    end
    print(("%.0f"):format(2 * n / (cloud.clock() - start)))' 2>&1 | grep -v 'no account'
  )
}
declare -A rates=()
for round in $(seq "$ROUNDS"); do
  for build in $BUILDS; do rates[$build]+=" $(embedded_rate "$(binary_of "$build")")"; done
done
for build in $BUILDS; do
  echo "$build: embedded: median $(median ${rates[$build]}) calls/s of$(printf ' %s' ${rates[$build]}) ($EMBEDDED_CALLS put_object and get_object of 1 KiB)"
done
