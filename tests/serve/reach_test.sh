#!/usr/bin/env bash
# One setting reaches `cloudlua serve`: the block serve prints is pasted into a clean
# shell (no CLOUDLUA_* variable but the one it gives, HOME a fresh folder), and cloudlua
# makes a storage call and a cluster call; aws-cli (and rclone, when installed) read
# back what it wrote with the block's own variables. A serve given a secret of the
# operator's never prints it (stdout and stderr grepped whole), names where it came
# from, and is reached with the URL plus the operator's keys. `serve --profile NAME`
# writes a profile cloudlua then reaches serve through, replaces its own on the next
# run and refuses to overwrite a profile it did not write. A URL where no serve
# answers is a NoServe config error.
source "$(dirname "$0")/lib.sh"
CLEAN="$(dirname "$0")/../without_cloudlua_env.sh"
export HOME="$WORK/home" XDG_CONFIG_HOME=""
mkdir -p "$HOME"

# pasted LINES... CMD...: runs CMD in a shell that has only what the pasted export
# lines set (no CLOUDLUA_* or AWS_* of this test's), HOME the fresh one.
pasted() {
  local block=$1
  shift
  (
    for v in $(compgen -e | grep -E '^(CLOUDLUA_|AWS_|RCLONE_)' || true); do unset "$v"; done
    eval "$block"
    "$@"
  )
}

step "the block: cloudlua's one setting, aws-cli's and rclone's variables, the built-in keys"
start_serve
block=$(cat "$WORK/serve.out")
url=$(sed -n 's/^export CLOUDLUA_ENDPOINT_URL=//p' "$WORK/serve.out")
[ "$url" = "$CLOUDLUA_ENDPOINT_STORAGE" ] || fail "CLOUDLUA_ENDPOINT_URL '$url' is not the storage URL: $block"
for part in "AWS_ENDPOINT_URL=$url" "AWS_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY AWS_SECRET_ACCESS_KEY=cloudlua-emulator-secret" \
  "AWS_DEFAULT_REGION=jp-east-1" "RCLONE_CONFIG_SERVE_ENDPOINT=$url" "RCLONE_CONFIG_SERVE_SECRET_ACCESS_KEY=cloudlua-emulator-secret"; do
  [[ "$block" == *"$part"* ]] || fail "'$part' not in the block: $block"
done
cloudlua_block=$(grep '^export CLOUDLUA_' "$WORK/serve.out")
[ "$(echo "$cloudlua_block" | wc -l)" -eq 1 ] || fail "cloudlua's part is more than one setting: $cloudlua_block"

step "cloudlua with that one setting: a storage call and a cluster call"
got=$(pasted "$cloudlua_block" "$CLOUDLUA" -e '
  cloud.storage.create_bucket{ Bucket = "reach" }
  cloud.storage.put_object{ Bucket = "reach", Object = "hello.txt", Body = "hello from cloudlua" }
  print(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "reached" } }.snapshot.description)
  print(cloud.emulator ~= nil)') || fail "cloudlua with CLOUDLUA_ENDPOINT_URL failed"
[ "$got" = $'reached\ntrue' ] || fail "cloudlua printed: $got"
step "--endpoint URL is the same setting"
got=$("$CLEAN" "$CLOUDLUA" --endpoint "$url" -e 'print(cloud.storage.get_object{ Bucket = "reach", Object = "hello.txt" }.Body)') ||
  fail "--endpoint URL failed"
[ "$got" = "hello from cloudlua" ] || fail "--endpoint URL read: $got"

step "aws-cli with the block's variables reads back what cloudlua wrote"
aws_block=$(grep '^export AWS_' "$WORK/serve.out")
# aws-cli sees only the block: no config or credentials file of the machine's.
aws_env=(env AWS_CONFIG_FILE="$WORK/no-aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-aws-credentials"
  AWS_EC2_METADATA_DISABLED=true AWS_PAGER=)
