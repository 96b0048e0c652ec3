#!/usr/bin/env bash
# `cloudlua serve --state FILE` on a state file of the JSON format that serve wrote
# before the database (tests/data/state_json_v1, kept as test data: two objects, one of
# every byte value, an upload with a part in progress, a cluster snapshot changed): the
# first start imports it, FILE becomes a SQLite database, the byte files stay where
# they were, and everything is there after the import and again after a kill -9; the
# serve that imported it owns the new database (a second serve is refused). A state
# file nested a million levels deep is refused (BadStateFile, naming the depth).
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
status=0  # the lock moved onto the new database with it: a second serve is refused
timeout 20 "$CLOUDLUA" serve --state "$STATE" >/dev/null 2>"$WORK/second.err" || status=$?
[ "$status" -eq 1 ] && grep -q "StateInUse.*pid $SERVE_PID" "$WORK/second.err" || fail "second serve after the import: $status $(cat "$WORK/second.err")"
lua 'cloud.storage.put_object{ Bucket = "kept", Object = "after import", Body = "new" }'

step "kill -9, restart on the database"
stop_serve KILL
start_serve --state "$STATE"
check_platform
lua 'assert(cloud.storage.get_object{ Bucket = "kept", Object = "after import" }.Body == "new", "the change after the import")'
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "SIGTERM should end serve with 0, got $SERVE_STATUS"

step "a state file nested a million levels deep: refused, naming the depth, not a crash"
DEEP="$WORK/deep.json"
awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "{\"a\":"; printf "1"; for (i = 0; i < 1000000; i++) printf "}" }' >"$DEEP"
status=0
timeout 60 "$CLOUDLUA" serve --state "$DEEP" >"$WORK/deep.out" 2>"$WORK/deep.err" || status=$?
[ "$status" -eq 1 ] || fail "serve on a deep state file should exit 1, got $status: $(head -c 300 "$WORK/deep.err")"
[ "$(wc -l <"$WORK/deep.err")" -eq 1 ] || fail "not one line: $(head -c 300 "$WORK/deep.err")"
grep -q "BadStateFile.*nested more than 200 levels deep" "$WORK/deep.err" || fail "no BadStateFile naming the depth: $(cat "$WORK/deep.err")"
[ "$(head -c 5 "$DEEP")" = '{"a":' ] || fail "the refused state file was changed"
echo "state_import_test: ok"
