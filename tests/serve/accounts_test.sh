#!/usr/bin/env bash
# Accounts: one serve holds several, each a key pair owning its buckets. Bucket names
# are global: another account's name is BucketAlreadyExists, its bucket AccessDenied,
# and ListBuckets lists the caller's own, unless an ACL grants another account in
# (a grant names an account of the serve by its canonical id). Accounts come from --account KEY:SECRET,
# from --accounts FILE and from the control plane (create_account, delete_account,
# accounts); the built-in key is the account 000000000000. With --state they are kept
# across a restart, and so are their clusters, snapshots and firewall groups, each account's own.
# Driven through aws-cli, as a team would.
AWS=/usr/bin/aws  # explicitly Debian's: PATH may hold another aws first
source "$(dirname "$0")/lib.sh"
require_peer "$AWS" awscli

for v in $(compgen -e | grep '^AWS_' || true); do unset "$v"; done
export HOME="$WORK" AWS_CONFIG_FILE="$WORK/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER="" AWS_DEFAULT_REGION=jp-east-1
printf '[default]\ns3 =\n  addressing_style = path\n' >"$AWS_CONFIG_FILE"
PORT=$(free_ports 4)
url="http://127.0.0.1:$PORT"
# as KEY SECRET aws ARGS...: aws-cli signing with that account's key pair.
as() {
  local key=$1 secret=$2
  shift 2
  AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret "$AWS" --endpoint-url "$url" --output text "$@"
}
alice() { as CLOUDLUAEMULATORKEY cloudlua-emulator-secret "$@"; }
bob() { as BOBKEY bob-secret-0123456789 "$@"; }
carol() { as CAROLKEY carol-secret-0123456789 "$@"; }
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

printf '# the team\nCAROLKEY:carol-secret-0123456789\n\n' >"$WORK/accounts"
chmod 600 "$WORK/accounts"
start_serve --dialect aws --port "$PORT" --state "$WORK/state.db" --account BOBKEY:bob-secret-0123456789 \
  --accounts "$WORK/accounts"

step "each account owns its buckets; names are global"
alice s3 mb s3://alices >/dev/null
bob s3 mb s3://bobs >/dev/null
carol s3 mb s3://carols >/dev/null
[ "$(bob s3 ls | awk '{print $3}' | tr '\n' ' ')" = "bobs " ] || fail "bob lists: $(bob s3 ls)"
[ "$(alice s3 ls | awk '{print $3}' | sort | tr '\n' ' ')" = "alices demo-bucket " ] || fail "alice lists: $(alice s3 ls)"
bob s3api create-bucket --bucket alices >"$WORK/taken.out" 2>&1 && fail "bob created alice's bucket name"
grep -q BucketAlreadyExists "$WORK/taken.out" || fail "another account's name: $(cat "$WORK/taken.out")"
alice s3api create-bucket --bucket alices >"$WORK/own.out" 2>&1 && fail "alice re-created her bucket"
grep -q BucketAlreadyOwnedByYou "$WORK/own.out" || fail "one's own name: $(cat "$WORK/own.out")"
echo bytes >"$WORK/f"
alice s3 cp --only-show-errors "$WORK/f" s3://alices/f
for try in "s3 ls s3://alices/" "s3 cp s3://alices/f $WORK/g" "s3 cp $WORK/f s3://alices/g" "s3 rb s3://alices"; do
  # shellcheck disable=SC2086
  bob $try >"$WORK/denied.out" 2>&1 && fail "bob could: aws $try"
  grep -q 'AccessDenied\|403' "$WORK/denied.out" || fail "bob's aws $try: $(cat "$WORK/denied.out")"
done
[ "$(alice s3 ls s3://alices/ | awk '{print $4}')" = f ] || fail "alice's bucket changed: $(alice s3 ls s3://alices/)"
bob s3api copy-object --bucket bobs --key stolen --copy-source alices/f >"$WORK/copy.out" 2>&1 &&
  fail "bob copied from alice's bucket"
grep -q AccessDenied "$WORK/copy.out" || fail "a copy from another account's bucket: $(cat "$WORK/copy.out")"

