#!/usr/bin/env bash
# Cost as work grows, against one `cloudlua serve` on loopback (not ctest; no test
# asserts a time): at each size of SIZES (10,000 and 100,000 unless set, ten times
# apart), the time per item and the peak memory of
#   (a) a sync up of that many files of 1 KiB into an empty prefix,
#   (b) a sync down of them into an empty folder,
#   (c) `ls --recursive` of the prefix holding them,
# for cloudlua beside rclone (sync, `lsf -R`) and aws-cli (`s3 ls --recursive`; its
# sync takes minutes at these sizes and is left to tree_bench.sh). Each command runs
# under /usr/bin/time -v; the tools alternate round by round; medians are recorded
# (results/scale_bench.jsonl) as microseconds per item and MiB, and printed with the
# growth from the smaller size to the larger: flat cost is a growth near 1.
#
#   tests/bench/scale_bench.sh [build-release/cloudlua] [rounds]
#   SIZES="1000 10000" tests/bench/scale_bench.sh build/cloudlua 1   # a quick run
#   TOOLS=cloudlua ROWS=ls SIZES=1000000 tests/bench/scale_bench.sh   # ls of a million keys
#
# ROWS (default "up down ls") picks rows; without "up", the keys ls lists are put by
# cloud.map (empty objects, 16 at once) rather than synced from files.
set -euo pipefail
BIN=$(realpath "${1:-build-release/cloudlua}")
ROUNDS=${2:-${ROUNDS:-2}}
SIZES=${SIZES:-10000 100000}
ROWS=${ROWS:-up down ls}
source "$(dirname "$0")/../serve/lib.sh" "$BIN"
source "$(dirname "$0")/lib.sh"

start_serve
export CLOUDLUA_CONFIG_FILE=/dev/null
isolate_aws_cli
printf '[default]\nregion = jp-east-1\ns3 =\n  addressing_style = path\n' >"$AWS_CONFIG_FILE"
rclone_to_serve
"$BIN" -e 'cloud.storage.create_bucket{ Bucket = "scale" }'

if [ -z "${TOOLS:-}" ]; then
  TOOLS="cloudlua"
  [ -x /usr/bin/rclone ] && TOOLS="$TOOLS rclone" || echo "rclone skipped: apt-get install -y rclone"
  [ -x /usr/bin/aws ] && TOOLS="$TOOLS awscli" || echo "awscli skipped: apt-get install -y awscli"
fi

# run TOOL ROW FROM TO: one tool's command of a row; a location is a folder or bucket:PREFIX.
run() {
  local tool=$1 row=$2 from=${3/#bucket:/s3://scale/} to=${4:-}
  case $tool:$row in
    cloudlua:ls) "$BIN" ls --recursive "$from/" ;;
    cloudlua:*) "$BIN" sync "$from" "${to/#bucket:/s3://scale/}" --concurrency 16 ;;
    rclone:ls) /usr/bin/rclone lsf -R "${3/#bucket:/serve:scale/}" ;;
    rclone:*) /usr/bin/rclone sync --transfers 16 --checkers 16 "${3/#bucket:/serve:scale/}" "${to/#bucket:/serve:scale/}" ;;
    awscli:ls) /usr/bin/aws --endpoint-url "$CLOUDLUA_ENDPOINT_STORAGE" s3 ls --recursive "$from/" ;;
  esac
}
export -f run
export BIN

# measure SIZE ROW TOOL FROM [TO]: the command under /usr/bin/time -v; appends the wall
# seconds and the peak resident KiB to $WORK/SIZE.ROW.TOOL.{time,rss}. What waits to be
# written is flushed first, untimed.
measure() { timed "$WORK/$1.$2.$3" "run $3 $2 $4 ${5:-}"; }

# make_tree SIZE: SIZE files of 1 KiB in $WORK/tree, 1,000 to a folder.
make_tree() {
  rm -rf "$WORK/tree"
  python3 - "$WORK/tree" "$1" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    folder = os.path.join(root, f"d{i // 1000:04d}")
    if i % 1000 == 0:
        os.makedirs(folder)
    with open(os.path.join(folder, f"file-{i:07d}.txt"), "wb") as f:
        f.write(os.urandom(512).hex().encode())
PY
}

