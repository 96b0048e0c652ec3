#!/usr/bin/env bash
# What `cloudlua sync` (and `cloudlua cp`) keep of a website folder, read back through aws-cli (s3api
# head-object) from `cloudlua serve --dialect aws`: each file's type from its name, the
# same types `aws s3 sync` gives the same folder (none for an unknown extension), the
# --cache-control and --metadata flags, the file's mtime in the metadata `mtime`; a
# second sync of a file with a future mtime sends nothing; bucket to bucket keeps the
# type and metadata. With rclone installed, an object rclone uploaded (its
# X-Amz-Meta-Mtime) is compared by that mtime, and rclone finds nothing to do after
# cloudlua's sync. `cloudlua cp` takes the same three flags: up, from stdin, and bucket to
# bucket (REPLACE, the source's type kept under a new Cache-Control). Skipped (77) when
# aws-cli is not installed.
AWS=/usr/bin/aws
RCLONE=/usr/bin/rclone
source "$(dirname "$0")/lib.sh"
require_peer "$AWS" awscli

for v in $(compgen -e | grep -E '^(AWS|RCLONE)_' || true); do unset "$v"; done
export HOME="$WORK" AWS_CONFIG_FILE="$WORK/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-credentials"
export AWS_ACCESS_KEY_ID=CLOUDLUAEMULATORKEY AWS_SECRET_ACCESS_KEY=cloudlua-emulator-secret
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER="" TZ=UTC
printf '[default]\nregion = jp-east-1\ns3 =\n  addressing_style = path\n' >"$AWS_CONFIG_FILE"

start_serve --dialect aws
export CLOUDLUA_DIALECT=aws
aws() { "$AWS" --endpoint-url "$CLOUDLUA_ENDPOINT_STORAGE" --output text "$@"; }
# head FIELD KEY [BUCKET]: the head-object answer's FIELD (a JMESPath query).
head() { aws s3api head-object --bucket "${3:-site}" --key "$2" --query "$1"; }
sync() { (cd "$WORK" && "$CLOUDLUA" sync "$@") >"$WORK/out" 2>&1 || fail "cloudlua sync $*: $(cat "$WORK/out")"; }
cp() { (cd "$WORK" && "$CLOUDLUA" cp "$@") >"$WORK/out" 2>&1 || fail "cloudlua cp $*: $(cat "$WORK/out")"; }

aws s3 mb s3://site >/dev/null || fail "mb site"
aws s3 mb s3://bycli >/dev/null || fail "mb bycli"
aws s3 mb s3://copy >/dev/null || fail "mb copy"
mkdir -p "$WORK/www"
for name in index.html style.css app.js logo.svg data.json module.wasm notes.no-such-extension; do
  printf '%s\n' "$name" >"$WORK/www/$name"
done
touch -d '2001-02-03 04:05:06' "$WORK/www/index.html"

step "cloudlua sync with --cache-control and --metadata; aws s3 sync of the same folder"
sync ./www s3://site --cache-control max-age=300 --metadata release=7,team=web
aws s3 sync "$WORK/www" s3://bycli >/dev/null || fail "aws s3 sync"
for name in index.html style.css app.js logo.svg data.json module.wasm notes.no-such-extension; do
  # One head-object each (aws-cli starts slowly): the fields tab-separated.
  IFS=$'\t' read -r ours cache release team < <(head '[ContentType,CacheControl,Metadata.release,Metadata.team]' "$name")
  theirs=$(head ContentType "$name" bycli)
  echo "$name: $ours (aws-cli: $theirs)"
  [ "$ours" = "$theirs" ] || fail "$name: ContentType $ours, aws s3 sync gives $theirs"
  [ "$cache" = max-age=300 ] || fail "$name: CacheControl $cache"
  [ "$release" = 7 ] || fail "$name: metadata release missing"
  [ "$team" = web ] || fail "$name: metadata team missing"
done
[ "$(head ContentType index.html)" = text/html ] || fail "index.html is not text/html"
[ "$(head ContentType notes.no-such-extension)" = binary/octet-stream ] || fail "an unknown extension got a type"
[ "$(head Metadata.mtime index.html)" = 981173106 ] || fail "index.html mtime metadata: $(head Metadata.mtime index.html)"

step "a file with a future mtime: the second sync copies nothing"
touch -d '2100-01-01 00:00:00' "$WORK/www/app.js"
sync ./www s3://site
grep -qF "1 copied" "$WORK/out" || fail "the future file was not copied once: $(cat "$WORK/out")"
sync ./www s3://site
grep -qF "0 copied" "$WORK/out" || fail "the future file was sent again: $(cat "$WORK/out")"

