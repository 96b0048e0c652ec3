#!/usr/bin/env bash
# `cloudlua serve --state FILE` on a state file of the JSON format that serve wrote
# before the database (tests/data/state_json_v1, kept as test data: two objects, one of
# every byte value, an upload with a part in progress, a cluster snapshot changed): the
# first start imports it, FILE becomes a SQLite database, the byte files stay where
# they were, and everything is there after the import and again after a kill -9.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/state.json"
cp -r "$(dirname "$0")/../data/state_json_v1/." "$WORK/"

check_platform() {
  lua '
    local s3 = cloud.storage
    local body = s3.get_object{ Bucket = "kept", Object = "bytes/all 256" }.Body
    assert(#body == 256, "size " .. #body)
    for i = 0, 255 do assert(body:byte(i + 1) == i, "byte " .. i) end
    assert(s3.get_object{ Bucket = "kept", Object = "hello.txt" }.Body == "hello, state file\n", "hello.txt")
    local parts = s3.list_parts{ Bucket = "kept", Object = "in progress", uploadId = "1fe0e9ee5480b70a239a958ff8661242" }
    assert(#parts.Part == 1 and parts.Part[1].ETag == "\"3303e12af474ca11d85ed2966a932992\"", "the part in progress")
    local snap = cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} }.snapshot
    assert(snap.description == "kept", "the snapshot: " .. tostring(snap.description))'
}

step "first start on the JSON state file: imported"
start_serve --state "$STATE"
[ "$(head -c 15 "$STATE")" = "SQLite format 3" ] || fail "the state file was not made a database"
for f in v000000000014.1 v000000000016.3 part-000000000018.4; do
  [ -f "$STATE.bytes/$f" ] || fail "the byte file $f was not kept"
done
check_platform
lua 'cloud.storage.put_object{ Bucket = "kept", Object = "after import", Body = "new" }'

step "kill -9, restart on the database"
stop_serve KILL
start_serve --state "$STATE"
check_platform
lua 'assert(cloud.storage.get_object{ Bucket = "kept", Object = "after import" }.Body == "new", "the change after the import")'
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "SIGTERM should end serve with 0, got $SERVE_STATUS"
echo "state_import_test: ok"
