#!/usr/bin/env bash
# Browser uploads (S3's POST object) against `cloudlua serve`, in both dialects:
# cloudlua's cloud.storage.presign_post makes the form's fields, curl -F posts them
# with a file, and serve stores the object (201's XML, 204, a redirect) or refuses
# the form as S3 does (a field no condition names, content-length-range exceeded, an
# expired policy, a tampered policy or signature). With boto3 importable, boto3's
# generate_presigned_post is posted the same way.
source "$(dirname "$0")/lib.sh"

printf 'hello from a browser\n' >"$WORK/page.txt"
head -c 2000 /dev/urandom >"$WORK/big.bin"
start_serve

# presign ARGS: the form presign_post makes for the Lua table ARGS, one "-F name=value"
# argument a line in $WORK/form.args, the URL in $WORK/form.url.
presign() {
  "$CLOUDLUA" -e "
    local form = cloud.storage.presign_post($1)
    local f = assert(io.open('$WORK/form.url', 'w')); f:write(form.url); f:close()
    f = assert(io.open('$WORK/form.args', 'w'))
    for name, value in pairs(form.fields) do f:write(name, '=', value, '\n') end
    f:close()" || fail "presign_post failed"
}

# post FILE [EXTRA-FIELD...]: posts the form of $WORK/form.args with EXTRA fields and
# FILE last; the status on stdout, the answer in $WORK/answer, its headers in $WORK/head.
post() {
  local file=$1 args=() line
  shift
  while IFS= read -r line; do args+=(--form-string "$line"); done <"$WORK/form.args"
  for line in "$@"; do args+=(--form-string "$line"); done
  curl -s -o "$WORK/answer" -D "$WORK/head" -w '%{http_code}' "${args[@]}" -F "file=@$file" "$(cat "$WORK/form.url")"
}

expect_refusal() {  # STATUS CODE WHAT
  [ "$got" = "$1" ] || fail "$3: answered $got, not $1: $(cat "$WORK/answer")"
  grep -q "<Code>$2</Code>" "$WORK/answer" || fail "$3: not $2: $(cat "$WORK/answer")"
}

# Whether the model has object metadata (PutObject's ContentType): then the form's
# Content-Type and x-amz-meta-* fields must come back from head_object.
metadata=$("$CLOUDLUA" -e "
  local ok, e = pcall(cloud.storage.put_object, { Bucket = 'nowhere', Object = 'x', ContentType = 'text/plain' })
  print(not ok and e.code == 'ValidationError' and 'no' or 'yes')")

for dialect in ext aws; do
  export CLOUDLUA_DIALECT=$dialect
  b=post-$dialect
  lua "cloud.storage.create_bucket{ Bucket = '$b' }"

  step "$dialect: a form presign_post made stores the file; 201 answers S3's PostResponse"
  presign "{ Bucket = '$b', Object = 'up/\${filename}',
             fields = { ['Content-Type'] = 'text/plain', ['x-amz-meta-color'] = 'blue', success_action_status = '201' },
             conditions = { { 'content-length-range', 1, 1000 } } }"
  grep -q "^x-$([ $dialect = ext ] && echo ext || echo amz)-signature=" "$WORK/form.args" || fail "no $dialect signature: $(cat "$WORK/form.args")"
  got=$(post "$WORK/page.txt")
  [ "$got" = 201 ] || fail "201 expected, got $got: $(cat "$WORK/answer")"
  grep -q "<PostResponse><Location>http://.*/$b/up/page.txt</Location><Bucket>$b</Bucket><Key>up/page.txt</Key><ETag>\"" "$WORK/answer" ||
    fail "not a PostResponse: $(cat "$WORK/answer")"
  lua "
    local r = cloud.storage.get_object{ Bucket = '$b', Object = 'up/page.txt' }
    assert(r.Body == 'hello from a browser\n', 'stored bytes: ' .. cloud.printable(r.Body))
    if '$metadata' == 'yes' then
      local h = cloud.storage.head_object{ Bucket = '$b', Object = 'up/page.txt' }
      assert(h.ContentType == 'text/plain', 'content type: ' .. tostring(h.ContentType))
      assert(h.Metadata and h.Metadata.color == 'blue', 'metadata: ' .. cloud.pretty(h.Metadata or {}))
    end"

  step "$dialect: without success_action_status the answer is 204; a redirect is 303 with bucket, key and etag"
  presign "{ Bucket = '$b', Object = 'plain.txt' }"
  got=$(post "$WORK/page.txt")
  [ "$got" = 204 ] || fail "204 expected, got $got: $(cat "$WORK/answer")"
  presign "{ Bucket = '$b', Object = 'redirected.txt', fields = { success_action_redirect = 'http://example.test/done?x=1' } }"
  got=$(post "$WORK/page.txt")
  [ "$got" = 303 ] || fail "303 expected, got $got: $(cat "$WORK/answer")"
  grep -qi "^Location: http://example.test/done?x=1&bucket=$b&key=redirected.txt&etag=%22" "$WORK/head" ||
    fail "redirect: $(cat "$WORK/head")"

  step "$dialect: refusals: a field no condition names, too large, a tampered policy or signature"
  presign "{ Bucket = '$b', Object = 'refused.txt', conditions = { { 'content-length-range', 0, 100 } } }"
  got=$(post "$WORK/page.txt" "x-amz-meta-extra=1")
  expect_refusal 403 AccessDenied "an extra field"
  grep -q "Extra input fields: x-amz-meta-extra" "$WORK/answer" || fail "extra field: $(cat "$WORK/answer")"
  got=$(post "$WORK/big.bin")
  expect_refusal 400 EntityTooLarge "content-length-range"
  cp "$WORK/form.args" "$WORK/good.args"
  sed -i 's/^\(policy=.\)A/\1B/; t; s/^\(policy=.\)./\1A/' "$WORK/form.args"
  got=$(post "$WORK/page.txt")
  expect_refusal 403 SignatureDoesNotMatch "a tampered policy"
  sed 's/^\(x-[a-z]*-signature=\)0/\11/; t; s/^\(x-[a-z]*-signature=\)./\10/' "$WORK/good.args" >"$WORK/form.args"
  got=$(post "$WORK/page.txt")
  expect_refusal 403 SignatureDoesNotMatch "a tampered signature"
  presign "{ Bucket = '$b', Object = 'late.txt', expires = 60 }"
  lua "cloud.request{ api = 'storage', method = 'POST', path = '/_cloudlua/advance', body = '{\"seconds\": 120}' }"
  got=$(post "$WORK/page.txt")
  expect_refusal 403 AccessDenied "an expired policy"
  grep -q "Policy expired" "$WORK/answer" || fail "expired: $(cat "$WORK/answer")"
  lua "
    local ok, e = pcall(cloud.storage.head_object, { Bucket = '$b', Object = 'refused.txt' })
    assert(not ok, 'a refused form stored its object')"