# empty PREFIX: removes every object under PREFIX of the bucket, untimed.
empty() {
  "$BIN" -e "for p in cloud.pages('ListObjectsV2', { Bucket = 'scale', Prefix = '$1/' }) do
    local keys = {}
    for _, o in ipairs(p.Contents) do keys[#keys + 1] = { Key = o.Key } end
    if #keys > 0 then cloud.storage.delete_objects{ Bucket = 'scale', Object = keys, Quiet = true } end
  end"
}

# put_keys SIZE: SIZE empty objects under the prefix cloudlua/, put 16 at once, untimed.
put_keys() {
  "$BIN" -e "local keys = {}
    for i = 1, $1 do keys[i] = ('cloudlua/d%04d/file-%07d.txt'):format(i // 1000, i) end
    cloud.map(keys, function(k) cloud.storage.put_object{ Bucket = 'scale', Object = k, Body = '' } end,
              { concurrency = 16 })"
}

SYNC_TOOLS=$(echo "$TOOLS" | tr ' ' '\n' | grep -v '^awscli$' | tr '\n' ' ')
case " $ROWS " in *" up "*) ;; *) SYNC_TOOLS= ;; esac
for size in $SIZES; do
  if [ -n "$SYNC_TOOLS" ]; then make_tree "$size"; else put_keys "$size"; fi
  echo "$size files of 1 KiB, $ROUNDS rounds: $TOOLS"
  for round in $(seq "$ROUNDS"); do
    for tool in $SYNC_TOOLS; do
      rm -rf "$WORK/down"
      measure "$size" up "$tool" "$WORK/tree" "bucket:$tool"
      measure "$size" down "$tool" "bucket:$tool" "$WORK/down"
      if [ "$round" = 1 ]; then diff -r "$WORK/tree" "$WORK/down" >/dev/null || fail "$tool: the tree downloaded differs"; fi
      [ "$round" = "$ROUNDS" ] || empty "$tool"
    done
    for tool in $TOOLS; do measure "$size" ls "$tool" "bucket:cloudlua"; done
  done
  for tool in $SYNC_TOOLS; do empty "$tool"; done
  [ -n "$SYNC_TOOLS" ] || empty cloudlua
  rm -rf "$WORK/down"
done

# The figure each row records (results/scale_bench.jsonl, docs/performance.md).
figure() {
  local n
  n=$(printf "%'d" "$2" 2>/dev/null || echo "$2")
  case $1 in
    up) echo "sync up, $n files of 1 KiB" ;;
    down) echo "sync down, $n files of 1 KiB" ;;
    ls) echo "ls --recursive, $n keys" ;;
  esac
}

printf '%-34s %-9s %12s %10s %14s %12s\n' row tool "µs per item" "peak MiB" "time/cloudlua" "growth"
for row in $ROWS; do
  for size in $SIZES; do
    [ -f "$WORK/$size.$row.cloudlua.time" ] || continue
    base=$(median <"$WORK/$size.$row.cloudlua.time")
    for tool in $TOOLS; do
      [ -f "$WORK/$size.$row.$tool.time" ] || continue
      t=$(median <"$WORK/$size.$row.$tool.time")
      r=$(median <"$WORK/$size.$row.$tool.rss")
      per=$(awk -v t="$t" -v n="$size" 'BEGIN { printf "%.2f", t * 1e6 / n }')
      mib=$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')
      growth=""
      first=${SIZES%% *}
      if [ "$size" != "$first" ] && [ -f "$WORK/$first.$row.$tool.time" ]; then
        growth=$(awk -v t="$t" -v n="$size" -v t0="$(median <"$WORK/$first.$row.$tool.time")" -v n0="$first" \
          'BEGIN { printf "%.2fx", (t / n) / (t0 / n0) }')
      fi
      printf '%-34s %-9s %12s %10s %13.2fx %12s\n' "$(figure "$row" "$size")" "$tool" "$per" "$mib" \
        "$(awk -v t="$t" -v b="$base" 'BEGIN { print (b > 0 ? t / b : 0) }')" "$growth"
      record "$(figure "$row" "$size"): time per item" "$tool" "$per" "µs"
      record "$(figure "$row" "$size"): peak memory" "$tool" "$mib" "MiB"
    done
  done
done
