#!/usr/bin/env bash
# --limit-rate against one `cloudlua serve` on loopback (a benchmark, not ctest; no
# test asserts a time): (a) one 200 MiB file up and down with `cloudlua cp` at a cap,
# (b) 16 files sent together (`cp --recursive --concurrency 16`, 16 parallel
# transfers) under the same cap. Prints each achieved rate over the cap (1.00 is
# exact; the aim is within 10 %) and appends one JSON line per figure (figure, value,
# unit, peer, date, build, load) to tests/bench/results/limit_rate_bench.jsonl.
#
#   tests/bench/limit_rate_bench.sh [build-release/cloudlua] [CAP]      # CAP default 50M
#   SIZE_MIB=64 tests/bench/limit_rate_bench.sh build/cloudlua 20M      # a quicker run
set -euo pipefail
BIN=$(realpath "${1:-build-release/cloudlua}")
CAP=${2:-50M}
SIZE_MIB=${SIZE_MIB:-200}
RESULTS=$(cd "$(dirname "$0")" && pwd)/results/limit_rate_bench.jsonl
source "$(dirname "$0")/../serve/lib.sh" "$BIN"
source "$(dirname "$0")/lib.sh"

start_serve
export CLOUDLUA_CONFIG_FILE=/dev/null
mkdir -p "$(dirname "$RESULTS")"

# The cap in bytes a second (K, M, G binary, as --limit-rate reads it).
cap_bytes() {
  local n=${1%[KkMmGg]} unit=${1: -1}
  case $unit in K|k) echo $((n * 1024)) ;; M|m) echo $((n * 1024 * 1024)) ;; G|g) echo $((n * 1024 * 1024 * 1024)) ;; *) echo "$1" ;; esac
}
CAP_BYTES=$(cap_bytes "$CAP")
BUILD=$("$BIN" -v | head -1)
LOAD=$(cut -d' ' -f1 /proc/loadavg)

# seconds COMMAND...: runs it, prints its wall time in seconds.
seconds() {
  local start=${EPOCHREALTIME/[.,]/}
  "$@" >/dev/null
  local end=${EPOCHREALTIME/[.,]/}
  awk -v us=$((end - start)) 'BEGIN { printf "%.3f", us / 1e6 }'
}

# record FIGURE BYTES SECONDS: prints and appends the achieved rate over the cap.
record() {
  local ratio
  ratio=$(awk -v b="$2" -v s="$3" -v c="$CAP_BYTES" 'BEGIN { printf "%.3f", b / s / c }')
  printf '%-40s %8.2f s  achieved/cap %s\n' "$1" "$3" "$ratio"
  printf '{"figure":"%s","value":%s,"unit":"achieved/cap","peer":"cloudlua","date":"%s","build":"%s","load":%s,"cap":"%s","seconds":%s}\n' \
    "$1" "$ratio" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$BUILD" "$LOAD" "$CAP" "$3" >>"$RESULTS"
}

"$BIN" mb s3://bench >/dev/null
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom >"$WORK/big"
mkdir "$WORK/many"
for i in $(seq -w 1 16); do head -c $((SIZE_MIB * 1024 * 1024 / 16)) /dev/urandom >"$WORK/many/f$i"; done
BYTES=$((SIZE_MIB * 1024 * 1024))

echo "cap $CAP ($CAP_BYTES bytes a second), $SIZE_MIB MiB each way, load $LOAD"
t=$(seconds "$BIN" cp "$WORK/big" s3://bench/big --limit-rate "$CAP" --quiet)
record "one ${SIZE_MIB} MiB upload at --limit-rate" "$BYTES" "$t"
t=$(seconds "$BIN" cp s3://bench/big "$WORK/big.back" --limit-rate "$CAP" --quiet)
record "one ${SIZE_MIB} MiB download at --limit-rate" "$BYTES" "$t"
cmp "$WORK/big" "$WORK/big.back" || fail "the download differs from the upload"
t=$(seconds "$BIN" cp --recursive "$WORK/many" s3://bench/many --concurrency 16 --limit-rate "$CAP" --quiet)
record "16 uploads together at --limit-rate" "$BYTES" "$t"
t=$(seconds "$BIN" cp --recursive s3://bench/many "$WORK/many.back" --concurrency 16 --limit-rate "$CAP" --quiet)
record "16 downloads together at --limit-rate" "$BYTES" "$t"
echo "results appended to $RESULTS"
