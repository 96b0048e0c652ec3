#!/usr/bin/env bash
# s3cmd (Debian's s3cmd) against `cloudlua serve --dialect aws`, as a new user runs it:
# make a bucket (s3cmd sends `PUT /bucket/`, with the slash), put a small object, put a
# 12 MiB file in 5 MiB parts (multipart), list, get both back and compare byte for
# byte, cp and mv on the server (s3cmd reads the source's ACL, GET ?acl, copies, then
# puts that ACL on the copy, PUT ?acl) and compare the bytes copied and moved, delete,
# remove the bucket. Skipped (77) when s3cmd is not installed, failed then
# under CLOUDLUA_REQUIRE_INTEROP=1.
S3CMD=/usr/bin/s3cmd
source "$(dirname "$0")/lib.sh"
require_peer "$S3CMD" s3cmd

start_serve --dialect aws
host=${CLOUDLUA_ENDPOINT_STORAGE#http://}
cat >"$WORK/s3cfg" <<CONFIG
[default]
access_key = $CLOUDLUA_ACCESS_KEY_ID
secret_key = $CLOUDLUA_SECRET_ACCESS_KEY
host_base = $host
host_bucket = $host
bucket_location = jp-east-1
use_https = False
signature_v2 = False
multipart_chunk_size_mb = 5
CONFIG
s3cmd() { HOME="$WORK" "$S3CMD" --config "$WORK/s3cfg" --no-progress "$@"; }

printf 'hello from s3cmd\n' >"$WORK/small.txt"
head -c $((12 * 1024 * 1024 + 3)) /dev/urandom >"$WORK/big.bin"

step "s3cmd mb (PUT /bucket/)"
s3cmd mb s3://s3cmd-interop || fail "mb"
step "s3cmd put: a small object, then a 12 MiB file in 5 MiB parts"
s3cmd put "$WORK/small.txt" s3://s3cmd-interop/small.txt || fail "put small"
s3cmd put "$WORK/big.bin" "s3://s3cmd-interop/dir/big file.bin" || fail "put big"
etag=$(CLOUDLUA_DIALECT=aws "$CLOUDLUA" -e 'print(cloud.storage.head_object{ Bucket = "s3cmd-interop", Object = "dir/big file.bin" }.ETag)')
[[ "$etag" == *-3\" ]] || fail "the 12 MiB put was not a 3-part upload: ETag $etag"
step "s3cmd ls: both objects, with their sizes"
s3cmd ls --recursive s3://s3cmd-interop >"$WORK/ls.out" || fail "ls"
grep -q " 17 *s3://s3cmd-interop/small.txt$" "$WORK/ls.out" || fail "ls lacks small.txt: $(cat "$WORK/ls.out")"
grep -q " $((12 * 1024 * 1024 + 3)) *s3://s3cmd-interop/dir/big file.bin$" "$WORK/ls.out" ||
  fail "ls lacks the big file: $(cat "$WORK/ls.out")"
step "s3cmd get both and cmp"
s3cmd get s3://s3cmd-interop/small.txt "$WORK/small.back" || fail "get small"
s3cmd get "s3://s3cmd-interop/dir/big file.bin" "$WORK/big.back" || fail "get big"
cmp "$WORK/small.txt" "$WORK/small.back" || fail "small object differs"
cmp "$WORK/big.bin" "$WORK/big.back" || fail "big object differs"
step "s3cmd cp and mv on the server: the ACL read and set again, the bytes the same"
s3cmd cp s3://s3cmd-interop/small.txt "s3://s3cmd-interop/copy/small copy.txt" || fail "cp"
s3cmd get "s3://s3cmd-interop/copy/small copy.txt" "$WORK/copy.back" || fail "get the copy"
cmp "$WORK/small.txt" "$WORK/copy.back" || fail "the copy differs"
s3cmd mv "s3://s3cmd-interop/copy/small copy.txt" s3://s3cmd-interop/moved.txt || fail "mv"
s3cmd get s3://s3cmd-interop/moved.txt "$WORK/moved.back" || fail "get the moved object"
cmp "$WORK/small.txt" "$WORK/moved.back" || fail "the moved object differs"
s3cmd ls --recursive s3://s3cmd-interop >"$WORK/ls.out" || fail "ls after mv"
! grep -q "small copy.txt" "$WORK/ls.out" || fail "mv left its source: $(cat "$WORK/ls.out")"
step "s3cmd put with a type and metadata, cp from a key with '+', '=', ' ', '%' and 'ü'; info and cloudlua read them"
s3cmd put --mime-type=text/css --add-header=Cache-Control:max-age=9 --add-header=x-amz-meta-colour:blue \
  "$WORK/small.txt" "s3://s3cmd-interop/odd/a+b=c 50% ü.css" || fail "put with metadata"
s3cmd cp "s3://s3cmd-interop/odd/a+b=c 50% ü.css" "s3://s3cmd-interop/odd/copy.css" || fail "cp from an odd key"
s3cmd info "s3://s3cmd-interop/odd/copy.css" >"$WORK/info.out" || fail "info"
grep -q 'MIME type: *text/css' "$WORK/info.out" || fail "info: $(cat "$WORK/info.out")"
export CLOUDLUA_DIALECT=aws
lua 'for _, key in ipairs{ "odd/a+b=c 50% ü.css", "odd/copy.css" } do
       local h = cloud.storage.head_object{ Bucket = "s3cmd-interop", Object = key }
       assert(h.ContentType == "text/css" and h.CacheControl == "max-age=9" and h.Metadata.colour == "blue", key)
     end'
s3cmd del --recursive s3://s3cmd-interop/odd/ || fail "del odd/"

step "s3cmd del, then rb of the emptied bucket"
s3cmd del s3://s3cmd-interop/small.txt "s3://s3cmd-interop/dir/big file.bin" s3://s3cmd-interop/moved.txt || fail "del"
[ -z "$(s3cmd ls --recursive s3://s3cmd-interop)" ] || fail "objects left after del"
s3cmd rb s3://s3cmd-interop || fail "rb"
s3cmd ls >"$WORK/buckets.out" || fail "ls of buckets"
! grep -q s3cmd-interop "$WORK/buckets.out" || fail "the bucket is still listed"
echo "s3cmd_test: ok"
