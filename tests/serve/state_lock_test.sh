#!/usr/bin/env bash
# One owner per state: a second `cloudlua serve --state FILE` on a FILE another serve
# holds exits with status 1 naming the holder's PID, and the first keeps serving.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/state.db"

step "the first serve owns the state"
start_serve --state "$STATE"
FIRST=$SERVE_PID
lua 'cloud.storage.create_bucket{ Bucket = "owned" }'

step "a second serve on the same state is refused, naming the holder"
status=0
timeout 20 "$CLOUDLUA" serve --state "$STATE" >"$WORK/second.out" 2>"$WORK/second.err" || status=$?
[ "$status" -eq 1 ] || fail "the second serve should exit 1, got $status: $(cat "$WORK/second.err")"
grep -q "StateInUse" "$WORK/second.err" || fail "no StateInUse: $(cat "$WORK/second.err")"
grep -q "pid $FIRST" "$WORK/second.err" || fail "the holder's pid $FIRST is not named: $(cat "$WORK/second.err")"
[ ! -s "$WORK/second.out" ] || fail "the second serve printed endpoints: $(cat "$WORK/second.out")"
grep -qx "$FIRST" "$STATE.lock" || fail "the lock file does not name the holder $FIRST: $(cat "$STATE.lock")"

step "the first keeps serving, its state whole"
kill -0 "$FIRST" || fail "the first serve is gone"
lua 'cloud.storage.put_object{ Bucket = "owned", Object = "k", Body = "still here" }
     assert(cloud.storage.get_object{ Bucket = "owned", Object = "k" }.Body == "still here")'

step "once the first has stopped, the next serve takes the state over"
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "SIGTERM should end serve with 0, got $SERVE_STATUS"
start_serve --state "$STATE"
lua 'assert(cloud.storage.get_object{ Bucket = "owned", Object = "k" }.Body == "still here")'
grep -qx "$SERVE_PID" "$STATE.lock" || fail "the lock file does not name the new holder: $(cat "$STATE.lock")"
stop_serve TERM
echo "ok"
