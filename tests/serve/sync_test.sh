#!/usr/bin/env bash
# scripts/sync.lua and scripts/check.lua against `cloudlua serve`, each a process of its
# own as a user runs them: the transcript of docs/scripts.md (a dry run, a sync with an
# exclude, a download with --output json, check's exit status); then a sync of 2,000
# files killed with SIGKILL partway, and a rerun that completes it and copies only
# what the killed run had not (a third run copies nothing, check finds no difference);
# then a download of them killed the same way, and a rerun that leaves no part file
# (the killed one's, stale, is removed by the next download of its target).
source "$(dirname "$0")/lib.sh"
SCRIPTS=$(cd "$(dirname "$0")/../../scripts" && pwd)

start_serve

# run SCRIPT ARGS...: runs scripts/SCRIPT in $WORK; output in $WORK/out, status in $STATUS.
run() {
  local script=$1
  shift
  step "$script $*"
  STATUS=0
  (cd "$WORK" && "$CLOUDLUA" "$SCRIPTS/$script" "$@") >"$WORK/out" 2>&1 || STATUS=$?
  tail -n 4 "$WORK/out"
}
expect_line() { grep -qF -- "$1" "$WORK/out" || fail "no line with '$1' in: $(cat "$WORK/out")"; }
expect_status() { [ "$STATUS" = "$1" ] || fail "exit status $STATUS, expected $1"; }

mkdir -p "$WORK/build/img" "$WORK/build/tmp"
printf '<h1>hi</h1>' >"$WORK/build/index.html"
printf 'png' >"$WORK/build/img/logo.png"
printf 'scratch' >"$WORK/build/tmp/x.tmp"

run sync.lua ./build s3://demo-bucket/www --exclude '*.tmp' --dry-run
expect_status 0
expect_line "(dry run) copy img/logo.png"
expect_line "(dry run) ./build -> s3://demo-bucket/www: would copy 2 (14 B), delete 0; 0 the same"
run sync.lua ./build s3://demo-bucket/www --exclude '*.tmp' --delete
expect_status 0
expect_line "./build -> s3://demo-bucket/www: 2 copied (14 B), 0 the same, 0 deleted, 0 failed in"
run sync.lua s3://demo-bucket/www ./mirror --output json
expect_status 0
expect_line '{"action":"copy","path":"index.html","size":11}'
expect_line '{"summary":true,"copied":2,"skipped":0,"deleted":0,"failed":0,"bytes":14,"dry_run":false,'
cmp "$WORK/build/index.html" "$WORK/mirror/index.html" || fail "the mirror's index.html differs"
run check.lua ./build s3://demo-bucket/www
expect_status 1
expect_line "only in ./build: tmp/x.tmp"
expect_line "2 the same, 0 differ, 1 only in ./build, 0 only in s3://demo-bucket/www"

step "a sync killed with SIGKILL partway, then rerun"
mkdir -p "$WORK/many"
for i in $(seq 2000); do head -c $((1000 + i)) /dev/urandom >"$WORK/many/file-$i.bin"; done
# objects PREFIX: how many objects are under PREFIX/ of demo-bucket.
objects() { PREFIX=$1 "$CLOUDLUA" -e 'local n = 0
  for p in cloud.pages("ListObjectsV2", { Bucket = "demo-bucket", Prefix = os.getenv("PREFIX") .. "/" }) do n = n + (p.KeyCount or 0) end
  print(n)'; }
# A sync stopped (SIGSTOP, then SIGKILL) once some objects are there (polled, never a
# fixed sleep); one that ended first is tried again under another prefix.
killed=""
for attempt in 1 2 3; do
  prefix=many-$attempt
  (cd "$WORK" && exec "$CLOUDLUA" "$SCRIPTS/sync.lua" ./many "s3://demo-bucket/$prefix" --concurrency 1 >/dev/null 2>&1) &
  SYNC_PID=$!
  tries=0
  until [ "$(objects "$prefix")" -ge 20 ] || ! kill -0 "$SYNC_PID" 2>/dev/null; do
    tries=$((tries + 1))
    [ "$tries" -lt 600 ] || fail "the sync put no 20 objects within 60 s"
    sleep 0.1
  done
  if kill -STOP "$SYNC_PID" 2>/dev/null; then
    kill -KILL "$SYNC_PID"
    wait "$SYNC_PID" 2>/dev/null || true
    before=$(objects "$prefix")
    if [ "$before" -lt 2000 ]; then killed=$prefix; break; fi
  fi
  wait "$SYNC_PID" 2>/dev/null || true
done
[ -n "$killed" ] || fail "three syncs ended before they could be killed"
run sync.lua ./many "s3://demo-bucket/$killed" --output json
expect_status 0
copied=$(grep -c '"action":"copy"' "$WORK/out" || true)
# The killed run may have sent one more object than the listing showed (the one under way).
[ "$copied" -le $((2000 - before)) ] || fail "the rerun copied $copied files; $before of 2000 were there already"
[ "$copied" -ge $((2000 - before - 1)) ] || fail "the rerun copied $copied files, fewer than the $((2000 - before)) missing"
run sync.lua ./many "s3://demo-bucket/$killed"
expect_line "0 copied (0 B), 2000 the same, 0 deleted, 0 failed"
run check.lua ./many "s3://demo-bucket/$killed"
expect_status 0
expect_line "2000 the same, 0 differ"

step "a download killed with SIGKILL partway, then rerun: no part file left"
# files: how many files are in ./down (part files included).
files() { find "$WORK/down" -type f 2>/dev/null | wc -l; }
(cd "$WORK" && exec "$CLOUDLUA" "$SCRIPTS/sync.lua" "s3://demo-bucket/$killed" ./down --concurrency 1 >/dev/null 2>&1) &
SYNC_PID=$!
tries=0
until [ "$(files)" -ge 20 ] || ! kill -0 "$SYNC_PID" 2>/dev/null; do
  tries=$((tries + 1))
  [ "$tries" -lt 600 ] || fail "the download wrote no 20 files within 60 s"
  sleep 0.1
done
kill -STOP "$SYNC_PID" 2>/dev/null && kill -KILL "$SYNC_PID"
wait "$SYNC_PID" 2>/dev/null || true
step "left by the killed download: $(find "$WORK/down" -name '*.cloudlua-*' | wc -l) part file(s)"
# The kill may fall between two files: what one killed midway leaves (a part file,
# marked, its lock gone with the process) is made sure of.
rm -f "$WORK/down/file-1.bin"
"$CLOUDLUA" -e "cloud.fs.part('$WORK/down/file-1.bin') os.exit(9, false)" >/dev/null 2>&1 || true
[ -n "$(find "$WORK/down" -name '.cloudlua-*.part')" ] || fail "the killed part file was not made"
run sync.lua "s3://demo-bucket/$killed" ./down
expect_status 0
left=$(find "$WORK/down" -name '*.cloudlua-*')
[ -z "$left" ] || fail "the rerun left part files: $left"
run check.lua "s3://demo-bucket/$killed" ./down
expect_status 0
expect_line "2000 the same, 0 differ, 0 only in s3://demo-bucket/$killed, 0 only in ./down"
echo "PASS"
