#!/usr/bin/env bash
# Worlds: `cloudlua test --endpoint URL` runs each file in a world of its own on a shared
# serve. Two runs at once of a file that creates a fixed bucket name and calls
# cloud.emulator.reset() (tests/lua/shared_serve_test.lua; the first run has it twice,
# under -j 2) both pass, and an aws-cli
# user's bucket in the default world is untouched by either; the worlds they ran in are
# gone afterwards, unless --keep-worlds keeps them. A world made through the control
# plane answers with a key pair of its own: what is signed with it lands there. With
# --state, a world made with keep comes back after a restart; deleting it removes its files.
AWS=/usr/bin/aws  # explicitly Debian's: PATH may hold another aws first
source "$(dirname "$0")/lib.sh"
require_peer "$AWS" awscli
CLEAN="$(dirname "$0")/../without_cloudlua_env.sh"
FILE="$(dirname "$0")/../lua/shared_serve_test.lua"

for v in $(compgen -e | grep '^AWS_' || true); do unset "$v"; done
export HOME="$WORK" AWS_CONFIG_FILE="$WORK/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
export AWS_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY AWS_SECRET_ACCESS_KEY=cloudlua-emulator-secret
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER="" AWS_DEFAULT_REGION=jp-east-1
printf '[default]\ns3 =\n  addressing_style = path\n' >"$AWS_CONFIG_FILE"

PORT=$(free_ports 4)
start_serve --dialect aws --port "$PORT"
url="http://127.0.0.1:$PORT"
aws() { "$AWS" --endpoint-url "$url" --output text "$@"; }

step "an aws-cli user's bucket in the default world"
aws s3 mb s3://users-bucket >/dev/null
echo "the user's bytes" >"$WORK/user.txt"
aws s3 cp --only-show-errors "$WORK/user.txt" s3://users-bucket/user.txt

step "two runs of one file at once, each in a world of its own"
"$CLEAN" "$CLOUDLUA" test --endpoint "$url" -j 2 "$FILE" "$FILE" >"$WORK/run1.tap" 2>&1 &
first=$!
"$CLEAN" "$CLOUDLUA" test --endpoint "$url" "$FILE" >"$WORK/run2.tap" 2>&1 &
second=$!
wait "$first" || fail "the first run failed: $(cat "$WORK/run1.tap")"
wait "$second" || fail "the second run failed: $(cat "$WORK/run2.tap")"

step "the user's bucket and object are as they were"
aws s3 ls s3://users-bucket/ | grep -q ' user.txt$' || fail "the user's object is gone: $(aws s3 ls s3://users-bucket/ 2>&1)"
aws s3 cp --only-show-errors s3://users-bucket/user.txt "$WORK/back.txt"
cmp "$WORK/user.txt" "$WORK/back.txt" || fail "the user's object changed"
buckets=$(aws s3 ls | awk '{print $3}' | sort | tr '\n' ' ')
[ "$buckets" = "demo-bucket users-bucket " ] || fail "the default world's buckets: $buckets"

step "the runs' worlds are gone; --keep-worlds keeps them"
worlds=$(ctl worlds) || fail "no list of worlds"
[ "$worlds" = '["default"]' ] || fail "worlds left behind: $worlds"
"$CLEAN" "$CLOUDLUA" test --endpoint "$url" --keep-worlds "$FILE" >"$WORK/kept.tap" 2>&1 || fail "kept: $(cat "$WORK/kept.tap")"
grep -q 'world .* kept' "$WORK/kept.tap" || fail "the kept world is not named: $(cat "$WORK/kept.tap")"
[ "$(ctl worlds | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2 ] || fail "the world was not kept: $(ctl worlds)"

step "a world made by hand: its key pair reaches it, and only it"
made=$(ctl create_world)
key=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["access_key_id"])' <<<"$made")
secret=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["secret_access_key"])' <<<"$made")
AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret aws s3 mb s3://users-bucket >/dev/null ||
  fail "the world has its own bucket names, yet users-bucket was refused"
got=$(AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret aws s3 ls | awk '{print $3}' | tr '\n' ' ')
[ "$got" = "demo-bucket users-bucket " ] || fail "the new world (the fixture set, and its own users-bucket) lists: $got"
AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret aws s3 ls s3://users-bucket/ | grep -q user.txt &&
  fail "the new world sees the default world's object"
step "deleting a world: its key is refused afterwards; the default world cannot be deleted"
status=$(curl -sS -o "$WORK/del.out" -w '%{http_code}' --aws-sigv4 "aws:amz:jp-east-1:s3" --user "$key:$secret" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X POST --data-binary '{}' "$url/_cloudlua/delete_world")
[ "$status" = 200 ] || fail "delete_world: $status $(cat "$WORK/del.out")"
AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret aws s3 ls >"$WORK/gone.out" 2>&1 &&
  fail "the deleted world's key still works"
grep -q InvalidAccessKeyId "$WORK/gone.out" || fail "the deleted world's key: $(cat "$WORK/gone.out")"
status=$(curl -sS -o "$WORK/del.out" -w '%{http_code}' --aws-sigv4 "aws:amz:jp-east-1:s3" \
  --user "CLOUDLUAEMULATORKEY:cloudlua-emulator-secret" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
  -X POST --data-binary '{}' "$url/_cloudlua/delete_world")
[ "$status" = 400 ] || fail "deleting the default world: $status $(cat "$WORK/del.out")"
aws s3 ls s3://users-bucket/ | grep -q ' user.txt$' || fail "the user's object is gone after the deletions"
stop_serve TERM

step "--state: a world made with keep comes back after a restart, with its key and buckets"
start_serve --dialect aws --port "$PORT" --state "$WORK/state.db"
made=$(ctl create_world '{"keep": true}')
key=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["access_key_id"])' <<<"$made")
secret=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["secret_access_key"])' <<<"$made")
name=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["world"])' <<<"$made")
AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret aws s3 mb s3://kept-bucket >/dev/null
ctl create_world >/dev/null  # not kept: gone with the process
stop_serve TERM
[ -f "$WORK/state.db.worlds/$name.db" ] || fail "the kept world has no database: $(ls -la "$WORK/state.db.worlds")"
start_serve --dialect aws --port "$PORT" --state "$WORK/state.db"
[ "$(ctl worlds)" = "[\"default\",\"$name\"]" ] || fail "worlds after a restart: $(ctl worlds)"
got=$(AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret aws s3 ls | awk '{print $3}' | tr '\n' ' ')
[ "$got" = "demo-bucket kept-bucket " ] || fail "the kept world after a restart lists: $got"
curl -sS -o /dev/null --aws-sigv4 "aws:amz:jp-east-1:s3" --user "$key:$secret" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X POST --data-binary '{}' "$url/_cloudlua/delete_world"
[ ! -e "$WORK/state.db.worlds/$name.db" ] && [ ! -e "$WORK/state.db.worlds/$name.db.bytes" ] ||
  fail "the deleted world's files are left: $(ls -la "$WORK/state.db.worlds")"
stop_serve TERM
echo "PASS"
