#!/usr/bin/env bash
# Trees of files against one `cloudlua serve` on loopback, measured side by side (not
# ctest; no test asserts a time): `cloudlua sync` (cloud.storage.sync) beside rclone
# (Debian's, `sync --transfers 16 --checkers 16`) and aws-cli (`s3 sync`,
# max_concurrent_requests = 16). Rows: (a) FILES files of 16 KiB up into an empty
# prefix; (b) the same down into an empty folder; (c) a second sync with nothing
# changed, up and down; (d) BIG files of BIG_MIB MiB up and down (BIG=0 leaves it out).
# Each command runs under /usr/bin/time -v (wall time, peak memory); the tools
# alternate round by round; medians and the ratios to cloudlua are printed. Every
# download is compared with the source tree once.
#
#   tests/bench/tree_bench.sh [build-release/cloudlua] [rounds]
#   FILES=1000 BIG=0 tests/bench/tree_bench.sh build/cloudlua 3     # a quick run
#   DURABLE=1 FILES=100 tests/bench/tree_bench.sh build/cloudlua 1  # each timed until on disk
#   TOOLS="cloudlua rclone" BIG=0 tests/bench/tree_bench.sh          # some tools only
#
# Needs /usr/bin/time; rclone and awscli (Debian's) are each skipped when missing.
set -euo pipefail
BIN=$(realpath "${1:-build-release/cloudlua}")
ROUNDS=${2:-${ROUNDS:-3}}
FILES=${FILES:-10000}
BIG=${BIG:-20}
BIG_MIB=${BIG_MIB:-64}
source "$(dirname "$0")/../serve/lib.sh" "$BIN"
source "$(dirname "$0")/lib.sh"

start_serve
export CLOUDLUA_CONFIG_FILE=/dev/null
isolate_aws_cli
cat >"$AWS_CONFIG_FILE" <<CONFIG
[default]
region = jp-east-1
s3 =
  addressing_style = path
  max_concurrent_requests = 16
CONFIG
rclone_to_serve

"$BIN" -e 'cloud.storage.create_bucket{ Bucket = "bench" }'
mkdir -p "$WORK/small"
for i in $(seq "$FILES"); do
  d="$WORK/small/d$((i % 100))"
  mkdir -p "$d"
  head -c 16384 /dev/urandom >"$d/file-$i.bin"
done
if [ "$BIG" -gt 0 ]; then
  mkdir -p "$WORK/big"
  for i in $(seq "$BIG"); do head -c $((BIG_MIB * 1024 * 1024)) /dev/urandom >"$WORK/big/file-$i.bin"; done
fi

# sync TOOL FROM TO: one tool's sync; a location is a folder or bucket:PREFIX.
sync() {
  local tool=$1 from=$2 to=$3
  case $tool in
    cloudlua) "$BIN" sync "${from/#bucket:/s3://bench/}" "${to/#bucket:/s3://bench/}" --concurrency 16 ;;
    rclone) /usr/bin/rclone sync --transfers 16 --checkers 16 "${from/#bucket:/serve:bench/}" "${to/#bucket:/serve:bench/}" ;;
    awscli) /usr/bin/aws --endpoint-url "$CLOUDLUA_ENDPOINT_STORAGE" s3 sync --only-show-errors \
              "${from/#bucket:/s3://bench/}" "${to/#bucket:/s3://bench/}" ;;
  esac
}
export -f sync
export BIN

if [ -z "${TOOLS:-}" ]; then  # TOOLS="cloudlua rclone" leaves aws-cli out (its rows take minutes)
  TOOLS="cloudlua"
  [ -x /usr/bin/rclone ] && TOOLS="$TOOLS rclone" || echo "rclone skipped: apt-get install -y rclone"
  [ -x /usr/bin/aws ] && TOOLS="$TOOLS awscli" || echo "awscli skipped: apt-get install -y awscli"
fi

