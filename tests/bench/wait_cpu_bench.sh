#!/usr/bin/env bash
# What waiting costs (not ctest; no test asserts a time): the CPU seconds (user + sys,
# /usr/bin/time) of a process that spends about 3 s waiting on `cloudlua serve`, whose
# UploadPart answers are delayed by a fault (docs/emulator.md, the control plane):
#   sync         scripts/sync.lua of a folder holding one file larger than a part: it
#                goes alone, its parts 3 s late, while the sync's other 15 workers and
#                its planner wait (a sync that polled spun a core here);
#   upload_file  cloud.storage.upload_file of the same file: the peer, a process that
#                waits on its parts' transfers only.
# At two sizes ten times apart (6 and 60 MiB, in parts of 5 MiB sent at once: one 3 s
# wait either way), several rounds alternating; the medians are printed and recorded
# (lib.sh's record: tests/bench/results/wait_cpu_bench.jsonl, rendered into
# docs/performance.md). The aim: under 0.1 s of CPU for a 3 s wait. sync is cloudlua's
# column there, upload_file the floor beside it.
#
#   tests/bench/wait_cpu_bench.sh [build/cloudlua] [rounds]
set -euo pipefail
BIN=$(realpath "${1:-build/cloudlua}")
ROUNDS=${2:-${ROUNDS:-3}}
DELAY=${DELAY:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../serve/lib.sh" "$BIN"
source "$HERE/lib.sh"

start_serve
export CLOUDLUA_CONFIG_FILE=/dev/null
"$BIN" -e 'cloud.storage.create_bucket{ Bucket = "bench" }'
PART=$((5 * 1024 * 1024))
for mib in 6 60; do
  mkdir -p "$WORK/tree-$mib"
  head -c $((mib * 1024 * 1024)) /dev/urandom >"$WORK/tree-$mib/big.bin"
done

# cpu OUT CMD...: runs CMD, appending its user + sys CPU seconds to OUT.
cpu() {
  local out=$1
  shift
  /usr/bin/time -f '%U %S' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/cmd.err" || { cat "$WORK/cmd.err" >&2; return 1; }
  awk '{ print $1 + $2 }' "$WORK/time" >>"$out"
}

# Each round writes the same keys again (the file touched: newer than its object), so
# serve's memory holds one copy of each.
for _ in $(seq "$ROUNDS"); do
  for mib in 6 60; do
    parts=$(((mib * 1024 * 1024 + PART - 1) / PART))
    touch "$WORK/tree-$mib/big.bin"
    ctl fault "{\"operation\": \"UploadPart\", \"delay\": $DELAY, \"times\": $parts}" >/dev/null
    cpu "$WORK/sync-$mib" "$BIN" "$HERE/../../scripts/sync.lua" "$WORK/tree-$mib" "s3://bench/sync-$mib" --part-size 5M
    ctl fault "{\"operation\": \"UploadPart\", \"delay\": $DELAY, \"times\": $parts}" >/dev/null
    FILE="$WORK/tree-$mib/big.bin" KEY="up-$mib" cpu "$WORK/upload-$mib" "$BIN" -e \
      'cloud.storage.upload_file{ Bucket = "bench", Object = os.getenv("KEY"), file = os.getenv("FILE"),
                                  part_size = 5 * 1024 * 1024, concurrency = 16, progress = false }'
  done
done

echo "CPU seconds (user + sys) for a ${DELAY} s wait on serve, median of $ROUNDS rounds:"
for mib in 6 60; do
  for what in sync upload; do
    value=$(median <"$WORK/$what-$mib")
    peer=$([ "$what" = sync ] && echo "cloudlua" || echo "upload_file")
    printf '  %-12s %4d MiB  %.3f s\n' "$peer" "$mib" "$value"
    record "CPU seconds while waiting ${DELAY} s on serve, $mib MiB" "$peer" "$value" s
  done
done