step "bucket to bucket keeps the type and metadata; a download restores the mtime"
sync s3://site s3://copy
[ "$(head ContentType style.css copy)" = text/css ] || fail "the copy lost its type"
[ "$(head Metadata.release style.css copy)" = 7 ] || fail "the copy lost its metadata"
sync s3://copy ./down
[ "$(stat -c %Y "$WORK/down/index.html")" = 981173106 ] || fail "the download's mtime is $(stat -c %Y "$WORK/down/index.html")"

step "cloudlua cp with --content-type, --cache-control and --metadata: a file, stdin, bucket to bucket"
cp ./www/data.json s3://site/typed.json --content-type application/x-custom --metadata k=v=w
[ "$(head ContentType typed.json)" = application/x-custom ] || fail "cp --content-type: $(head ContentType typed.json)"
[ "$(head Metadata.k typed.json)" = v=w ] || fail "cp --metadata: $(head Metadata.k typed.json)"
printf 'piped\n' | cp - s3://site/piped.txt --content-type text/plain --cache-control no-store
[ "$(head ContentType piped.txt)" = text/plain ] && [ "$(head CacheControl piped.txt)" = no-store ] ||
  fail "cp - with flags: $(head ContentType piped.txt) $(head CacheControl piped.txt)"
cp s3://site/style.css s3://copy/restyled.css --cache-control max-age=60
[ "$(head ContentType restyled.css copy)" = text/css ] || fail "cp between buckets with --cache-control lost the type"
[ "$(head CacheControl restyled.css copy)" = max-age=60 ] || fail "cp between buckets: CacheControl $(head CacheControl restyled.css copy)"
[ "$(head Metadata.release restyled.css copy)" = 7 ] || fail "cp between buckets with --cache-control lost the metadata"
! "$CLOUDLUA" cp ./www/data.json s3://site/x --metadata nokey 2>"$WORK/err" || fail "cp --metadata nokey was taken"
grep -q "K=V pairs" "$WORK/err" || fail "cp --metadata nokey: $(cat "$WORK/err")"

if [ -x "$RCLONE" ]; then
  step "rclone: an object it uploaded compares by its X-Amz-Meta-Mtime; after cloudlua's sync it finds nothing to do"
  export RCLONE_CONFIG="$WORK/no-rclone.conf"
  export RCLONE_CONFIG_EMU_TYPE=s3 RCLONE_CONFIG_EMU_PROVIDER=Other RCLONE_CONFIG_EMU_ENV_AUTH=false
  export RCLONE_CONFIG_EMU_ACCESS_KEY_ID=$CLOUDLUA_ACCESS_KEY_ID RCLONE_CONFIG_EMU_SECRET_ACCESS_KEY=$CLOUDLUA_SECRET_ACCESS_KEY
  export RCLONE_CONFIG_EMU_ENDPOINT=$CLOUDLUA_ENDPOINT_STORAGE RCLONE_CONFIG_EMU_REGION=jp-east-1
  export RCLONE_CONFIG_EMU_FORCE_PATH_STYLE=true
  mkdir -p "$WORK/r"
  printf 'by rclone\n' >"$WORK/r/r.txt"
  touch -d '2100-01-01 00:00:00' "$WORK/r/r.txt"  # newer than the object rclone writes
  HOME="$WORK" "$RCLONE" copy "$WORK/r" emu:site/r || fail "rclone copy"
  sync ./r s3://site/r
  grep -qF "0 copied" "$WORK/out" || fail "the object rclone wrote was sent again: $(cat "$WORK/out")"
  printf 'by cloudlua\n' >"$WORK/r/c.txt"
  touch -d '2100-01-01 00:00:00' "$WORK/r/c.txt"
  sync ./r s3://site/r
  HOME="$WORK" "$RCLONE" check "$WORK/r" emu:site/r 2>"$WORK/check.log" || fail "rclone check: $(cat "$WORK/check.log")"
  HOME="$WORK" "$RCLONE" sync -vv --dump headers "$WORK/r" emu:site/r 2>"$WORK/rsync.log" || fail "rclone sync"
  if grep -qi '^x-amz-copy-source:\|^PUT ' "$WORK/rsync.log"; then fail "rclone sent again what cloudlua uploaded"; fi
fi
echo "OK"
