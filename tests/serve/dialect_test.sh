#!/usr/bin/env bash
# `cloudlua serve --dialect ext|aws|any`: the lines it prints first, and which
# signatures each dialect setting accepts (any: both), checked with cloudlua itself
# as the client in each signing dialect.
source "$(dirname "$0")/lib.sh"

# accepts DIALECT: a call signed in DIALECT succeeds; refuses DIALECT: it is refused
# with IncompleteSignature.
accepts() {
  CLOUDLUA_DIALECT=$1 lua 'assert(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} })'
}
refuses() {
  CLOUDLUA_DIALECT=$1 lua '
    local ok, err = pcall(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
    assert(not ok and err.code == "IncompleteSignature", "expected IncompleteSignature, got " .. tostring(err.code))
    assert(err.status == 403, "status " .. tostring(err.status))'
}

step "the first lines: one per API, storage first, then the access key"
start_serve
printed=$(head -5 "$WORK/serve.out" | cut -d' ' -f1 | tr '\n' ' ')
[ "$printed" = "storage catalog cluster devops access_key_id " ] || fail "printed: $printed"
grep -Eq '^storage http://127\.0\.0\.1:[0-9]+$' "$WORK/serve.out" || fail "storage line: $(cat "$WORK/serve.out")"

step "--dialect any (the default) accepts both"
accepts ext
accepts aws
stop_serve TERM

for served in ext aws; do
  other=$([ "$served" = ext ] && echo aws || echo ext)
  step "--dialect $served accepts $served, refuses $other"
  start_serve --dialect "$served"
  accepts "$served"
  refuses "$other"
  stop_serve TERM
done

step "an unknown dialect is a usage error"
if "$CLOUDLUA" serve --dialect sigv2 >/dev/null 2>"$WORK/usage.err"; then fail "serve accepted --dialect sigv2"; fi
grep -q "sigv2" "$WORK/usage.err" || fail "the error does not name the value: $(cat "$WORK/usage.err")"
echo "dialect_test: ok"
