#!/usr/bin/env bash
# What --state costs as the state grows: for each count of objects stored (COUNTS,
# default "1000 10000 100000"), the rate of small PutObjects (PUTS of them, one after
# the other, as one client sends them) answered by `cloudlua serve --state`, and the
# time a restart on that state takes (from the start of serve to its endpoints
# printed). The objects are stored by importing a state file of the JSON format made
# here (100-byte objects in a file each, as serve wrote them before the database):
# putting 100,000 one at a time would take minutes. Also the same PutObjects without
# --state. Then serve's memory with a BIG object (default 4G; "" skips it) stored with
# upload_file (8 MiB parts) under --state, after a restart and after sending it back
# (VmRSS, VmHWM: its bytes stay in their file), and the embedded emulator's rate of
# 1 KiB put_object/get_object calls (EMBEDDED_CALLS of each). Run by hand:
# tests/bench/serve_state_bench.sh build/cloudlua. Not part of ctest; no test asserts a time.
source "$(dirname "$0")/../serve/lib.sh"
COUNTS=${COUNTS:-"1000 10000 100000"}
export SERVE_START_SECONDS=600
PUTS=${PUTS:-500}
BIG=${BIG-4G}
EMBEDDED_CALLS=${EMBEDDED_CALLS:-10000}

# serve's VmRSS and VmHWM, in MiB.
memory_of_serve() {
  awk '$1 == "VmRSS:" { rss = $2 } $1 == "VmHWM:" { hwm = $2 } END { printf "VmRSS %d MiB, VmHWM %d MiB", rss / 1024, hwm / 1024 }' \
    "/proc/$SERVE_PID/status"
}

# PUTS PutObjects of 5 bytes, under keys not stored yet; prints their rate.
measure() {
  PUTS=$PUTS "$CLOUDLUA" -e '
    local n = tonumber(os.getenv("PUTS"))
    local start = cloud.clock()
    for i = 1, n do cloud.storage.put_object{ Bucket = "kept", Object = "new/" .. i, Body = "hello" } end
    local took = cloud.clock() - start
    print(("%-34s %7.0f PutObject/s (%d in %.2f s)"):format(os.getenv("LABEL"), n / took, n, took))'
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

start_serve
"$CLOUDLUA" -e 'cloud.storage.create_bucket{ Bucket = "kept" }'
LABEL="no --state" measure
stop_serve TERM

for count in $COUNTS; do
  state="$WORK/state-$count"
  make_state "$state" "$count"
  echo "--- $count objects stored"
  start_timed "$state"
  echo "import of the JSON state file: $STARTED_MS ms"
  LABEL="--state, $count stored" measure
  stop_serve TERM
  start_timed "$state"
  echo "restart: $STARTED_MS ms"
  stop_serve TERM
  rm -rf "$state" "$state".*
done

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
(
  for v in $(compgen -e | grep '^CLOUDLUA_'); do unset "$v"; done  # no account: the embedded emulator serves
  CLOUDLUA_CONFIG_FILE= CALLS="$EMBEDDED_CALLS" "$CLOUDLUA" -e '
  local n, body = tonumber(os.getenv("CALLS")), ("x"):rep(1024)
  cloud.storage.create_bucket{ Bucket = "rate" }
  local start = cloud.clock()
  for i = 1, n do
    cloud.storage.put_object{ Bucket = "rate", Object = "k" .. i, Body = body }
    cloud.storage.get_object{ Bucket = "rate", Object = "k" .. i }
  end
  local took = cloud.clock() - start
  print(("embedded: %.0f calls/s (%d put_object and get_object of 1 KiB in %.2f s)"):format(2 * n / took, n, took))' 2>&1 |
    grep -v 'no account'
)
