#!/usr/bin/env bash
# S3's access rules against `cloudlua serve --dialect aws --state`: boto3
# (tests/interop/boto3_access.py) sets canned ACLs and grants on objects and buckets,
# asks as an anonymous client, and tries Object Ownership; then an anonymous curl, as
# a browser would, reads the public-read object and is refused the private one with
# S3's code (AccessDenied, 403), a missing bucket NoSuchBucket (404), before and after
# serve restarts from its state. Skipped (77) when boto3 is not installed, failed then
# under CLOUDLUA_REQUIRE_INTEROP=1.
PYTHON=/usr/bin/python3  # explicitly Debian's: PATH may hold another python first
source "$(dirname "$0")/lib.sh"
require_peer "$PYTHON" python3-boto3
require_boto3 "$PYTHON" "Debian package python3-boto3"
SCRIPT="$(dirname "$0")/../interop/boto3_access.py"

# anonymous PATH STATUS [CODE|BYTES]: an unsigned curl GET of PATH answers STATUS, and
# the error CODE in its body (or those bytes).
anonymous() {
  local status
  status=$(curl -sS -o "$WORK/anon.out" -w '%{http_code}' "$CLOUDLUA_ENDPOINT_STORAGE$1")
  [ "$status" = "$2" ] || fail "anonymous GET $1: status $status, not $2: $(cat "$WORK/anon.out")"
  [ $# -lt 3 ] || grep -q -- "$3" "$WORK/anon.out" || fail "anonymous GET $1: no '$3' in: $(cat "$WORK/anon.out")"
}

# The public object readable, the private one refused, as S3 answers an anonymous GET.
anonymous_gets() {
  anonymous /access/public.txt 200 "for everyone"
  anonymous /access/private.txt 403 "<Code>AccessDenied</Code>"
  anonymous /access/no-such-key 403 "<Code>AccessDenied</Code>"
  anonymous /no-such-bucket/key 404 "<Code>NoSuchBucket</Code>"
  anonymous / 403 "<Code>AccessDenied</Code>"
}

start_serve --dialect aws --state "$WORK/state.db"
isolate_boto3
step "boto3: ACLs, grants, anonymous requests, Object Ownership"
"$PYTHON" "$SCRIPT" "$CLOUDLUA_ENDPOINT_STORAGE" || fail "the access checks failed (see above)"
step "anonymous curl"
anonymous_gets
step "anonymous curl after a restart from --state"
stop_serve TERM
start_serve --dialect aws --state "$WORK/state.db"
anonymous_gets
echo "boto3_access_test: ok"