step "an ACL lets another account in: bob, granted READ on alice's bucket, lists it"
bob_id=$(bob s3api list-buckets --query Owner.ID)
[ ${#bob_id} = 64 ] || fail "bob's canonical id: $bob_id"
[ "$bob_id" != "$(alice s3api list-buckets --query Owner.ID)" ] || fail "bob and alice share a canonical id"
alice s3api put-bucket-acl --bucket alices --grant-read "id=$bob_id" || fail "alice could not grant bob READ"
[ "$(bob s3 ls s3://alices/ | awk '{print $4}')" = f ] || fail "bob, granted READ, lists: $(bob s3 ls s3://alices/ 2>&1)"
bob s3 cp "$WORK/f" s3://alices/g >"$WORK/write.out" 2>&1 && fail "bob, granted READ only, wrote to alice's bucket"
grep -q AccessDenied "$WORK/write.out" || fail "bob's write with READ only: $(cat "$WORK/write.out")"
alice s3api put-bucket-acl --bucket alices --acl private
bob s3 ls s3://alices/ >"$WORK/revoked.out" 2>&1 && fail "bob still lists alice's bucket after the grant went"
grep -q AccessDenied "$WORK/revoked.out" || fail "bob after the grant went: $(cat "$WORK/revoked.out")"
nobody=$(printf 'nobody' | sha256sum | cut -c1-64)
alice s3api put-bucket-acl --bucket alices --grant-read "id=$nobody" >"$WORK/nobody.out" 2>&1 &&
  fail "a grant to an id no account has was taken"
grep -q 'InvalidArgument' "$WORK/nobody.out" || fail "a grant to an unknown id: $(cat "$WORK/nobody.out")"

step "clusters, snapshots and firewall groups are each account's own, names too"
# as_lua KEY SECRET FILE: the script FILE run by cloudlua signing with that account's key pair.
as_lua() { CLOUDLUA_ENDPOINT_URL=$url CLOUDLUA_ACCESS_KEY_ID=$1 CLOUDLUA_SECRET_ACCESS_KEY=$2 "$CLOUDLUA" "$3" || fail "$3 as $1 failed (above)"; }
carol_id=$(ctl accounts | python3 -c 'import json,sys; print({a["access_key_id"]: a["account_id"] for a in json.load(sys.stdin)}["CAROLKEY"])')
cat >"$WORK/carol.lua" <<EOF
local ok, err = pcall(cloud.cluster.get_snapshot, { SnapshotName = "snap-1" })
assert(not ok and err.code == "SnapshotNotFound", "carol sees alice's snap-1: " .. tostring(err))
cloud.emulator.seed{ snapshots = { { name = "snap-1", description = "carol's" } },
                     firewall_groups = { { firewallGroupName = "carols-web" } } }
local c = cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "same-name" } }
assert(c.cluster.nrn:find(":$carol_id:cluster:", 1, true), "the nrn names carol's account: " .. c.cluster.nrn)
local s = cloud.emulator.state()
assert(#s.snapshots == 1 and s.snapshots[1].description == "carol's", "carol's state: " .. cloud.pretty(s.snapshots))
assert(#s.firewall_groups == 1 and #s.clusters == 1, "carol's state: " .. cloud.pretty(s))
EOF
cat >"$WORK/alice.lua" <<'EOF'
assert(cloud.cluster.get_snapshot{ SnapshotName = "snap-1" }.snapshot.description == "nightly", "alice's snap-1")
local ok, err = pcall(cloud.devops.get_firewall_group, { FirewallGroupName = "carols-web" })
assert(not ok and err.code:find("NotFound"), "alice sees carol's firewall group: " .. tostring(err))
local c = cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "same-name" } }
assert(c.cluster.nrn:find(":000000000000:cluster:", 1, true), "the nrn names alice's account: " .. c.cluster.nrn)
EOF
as_lua CAROLKEY carol-secret-0123456789 "$WORK/carol.lua"
as_lua CLOUDLUAEMULATORKEY cloudlua-emulator-secret "$WORK/alice.lua"
ctl checkpoint '{"name":"accounts"}' >/dev/null
echo 'cloud.emulator.seed{ snapshots = { { name = "snap-later" } } }' >"$WORK/later.lua"
as_lua CAROLKEY carol-secret-0123456789 "$WORK/later.lua"
ctl restore '{"name":"accounts"}' >/dev/null
cat >"$WORK/restored.lua" <<'EOF'
local s = cloud.emulator.state()
assert(#s.snapshots == 1 and s.snapshots[1].description == "carol's", "carol's after a restore: " .. cloud.pretty(s.snapshots))
EOF
as_lua CAROLKEY carol-secret-0123456789 "$WORK/restored.lua"

step "the control plane: accounts listed, created, deleted"
ctl accounts >"$WORK/accounts.json"
python3 - "$WORK/accounts.json" <<'PY' || fail "accounts: $(cat "$WORK/accounts.json")"
import json, sys
accounts = json.load(open(sys.argv[1]))
keys = {a["access_key_id"]: a["account_id"] for a in accounts}
assert keys["CLOUDLUAEMULATORKEY"] == "000000000000", keys
assert set(keys) == {"CLOUDLUAEMULATORKEY", "BOBKEY", "CAROLKEY"}, keys
assert all(len(i) == 12 and i.isdigit() for i in keys.values()), keys
assert not any("secret" in k for a in accounts for k in a), accounts
PY
made=$(ctl create_account)
dave_key=$(field access_key_id <<<"$made")
dave_secret=$(field secret_access_key <<<"$made")
as "$dave_key" "$dave_secret" s3 mb s3://daves >/dev/null || fail "the created account cannot create a bucket"
# ctl_status OPERATION JSON: the control request's HTTP status (its answer in $WORK/ctl.out).
ctl_status() {
  curl -sS -o "$WORK/ctl.out" -w '%{http_code}' --aws-sigv4 "aws:amz:jp-east-1:s3" \
    --user "CLOUDLUAEMULATORKEY:cloudlua-emulator-secret" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    -X POST --data-binary "$2" "$url/_cloudlua/$1"
}
[ "$(ctl_status create_account '{"access_key_id":"BOBKEY","secret_access_key":"another-secret-123"}')" = 400 ] ||
  fail "a second account with BOBKEY: $(cat "$WORK/ctl.out")"
grep -q AccountExists "$WORK/ctl.out" || fail "a second account with BOBKEY: $(cat "$WORK/ctl.out")"
[ "$(ctl_status delete_account '{"access_key_id":"BOBKEY"}')" = 400 ] ||
  fail "an account that owns a bucket was deleted: $(cat "$WORK/ctl.out")"
grep -q AccountNotEmpty "$WORK/ctl.out" || fail "deleting an account that owns a bucket: $(cat "$WORK/ctl.out")"
made=$(ctl create_account)
erin_key=$(field access_key_id <<<"$made")
echo 'cloud.emulator.seed{ firewall_groups = { { firewallGroupName = "erins" } } }' >"$WORK/erin.lua"
as_lua "$erin_key" "$(field secret_access_key <<<"$made")" "$WORK/erin.lua"
[ "$(ctl_status delete_account "{\"access_key_id\":\"$erin_key\"}")" = 400 ] ||
  fail "an account that owns a firewall group was deleted: $(cat "$WORK/ctl.out")"
grep -q AccountNotEmpty "$WORK/ctl.out" || fail "deleting an account that owns a firewall group: $(cat "$WORK/ctl.out")"
bob s3 rb s3://bobs >/dev/null
ctl delete_account '{"access_key_id":"BOBKEY"}' >/dev/null
bob s3 ls >"$WORK/gone.out" 2>&1 && fail "a deleted account's key still works"
grep -q InvalidAccessKeyId "$WORK/gone.out" || fail "a deleted account's key: $(cat "$WORK/gone.out")"

step "--state keeps the accounts: a restart knows dave and not bob"
stop_serve TERM
start_serve --dialect aws --port "$PORT" --state "$WORK/state.db"
as "$dave_key" "$dave_secret" s3 ls | grep -q ' daves$' || fail "dave's bucket after a restart: $(as "$dave_key" "$dave_secret" s3 ls 2>&1)"
bob s3 ls >/dev/null 2>&1 && fail "bob's key came back after a restart"
carol s3 ls | grep -q ' carols$' || fail "carol (from the file) after a restart"
cat >"$WORK/carol_again.lua" <<'EOF'
assert(cloud.cluster.get_snapshot{ SnapshotName = "snap-1" }.snapshot.description == "carol's", "carol's snap-1")
assert(cloud.devops.get_firewall_group{ FirewallGroupName = "carols-web" }, "carol's firewall group")
assert(cloud.cluster.get_cluster{ ClusterName = "same-name" }.cluster.nrn:find(os.getenv("CAROL_ID"), 1, true))
EOF
CAROL_ID=$carol_id as_lua CAROLKEY carol-secret-0123456789 "$WORK/carol_again.lua"
alice s3 ls s3://alices/ | grep -q ' f$' || fail "alice's object after a restart"
stop_serve TERM

step "an --account that cannot be one is refused, saying why"
"$CLOUDLUA" serve --account no-colon >"$WORK/bad.out" 2>&1 && fail "serve took --account no-colon"
grep -q 'KEY:SECRET' "$WORK/bad.out" || fail "--account no-colon: $(cat "$WORK/bad.out")"
echo PASS
