#!/usr/bin/env bash
# The control plane of `cloudlua serve` (docs/emulator.md, "The control plane") driven
# with curl's own SigV4 (--aws-sigv4), as the documentation's examples do: seed, state,
# fault (never applied to control requests), advance, configure, checkpoint, restore,
# checkpoints, requests, reset; a seeded name and an advance the platform cannot hold refused; the old names snapshot and snapshots (kept for one
# release); a checkpoint taken over HTTP restored after a restart (`serve --state
# --restore`, and over HTTP); an unknown checkpoint a clear error, at start too; an unsigned request and one signed with a wrong secret refused (403, the
# S3 error body) and changing nothing.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/platform.db"
KEY=CLOUDLUAEMULATORKEY SECRET=cloudlua-emulator-secret
# curl's SigV4, as lib.sh's ctl signs (for the requests made here by hand).
SIGN=(--aws-sigv4 "aws:amz:jp-east-1:s3" --user "$KEY:$SECRET" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")

step "seed, state, configure, advance: the documented examples"
start_serve --state "$STATE"
ctl seed '{"buckets": ["from-curl"]}' >/dev/null
ctl state | grep -q '"from-curl"' || fail "state lacks the seeded bucket"
ctl configure '{"real_time": false, "instance_restore": 5}' >/dev/null
ctl seed '{"backups": [{"backupId": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]}' >/dev/null
lua 'cloud.devops.restore_instance{ backupId = ("a"):rep(32), instanceId = "qa-1" }'
ctl state | grep -q '"RESTORING"' || fail "the restored server should be RESTORING"
ctl advance '{"seconds": 5}' >/dev/null
lua 'local i = cloud.devops.get_instance{ InstanceId = "qa-1" }.instance
     assert(i.state == "RUNNING", "after advance: " .. tostring(i.state))'

step "fault: the next GetObject answers 503; requests counts it"
lua 'cloud.storage.put_object{ Bucket = "from-curl", Object = "k", Body = "v" }'
ctl fault '{"operation": "GetObject", "status": 503, "code": "SlowDown", "times": 1}' >/dev/null
lua 'local c = cloud.client{ max_attempts = 1 }
     local ok, err = pcall(c.storage.get_object, { Bucket = "from-curl", Object = "k" })
     assert(not ok and err.code == "SlowDown", "expected SlowDown, got " .. tostring(err and err.code))
     assert(c.storage.get_object{ Bucket = "from-curl", Object = "k" }.Body == "v")'
ctl requests | grep -q '"GetObject":2' || fail "requests: $(cat "$WORK/ctl.out")"

step "faults never apply to control requests"
ctl fault '{"status": 500, "code": "InternalError", "times": 3}' >/dev/null  # any operation
ctl requests >/dev/null
ctl checkpoints >/dev/null
lua 'local c = cloud.client{ max_attempts = 1 }
     for _ = 1, 3 do assert(not pcall(c.storage.head_bucket, { Bucket = "from-curl" }), "the fault should apply") end
     c.storage.head_bucket{ Bucket = "from-curl" }'

step "checkpoint, change, restore over HTTP"
ctl checkpoint '{"name": "prepared"}' >/dev/null
lua 'cloud.storage.put_object{ Bucket = "from-curl", Object = "k", Body = "changed" }'
[ "$(ctl checkpoints)" = '["prepared"]' ] || fail "checkpoints: $(cat "$WORK/ctl.out")"
[ "$(curl -sS "${SIGN[@]}" "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/checkpoints")" = '["prepared"]' ] || fail "GET checkpoints"
ctl restore '{"name": "prepared"}' >/dev/null
lua 'assert(cloud.storage.get_object{ Bucket = "from-curl", Object = "k" }.Body == "v", "restored")'
[ -f "$STATE.snapshots/prepared/state.db" ] || fail "no checkpoint folder beside the state"

step "the old names snapshot and snapshots, kept for one release"
ctl snapshot '{"name": "by-old-name"}' >/dev/null
[ "$(ctl snapshots)" = '["by-old-name","prepared"]' ] || fail "snapshots: $(cat "$WORK/ctl.out")"
[ "$(curl -sS "${SIGN[@]}" "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/snapshots")" = '["by-old-name","prepared"]' ] || fail "GET snapshots"
[ "$(ctl checkpoints)" = '["by-old-name","prepared"]' ] || fail "checkpoints: $(cat "$WORK/ctl.out")"

step "refused: unsigned, wrongly signed; nothing changes"
status=$(curl -sS -o "$WORK/refused" -w '%{http_code}' -X POST --data-binary '{}' "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/reset")
[ "$status" = 403 ] || fail "unsigned reset: status $status"
grep -q '<Code>AccessDenied</Code>\|<Code>MissingSecurityHeader</Code>\|<Error>' "$WORK/refused" || fail "no S3 error body: $(cat "$WORK/refused")"
status=$(curl -sS -o "$WORK/refused" -w '%{http_code}' --aws-sigv4 "aws:amz:jp-east-1:s3" --user "$KEY:wrong-secret" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X POST --data-binary '{}' "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/reset")
[ "$status" = 403 ] || fail "wrongly signed reset: status $status"
grep -q '<Code>SignatureDoesNotMatch</Code>' "$WORK/refused" || fail "no SignatureDoesNotMatch: $(cat "$WORK/refused")"
lua 'assert(cloud.storage.get_object{ Bucket = "from-curl", Object = "k" }.Body == "v", "a refused reset changed the platform")'

step "errors: an unknown checkpoint, a bad name, an unknown operation"
status=$(curl -sS -o "$WORK/err" -w '%{http_code}' "${SIGN[@]}" -X POST --data-binary '{"name": "nope"}' "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/restore")
[ "$status" = 404 ] && grep -q 'NoSuchCheckpoint' "$WORK/err" || fail "unknown checkpoint: $status $(cat "$WORK/err")"
status=$(curl -sS -o "$WORK/err" -w '%{http_code}' "${SIGN[@]}" -X POST --data-binary '{"name": "../x"}' "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/checkpoint")
[ "$status" = 400 ] && grep -q 'InvalidCheckpointName' "$WORK/err" || fail "bad name: $status $(cat "$WORK/err")"
status=$(curl -sS -o "$WORK/err" -w '%{http_code}' "${SIGN[@]}" -X POST --data-binary '{}' "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/explode")
[ "$status" = 404 ] && grep -q 'UnknownControl' "$WORK/err" || fail "unknown operation: $status $(cat "$WORK/err")"
grep -q 'checkpoints, configure' "$WORK/err" && ! grep -q 'snapshot' "$WORK/err" || fail "known operations: $(cat "$WORK/err")"

step "refused: a seeded name the platform refuses, an advance past what a date can say; nothing changes"
# refused OPERATION JSON TEXT: the control request answers 400 with TEXT.
refused() {
  status=$(curl -sS -o "$WORK/err" -w '%{http_code}' "${SIGN[@]}" -X POST --data-binary "$2" "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/$1")
  [ "$status" = 400 ] && grep -q "$3" "$WORK/err" || fail "$1 $2: $status $(cat "$WORK/err")"
}
refused seed '{"buckets": ["../../x"]}' 'buckets\[1\]'
refused seed '{"backups": [{"backupId": "../x"}]}' 'backups\[1\].backupId'
refused advance '{"seconds": 1e308}' 'seconds must be at most'
refused advance '{"seconds": -1}' 'must not be negative'
if ctl state | grep -q '"\.\./'; then fail "a refused seed made its resource: $(cat "$WORK/ctl.out")"; fi
lua 'local at = cloud.storage.head_object{ Bucket = "from-curl", Object = "k" }.LastModified
     local year = tonumber(at:match("%d%d%d%d"))
     assert(year >= 2020 and year < 9000, "the clock moved: " .. at)'

step "a checkpoint restored after a restart: serve --state --restore"
lua 'cloud.storage.put_object{ Bucket = "from-curl", Object = "k", Body = "changed again" }'
stop_serve TERM
start_serve --state "$STATE" --restore prepared
lua 'assert(cloud.storage.get_object{ Bucket = "from-curl", Object = "k" }.Body == "v", "restored at start")'
stop_serve TERM
start_serve --state "$STATE"  # the restore was saved: a plain restart keeps it
lua 'assert(cloud.storage.get_object{ Bucket = "from-curl", Object = "k" }.Body == "v", "kept after restart")'
ctl reset >/dev/null
ctl restore '{"name": "prepared"}' >/dev/null
lua 'assert(cloud.storage.get_object{ Bucket = "from-curl", Object = "k" }.Body == "v", "restored over HTTP after restart")'
stop_serve TERM

step "serve --restore: an unknown name, and no --state"
status=0
timeout 20 "$CLOUDLUA" serve --state "$STATE" --restore nope >"$WORK/out" 2>"$WORK/err" || status=$?
[ "$status" = 1 ] && grep -q "no checkpoint named 'nope' (checkpoints: by-old-name, prepared)" "$WORK/err" || fail "--restore nope: $status $(cat "$WORK/err")"
status=0
timeout 20 "$CLOUDLUA" serve --restore prepared >"$WORK/out" 2>"$WORK/err" || status=$?
[ "$status" = 1 ] && grep -q -- "--restore needs --state" "$WORK/err" || fail "--restore without --state: $status $(cat "$WORK/err")"
echo "control_test: ok"
