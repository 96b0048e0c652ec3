#!/usr/bin/env bash
# --limit-rate against one `cloudlua serve` on loopback (a benchmark, not ctest; no
# test asserts a time): (a) one 200 MiB file up and down with `cloudlua cp` at a cap,
# (b) 16 files sent together (`cp --recursive --concurrency 16`, 16 parallel
# transfers) under the same cap. Prints each achieved rate over the cap (1.00 is
# exact; the aim is within 10 %) and records each through lib.sh's `record` (a JSON
# line in tests/bench/results/limit_rate_bench.jsonl, which render.py reads).
#
#   tests/bench/limit_rate_bench.sh [build-release/cloudlua] [CAP]      # CAP default 50M
#   SIZE_MIB=64 tests/bench/limit_rate_bench.sh build/cloudlua 20M      # a quicker run
set -euo pipefail
BIN=$(realpath "${1:-build-release/cloudlua}")
CAP=${2:-50M}
SIZE_MIB=${SIZE_MIB:-200}
source "$(dirname "$0")/../serve/lib.sh" "$BIN"
source "$(dirname "$0")/lib.sh"

start_serve
export CLOUDLUA_CONFIG_FILE=/dev/null

# The cap in bytes a second (K, M, G binary, as --limit-rate reads it).
cap_bytes() {
  local n=${1%[KkMmGg]} unit=${1: -1}
  case $unit in K|k) echo $((n * 1024)) ;; M|m) echo $((n * 1024 * 1024)) ;; G|g) echo $((n * 1024 * 1024 * 1024)) ;; *) echo "$1" ;; esac
}
CAP_BYTES=$(cap_bytes "$CAP")
CAP_TEXT=$(awk -v c="$CAP_BYTES" 'BEGIN { printf "%g MiB/s", c / 1048576 }')
LOAD=$(cut -d' ' -f1 /proc/loadavg)

# seconds COMMAND...: runs it, prints its wall time in seconds.
seconds() {
  local start=${EPOCHREALTIME/[.,]/}
  "$@" >/dev/null
  local end=${EPOCHREALTIME/[.,]/}
  awk -v us=$((end - start)) 'BEGIN { printf "%.3f", us / 1e6 }'
}

# measured WHAT BYTES SECONDS: prints the achieved rate over the cap and records it
# as "WHAT at a cap of CAP, achieved/cap" (peer cloudlua).
measured() {
  local ratio
  ratio=$(awk -v b="$2" -v s="$3" -v c="$CAP_BYTES" 'BEGIN { printf "%.3f", b / s / c }')
  printf '%-50s %8.2f s  achieved/cap %s\n' "$1" "$3" "$ratio"
  record "$1 at a cap of $CAP_TEXT, achieved/cap" cloudlua "$ratio" "achieved/cap"
}

"$BIN" mb s3://bench >/dev/null
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom >"$WORK/big"
mkdir "$WORK/many"
for i in $(seq -w 1 16); do head -c $((SIZE_MIB * 1024 * 1024 / 16)) /dev/urandom >"$WORK/many/f$i"; done
BYTES=$((SIZE_MIB * 1024 * 1024))

echo "cap $CAP ($CAP_BYTES bytes a second), $SIZE_MIB MiB each way, load $LOAD"
t=$(seconds "$BIN" cp "$WORK/big" s3://bench/big --limit-rate "$CAP" --quiet)
measured "upload of ${SIZE_MIB} MiB" "$BYTES" "$t"
t=$(seconds "$BIN" cp s3://bench/big "$WORK/big.back" --limit-rate "$CAP" --quiet)
measured "download of ${SIZE_MIB} MiB" "$BYTES" "$t"
cmp "$WORK/big" "$WORK/big.back" || fail "the download differs from the upload"
t=$(seconds "$BIN" cp --recursive "$WORK/many" s3://bench/many --concurrency 16 --limit-rate "$CAP" --quiet)
measured "16 uploads together, ${SIZE_MIB} MiB in all," "$BYTES" "$t"
t=$(seconds "$BIN" cp --recursive s3://bench/many "$WORK/many.back" --concurrency 16 --limit-rate "$CAP" --quiet)
measured "16 downloads together, ${SIZE_MIB} MiB in all," "$BYTES" "$t"
echo "results appended to $RESULTS"
