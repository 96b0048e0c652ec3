#!/usr/bin/env bash
# Ctrl-C and SIGTERM in the middle of a sync, of an upload_file and of a cp (under
# --limit-rate and --progress, and from stdin), each a process of
# its own as a user runs them, against `cloudlua serve` whose UploadPart answers are
# delayed (a fault) so that the multipart uploads are open when the signal comes: the
# process stops, aborts the uploads it opened (ListMultipartUploads shows none left),
# prints the sync's summary so far marked "(interrupted)", says "cloudlua: interrupted"
# on stderr, that line alone, and exits 130: the script, -e and the sub-command alike. A second
# Ctrl-C while the clean-up waits (its AbortMultipartUpload delayed too) ends the
# process at once: no summary, the upload still open.
source "$(dirname "$0")/lib.sh"
SCRIPTS=$(cd "$(dirname "$0")/../../scripts" && pwd)
set -m  # job control: the background commands below get SIGINT (not ignored)

start_serve
lua 'cloud.storage.create_bucket{ Bucket = "int" }'
mkdir -p "$WORK/src"
for name in a b c; do head -c $((6 * 1024 * 1024)) /dev/urandom >"$WORK/src/$name.bin"; done
# Every UploadPart waits 60 s before it is answered: none ends by itself here.
ctl fault '{"operation": "UploadPart", "delay": 60, "times": 1000}' >/dev/null

# open_uploads: how many multipart uploads bucket "int" has open.
open_uploads() {
  "$CLOUDLUA" -e 'print(#(cloud.storage.list_multipart_uploads{ Bucket = "int" }.Upload or {}))'
}

# asked OPERATION: how many requests to OPERATION serve was asked (counted as they come).
asked() {
  local n
  n=$(ctl requests | grep -o "\"$1\": *[0-9]*" | grep -o '[0-9]*$' || true)
  echo "${n:-0}"
}

# said: what the process wrote, stdout then stderr, for a failure's message.
said() { cat "$WORK/out" "$WORK/err"; }

# start CMD...: runs CMD in $WORK in the background (stdout in $WORK/out, stderr in
# $WORK/err), then waits
# (20 s at most) until it has a multipart upload open and has sent a part of it (so it
# knows the upload: a signal between serve's answer to CreateMultipartUpload and the
# process reading it would leave an upload the process never learnt of); sets PID.
start() {
  local parts
  parts=$(asked UploadPart)
  (cd "$WORK" && exec "$@") >"$WORK/out" 2>"$WORK/err" &
  PID=$!
  local tries=0
  until [ "$(open_uploads)" -ge 1 ] && [ "$(asked UploadPart)" -gt "$parts" ]; do
    kill -0 "$PID" 2>/dev/null || fail "$* ended before opening an upload: $(said)"
    tries=$((tries + 1))
    [ "$tries" -lt 200 ] || fail "no multipart upload open after 20 s: $(said)"
    sleep 0.1
  done
}

# stop SIGNAL: sends SIGNAL to the process and waits for it; its status in STATUS.
stop() {
  kill "-$1" "$PID"
  STATUS=0
  wait "$PID" || STATUS=$?
}

# expect_clean_exit WHAT: status 130, no upload left open, and stderr, but for the
# lines --progress writes there, the one line that says the run was interrupted.
expect_clean_exit() {
  [ "$STATUS" = 130 ] || fail "$1: exit status $STATUS, expected 130: $(said)"
  [ "$(open_uploads)" = 0 ] || fail "$1: multipart uploads left open: $(said)"
  [ "$(grep -v '^upload .* of .*%' "$WORK/err")" = "cloudlua: interrupted" ] ||
    fail "$1: stderr is not the one line 'cloudlua: interrupted': $(said)"
}

# expect_summary WHAT DST: stdout is the sync's summary so far, marked interrupted.
expect_summary() {
  grep -qx "./src -> $2: 0 copied (0 B), 0 the same, 0 deleted, 0 failed in .* s (interrupted)" "$WORK/out" ||
    fail "$1: no summary marked interrupted: $(said)"
  [ "$(wc -l <"$WORK/out")" = 1 ] || fail "$1: more than the summary on stdout: $(said)"
}

for signal in INT TERM; do
  step "sync.lua interrupted by SIG$signal"
  start "$CLOUDLUA" "$SCRIPTS/sync.lua" ./src "s3://int/$signal" --part-size 5M
  stop "$signal"
  expect_clean_exit "sync.lua, SIG$signal"
  expect_summary "sync.lua, SIG$signal" "s3://int/$signal"

  step "cloudlua sync interrupted by SIG$signal"
  start "$CLOUDLUA" sync ./src "s3://int/command-$signal" --part-size 5M
  stop "$signal"
  expect_clean_exit "cloudlua sync, SIG$signal"
  expect_summary "cloudlua sync, SIG$signal" "s3://int/command-$signal"

  step "upload_file interrupted by SIG$signal"
  start "$CLOUDLUA" -e 'cloud.storage.upload_file{ Bucket = "int", Object = "one.bin", file = "src/a.bin",
                                                    part_size = 5 * 1024 * 1024, progress = false }'
  stop "$signal"
  expect_clean_exit "upload_file, SIG$signal"

  step "cp (rate-limited, with progress) interrupted by SIG$signal"
  start "$CLOUDLUA" cp src/a.bin "s3://int/cp-$signal.bin" --part-size 5M --limit-rate 40M --progress
  stop "$signal"
  expect_clean_exit "cp, SIG$signal"

  step "cp from stdin interrupted by SIG$signal"
  start sh -c 'exec "$0" cp - "s3://int/stdin-$1.bin" --part-size 5M <src/b.bin' "$CLOUDLUA" "$signal"
  stop "$signal"
  expect_clean_exit "cp -, SIG$signal"
done

step "a second Ctrl-C during the clean-up ends the process at once"
ctl fault '{"operation": "AbortMultipartUpload", "delay": 60, "times": 1}' >/dev/null
before=$(asked AbortMultipartUpload)
start "$CLOUDLUA" "$SCRIPTS/sync.lua" ./src s3://int/twice --part-size 5M
kill -INT "$PID"
tries=0
until [ "$(asked AbortMultipartUpload)" -gt "$before" ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 200 ] || fail "the first Ctrl-C sent no AbortMultipartUpload within 20 s: $(said)"
  sleep 0.1
done
stop INT
[ "$STATUS" = 130 ] || fail "second Ctrl-C: exit status $STATUS, expected 130"
if grep -q "(interrupted)" "$WORK/out"; then fail "second Ctrl-C: the clean-up went on to the summary: $(said)"; fi
[ "$(open_uploads)" = 1 ] || fail "second Ctrl-C: the delayed abort should not have been waited for"
echo "interrupt_test: ok"
