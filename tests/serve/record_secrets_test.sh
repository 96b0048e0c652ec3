#!/usr/bin/env bash
# What `--record DIR` writes and touches: no credential named in a JSON or form body
# (password, apiKey, client_secret, token, privateKey...) reaches the recording, nor a
# name added with CLOUDLUA_REDACT_FIELDS; the recording replays all the same (what is
# sent is matched as redacted); the user's own files in DIR (data.jsonl among them)
# are neither removed nor read. Runs against the embedded emulator: no serve.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
export CLOUDLUA_QUIET_EMULATOR=1

cat >calls.lua <<'EOF2'
local function send(path, content_type, body)
  local ok, r = pcall(cloud.request, { api = "storage", method = "POST", path = path,
                                       headers = { ["content-type"] = content_type }, body = body })
  print(path, ok and r.status or r.code)
end
send("/login", "application/json", '{"user":"ann","password":"pw-hunter2","apiKey":"ak-0123456789",'
  .. '"client_secret":"cs-0123456789","token":"tk-0123456789","privateKey":"pk-0123456789","pin":"pn-0123456789"}')
send("/form", "application/x-www-form-urlencoded", "user=ann&password=fp-hunter2&grant_type=password")
EOF2

mkdir tapes
printf '{"mine": "a user data file, not a recording"}\nnot even json\n' >tapes/data.jsonl
echo "notes" >tapes/notes.txt
cp tapes/data.jsonl data.before

step "a run recorded with credentials in its bodies"
CLOUDLUA_REDACT_FIELDS="pin" "$CLOUDLUA" --record tapes calls.lua >recorded.out || fail "the recording run failed: $(cat recorded.out)"
[ -s tapes/storage.jsonl ] || fail "nothing recorded: $(ls tapes)"
for secret in pw-hunter2 ak-0123456789 cs-0123456789 tk-0123456789 pk-0123456789 pn-0123456789 fp-hunter2; do
  if grep -rq -- "$secret" tapes/storage.jsonl tapes/endpoints.json; then
    fail "the recording holds $secret: $(grep -h -- "$secret" tapes/*.jsonl)"
  fi
done
grep -q 'user=ann&password=<redacted>&grant_type=password' tapes/storage.jsonl || fail "form body: $(cat tapes/storage.jsonl)"
grep -q '\\"user\\":\\"ann\\"' tapes/storage.jsonl || fail "the JSON body lost what is not secret: $(cat tapes/storage.jsonl)"

step "the user's files in the folder are left alone"
cmp -s tapes/data.jsonl data.before || fail "data.jsonl was changed or removed"
[ "$(cat tapes/notes.txt)" = notes ] || fail "notes.txt was changed or removed"

step "recorded again into the same folder: the recording's files replaced, the user's kept"
CLOUDLUA_REDACT_FIELDS="pin" "$CLOUDLUA" --record tapes calls.lua >/dev/null || fail "the second recording failed"
[ "$(grep -c . tapes/storage.jsonl)" -eq 2 ] || fail "storage.jsonl was appended to, not replaced: $(cat tapes/storage.jsonl)"
cmp -s tapes/data.jsonl data.before || fail "data.jsonl was changed or removed by a second recording"

step "the recording replays, the user's data.jsonl not read as a recording"
CLOUDLUA_REDACT_FIELDS="pin" "$CLOUDLUA" --replay tapes calls.lua >replayed.out 2>replayed.err ||
  fail "the replay failed: $(cat replayed.out replayed.err)"
cmp -s recorded.out replayed.out || fail "replayed output differs: $(diff recorded.out replayed.out)"
echo "ok"
