#!/usr/bin/env bash
# `serve --min-part-size BYTES` lowers the minimum size of a multipart part that is not
# the last one (S3's 5 MiB), so tests of clients can use small parts; the default
# keeps S3's EntityTooSmall, and a value outside 0..5 GiB is refused at start.
source "$(dirname "$0")/lib.sh"

# Two 2 KiB parts and a 10-byte last one, completed; prints ok or the error's code.
upload_small_parts='
  cloud.storage.create_bucket{ Bucket = "small-parts" }
  local key = "three parts"
  local id = cloud.storage.create_multipart_upload{ Bucket = "small-parts", Object = key }.UploadId
  local parts = {}
  for n, body in ipairs{ ("a"):rep(2048), ("b"):rep(2048), ("c"):rep(10) } do
    local r = cloud.storage.upload_part{ Bucket = "small-parts", Object = key, uploadId = id, partNumber = n, body = body }
    parts[n] = { PartNumber = n, ETag = r.ETag }
  end
  local ok, err = pcall(cloud.storage.complete_multipart_upload, { Bucket = "small-parts", Object = key, uploadId = id,
                                                                   Part = parts })
  print(ok and #cloud.storage.get_object{ Bucket = "small-parts", Object = key }.Body or err.code)
'

step "--min-part-size refuses a value outside 0..5 GiB"
if "$CLOUDLUA" serve --min-part-size -1 >/dev/null 2>"$WORK/bad.err"; then fail "serve accepted --min-part-size -1"; fi
grep -q 'min-part-size' "$WORK/bad.err" || fail "message: $(cat "$WORK/bad.err")"

step "by default a 2 KiB part that is not the last is EntityTooSmall"
start_serve
[ "$("$CLOUDLUA" -e "$upload_small_parts")" = EntityTooSmall ] || fail "small parts were accepted by default"
stop_serve TERM

step "with --min-part-size 1024 the same upload completes"
start_serve --min-part-size 1024
[ "$("$CLOUDLUA" -e "$upload_small_parts")" = 4106 ] || fail "small parts refused with --min-part-size 1024"
echo "min_part_size_test: ok"