# measure ROW TOOL FROM TO: the sync under /usr/bin/time -v; appends the wall seconds
# to $WORK/ROW.TOOL.time and the peak resident KiB to $WORK/ROW.TOOL.rss.
# Whatever is waiting to be written is flushed first (sync, not timed): a tool that
# makes its downloads durable would otherwise pay for the writes of the one before.
# With DURABLE=1 the timed command ends with a sync of its own: the time until what
# was written is on disk, for every tool alike (cloudlua's downloads flush anyway).
measure() { timed "$WORK/$1.$2" "sync $2 $3 $4${DURABLE:+ && command sync}"; }

echo "$FILES files of 16 KiB$([ "$BIG" -gt 0 ] && echo ", $BIG files of $BIG_MIB MiB"), $ROUNDS rounds, against cloudlua serve"
ROWS="a-up b-down c-again-up c-again-down"
[ "$BIG" -gt 0 ] && ROWS="$ROWS d-big-up d-big-down"
for round in $(seq "$ROUNDS"); do
  for tool in $TOOLS; do
    prefix="bucket:$tool-$round"
    rm -rf "$WORK/down"
    measure a-up "$tool" "$WORK/small" "$prefix/small"
    measure b-down "$tool" "$prefix/small" "$WORK/down"
    measure c-again-up "$tool" "$WORK/small" "$prefix/small"
    measure c-again-down "$tool" "$prefix/small" "$WORK/down"
    if [ "$round" = 1 ]; then diff -r "$WORK/small" "$WORK/down" >/dev/null || fail "$tool: the tree downloaded differs"; fi
    if [ "$BIG" -gt 0 ]; then
      rm -rf "$WORK/big-down"
      measure d-big-up "$tool" "$WORK/big" "$prefix/big"
      measure d-big-down "$tool" "$prefix/big" "$WORK/big-down"
      rm -rf "$WORK/big-down"
    fi
    "$BIN" -e "for p in cloud.pages('ListObjectsV2', { Bucket = 'bench', Prefix = '$tool-$round/' }) do
      local keys = {}
      for _, o in ipairs(p.Contents or {}) do keys[#keys + 1] = { Key = o.Key } end
      if #keys > 0 then cloud.storage.delete_objects{ Bucket = 'bench', Object = keys, Quiet = true } end
    end"
  done
done

# The figure each row records (results/tree_bench.jsonl, docs/performance.md).
figure() {
  case $1 in
    a-up) echo "$FILES files of 16 KiB up" ;;
    b-down) echo "$FILES files of 16 KiB down into an empty folder" ;;
    c-again-up) echo "$FILES files, second sync up, nothing changed" ;;
    c-again-down) echo "$FILES files, second sync down, nothing changed" ;;
    d-big-up) echo "$BIG files of $BIG_MIB MiB up" ;;
    d-big-down) echo "$BIG files of $BIG_MIB MiB down" ;;
  esac
}

printf '%-14s %-9s %9s %10s %14s %14s\n' row tool seconds "peak MiB" "time/cloudlua" "mem/cloudlua"
for row in $ROWS; do
  base_time=$(median <"$WORK/$row.cloudlua.time")
  base_rss=$(median <"$WORK/$row.cloudlua.rss")
  for tool in $TOOLS; do
    t=$(median <"$WORK/$row.$tool.time")
    r=$(median <"$WORK/$row.$tool.rss")
    awk -v row="$row" -v tool="$tool" -v t="$t" -v r="$r" -v bt="$base_time" -v br="$base_rss" \
      'BEGIN { printf "%-14s %-9s %9.2f %10.0f %13.2fx %13.2fx\n", row, tool, t, r / 1024, (bt > 0 ? t / bt : 0), r / br }'
    record "$(figure "$row")" "$tool" "$t" s
    record "peak memory, $(figure "$row")" "$tool" "$(awk -v r="$r" 'BEGIN { print r / 1024 }')" MiB
  done
done
