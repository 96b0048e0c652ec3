#!/usr/bin/env bash
# rclone (Debian's rclone) against `cloudlua serve --dialect aws`, with a remote of
# provider Other set through the environment: make a bucket, copy a small object, copy
# a 12 MiB file in 5 MiB chunks (multipart), list, copy both back and compare byte for
# byte; sync a tree of keys with '+', '=', ' ', '%' and 'ü' twice (the second making no
# CopyObject: rclone's mtimes come back in its metadata, read by cloudlua too), copy
# from those keys on the server; delete, remove the bucket. Skipped (77) when rclone is not installed, failed
# then under CLOUDLUA_REQUIRE_INTEROP=1.
RCLONE=/usr/bin/rclone
source "$(dirname "$0")/lib.sh"
require_peer "$RCLONE" rclone

start_serve --dialect aws
for v in $(compgen -e | grep -E "^(RCLONE|AWS)_" || true); do unset "$v"; done  # rclone's S3 SDK reads AWS_* too (a CA bundle, a profile)
export RCLONE_CONFIG="$WORK/no-rclone.conf"
export RCLONE_CONFIG_EMU_TYPE=s3 RCLONE_CONFIG_EMU_PROVIDER=Other RCLONE_CONFIG_EMU_ENV_AUTH=false
export RCLONE_CONFIG_EMU_ACCESS_KEY_ID=$CLOUDLUA_ACCESS_KEY_ID RCLONE_CONFIG_EMU_SECRET_ACCESS_KEY=$CLOUDLUA_SECRET_ACCESS_KEY
export RCLONE_CONFIG_EMU_ENDPOINT=$CLOUDLUA_ENDPOINT_STORAGE RCLONE_CONFIG_EMU_REGION=jp-east-1
export RCLONE_CONFIG_EMU_FORCE_PATH_STYLE=true
rclone() { HOME="$WORK" "$RCLONE" --s3-upload-cutoff 5M --s3-chunk-size 5M --s3-upload-concurrency 2 "$@"; }

printf 'hello from rclone\n' >"$WORK/small.txt"
head -c $((12 * 1024 * 1024 + 5)) /dev/urandom >"$WORK/big.bin"

step "rclone mkdir (CreateBucket)"
rclone mkdir emu:rclone-interop || fail "mkdir"
step "rclone copyto: a small object, then a 12 MiB file in 5 MiB chunks"
rclone copyto "$WORK/small.txt" emu:rclone-interop/small.txt || fail "copyto small"
rclone copyto -vv "$WORK/big.bin" "emu:rclone-interop/dir/big file.bin" 2>"$WORK/copy.log" ||
  fail "copyto big: $(tail -20 "$WORK/copy.log")"
grep -q 'multipart upload' "$WORK/copy.log" || fail "the 12 MiB copy was not a multipart upload"
step "rclone ls: both objects, with their sizes"
rclone ls emu:rclone-interop >"$WORK/ls.out" || fail "ls"
grep -qx " *18 small.txt" "$WORK/ls.out" || fail "ls lacks small.txt: $(cat "$WORK/ls.out")"
grep -qx " *$((12 * 1024 * 1024 + 5)) dir/big file.bin" "$WORK/ls.out" || fail "ls lacks the big file: $(cat "$WORK/ls.out")"
step "rclone copyto both back and cmp; rclone check agrees"
rclone copyto emu:rclone-interop/small.txt "$WORK/back/small.txt" || fail "copyto back small"
rclone copyto "emu:rclone-interop/dir/big file.bin" "$WORK/back/big.bin" || fail "copyto back big"
cmp "$WORK/small.txt" "$WORK/back/small.txt" || fail "small object differs"
cmp "$WORK/big.bin" "$WORK/back/big.bin" || fail "big object differs"
step "rclone sync of a tree whose names hold '+', '=', ' ', '%' and 'ü' (keys S3 accepts)"
export TZ=UTC  # the mtimes below, and rclone lsl's
mkdir -p "$WORK/tree/plus" "$WORK/tree/sp ace"
for name in "plus/a+b=c.txt" "sp ace/50% off.txt" "sp ace/ü.txt" "plain.txt"; do
  printf '%s\n' "$name" >"$WORK/tree/$name"
done
touch -d '2001-02-03 04:05:06' "$WORK/tree/plain.txt"
rclone sync "$WORK/tree" emu:rclone-interop/tree || fail "first sync"
step "cloudlua's head_object reads the mtime rclone kept in its metadata"
export CLOUDLUA_DIALECT=aws
lua 'local h = cloud.storage.head_object{ Bucket = "rclone-interop", Object = "tree/plain.txt" }
     assert(h.Metadata.mtime and h.Metadata.mtime:find("^981173106"), "mtime: " .. tostring(h.Metadata.mtime))'
step "rclone sync of the unchanged tree: no CopyObject (the mtimes come back), exit status 0"
rclone sync -vv --dump headers "$WORK/tree" emu:rclone-interop/tree 2>"$WORK/sync2.log" ||
  fail "second sync failed: $(tail -5 "$WORK/sync2.log")"
copies=$(grep -ci '^x-amz-copy-source:' "$WORK/sync2.log" || true)
[ "$copies" = 0 ] || fail "the second sync of an unchanged tree made $copies CopyObject requests"
step "rclone server-side copies (CopyObject) from those keys, then a changed mtime set by a copy"
rclone copyto "emu:rclone-interop/tree/plus/a+b=c.txt" "emu:rclone-interop/copied/a+b=c.txt" || fail "copy of a+b=c.txt"
rclone copyto "emu:rclone-interop/tree/sp ace/50% off.txt" "emu:rclone-interop/copied/50% off.txt" || fail "copy of 50% off.txt"
rclone copyto "emu:rclone-interop/tree/sp ace/ü.txt" "emu:rclone-interop/copied/ü.txt" || fail "copy of ü.txt"
rclone cat "emu:rclone-interop/copied/a+b=c.txt" | grep -qx 'plus/a+b=c.txt' || fail "the copy of a+b=c.txt differs"
touch -d '2002-02-03 04:05:06' "$WORK/tree/plain.txt"
rclone sync "$WORK/tree" emu:rclone-interop/tree || fail "sync after an mtime change"
rclone lsl emu:rclone-interop/tree/plain.txt | grep -q '2002-02-03 04:05:06' || fail "the new mtime was not kept"

step "rclone delete, then rmdir of the emptied bucket"
rclone delete emu:rclone-interop || fail "delete"
[ -z "$(rclone ls emu:rclone-interop)" ] || fail "objects left after delete"
rclone rmdir emu:rclone-interop || fail "rmdir"
rclone lsd emu: >"$WORK/buckets.out" || fail "lsd"
! grep -q rclone-interop "$WORK/buckets.out" || fail "the bucket is still listed"
echo "rclone_test: ok"
