#!/usr/bin/env bash
# One test file that drives cloud.emulator (checkpoint, restore, fault, advance,
# tests/lua/emulator_anywhere_test.lua) passes unchanged three ways: against the
# embedded emulator, against `cloudlua serve` reached by `--endpoint URL` (cloud.emulator
# then works over serve's control plane), and so again under --record, which holds the
# file's control requests and none the library made on its own. Against an
# account (endpoints of its own, no endpoint_url), cloud.emulator stays nil.
source "$(dirname "$0")/lib.sh"
CLEAN="$(dirname "$0")/../without_cloudlua_env.sh"
FILE="$(dirname "$0")/../lua/emulator_anywhere_test.lua"

step "embedded"
"$CLEAN" "$CLOUDLUA" test "$FILE" >"$WORK/embedded.tap" 2>&1 || fail "embedded: $(cat "$WORK/embedded.tap")"

start_serve
url=$CLOUDLUA_ENDPOINT_STORAGE
step "against serve, --endpoint URL"
"$CLEAN" "$CLOUDLUA" test --endpoint "$url" "$FILE" >"$WORK/served.tap" 2>&1 || fail "served: $(cat "$WORK/served.tap")"
step "against serve, --record"
"$CLEAN" "$CLOUDLUA" test --endpoint "$url" --record "$WORK/cassette" "$FILE" >"$WORK/recorded.tap" 2>&1 ||
  fail "recorded: $(cat "$WORK/recorded.tap")"
grep -rq '_cloudlua/restore' "$WORK/cassette" || fail "the control requests are not in the recording"
# The file's own emu.advance(5) and emu.advance(-1) are recorded; the advances that make
# serve's clock follow its waiter's skipped pauses (it asked for virtual time) are not
# the file's calls.
advances=$(grep -rh '_cloudlua/advance' "$WORK/cassette" | grep -o 'seconds\\":[-0-9.]*' | sed 's/.*://' | sort | tr '\n' ' ')
[ "$advances" = "-1.0 5.0 " ] || fail "the advance requests recorded are not the file's two: $advances"

step "an account (its own endpoints, no endpoint_url): no cloud.emulator"
got=$("$CLEAN" "$CLOUDLUA" --endpoint "storage=$url" --access-key CLOUDLUAEMULATORKEY --secret-key cloudlua-emulator-secret \
  -e 'print(cloud.emulator == nil)') || fail "the account run failed"
[ "$got" = true ] || fail "cloud.emulator under an account: $got"
stop_serve TERM
echo "PASS"
