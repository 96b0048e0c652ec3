#!/usr/bin/env bash
# One owner per state: a second `cloudlua serve --state FILE` on a FILE another serve
# holds exits with status 1 naming the holder's PID, and the first keeps serving. The
# lock is the database file's own, whatever name reaches it: a hard link or a symbolic
# link to it is refused too. A state file with a second name (a hard link) or reached
# through a symbolic link is refused even when no serve holds it (SQLite keeps its
# journal beside the name), saying why and what to do.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/state.db"

# second_refused NAME TEXT...: `serve --state NAME` exits 1 with one line holding each TEXT,
# printing no endpoints.
second_refused() {
  local name=$1 status=0 text
  shift
  timeout 20 "$CLOUDLUA" serve --state "$name" >"$WORK/second.out" 2>"$WORK/second.err" || status=$?
  [ "$status" -eq 1 ] || fail "serve --state $name should exit 1, got $status: $(cat "$WORK/second.err")"
  [ "$(wc -l <"$WORK/second.err")" -eq 1 ] || fail "not one line: $(cat "$WORK/second.err")"
  for text in "$@"; do grep -q -- "$text" "$WORK/second.err" || fail "no '$text': $(cat "$WORK/second.err")"; done
  [ ! -s "$WORK/second.out" ] || fail "the second serve printed endpoints: $(cat "$WORK/second.out")"
}

step "the first serve owns the state"
echo 4242 >"$STATE.lock"  # an earlier version's lock file, holding nothing: left as it is
start_serve --state "$STATE"
FIRST=$SERVE_PID
lua 'cloud.storage.create_bucket{ Bucket = "owned" }'

step "a second serve on the same state is refused, naming the holder"
second_refused "$STATE" StateInUse "pid $FIRST"

step "a second serve through a hard link to the database is refused, naming the holder"
ln "$STATE" "$WORK/other.db"
second_refused "$WORK/other.db" StateInUse "pid $FIRST"
[ ! -e "$WORK/other.db.bytes" ] || fail "the refused serve made a folder of bytes beside its name"

step "a second serve through a symbolic link to the database is refused, naming the holder"
ln -s "$STATE" "$WORK/link.db"
second_refused "$WORK/link.db" StateInUse "pid $FIRST"

step "the first keeps serving, its state whole"
kill -0 "$FIRST" || fail "the first serve is gone"
lua 'cloud.storage.put_object{ Bucket = "owned", Object = "k", Body = "still here" }
     assert(cloud.storage.get_object{ Bucket = "owned", Object = "k" }.Body == "still here")'
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "SIGTERM should end serve with 0, got $SERVE_STATUS"

step "with no serve running, a state file of two names or reached through a link is refused"
second_refused "$STATE" StateFile "2 names" "remove the other"
second_refused "$WORK/link.db" StateFile "symbolic link"
rm "$WORK/other.db"

step "once the first has stopped, the next serve takes the state over"
start_serve --state "$STATE"
lua 'assert(cloud.storage.get_object{ Bucket = "owned", Object = "k" }.Body == "still here")'
[ "$(cat "$STATE.lock")" = 4242 ] || fail "the earlier version's lock file was changed: $(cat "$STATE.lock")"
stop_serve TERM
echo "ok"
