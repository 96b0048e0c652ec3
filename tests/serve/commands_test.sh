#!/usr/bin/env bash
# The sub-commands against `cloudlua serve`, reached with nothing but the one setting
# CLOUDLUA_ENDPOINT_URL (no other CLOUDLUA_* variable, HOME a fresh folder): mb, sync
# (up, --delete, --max-delete, down), cp (a file up, a wildcard down, `-` from stdin in
# parts and to stdout, bucket to bucket), ls, cat, check, rm (a key, --recursive) and
# rb --force; then aws-cli, isolated from the machine's configuration, reads back what
# each wrote (`s3 ls`, `s3api get-object`).
source "$(dirname "$0")/lib.sh"
require_peer /usr/bin/aws awscli
CLEAN="$(dirname "$0")/../without_cloudlua_env.sh"
export HOME="$WORK/home" XDG_CONFIG_HOME=""
mkdir -p "$HOME"

start_serve
URL=$CLOUDLUA_ENDPOINT_STORAGE
# A pipe into grep reads all (grep -c, not -q, which would close it early: the writer's
# broken pipe then fails the pipeline under pipefail).
# cl ARGS...: cloudlua with only the one setting.
cl() { "$CLEAN" CLOUDLUA_ENDPOINT_URL="$URL" "$CLOUDLUA" "$@"; }
# aws ARGS...: Debian's aws-cli with serve's keys and nothing of the machine's.
aws() {
  env -u AWS_PROFILE -u AWS_DEFAULT_PROFILE AWS_CONFIG_FILE="$WORK/no-aws-config" \
    AWS_SHARED_CREDENTIALS_FILE="$WORK/no-aws-credentials" AWS_EC2_METADATA_DISABLED=true AWS_PAGER= \
    AWS_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY AWS_SECRET_ACCESS_KEY=cloudlua-emulator-secret AWS_DEFAULT_REGION=jp-east-1 \
    /usr/bin/aws --endpoint-url "$URL" "$@"
}
# object BUCKET KEY: the object's body as aws-cli reads it.
object() { aws s3api get-object --bucket "$1" --key "$2" "$WORK/got" >/dev/null && cat "$WORK/got"; }
# expect_status N CMD...: runs CMD, fails unless its exit status is N.
expect_status() {
  local want=$1 got=0
  shift
  "$@" >"$WORK/out" 2>"$WORK/err" || got=$?
  [ "$got" = "$want" ] || fail "exit $got, not $want, for $*: $(cat "$WORK/out" "$WORK/err")"
}

step "mb"
cl mb s3://cmd | grep -cx 'make_bucket: cmd' >/dev/null || fail "mb printed no make_bucket line"
aws s3 ls | grep -c ' cmd$' >/dev/null || fail "aws s3 ls lists no bucket cmd"

step "sync up, then --delete held by --max-delete, then down"
mkdir -p "$WORK/site/img" "$WORK/site/logs/2026-01" "$WORK/site/logs/2026-02"
echo '<h1>hi</h1>' >"$WORK/site/index.html"
echo png >"$WORK/site/img/logo.png"
echo one >"$WORK/site/logs/2026-01/a.gz"
echo two >"$WORK/site/logs/2026-02/b.gz"
echo txt >"$WORK/site/logs/2026-02/c.txt"
cl sync "$WORK/site" s3://cmd/www | grep -c ': 5 copied' >/dev/null || fail "sync up did not copy 5"
[ "$(object cmd www/index.html)" = '<h1>hi</h1>' ] || fail "aws-cli reads www/index.html as: $(cat "$WORK/got")"
rm "$WORK/site/img/logo.png" "$WORK/site/index.html"
expect_status 1 cl sync "$WORK/site" s3://cmd/www --delete --max-delete 1
grep -q '1 deleted, 1 not deleted' "$WORK/out" || fail "sync --max-delete 1 printed: $(cat "$WORK/out")"
grep -q '^not deleted: ' "$WORK/err" || fail "no 'not deleted:' line: $(cat "$WORK/err")"
[ "$(aws s3 ls --recursive s3://cmd/www/ | wc -l)" = 4 ] || fail "after --max-delete 1 aws-cli lists: $(aws s3 ls --recursive s3://cmd/www/)"
cl sync "$WORK/site" s3://cmd/www --delete >/dev/null || fail "sync --delete failed"
[ "$(aws s3 ls --recursive s3://cmd/www/ | wc -l)" = 3 ] || fail "after --delete aws-cli lists: $(aws s3 ls --recursive s3://cmd/www/)"
expect_status 2 cl sync "$WORK/no-such-dir" s3://cmd/www --delete
grep -q NoSuchSource "$WORK/err" || fail "a missing source: $(cat "$WORK/err")"
[ "$(aws s3 ls --recursive s3://cmd/www/ | wc -l)" = 3 ] || fail "a missing source deleted something"
cl sync s3://cmd/www "$WORK/down" >/dev/null || fail "sync down failed"
cmp "$WORK/site/logs/2026-02/b.gz" "$WORK/down/logs/2026-02/b.gz" || fail "sync down: b.gz differs"

