#!/usr/bin/env bash
# aws-cli v2 (Debian's awscli, /usr/bin/aws) against `cloudlua serve --dialect aws --port P`,
# at the port asked for (`aws s3 ls` there lists the buckets):
# create a bucket, `aws s3 cp` a 12 MiB file up and down (multipart both ways with
# 5 MiB parts) and compare the bytes, then the low-level s3api create-multipart-upload,
# upload-part, list-parts (a page per part), complete-multipart-upload and get-object,
# compared again, with the completed ETag checked against S3's rule; the two flows run
# at once. Then content headers and metadata set by aws-cli and read back by it and by
# cloudlua, kept or replaced by copies from a key with '+', '=', ' ', '%' and 'ü', and
# conditional GETs. Skipped (77) when aws-cli is not installed, failed then under
# CLOUDLUA_REQUIRE_INTEROP=1.
AWS=/usr/bin/aws  # explicitly Debian's: PATH may hold another aws first
source "$(dirname "$0")/lib.sh"
require_peer "$AWS" awscli

# aws-cli sees only what this test gives it: no profile, no cache or config of the user.
for v in $(compgen -e | grep '^AWS_' || true); do unset "$v"; done
export HOME="$WORK" AWS_CONFIG_FILE="$WORK/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
export AWS_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY AWS_SECRET_ACCESS_KEY=cloudlua-emulator-secret
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=""
cat >"$AWS_CONFIG_FILE" <<'CONFIG'
[default]
region = jp-east-1
s3 =
  addressing_style = path
  multipart_threshold = 5MB
  multipart_chunksize = 5MB
CONFIG

# aws-cli pointed at the port serve was asked for: storage is there.
PORT=$(free_ports 4)
start_serve --dialect aws --port "$PORT"
aws() { "$AWS" --endpoint-url "http://127.0.0.1:$PORT" --output text "$@"; }
step "serve --port $PORT: aws --endpoint-url http://127.0.0.1:$PORT s3 ls"
aws s3 ls >"$WORK/ls.out" 2>&1 || fail "aws s3 ls on the asked port failed: $(cat "$WORK/ls.out")"
grep -q ' demo-bucket$' "$WORK/ls.out" || fail "aws s3 ls on the asked port listed: $(cat "$WORK/ls.out")"

# S3's multipart ETag of FILES... as parts: MD5 of the parts' binary MD5s, "-" count.
multipart_etag() {
  python3 -c 'import hashlib, sys
digests = b"".join(hashlib.md5(open(p, "rb").read()).digest() for p in sys.argv[1:])
print("\"%s-%d\"" % (hashlib.md5(digests).hexdigest(), len(sys.argv) - 1))' "$@"
}

# The high-level copy: up in 3 parts, HEAD, down with ranged GETs, compared.
copy_both_ways() {
  step "aws s3 cp up: multipart, 3 parts"
  aws s3 cp --only-show-errors "$WORK/big.bin" s3://interop/dir/big.bin
  local described expected
  described=$(aws s3api head-object --bucket interop --key dir/big.bin --query '[ETag,ContentLength]')
  split -b $((5 * 1024 * 1024)) -d "$WORK/big.bin" "$WORK/chunk."
  expected="$(multipart_etag "$WORK"/chunk.*)	$((12 * 1024 * 1024 + 7))"
  [ "$described" = "$expected" ] || fail "HEAD of the uploaded object says '$described', expected '$expected'"
  step "aws s3 cp down (ranged GETs) and cmp"
  aws s3 cp --only-show-errors s3://interop/dir/big.bin "$WORK/back.bin"
  cmp "$WORK/big.bin" "$WORK/back.bin" || fail "downloaded bytes differ"
}

# The low-level steps: create, two parts at once, complete, get-object, compared.
multipart_by_hand() {
  step "s3api create-multipart-upload / upload-part / complete-multipart-upload"
  local key="low level/ü+x=1.bin" upload e1 e2 listed done_etag expected
  head -c $((5 * 1024 * 1024)) "$WORK/big.bin" >"$WORK/p1"
  head -c 1000 /dev/urandom >"$WORK/p2"
  upload=$(aws s3api create-multipart-upload --bucket interop --key "$key" --query UploadId)
  [ -n "$upload" ] || fail "no upload id"
  aws s3api upload-part --bucket interop --key "$key" --upload-id "$upload" --part-number 1 --body "$WORK/p1" \
    --query ETag >"$WORK/e1" &
  aws s3api upload-part --bucket interop --key "$key" --upload-id "$upload" --part-number 2 --body "$WORK/p2" \
    --query ETag >"$WORK/e2" || fail "upload-part 2"
  wait $! || fail "upload-part 1"
  e1=$(cat "$WORK/e1") e2=$(cat "$WORK/e2")
  [ "$e1" = "\"$(md5sum <"$WORK/p1" | cut -c1-32)\"" ] || fail "part 1 ETag $e1 is not the part's MD5"
  step "s3api list-parts, one part a page: both parts in order with ETag and Size"
  listed=$(aws s3api list-parts --bucket interop --key "$key" --upload-id "$upload" --page-size 1 \
    --query 'Parts[].[PartNumber,ETag,Size]')
  [ "$listed" = "$(printf '1\t%s\t5242880\n2\t%s\t1000' "$e1" "$e2")" ] || fail "list-parts answered: $listed"
  printf '{"Parts":[{"PartNumber":1,"ETag":%s},{"PartNumber":2,"ETag":%s}]}' "$e1" "$e2" >"$WORK/parts.json"
  done_etag=$(aws s3api complete-multipart-upload --bucket interop --key "$key" --upload-id "$upload" \
    --multipart-upload "file://$WORK/parts.json" --query ETag)
  expected=$(multipart_etag "$WORK/p1" "$WORK/p2")
  [ "$done_etag" = "$expected" ] || fail "completed ETag $done_etag, expected $expected"
  step "s3api get-object and cmp"
  aws s3api get-object --bucket interop --key "$key" "$WORK/got.bin" >/dev/null
  cat "$WORK/p1" "$WORK/p2" | cmp - "$WORK/got.bin" || fail "completed object differs from its parts"
}

