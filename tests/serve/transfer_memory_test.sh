#!/usr/bin/env bash
# Memory stays flat for upload_file and download_file (issue 12, "flat memory"): a
# client whose address space is capped (ulimit -v) at a quarter of the file's size or
# less uploads a 512 MiB file with cloud.storage.upload_file (64 parts of 8 MiB, 8 at
# once) and downloads it with download_file, against `cloudlua serve --state` (the
# server keeps the bytes in its state folder; it is not capped). The cap is what a
# trivial run of the client needs (its VmPeak, one request included) plus 64 MiB,
# measured here so that it follows the build; a build that needs too much for the
# cap to stay at a quarter of the file (a sanitizer's reservations) is skipped (77).
# A control run shows the cap bites: reading the file into a Lua string fails under
# it. The file is sparse: its zeros take no disk.
source "$(dirname "$0")/lib.sh"

SIZE_MIB=512
HEADROOM_KIB=$((64 * 1024))

start_serve --state "$WORK/state.json"
truncate -s "${SIZE_MIB}M" "$WORK/big.bin"

# capped CODE: runs CODE with cloudlua under the address-space cap.
capped() {
  (ulimit -v "$cap" && exec "$CLOUDLUA" -e "$1")
}

step "the cap: a trivial run's VmPeak plus 64 MiB, at most a quarter of the file"
needed=$("$CLOUDLUA" -e "
  cloud.storage.create_bucket{ Bucket = 'big' }
  for line in io.lines('/proc/self/status') do
    local kb = line:match('^VmPeak:%s+(%d+)')
    if kb then print(kb) end
  end") || fail "the trivial run failed"
cap=$((needed + HEADROOM_KIB))
echo "a trivial run's VmPeak: $((needed / 1024)) MiB; the cap: $((cap / 1024)) MiB; the file: $SIZE_MIB MiB"
if [ $((cap * 4)) -gt $((SIZE_MIB * 1024)) ]; then
  echo "SKIP: this build needs $((needed / 1024)) MiB of address space for a trivial run (a sanitizer build?)"
  exit 77
fi

step "the cap bites: the file read into a Lua string fails under it"
if capped "local s = assert(io.open('$WORK/big.bin', 'rb')):read('a'); print(#s)" >/dev/null 2>&1; then
  fail "a $SIZE_MIB MiB string fitted under the cap"
fi

step "upload_file and download_file of $SIZE_MIB MiB under the cap"
capped "
  local up = select(2, cloud.storage.upload_file{ Bucket = 'big', Object = 'big.bin', file = '$WORK/big.bin',
                                                  progress = false })
  assert(up.parts == 64 and up.sent == 64, ('parts %d, sent %d'):format(up.parts, up.sent))
  local got = cloud.storage.download_file{ Bucket = 'big', Object = 'big.bin', file = '$WORK/back.bin',
                                           progress = false }
  assert(got.ContentLength == $SIZE_MIB * 2^20, 'ContentLength ' .. tostring(got.ContentLength))
  for line in io.lines('/proc/self/status') do
    if line:match('^VmPeak') or line:match('^VmHWM') then print(line) end
  end" || fail "the transfers failed under the cap (see above)"
cmp "$WORK/big.bin" "$WORK/back.bin" || fail "the file came back different"

stop_serve TERM
echo "PASS"
