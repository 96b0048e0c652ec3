#!/usr/bin/env bash
# aws-cli v2 (Debian's awscli, /usr/bin/aws) against `cloudlua serve --dialect aws`:
# create a bucket, `aws s3 cp` a 12 MiB file up and down (multipart both ways with
# 5 MiB parts) and compare the bytes, then the low-level s3api create-multipart-upload,
# upload-part, list-parts (a page per part), complete-multipart-upload and get-object,
# compared again, with the completed ETag checked against S3's rule; the two flows run
# at once. Skipped (77) when aws-cli is not installed, failed then under
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

start_serve --dialect aws
aws() { "$AWS" --endpoint-url "$CLOUDLUA_ENDPOINT_STORAGE" --output text "$@"; }

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

head -c $((12 * 1024 * 1024 + 7)) /dev/urandom >"$WORK/big.bin"
step "aws s3 mb"
aws s3 mb s3://interop >/dev/null
# aws-cli starts slowly; the two flows run side by side (two clients at once, too).
copy_both_ways &
copy=$!
multipart_by_hand
wait "$copy" || fail "the s3 cp flow failed (see above)"
echo "awscli_test: ok"
