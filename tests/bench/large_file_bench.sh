#!/usr/bin/env bash
# One large object put and got by a whole `cloudlua -e` process, beside curl doing the
# same against the same nginx on loopback (not ctest; no test asserts a time):
#   put: cloud.storage.put_object{ file = } beside `curl -T`, nginx reading and
#        discarding the body (`return 200`, no size limit);
#   get: cloud.storage.get_object{ file = } beside `curl -o`, of a sparse file of the
#        same size in nginx's root, each written to a file in the work directory.
# Wall time and peak memory (/usr/bin/time -f %M), commands alternated round by
# round, medians and ratios printed. With BEFORE naming another build of cloudlua (the
# code before a change), it runs in the same rounds too, and its ratios are printed
# beside the first one's.
#
#   tests/bench/large_file_bench.sh [build-release/cloudlua] [rounds] [MiB]   # default 3 rounds, 1024 MiB
#   BEFORE=../old/build-release/cloudlua tests/bench/large_file_bench.sh build-release/cloudlua 7 60
#
# Needs nginx (nginx-light), curl and /usr/bin/time (`./setup.sh bench` installs them).
# The work directory (mktemp -d, or $TMPDIR) needs room for the file and two copies.
set -euo pipefail
CLOUDLUA=$(realpath "${1:-build-release/cloudlua}")
ROUNDS=${2:-${ROUNDS:-3}}
MIB=${3:-1024}
BEFORE=${BEFORE:+$(realpath "$BEFORE")}
for tool in nginx curl; do command -v "$tool" >/dev/null || { echo "install nginx-light and curl" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "install time (/usr/bin/time)" >&2; exit 2; }
source "$(dirname "$0")/lib.sh"  # WORK, removed at exit with the servers started

mkdir -p "$WORK/www/bench"
head -c "$((MIB * 1024 * 1024))" /dev/urandom >"$WORK/file"   # the body put, read from the page cache
truncate -s "${MIB}M" "$WORK/www/bench/big"                   # the object got
chmod -R a+rX "$WORK"                                          # nginx's workers run as www-data under root
PORT=$(free_port)
start_nginx "$PORT" "root $WORK/www;
    location /bench/ {
      client_max_body_size 0;
      if (\$request_method = PUT) { return 200; }
    }"
URL="http://127.0.0.1:$PORT/bench/big"

for v in $(compgen -e | grep '^CLOUDLUA_' || true); do unset "$v"; done
export CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_ENDPOINT_STORAGE="http://127.0.0.1:$PORT"
export CLOUDLUA_ACCESS_KEY_ID=bench CLOUDLUA_SECRET_ACCESS_KEY=bench-secret CLOUDLUA_REGION=jp-east-1
PUT_LUA="cloud.storage.put_object{ Bucket = 'bench', Object = 'big', file = '$WORK/file' }"
GET_LUA="cloud.storage.get_object{ Bucket = 'bench', Object = 'big', file = '$WORK/got' }"

# measure NAME COMMAND...: appends "seconds KiB" of one run to $WORK/NAME (the wall
# time to the nanosecond, around /usr/bin/time, whose own %e has two decimals).
measure() {
  local name=$1 start end; shift
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$WORK/time" "$@" >/dev/null
  end=$(date +%s%N)
  echo "$(( (end - start) / 1000 ))e-6 $(cat "$WORK/time")" >>"$WORK/$name"
  rm -f "$WORK/got"
}

for _ in $(seq "$ROUNDS"); do
  measure put.cloudlua "$CLOUDLUA" -e "$PUT_LUA"
  measure put.curl curl -sf -T "$WORK/file" "$URL"
  [ -z "$BEFORE" ] || measure put.before "$BEFORE" -e "$PUT_LUA"
  measure get.cloudlua "$CLOUDLUA" -e "$GET_LUA"
  measure get.curl curl -sf -o "$WORK/got" "$URL"
  [ -z "$BEFORE" ] || measure get.before "$BEFORE" -e "$GET_LUA"
done

echo "one ${MIB} MiB object, nginx-light on 127.0.0.1; $(nproc) cores; $ROUNDS rounds"
for what in put get; do
  ct=$(awk '{ print $1 }' "$WORK/$what.cloudlua" | median); cm=$(awk '{ print $2 }' "$WORK/$what.cloudlua" | median)
  ut=$(awk '{ print $1 }' "$WORK/$what.curl" | median); um=$(awk '{ print $2 }' "$WORK/$what.curl" | median)
  record "$what of one $MIB MiB object to nginx" cloudlua "$ct" s
  record "$what of one $MIB MiB object to nginx" curl "$ut" s
  record "peak memory, $what of one $MIB MiB object to nginx" cloudlua "$(awk -v m="$cm" 'BEGIN { print m / 1024 }')" MiB
  record "peak memory, $what of one $MIB MiB object to nginx" curl "$(awk -v m="$um" 'BEGIN { print m / 1024 }')" MiB
  awk -v w="$what" -v ct="$ct" -v cm="$cm" -v ut="$ut" -v um="$um" 'BEGIN {
    printf "  %s  cloudlua %6.3f s %6.1f MiB   curl %6.3f s %6.1f MiB   time %.2fx  memory %.2fx\n",
           w, ct, cm / 1024, ut, um / 1024, ct / ut, cm / um }'
  [ -n "$BEFORE" ] || continue
  bt=$(awk '{ print $1 }' "$WORK/$what.before" | median); bm=$(awk '{ print $2 }' "$WORK/$what.before" | median)
  awk -v w="$what" -v bt="$bt" -v bm="$bm" -v ut="$ut" -v ct="$ct" 'BEGIN {
    printf "  %s  before   %6.3f s %6.1f MiB   time %.2fx of curl; cloudlua now %.2fx of before\n",
           w, bt, bm / 1024, bt / ut, ct / bt }'
done
