#!/usr/bin/env bash
# serve --state keeps object and part bytes in files, not in memory (issue 24, item 2):
# a 256 MiB object put whole and one of 256 MiB uploaded in 8 MiB parts are saved;
# once saved, their bytes leave serve's memory (read from their files from then on),
# and a restart reads none of them: the restarted serve's peak resident memory
# (VmHWM) grows by less than 64 MiB while it sends both back whole and a range of each.
# Each bound is what serve held when it started plus 64 MiB, so that a build with
# sanitizers (whose own memory at start is larger) is held to the same growth. The
# inputs are sparse files (no disk for their zeros); the state's files are not.
source "$(dirname "$0")/lib.sh"
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB) before it goes
# back: no quarantine here, so what is measured is what serve holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"

MiB=$((1 << 20))
GROWTH=$((64 * MiB))
# vm NAME: serve's VmHWM or VmRSS, bytes.
vm() { echo $(($(awk -v n="$1:" '$1 == n { print $2 }' "/proc/$SERVE_PID/status") * 1024)); }

truncate -s 256M "$WORK/put.bin"
printf 'tail' >>"$WORK/put.bin"
truncate -s 256M "$WORK/parts.bin"
printf 'end' >>"$WORK/parts.bin"

start_serve --state "$WORK/state"
BOUND=$(($(vm VmRSS) + GROWTH))
step "a 256 MiB PutObject and a 256 MiB multipart upload saved: their bytes leave serve's memory"
lua "
  cloud.storage.create_bucket{ Bucket = 'big' }
  cloud.storage.put_object{ Bucket = 'big', Object = 'put.bin', file = '$WORK/put.bin' }
  cloud.storage.upload_file{ Bucket = 'big', Object = 'parts.bin', file = '$WORK/parts.bin', concurrency = 2 }"
rss=$(vm VmRSS)
echo "serve's memory at rest after storing 512 MiB: $((rss / 1024)) KiB"
[ "$rss" -lt "$BOUND" ] || fail "serve holds $((rss / MiB)) MiB at rest (at most $((BOUND / MiB))): the bytes stayed in memory"
stop_serve TERM

start_serve --state "$WORK/state"
step "after a restart, both sent back whole and in ranges: serve's peak memory grows by less than 64 MiB"
BOUND=$(($(vm VmHWM) + GROWTH))
echo "restarted serve's peak memory before any request: $(($(vm VmHWM) / 1024)) KiB"
lua "
  for _, name in ipairs{ 'put.bin', 'parts.bin' } do
    cloud.storage.get_object{ Bucket = 'big', Object = name, file = '$WORK/back-' .. name }
    local r = cloud.storage.get_object{ Bucket = 'big', Object = name, Range = 'bytes=268435454-268435457' }
    assert(r.Body == (name == 'put.bin' and '\0\0ta' or '\0\0en'), ('%s: %q'):format(name, r.Body))
  end"
cmp "$WORK/put.bin" "$WORK/back-put.bin" || fail "put.bin came back different"
cmp "$WORK/parts.bin" "$WORK/back-parts.bin" || fail "parts.bin came back different"
peak=$(vm VmHWM)
echo "restarted serve's peak memory after sending 512 MiB: $((peak / 1024)) KiB"
[ "$peak" -lt "$BOUND" ] || fail "serve's peak memory reached $((peak / MiB)) MiB (at most $((BOUND / MiB))): the bytes were read into memory"
stop_serve TERM
echo "PASS"
