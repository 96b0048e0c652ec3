#!/usr/bin/env bash
# `cloudlua serve --state FILE` commits changes that arrive together as one: 16 writers
# at once (one cloudlua, cloud.map at concurrency 16) put objects of 1 KiB without
# pause; serve's line at SIGTERM counts the changes it saved and the commits they took,
# and there must be fewer commits than changes. An answer still means durable: the
# server is killed with SIGKILL mid-stream, and after the restart every write that was
# acknowledged reads back byte for byte (as crash_test checks with three writers).
source "$(dirname "$0")/lib.sh"
STATE="$WORK/state"
PORT=$(free_ports 4)

# writers COUNT PREFIX: COUNT PutObjects of 1 KiB (the key repeated), 16 at once; each
# one acknowledged is appended to $WORK/acked. A failed one (the server killed) is not
# acknowledged. Once $WORK/stop exists no more are sent.
writers() {
  COUNT=$1 PREFIX=$2 WORK="$WORK" "$CLOUDLUA" -e '
    local keys, work = {}, os.getenv("WORK")
    local acked = assert(io.open(work .. "/acked", "a"))
    for i = 1, tonumber(os.getenv("COUNT")) do keys[i] = os.getenv("PREFIX") .. i end
    cloud.map(keys, function(key)
      if io.open(work .. "/stop") then return end
      local body = (key .. ";"):rep(1024):sub(1, 1024)
      if pcall(cloud.storage.put_object, { Bucket = "group", Object = key, Body = body }) then
        acked:write(key, "\n")
        acked:flush()
      end
    end, { concurrency = 16 })'
}

# Every acknowledged key reads back as written; prints how many.
check() {
  ACKED="$WORK/acked" "$CLOUDLUA" -e '
    local checked = 0
    for key in io.lines(os.getenv("ACKED")) do
      local body = cloud.storage.get_object{ Bucket = "group", Object = key }.Body
      assert(body == (key .. ";"):rep(1024):sub(1, 1024), key .. ": the bytes read back are not those acknowledged")
      checked = checked + 1
    end
    print(checked)' || fail "an acknowledged write was lost or changed"
}

start_serve --port "$PORT" --state "$STATE"
lua 'cloud.storage.create_bucket{ Bucket = "group" }'
: >"$WORK/acked"

step "16 writers at once: the changes share commits"
writers 400 before-
stop_serve TERM
line=$(grep -E '^cloudlua serve: the state .* [0-9]+ changes saved in [0-9]+ commits' "$WORK/serve.err") ||
  fail "serve printed no count of changes and commits at SIGTERM: $(cat "$WORK/serve.err")"
changes=$(sed -E 's/.* ([0-9]+) changes saved in ([0-9]+) commits.*/\1/' <<<"$line")
commits=$(sed -E 's/.* ([0-9]+) changes saved in ([0-9]+) commits.*/\2/' <<<"$line")
echo "$line"
[ "$changes" -ge 400 ] || fail "serve counted $changes changes for 400 PutObjects"
[ "$commits" -lt "$changes" ] || fail "each change took a commit of its own ($commits commits for $changes changes)"

step "kill -9 while 16 writers put: every acknowledged write survives"
start_serve --port "$PORT" --state "$STATE"
writers 3000 during- &
WRITERS_PID=$!
until [ "$(grep -c '^during-' "$WORK/acked")" -ge 200 ]; do
  kill -0 "$WRITERS_PID" 2>/dev/null || fail "the writers ended before 200 writes were acknowledged"
  sleep 0.05
done
stop_serve KILL
touch "$WORK/stop"
wait "$WRITERS_PID" 2>/dev/null || true
start_serve --port "$PORT" --state "$STATE"
checked=$(check)
stop_serve TERM
echo "state_group_commit_test: ok ($changes changes in $commits commits; $checked acknowledged writes read back after kill -9)"