# What HTTP says of an object, set by aws-cli and read back by aws-cli and by cloudlua;
# a copy keeping it (COPY) and replacing it (REPLACE), from a key with '+', '=', a space,
# '%' and a non-ASCII letter; conditional GETs answered 304 and 412.
metadata_and_conditions() {
  local key="meta/a b+c=d%e ü.txt" got etag
  step "s3api put-object with content headers and metadata; head-object reads them back"
  printf 'hello\n' >"$WORK/meta.txt"
  aws s3api put-object --bucket interop --key "$key" --body "$WORK/meta.txt" --content-type text/plain \
    --cache-control max-age=60 --content-disposition 'attachment; filename="a%20b.txt"' \
    --metadata Foo=bar,mtime=1700000000,empty= >/dev/null || fail "put-object with metadata"
  got=$(aws s3api head-object --bucket interop --key "$key" \
    --query '[ContentType,CacheControl,ContentDisposition,Metadata.foo,Metadata.mtime]')
  [ "$got" = "$(printf 'text/plain\tmax-age=60\tattachment; filename="a%%20b.txt"\tbar\t1700000000')" ] ||
    fail "head-object answered: $got"
  step "cloudlua's head_object reads what aws-cli set"
  export CLOUDLUA_DIALECT=aws
  lua "local h = cloud.storage.head_object{ Bucket = 'interop', Object = 'meta/a b+c=d%e ü.txt' }
       assert(h.ContentType == 'text/plain' and h.CacheControl == 'max-age=60', h.ContentType)
       assert(h.Metadata.foo == 'bar' and h.Metadata.mtime == '1700000000' and h.Metadata.empty == '', cloud.pretty(h))"
  step "s3api copy-object from that key: COPY keeps the metadata, REPLACE sets the request's"
  aws s3api copy-object --bucket interop --key "meta/copy" --copy-source "interop/$key" >/dev/null || fail "copy-object"
  got=$(aws s3api head-object --bucket interop --key meta/copy --query '[ContentType,Metadata.foo]')
  [ "$got" = "$(printf 'text/plain\tbar')" ] || fail "the COPY answered: $got"
  aws s3api copy-object --bucket interop --key "meta/copy" --copy-source "interop/$key" --metadata-directive REPLACE \
    --content-type text/csv --metadata other=1 >/dev/null || fail "copy-object REPLACE"
  got=$(aws s3api head-object --bucket interop --key meta/copy --query '[ContentType,Metadata]' --output json | tr -d ' \n')
  [ "$got" = '["text/csv",{"other":"1"}]' ] || fail "the REPLACE answered: $got"
  step "conditional GETs: If-None-Match 304, If-Match 412, If-Match with the ETag 200"
  etag=$(aws s3api head-object --bucket interop --key "$key" --query ETag)
  ! aws s3api get-object --bucket interop --key "$key" --if-none-match "$etag" "$WORK/cond.out" 2>"$WORK/cond.err" ||
    fail "If-None-Match with the ETag answered the object"
  grep -q 304 "$WORK/cond.err" || fail "If-None-Match: $(cat "$WORK/cond.err")"
  ! aws s3api get-object --bucket interop --key "$key" --if-match '"0123"' "$WORK/cond.out" 2>"$WORK/cond.err" ||
    fail "If-Match with another ETag answered the object"
  grep -q PreconditionFailed "$WORK/cond.err" || fail "If-Match: $(cat "$WORK/cond.err")"
  aws s3api get-object --bucket interop --key "$key" --if-match "$etag" --if-unmodified-since 2000-01-01 \
    "$WORK/cond.out" >/dev/null || fail "If-Match true with If-Unmodified-Since false must answer 200, as S3 does"
  cmp "$WORK/meta.txt" "$WORK/cond.out" || fail "the conditional GET's bytes differ"
}

head -c $((12 * 1024 * 1024 + 7)) /dev/urandom >"$WORK/big.bin"
step "aws s3 mb"
aws s3 mb s3://interop >/dev/null
# aws-cli starts slowly; the three flows run side by side (clients at once, too).
copy_both_ways &
copy=$!
metadata_and_conditions &
meta=$!
multipart_by_hand
wait "$copy" || fail "the s3 cp flow failed (see above)"
wait "$meta" || fail "the metadata flow failed (see above)"
echo "awscli_test: ok"