done

step "hostile forms: fields past 20 KiB before the file, a cut body, no key, no policy, a repeated field"
export CLOUDLUA_DIALECT=aws
presign "{ Bucket = 'post-aws', Object = 'hostile.txt' }"
got=$(post "$WORK/page.txt" "x-ignore-pad=$(head -c 25000 /dev/zero | tr '\0' a)")
expect_refusal 400 MaxPostPreDataLengthExceededError "25 KB of fields"
got=$(curl -s -o "$WORK/answer" -w '%{http_code}' -H 'Content-Type: multipart/form-data; boundary=XyZ' \
  --data-binary $'--XyZ\r\nContent-Disposition: form-data; name="key"\r\n\r\nk\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nno end' \
  "$(cat "$WORK/form.url")")
expect_refusal 400 MalformedPOSTRequest "a file part without its closing boundary"
grep -v '^key=' "$WORK/form.args" >"$WORK/nokey.args" && cp "$WORK/nokey.args" "$WORK/form.args"
got=$(post "$WORK/page.txt")
expect_refusal 400 InvalidArgument "no key"
got=$(curl -s -o "$WORK/answer" -w '%{http_code}' -F key=k -F "file=@$WORK/page.txt" "$(cat "$WORK/form.url")")
expect_refusal 403 AccessDenied "no policy"
presign "{ Bucket = 'post-aws', Object = 'hostile.txt' }"
got=$(post "$WORK/page.txt" "key=other")
expect_refusal 400 InvalidArgument "a repeated key"

if python3 -c 'import boto3' 2>/dev/null; then
  step "boto3: generate_presigned_post's form, posted with curl, stores the object"
  export ENDPOINT=$CLOUDLUA_ENDPOINT_STORAGE
  isolate_boto3
  python3 - "$WORK" <<'PY' || fail "boto3 could not presign"
import boto3, sys, os
from botocore.config import Config
work = sys.argv[1]
s3 = boto3.client("s3", endpoint_url=os.environ["ENDPOINT"], region_name="jp-east-1",
                  aws_access_key_id="CLOUDLUAEMULATORKEY", aws_secret_access_key="cloudlua-emulator-secret",
                  config=Config(s3={"addressing_style": "path"}))
form = s3.generate_presigned_post("post-aws", "boto/${filename}", Fields={"Content-Type": "text/plain"},
                                  Conditions=[{"Content-Type": "text/plain"}], ExpiresIn=3600)
open(work + "/form.url", "w").write(form["url"])
open(work + "/form.args", "w").write("".join(f"{k}={v}\n" for k, v in form["fields"].items()))
PY
  got=$(post "$WORK/page.txt")
  [ "$got" = 204 ] || fail "boto3's form: answered $got: $(cat "$WORK/answer")"
  CLOUDLUA_DIALECT=aws lua "assert(cloud.storage.get_object{ Bucket = 'post-aws', Object = 'boto/page.txt' }.Body == 'hello from a browser\n')"
else
  echo "boto3 not importable: its generate_presigned_post not tried"
fi
stop_serve TERM
echo "post_object_test: ok"
