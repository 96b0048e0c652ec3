#!/usr/bin/env bash
# `cloudlua serve --host`: beyond loopback it needs credentials of the user's own (the
# built-in ones are public and refused there) and says on stderr, in one line, what
# it exposes, never the secret; on loopback (127.0.0.0/8, ::1, localhost) the
# built-in credentials still do. A key without its secret is refused anywhere.
source "$(dirname "$0")/lib.sh"
unset CLOUDLUA_ACCESS_KEY_ID CLOUDLUA_SECRET_ACCESS_KEY
export SERVE_LIMIT=20
OWN_KEY=own-key-id OWN_SECRET=own-secret-0123456789

# refused CODE ARGS...: `serve ARGS` exits 1 at once with CODE on stderr, nothing served.
refused() {
  local code=$1 status=0
  shift
  timeout 10 "$CLOUDLUA" serve "$@" >"$WORK/refused.out" 2>"$WORK/refused.err" || status=$?
  [ "$status" -eq 1 ] || fail "serve $*: status $status: $(cat "$WORK/refused.err")"
  grep -q "$code" "$WORK/refused.err" || fail "serve $*: no $code in: $(cat "$WORK/refused.err")"
  [ ! -s "$WORK/refused.out" ] || fail "serve $* printed endpoints"
}

step "beyond loopback, the built-in credentials are refused, given or not"
refused PublicCredentials --host 0.0.0.0
refused PublicCredentials --host 0.0.0.0 --access-key CLOUDLUAEMULATORKEY --secret-key cloudlua-emulator-secret
refused PublicCredentials --host 0.0.0.0 --access-key "$OWN_KEY" --secret-key cloudlua-emulator-secret
refused PublicCredentials --host 0.0.0.0 --access-key "$OWN_KEY" --secret-key "$OWN_SECRET" \
  --account CLOUDLUAEMULATORKEY:cloudlua-emulator-secret
CLOUDLUA_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY CLOUDLUA_SECRET_ACCESS_KEY=cloudlua-emulator-secret \
  refused PublicCredentials --host 0.0.0.0
grep -q "built-in test credentials are public" "$WORK/refused.err" || fail "message: $(cat "$WORK/refused.err")"

step "a key without its secret is refused, and two places are not mixed"
refused MissingCredentials --access-key "$OWN_KEY"
CLOUDLUA_SECRET_ACCESS_KEY=$OWN_SECRET refused MissingCredentials
CLOUDLUA_SECRET_ACCESS_KEY=$OWN_SECRET refused MissingCredentials --access-key "$OWN_KEY"
grep -q -- "--access-key is set but --secret-key is not" "$WORK/refused.err" || fail "message: $(cat "$WORK/refused.err")"

step "beyond loopback with credentials of one's own: one line on stderr says what is exposed"
CLOUDLUA_ACCESS_KEY_ID=$OWN_KEY CLOUDLUA_SECRET_ACCESS_KEY=$OWN_SECRET start_serve --host 0.0.0.0
[ "$(wc -l <"$WORK/serve.err")" -eq 1 ] || fail "stderr: $(cat "$WORK/serve.err")"
line=$(cat "$WORK/serve.err")
for part in "0.0.0.0" "beyond loopback" "access key id $OWN_KEY" "ext or aws" "the control plane (/_cloudlua/"; do
  [[ "$line" == *"$part"* ]] || fail "'$part' not in: $line"
done
while read -r api url; do
  [ "$api" = access_key_id ] && continue
  [[ "$line" == *"$api :${url##*:}"* ]] || fail "$api ${url##*:} not in: $line"
done < <(head -5 "$WORK/serve.out")
[[ "$line" != *"$OWN_SECRET"* ]] || fail "the secret is shown: $line"
CLOUDLUA_ACCESS_KEY_ID=$OWN_KEY CLOUDLUA_SECRET_ACCESS_KEY=$OWN_SECRET \
  lua 'assert(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} })'
lua '
  local ok, err = pcall(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
  assert(not ok and err.code == "InvalidAccessKeyId", "the built-in key was not refused: " .. tostring(err.code))'
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "status $SERVE_STATUS"

for host in 127.0.0.2 localhost ::1; do
  unset CLOUDLUA_ACCESS_KEY_ID CLOUDLUA_SECRET_ACCESS_KEY  # start_serve sets them for the client
  step "--host $host is loopback: the built-in credentials serve, nothing said"
  start_serve --host "$host"
  [ ! -s "$WORK/serve.err" ] || fail "stderr: $(cat "$WORK/serve.err")"
  lua 'assert(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} })'
  stop_serve TERM
  [ "$SERVE_STATUS" -eq 0 ] || fail "status $SERVE_STATUS"
done
echo "host_test: ok"
