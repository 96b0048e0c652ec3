#!/usr/bin/env bash
# File transfers against `cloudlua serve`, measured side by side (not ctest; no test
# asserts a time): cloud.storage.upload_file / download_file beside aws-cli's
# `aws s3 cp` and boto3's upload_file / download_file, all with the same part size
# (8 MiB) and concurrency (8). For each: wall time and peak memory (/usr/bin/time -v,
# "Maximum resident set size"). Commands alternate round by round; medians and the
# ratios to cloudlua are printed. Every download is compared with the file once.
#
#   tests/bench/transfer_bench.sh [build-release/cloudlua] [rounds]
#   SIZE_MIB=64 tests/bench/transfer_bench.sh build-release/cloudlua 1   # a quick run
#
# Use a Release build (cmake -B build-release -DCMAKE_BUILD_TYPE=Release). Needs
# /usr/bin/time, Debian's awscli and python3-boto3 (either is skipped when missing).
# SIZE_MIB defaults to 1024 (1 GiB); the file, and the objects in serve's memory,
# need about four times that.
set -euo pipefail
BIN=$(realpath "${1:-build-release/cloudlua}")
ROUNDS=${2:-${ROUNDS:-3}}
SIZE_MIB=${SIZE_MIB:-1024}
PART_MIB=8
CONCURRENCY=8
source "$(dirname "$0")/../serve/lib.sh" "$BIN"

source "$(dirname "$0")/lib.sh"

start_serve
export CLOUDLUA_CONFIG_FILE=/dev/null SRC="$WORK/src.bin" BACK="$WORK/back.bin"
isolate_aws_cli
cat >"$AWS_CONFIG_FILE" <<CONFIG
[default]
region = jp-east-1
s3 =
  addressing_style = path
  multipart_threshold = ${PART_MIB}MB
  multipart_chunksize = ${PART_MIB}MB
  max_concurrent_requests = $CONCURRENCY
CONFIG

"$BIN" -e 'cloud.storage.create_bucket{ Bucket = "bench" }'
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom >"$SRC"

# The commands, by name: each moves $SRC up to, or the object down to $BACK.
cloudlua_up() {
  "$BIN" -e "cloud.storage.upload_file{ Bucket = 'bench', Object = 'cloudlua.bin', file = os.getenv('SRC'),
    part_size = $PART_MIB * 1024 * 1024, concurrency = $CONCURRENCY, progress = false }"
}
cloudlua_down() {
  "$BIN" -e "cloud.storage.download_file{ Bucket = 'bench', Object = 'cloudlua.bin', file = os.getenv('BACK'),
    part_size = $PART_MIB * 1024 * 1024, concurrency = $CONCURRENCY, progress = false }"
}
awscli_up() { /usr/bin/aws --endpoint-url "$CLOUDLUA_ENDPOINT_STORAGE" s3 cp --only-show-errors "$SRC" s3://bench/awscli.bin; }
awscli_down() { /usr/bin/aws --endpoint-url "$CLOUDLUA_ENDPOINT_STORAGE" s3 cp --only-show-errors s3://bench/awscli.bin "$BACK"; }
boto3_run() {
  DIRECTION=$1 python3 -c '
import os, boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
part = '"$PART_MIB"' * 1024 * 1024
config = TransferConfig(multipart_threshold=part, multipart_chunksize=part, max_concurrency='"$CONCURRENCY"')
s3 = boto3.client("s3", endpoint_url=os.environ["CLOUDLUA_ENDPOINT_STORAGE"], region_name="jp-east-1",
                  config=Config(s3={"addressing_style": "path"}))
if os.environ["DIRECTION"] == "up":
    s3.upload_file(os.environ["SRC"], "bench", "boto3.bin", Config=config)
else:
    s3.download_file("bench", "boto3.bin", os.environ["BACK"], Config=config)'
}
boto3_up() { boto3_run up; }
boto3_down() { boto3_run down; }

TOOLS="cloudlua"
[ -x /usr/bin/aws ] && TOOLS="$TOOLS awscli" || echo "awscli skipped: /usr/bin/aws not found"
python3 -c 'import boto3' 2>/dev/null && TOOLS="$TOOLS boto3" || echo "boto3 skipped: apt-get install -y python3-boto3"

# measure NAME: runs the command NAME under /usr/bin/time -v; appends the wall
# seconds to $WORK/NAME.time and the peak resident KiB to $WORK/NAME.rss.
measure() {
  /usr/bin/time -v -o "$WORK/time.out" bash -c "$(declare -f "$1" boto3_run); $1" >/dev/null
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' \
    "$WORK/time.out" >>"$WORK/$1.time"
  awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time.out" >>"$WORK/$1.rss"
}

export BIN PART_MIB CONCURRENCY
echo "$SIZE_MIB MiB, parts of $PART_MIB MiB, $CONCURRENCY at once, $ROUNDS rounds, against cloudlua serve"
for round in $(seq "$ROUNDS"); do
  for tool in $TOOLS; do
    measure "${tool}_up"
    rm -f "$BACK"
    measure "${tool}_down"
    if [ "$round" = 1 ]; then cmp "$SRC" "$BACK" || fail "$tool: the downloaded bytes differ"; fi
    rm -f "$BACK"
  done
done

# The table: median seconds, MiB/s and peak MiB per command; ratios to cloudlua's.
printf '%-16s %9s %9s %10s %14s %14s\n' command seconds "MiB/s" "peak MiB" "time/cloudlua" "mem/cloudlua"
for direction in up down; do
  base_time=$(median <"$WORK/cloudlua_$direction.time")
  base_rss=$(median <"$WORK/cloudlua_$direction.rss")
  for tool in $TOOLS; do
    t=$(median <"$WORK/${tool}_$direction.time")
    r=$(median <"$WORK/${tool}_$direction.rss")
    record "$SIZE_MIB MiB file $direction" "$tool" "$t" s
    record "peak memory, $SIZE_MIB MiB file $direction" "$tool" "$(awk -v r="$r" 'BEGIN { print r / 1024 }')" MiB
    awk -v n="${tool} $direction" -v t="$t" -v r="$r" -v bt="$base_time" -v br="$base_rss" -v size="$SIZE_MIB" \
      'BEGIN { printf "%-16s %9.2f %9.0f %10.0f %13.2fx %13.2fx\n", n, t, (t > 0 ? size / t : 0), r / 1024, t / bt, r / br }'
  done
done
