#!/usr/bin/env bash
# `cloudlua serve --state FILE` under kill -9 at random moments: several writers put
# objects of random bytes without pause; the server is killed with SIGKILL six times
# mid-stream and restarted on the same file, and after each restart every write that
# was acknowledged (answered 200) must read back byte for byte. A byte file that a
# killed request left behind must never stand for the bytes of a later write.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/state.json"
WRITERS=3
KILLS=6
PORT=$(free_ports 4)

# Each writer: objects w<id>-<n> of 1 to 16384 random bytes; each write acknowledged
# is copied to $WORK/acked/<key> (whole: written aside, then renamed). Errors (the
# server is down) are not acknowledged: the next key is tried. Waits while
# $WORK/pause exists (the check reads meanwhile); stops when $WORK/stop exists.
mkdir "$WORK/acked"
cat >"$WORK/writer.lua" <<'END'
local id, work = os.getenv("WRITER"), os.getenv("WORK")
math.randomseed(os.time() + tonumber(id) * 7919)
for n = 1, math.huge do
  if io.open(work .. "/stop") then break end
  while io.open(work .. "/pause") do os.execute("sleep 0.05") end
  local bytes = {}
  for i = 1, math.random(1, 16384) do bytes[i] = string.char(math.random(0, 255)) end
  local body, key = table.concat(bytes), ("w%s-%d"):format(id, n)
  if pcall(cloud.storage.put_object, { Bucket = "crash", Object = key, Body = body }) then
    local aside = ("%s/acked/.%s"):format(work, key)
    local f = assert(io.open(aside, "wb"))
    f:write(body)
    f:close()
    assert(os.rename(aside, ("%s/acked/%s"):format(work, key)))
  end
end
END

# Every acknowledged write so far reads back as written; prints how many there were.
# The writers pause meanwhile (a write in flight may still be acknowledged).
check() {
  touch "$WORK/pause"
  checked=$("$CLOUDLUA" "$WORK/check.lua") || fail "an acknowledged write was lost or changed"
  rm "$WORK/pause"
}
cat >"$WORK/check.lua" <<'END'
local acked, checked = os.getenv("WORK") .. "/acked/", 0
for key in io.popen("ls " .. acked):lines() do
  local f = assert(io.open(acked .. key, "rb"))
  local written = f:read("a")
  f:close()
  local body = cloud.storage.get_object{ Bucket = "crash", Object = key }.Body
  assert(body == written, ("%s: the %d bytes read back are not the %d acknowledged"):format(key, #body, #written))
  checked = checked + 1
end
print(checked)
END

# acked_at_least N: waits until N writes have been acknowledged in all (30 s at most).
acked_at_least() {
  local tries=0
  until [ "$(ls "$WORK/acked" | wc -l)" -ge "$1" ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 600 ] || fail "the writers got fewer than $1 writes acknowledged in 30 s"
    sleep 0.05
  done
}

start_serve --port "$PORT" --state "$STATE"
lua 'cloud.storage.create_bucket{ Bucket = "crash" }'
for w in $(seq "$WRITERS"); do
  WRITER=$w "$CLOUDLUA" "$WORK/writer.lua" &
done

# A kill after a random number (10 to 39) of acknowledged writes, while the writers
# go on, so that it falls at a random point of the requests in flight.
for kill in $(seq "$KILLS"); do
  acked_at_least $(($(ls "$WORK/acked" | wc -l) + 10 + RANDOM % 30))
  step "kill -9 number $kill"
  stop_serve KILL
  start_serve --port "$PORT" --state "$STATE"
  acked_at_least $(($(ls "$WORK/acked" | wc -l) + 5))  # writes after the restart, on the ids the lost ones had
  check
done
touch "$WORK/stop"
wait $(jobs -p | grep -vx "$SERVE_PID") 2>/dev/null || true
check
stop_serve TERM
echo "crash_test: ok ($checked acknowledged writes checked after $KILLS kills)"
