#!/usr/bin/env bash
# The folders of `cloudlua serve --state FILE`. The checkpoints folder, FILE.snapshots/:
# made by serve (mode 0700) at start; a link planted in it never leads a removal
# elsewhere; one writable by others or a symbolic link refused at start (exit status 1,
# UnsafeFolder); a checkpoint that fails answers the redacted 500 InternalError, the
# detail (the server's path) on serve's stderr only. The folder of bytes, FILE.bytes/,
# under the same rule: a symbolic link or a folder others can write refused at start,
# the files there (or behind the link) untouched.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/platform.db"
SIGN=(--aws-sigv4 "aws:amz:jp-east-1:s3" --user "CLOUDLUAEMULATORKEY:cloudlua-emulator-secret"
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")

# refused_at_start WHY [STATE]: serve --state on STATE ($STATE) exits 1 with UnsafeFolder and WHY.
refused_at_start() {
  local status=0
  timeout 20 "$CLOUDLUA" serve --state "${2:-$STATE}" >"$WORK/refused.out" 2>"$WORK/refused.err" || status=$?
  [ "$status" -eq 1 ] || fail "serve should refuse the checkpoints folder (exit 1), got $status: $(cat "$WORK/refused.err")"
  grep -q "UnsafeFolder" "$WORK/refused.err" || fail "no UnsafeFolder: $(cat "$WORK/refused.err")"
  grep -q "$1" "$WORK/refused.err" || fail "the reason '$1' is not given: $(cat "$WORK/refused.err")"
}

step "serve makes the checkpoints folder at start, mode 0700"
start_serve --state "$STATE"
[ "$(stat -c %a "$STATE.snapshots")" = 700 ] || fail "mode $(stat -c %a "$STATE.snapshots")"

step "a link planted at .NAME.new: taking NAME removes the link, never the files it points to"
mkdir "$WORK/victim"
echo precious >"$WORK/victim/file"
ln -s "$WORK/victim" "$STATE.snapshots/.night.new"
status=$(curl -sS -o "$WORK/ctl.out" -w '%{http_code}' "${SIGN[@]}" -X POST --data-binary '{"name": "night"}' \
  "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/checkpoint")
[ "$(cat "$WORK/victim/file" 2>/dev/null)" = precious ] || fail "the planted link's target lost its files: $(ls -la "$WORK/victim")"
[ "$status" = 200 ] || fail "the checkpoint should be taken, got $status: $(cat "$WORK/ctl.out")"
[ -d "$STATE.snapshots/night" ] && [ ! -L "$STATE.snapshots/night" ] || fail "no checkpoint night: $(ls -la "$STATE.snapshots")"

step "a checkpoint that fails: 500 InternalError, no path in the answer, the detail on stderr"
mkdir -p "$STATE.snapshots/.broken.new/bytes/too/deep"  # cannot be cleared away: the checkpoint fails
status=$(curl -sS -o "$WORK/ctl.out" -w '%{http_code}' "${SIGN[@]}" -X POST --data-binary '{"name": "broken"}' \
  "$CLOUDLUA_ENDPOINT_STORAGE/_cloudlua/checkpoint")
[ "$status" = 500 ] || fail "a failed checkpoint should answer 500, got $status: $(cat "$WORK/ctl.out")"
grep -q "<Code>InternalError</Code>" "$WORK/ctl.out" || fail "not InternalError: $(cat "$WORK/ctl.out")"
if grep -q "$WORK" "$WORK/ctl.out"; then fail "the answer shows the server's path: $(cat "$WORK/ctl.out")"; fi
grep -q "checkpoint: .*$STATE.snapshots/.broken.new" "$WORK/serve.err" || fail "no detail on stderr: $(cat "$WORK/serve.err")"
stop_serve TERM

step "a checkpoints folder others can write is refused at start"
rm -rf "$STATE.snapshots"
mkdir -m 0777 "$STATE.snapshots"
refused_at_start "mode 0777"

step "a checkpoints folder that is a symbolic link is refused at start"
rmdir "$STATE.snapshots"
mkdir "$WORK/elsewhere"
ln -s "$WORK/elsewhere" "$STATE.snapshots"
refused_at_start "symbolic link"

step "a folder of bytes that is a symbolic link is refused at start, the files behind it untouched"
BYTES_STATE="$WORK/bytes.db"
mkdir "$WORK/docs"
echo mine >"$WORK/docs/letter"
ln -s "$WORK/docs" "$BYTES_STATE.bytes"
refused_at_start "symbolic link" "$BYTES_STATE"
grep -q "the folder of bytes" "$WORK/refused.err" || fail "the folder is not named: $(cat "$WORK/refused.err")"
[ "$(cat "$WORK/docs/letter" 2>/dev/null)" = mine ] || fail "the files behind the link were touched: $(ls -la "$WORK/docs")"

step "a folder of bytes others can write is refused at start, its files untouched"
rm "$BYTES_STATE.bytes"
mkdir -m 0777 "$BYTES_STATE.bytes"
echo planted >"$BYTES_STATE.bytes/not-named"
refused_at_start "mode 0777" "$BYTES_STATE"
[ "$(cat "$BYTES_STATE.bytes/not-named" 2>/dev/null)" = planted ] || fail "a file of the folder was removed"
echo "ok"