if [ -x /usr/bin/aws ]; then
  # Debian 12's aws-cli (2.9) predates AWS_ENDPOINT_URL: the block says to pass it as --endpoint-url.
  got=$(pasted "$aws_block" sh -c 'exec "$@" --endpoint-url "$AWS_ENDPOINT_URL" s3 cp s3://reach/hello.txt -' _ \
    "${aws_env[@]}" /usr/bin/aws) || fail "aws s3 cp failed"
  [ "$got" = "hello from cloudlua" ] || fail "aws-cli read: $got"
else
  [ "${CLOUDLUA_REQUIRE_INTEROP:-0}" = 1 ] && fail "/usr/bin/aws not found (Debian package awscli)"
  echo "# aws-cli not installed: its part skipped"
fi
# boto3 reads AWS_ENDPOINT_URL from botocore 1.31 on (Debian 12's is older: skipped).
if python3 -c 'import boto3, botocore, sys; sys.exit(tuple(map(int, botocore.__version__.split(".")[:2])) < (1, 31))' 2>/dev/null; then
  step "boto3 with only the block's variables (AWS_ENDPOINT_URL)"
  got=$(pasted "$aws_block" "${aws_env[@]}" python3 -c '
import boto3
print(boto3.client("s3").get_object(Bucket="reach", Key="hello.txt")["Body"].read().decode())') || fail "boto3 failed"
  [ "$got" = "hello from cloudlua" ] || fail "boto3 read: $got"
fi
if [ -x /usr/bin/rclone ]; then
  step "rclone with the block's variables"
  rclone_block=$(grep '^export RCLONE_' "$WORK/serve.out")
  got=$(pasted "$rclone_block" /usr/bin/rclone --config /dev/null cat serve:reach/hello.txt) || fail "rclone cat failed"
  [ "$got" = "hello from cloudlua" ] || fail "rclone read: $got"
fi

step "a URL where no serve answers: NoServe"
dead=$(free_ports 1)
got=$("$CLEAN" CLOUDLUA_ENDPOINT_URL="http://127.0.0.1:$dead" "$CLOUDLUA" -e 'cloud.storage.list_buckets{}' 2>&1) &&
  fail "a call to no serve succeeded: $got"
[[ "$got" == *NoServe* ]] || fail "no NoServe: $got"
stop_serve TERM

OWN_KEY=OPERATORKEY0001 OWN_SECRET=operator-secret-5f2c9a71d3
step "a secret of the operator's (variable): never printed, its variable named"
CLOUDLUA_ACCESS_KEY_ID=$OWN_KEY CLOUDLUA_SECRET_ACCESS_KEY=$OWN_SECRET start_serve
url=$(sed -n 's/^export CLOUDLUA_ENDPOINT_URL=//p' "$WORK/serve.out")
! grep -qF "$OWN_SECRET" "$WORK/serve.out" "$WORK/serve.err" || fail "the secret is printed: $(cat "$WORK/serve.out" "$WORK/serve.err")"
grep -q 'from CLOUDLUA_SECRET_ACCESS_KEY' "$WORK/serve.out" || fail "the block does not name the variable: $(cat "$WORK/serve.out")"
discovered=$(curl -sS "$url/_cloudlua/discover")
[[ "$discovered" == *'"credentials":"own"'* && "$discovered" != *"$OWN_SECRET"* && "$discovered" != *secret_access_key* ]] ||
  fail "discovery answered: $discovered"
got=$("$CLEAN" CLOUDLUA_ENDPOINT_URL="$url" CLOUDLUA_ACCESS_KEY_ID=$OWN_KEY CLOUDLUA_SECRET_ACCESS_KEY=$OWN_SECRET \
  "$CLOUDLUA" -e 'print(#cloud.storage.list_buckets{}.Buckets >= 0)') || fail "URL and the operator's keys failed"
[ "$got" = true ] || fail "printed: $got"
got=$("$CLEAN" CLOUDLUA_ENDPOINT_URL="$url" "$CLOUDLUA" -e 'cloud.storage.list_buckets{}' 2>&1) && fail "no keys succeeded"
[[ "$got" == *NoCredentials* ]] || fail "without keys: $got"
stop_serve TERM

step "a secret of the operator's (--secret-key): never printed, the flag named"
start_serve --access-key "$OWN_KEY" --secret-key "$OWN_SECRET"
! grep -qF "$OWN_SECRET" "$WORK/serve.out" "$WORK/serve.err" || fail "the secret is printed: $(cat "$WORK/serve.out" "$WORK/serve.err")"
grep -q -- '--secret-key' "$WORK/serve.out" || fail "the block does not name --secret-key: $(cat "$WORK/serve.out")"
stop_serve TERM

step "serve --profile NAME: written, used, replaced; another's profile refused"
export CLOUDLUA_CONFIG_FILE="$WORK/config"
printf '[mine]\nregion = jp-west-1\n' >"$CLOUDLUA_CONFIG_FILE"
start_serve --profile local
url=$(sed -n 's/^export CLOUDLUA_ENDPOINT_URL=//p' "$WORK/serve.out")
grep -q "written to the profile local of $CLOUDLUA_CONFIG_FILE" "$WORK/serve.out" || fail "no profile line: $(cat "$WORK/serve.out")"
grep -q "^endpoint_url = $url\$" "$CLOUDLUA_CONFIG_FILE" || fail "config: $(cat "$CLOUDLUA_CONFIG_FILE")"
head -2 "$CLOUDLUA_CONFIG_FILE" | grep -q '^region = jp-west-1$' || fail "the user's profile changed: $(cat "$CLOUDLUA_CONFIG_FILE")"
got=$("$CLEAN" CLOUDLUA_CONFIG_FILE="$CLOUDLUA_CONFIG_FILE" "$CLOUDLUA" --profile local -e 'print(cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} }.snapshot.name)') ||
  fail "--profile local failed"
[ "$got" = snap-1 ] || fail "printed: $got"
stop_serve TERM
start_serve --profile local
url2=$(sed -n 's/^export CLOUDLUA_ENDPOINT_URL=//p' "$WORK/serve.out")
[ "$(grep -c '^\[local\]$' "$CLOUDLUA_CONFIG_FILE")" -eq 1 ] && grep -q "^endpoint_url = $url2\$" "$CLOUDLUA_CONFIG_FILE" ||
  fail "not replaced: $(cat "$CLOUDLUA_CONFIG_FILE")"
stop_serve TERM
before=$(cat "$CLOUDLUA_CONFIG_FILE")
"$CLOUDLUA" serve --profile mine >"$WORK/refused.out" 2>&1 && fail "serve --profile mine started"
grep -q ProfileExists "$WORK/refused.out" || fail "refusal: $(cat "$WORK/refused.out")"
[ "$(cat "$CLOUDLUA_CONFIG_FILE")" = "$before" ] || fail "the refused run changed the file: $(cat "$CLOUDLUA_CONFIG_FILE")"
unset CLOUDLUA_CONFIG_FILE

step "serve's region and its one dialect are taken from it: still one setting"
start_serve --dialect aws --region jp-west-1
url=$(sed -n 's/^export CLOUDLUA_ENDPOINT_URL=//p' "$WORK/serve.out")
got=$("$CLEAN" CLOUDLUA_ENDPOINT_URL="$url" "$CLOUDLUA" -e '
  cloud.storage.create_bucket{ Bucket = "west" }
  print(cloud.storage.get_bucket_location{ Bucket = "west" }.LocationConstraint)') || fail "aws-only serve in jp-west-1"
[ "$got" = jp-west-1 ] || fail "printed: $got"
grep -q 'AWS_DEFAULT_REGION=jp-west-1' "$WORK/serve.out" || fail "the block's region: $(cat "$WORK/serve.out")"
stop_serve TERM
step "serve --dialect ext: the block says aws-cli, boto3 and rclone cannot sign for it"
start_serve --dialect ext
grep -q 'serve takes ext only here' "$WORK/serve.out" || fail "block: $(cat "$WORK/serve.out")"
! grep -q '^export AWS_' "$WORK/serve.out" || fail "aws variables for an ext-only serve: $(cat "$WORK/serve.out")"
stop_serve TERM
echo "PASS"