step "cp: a file up, a wildcard down, - both ways, bucket to bucket"
echo 'a file' >"$WORK/file.txt"
cl cp "$WORK/file.txt" s3://cmd/files/ >/dev/null || fail "cp up failed"
[ "$(object cmd files/file.txt)" = 'a file' ] || fail "aws-cli reads files/file.txt as: $(cat "$WORK/got")"
cl cp 's3://cmd/www/logs/2026-*/*.gz' "$WORK/logs/" >"$WORK/out" || fail "cp with a wildcard failed"
[ "$(grep -c '^download: ' "$WORK/out")" = 2 ] || fail "the wildcard copied: $(cat "$WORK/out")"
[ -f "$WORK/logs/2026-01/a.gz" ] && [ -f "$WORK/logs/2026-02/b.gz" ] && [ ! -e "$WORK/logs/2026-02/c.txt" ] ||
  fail "the wildcard wrote: $(find "$WORK/logs")"
head -c $((6 * 1024 * 1024 + 5)) /dev/urandom >"$WORK/stream.bin"
cl cp - s3://cmd/stream.bin --part-size 5M <"$WORK/stream.bin" >/dev/null || fail "cp - (stdin) failed"
aws s3api get-object --bucket cmd --key stream.bin "$WORK/stream.aws" >"$WORK/head.json" || fail "aws-cli get-object"
cmp "$WORK/stream.bin" "$WORK/stream.aws" || fail "the stdin upload differs as aws-cli reads it"
grep -q '"ETag": "\\"[0-9a-f]*-2\\""' "$WORK/head.json" || fail "stdin went up in 2 parts? $(cat "$WORK/head.json")"
cl cp s3://cmd/stream.bin - --part-size 5M | cmp - "$WORK/stream.bin" || fail "cp to - (stdout) differs"
cl cp s3://cmd/files/file.txt s3://cmd/copied.txt >/dev/null || fail "cp bucket to bucket failed"
[ "$(object cmd copied.txt)" = 'a file' ] || fail "aws-cli reads copied.txt as: $(cat "$WORK/got")"

step "ls and cat"
got=$(cl ls s3://cmd/)
grep -q 'PRE www/' <<<"$got" && grep -q ' copied.txt$' <<<"$got" || fail "ls s3://cmd/ printed: $got"
[ "$(cl ls s3://cmd/www/ --recursive | wc -l)" = 3 ] || fail "ls --recursive: $(cl ls s3://cmd/www/ --recursive)"
[ "$(cl cat s3://cmd/files/file.txt)" = 'a file' ] || fail "cat printed: $(cl cat s3://cmd/files/file.txt)"

step "check: the same, then a difference"
cl check "$WORK/site" s3://cmd/www | grep -c '^3 the same, 0 differ' >/dev/null || fail "check: $(cl check "$WORK/site" s3://cmd/www)"
echo changed >"$WORK/site/logs/2026-01/a.gz"
expect_status 1 cl check "$WORK/site" s3://cmd/www
grep -qx 'differ: logs/2026-01/a.gz' "$WORK/out" || fail "check printed: $(cat "$WORK/out")"

step "rm: a key, then --recursive"
cl rm s3://cmd/copied.txt >/dev/null || fail "rm failed"
! aws s3api head-object --bucket cmd --key copied.txt >/dev/null 2>&1 || fail "copied.txt still there for aws-cli"
cl rm s3://cmd/www/ --recursive >"$WORK/out" || fail "rm --recursive failed"
[ "$(grep -c '^delete: ' "$WORK/out")" = 3 ] || fail "rm --recursive printed: $(cat "$WORK/out")"
[ -z "$(aws s3 ls --recursive s3://cmd/www/)" ] || fail "aws-cli still lists: $(aws s3 ls --recursive s3://cmd/www/)"

step "rb --force"
cl rb s3://cmd --force | grep -cx 'remove_bucket: cmd' >/dev/null || fail "rb printed no remove_bucket line"
! aws s3 ls | grep -c ' cmd$' >/dev/null || fail "aws s3 ls still lists cmd"
echo "PASS"
