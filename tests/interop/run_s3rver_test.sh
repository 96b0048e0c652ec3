#!/usr/bin/env bash
# Interop with a real S3 implementation: starts s3rver (npm, installed into
# tests/interop/node_modules by setup.sh) on loopback, then runs s3rver_test.lua through
# `cloudlua test` against it in the aws dialect, and stops s3rver again.
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
exec 3>&-
exit "$status"
