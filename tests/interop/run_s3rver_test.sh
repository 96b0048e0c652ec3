#!/usr/bin/env bash
# Interop with a real S3 implementation: starts s3rver (npm, installed into
# tests/interop/node_modules by setup.sh) on loopback, then runs s3rver_test.lua through
# `cloudlua test` against it in the aws dialect; then `cloudlua ls` reaches it through
# the one setting (--endpoint URL, --endpoint-url, AWS_ENDPOINT_URL); and stops s3rver again.
#
#   tests/interop/run_s3rver_test.sh path/to/cloudlua [--filter TEXT ...]
#
# Without node or s3rver it exits 77 (ctest: skipped), unless CLOUDLUA_REQUIRE_INTEROP=1
# (set by ./setup.sh test), when a missing peer is a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cloudlua=${1:?usage: run_s3rver_test.sh path/to/cloudlua [cloudlua test options]}
shift

missing() {
  echo "s3rver interop: $1" >&2
  if [ "${CLOUDLUA_REQUIRE_INTEROP:-}" = 1 ]; then exit 1; fi
  exit 77
}
command -v node >/dev/null || missing "node not found (apt-get install nodejs npm, then ./setup.sh)"
[ -f "$here/node_modules/s3rver/package.json" ] || missing "s3rver not installed (./setup.sh installs it: npm ci --prefix tests/interop)"

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# s3rver's standard input is a pipe kept open by this shell: if the shell dies, s3rver ends.
mkfifo "$work/stdin"
node "$here/start_s3rver.js" "$work/data" <"$work/stdin" >"$work/address" 2>"$work/log" &
server_pid=$!
exec 3>"$work/stdin"

url=
for _ in $(seq 100); do
  url=$(sed -n 's/^s3rver //p' "$work/address")
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "s3rver interop: s3rver did not start within 10 s" >&2; cat "$work/log" >&2; exit 1; }

echo "# s3rver $(node -p "require('$here/node_modules/s3rver/package.json').version") at $url"
status=0
"$cloudlua" test "$here/s3rver_test.lua" --endpoint "storage=$url" --dialect aws \
  --access-key S3RVER --secret-key S3RVER --region us-east-1 "$@" || status=$?

# One setting reaches any S3 server: --endpoint URL (and aws-cli's spellings of it,
# --endpoint-url and AWS_ENDPOINT_URL) where no serve answers discovery is taken as the
# storage API's endpoint in the aws dialect (said under --debug); another API then
# fails with one line saying how to give its endpoint, and cloud.emulator says there is none.
failed() { echo "not ok - one setting against s3rver: $*"; status=1; }
keys=(CLOUDLUA_ACCESS_KEY_ID=S3RVER CLOUDLUA_SECRET_ACCESS_KEY=S3RVER CLOUDLUA_REGION=us-east-1)
with_keys() { env "${keys[@]}" "$cloudlua" "$@"; }
with_keys mb s3://one-setting --endpoint "storage=$url" --dialect aws >/dev/null 2>"$work/err" ||
  failed "mb with --endpoint storage=URL: $(cat "$work/err")"
for how in "--endpoint $url" "--endpoint-url $url" "AWS_ENDPOINT_URL=$url" "CLOUDLUA_ENDPOINT_URL=$url"; do
  case $how in
    --*) got=$(with_keys ls $how 2>&1) || failed "ls $how: $got" ;;
    *) got=$(env "$how" "${keys[@]}" "$cloudlua" ls 2>&1) || failed "$how ls: $got" ;;
  esac
  [[ "$got" == *one-setting* ]] || failed "ls with $how does not list s3rver's bucket: $got"
done
got=$(with_keys --debug --endpoint "$url" ls 2>&1 >/dev/null) || failed "--debug ls: $got"
[[ "$got" == *"$url is not a cloudlua serve"*"storage API's endpoint"*aws* ]] || failed "--debug does not say so: $got"
got=$(with_keys --endpoint "$url" -e 'cloud.cluster.update_snapshot{ SnapshotName = "x", snapshot = {} }' 2>&1) &&
  failed "a cluster call without its endpoint succeeded: $got"
line=$(echo "$got" | grep 'cluster API' || true)
[[ "$line" == *"$url is an S3 server, not a cloudlua serve"*"--endpoint cluster=URL"* ]] ||
  failed "the cluster call's error is not the one line that says how: $got"
got=$(with_keys --endpoint "$url" -e 'cloud.emulator.reset()' 2>&1) && failed "cloud.emulator.reset() on s3rver succeeded: $got"
[[ "$got" == *"$url is an S3 server, not a cloudlua serve"* ]] || failed "cloud.emulator on s3rver: $got"
[ "$status" -ne 0 ] || echo "ok - one setting against s3rver: --endpoint, --endpoint-url, AWS_ENDPOINT_URL, another API"
exec 3>&-
exit "$status"
