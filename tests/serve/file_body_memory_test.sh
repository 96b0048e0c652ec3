#!/usr/bin/env bash
# Memory stays flat whatever the file size (issue 12, item 2): a client uploads a
# 200 MiB file with put_object{file =} and downloads it with get_object{file =}, and
# its peak resident memory (VmHWM) grows by far less than the file. The emulator
# holds objects in memory, so it runs as its own `cloudlua serve` process and only
# the client is measured. A sparse file: no disk is used for its zeros.
source "$(dirname "$0")/lib.sh"

start_serve
truncate -s 200M "$WORK/big.bin"

step "200 MiB up and down through files: the client's peak memory grows by less than 32 MiB"
lua "
  local function peak()  -- VmHWM, bytes
    for line in io.lines('/proc/self/status') do
      local kb = line:match('^VmHWM:%s+(%d+)')
      if kb then return tonumber(kb) * 1024 end
    end
  end
  cloud.storage.create_bucket{ Bucket = 'big' }
  local before = peak()
  local put = cloud.storage.put_object{ Bucket = 'big', Object = 'big.bin', file = '$WORK/big.bin' }
  local up = peak() - before
  local got = cloud.storage.get_object{ Bucket = 'big', Object = 'big.bin', file = '$WORK/back.bin' }
  local down = peak() - before
  print(('peak memory grew by %d KiB sending, %d KiB receiving'):format(up // 1024, down // 1024))
  assert(got.ContentLength == 200 * 2^20, 'ContentLength ' .. tostring(got.ContentLength))
  assert(up < 32 * 2^20, 'the upload held the file in memory')
  assert(down < 32 * 2^20, 'the download held the object in memory')"
cmp "$WORK/big.bin" "$WORK/back.bin" || fail "the file came back different"

stop_serve TERM
echo "PASS"
