#!/usr/bin/env bash
# Presigned URLs against `cloudlua serve`, in both dialects: cloudlua puts an object
# and presigns a GET of it; curl, with the URL alone (no keys, no headers), fetches
# the same bytes, stores new ones through a presigned PUT (curl -T), and is refused
# a URL whose path was changed.
source "$(dirname "$0")/lib.sh"

head -c 3000 /dev/urandom >"$WORK/object.bin"
printf 'put through a presigned URL\n' >"$WORK/put.txt"
start_serve

for dialect in ext aws; do
  export CLOUDLUA_DIALECT=$dialect
  prefix=$([ "$dialect" = ext ] && echo X-Ext- || echo X-Amz-)
  step "$dialect: a presigned GET fetches the object with curl alone"
  lua "
    cloud.storage.create_bucket{ Bucket = 'b-$dialect' }
    cloud.storage.put_object{ Bucket = 'b-$dialect', Object = 'dir/one.bin', file = '$WORK/object.bin' }
    local function save(name, url)
      local f = assert(io.open('$WORK/' .. name, 'w')); f:write(url); f:close()
    end
    save('get.url', cloud.storage.presign{ Bucket = 'b-$dialect', Object = 'dir/one.bin' })
    save('put.url', cloud.storage.presign{ Bucket = 'b-$dialect', Object = 'two.txt', method = 'PUT', expires = 60 })
    save('get2.url', cloud.storage.presign{ Bucket = 'b-$dialect', Object = 'two.txt', expires = 60 })"
  grep -q "${prefix}Algorithm=" "$WORK/get.url" || fail "not a $dialect URL: $(cat "$WORK/get.url")"
  curl -sf -o "$WORK/fetched.bin" "$(cat "$WORK/get.url")" || fail "curl could not fetch the presigned GET"
  cmp "$WORK/object.bin" "$WORK/fetched.bin" || fail "the fetched bytes differ"

  step "$dialect: a presigned PUT stores what curl -T sends"
  curl -sf -T "$WORK/put.txt" "$(cat "$WORK/put.url")" >/dev/null || fail "curl -T was refused"
  curl -sf -o "$WORK/fetched.txt" "$(cat "$WORK/get2.url")" || fail "curl could not fetch the PUT object"
  cmp "$WORK/put.txt" "$WORK/fetched.txt" || fail "the stored bytes differ"

  step "$dialect: a changed path is refused"
  tampered=$(sed 's#/dir/one.bin#/dir/won.bin#' "$WORK/get.url")
  status=$(curl -s -o "$WORK/refused.xml" -w '%{http_code}' "$tampered")
  [ "$status" = 403 ] || fail "tampered URL answered $status"
  grep -q SignatureDoesNotMatch "$WORK/refused.xml" || fail "refusal: $(cat "$WORK/refused.xml")"
done
stop_serve TERM
echo "presign_test: ok"
