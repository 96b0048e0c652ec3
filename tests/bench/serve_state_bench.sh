#!/usr/bin/env bash
# What --state costs as the state grows: for each count of objects stored (COUNTS,
# default "1000 10000 100000"), the rate of small PutObjects (PUTS of them, one after
# the other, as one client sends them) answered by `cloudlua serve --state`, and the
# time a restart on that state takes (from the start of serve to its endpoints
# printed). The objects are stored by importing a state file of the JSON format made
# here (100-byte objects in a file each, as serve wrote them before the database):
# putting 100,000 one at a time would take minutes. Also the same PutObjects without
# --state. Run by hand: tests/bench/serve_state_bench.sh build/cloudlua. Not part of
# ctest; no test asserts a time.
source "$(dirname "$0")/../serve/lib.sh"
COUNTS=${COUNTS:-"1000 10000 100000"}
export SERVE_START_SECONDS=600
PUTS=${PUTS:-500}

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
