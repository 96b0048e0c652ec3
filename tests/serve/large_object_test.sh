#!/usr/bin/env bash
# serve streams bodies to files as they arrive (issue 24, item 2): an object of
# LARGE_OBJECT_MIB MiB (512 here; 4096 under the `long` label, serve.large_object_4g)
# is put with put_object{ file = } (aws-chunked, each chunk's signature checked on the
# way) and sent back, with and without --state, by a serve whose address space is
# capped (ulimit -v) at what it needs for a small object plus 256 MiB, less than the
# object: a serve that holds a body whole fails under it. Its peak resident
# memory (VmHWM, /proc) stays under 96 MiB, and what comes back hashes as what was
# sent; so does the object copied whole into an upload's part (UploadPartCopy) and
# completed. A body cut off mid-way (the client gone; with --state, serve killed -9 and
# restarted) leaves nothing stored and no file behind; without --state, serve's folder
# of bytes under $TMPDIR goes at SIGTERM and at SIGINT.
source "$(dirname "$0")/lib.sh"
# Under AddressSanitizer freed memory waits in a quarantine: none, so what is measured
# is what serve holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"

MIB=${LARGE_OBJECT_MIB:-512}
HEADROOM_KIB=$((256 * 1024))
BOUND=$((96 << 20))
export TMPDIR="$WORK/tmp"  # serve's folder of bytes without --state is made here
mkdir -p "$TMPDIR"

# vm NAME: serve's VmHWM or VmPeak, in KiB.
vm() { awk -v n="$1:" '$1 == n { print $2 }' "/proc/$SERVE_PID/status"; }

# The inputs: a small object, and MIB MiB of random bytes (hashed once).
head -c 65536 /dev/urandom >"$WORK/small.bin"
head -c $((MIB << 20)) /dev/urandom >"$WORK/big.bin"
want=$(sha256sum <"$WORK/big.bin" | cut -d' ' -f1)

# put_and_get OBJECT FILE: puts FILE, then fetches it through a presigned GET with
# curl, hashed as it arrives (nothing of it written down); prints the hash.
put_and_get() {
  lua "
    pcall(cloud.storage.create_bucket, { Bucket = 'big' })
    cloud.storage.put_object{ Bucket = 'big', Object = '$1', file = '$2' }
    local f = assert(io.open('$WORK/get.url', 'w'))
    f:write(cloud.storage.presign{ Bucket = 'big', Object = '$1' }); f:close()" >/dev/null
  curl -sf "$(cat "$WORK/get.url")" | sha256sum | cut -d' ' -f1
}

# cut_body SECONDS: sends 3 MiB of a presigned PUT ($WORK/put.url) declared as 64 MiB,
# then waits SECONDS before going.
cut_body() {
  python3 - "$(cat "$WORK/put.url")" "$1" <<'PY'
import socket, sys, time, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
s = socket.create_connection((url.hostname, url.port))
head = "PUT %s?%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n" % (url.path, url.query, url.netloc, 64 << 20)
s.sendall(head.encode() + b"x" * (3 << 20))
time.sleep(float(sys.argv[2]))
s.close()
PY
}

for mode in memory state; do
  args=()
  [ "$mode" = state ] && args=(--state "$WORK/state")
  step "$mode: the cap, what serve needs for a small object plus 256 MiB (less than the object's $MIB MiB)"
  start_serve "${args[@]}"
  [ "$(put_and_get small.bin "$WORK/small.bin")" = "$(sha256sum <"$WORK/small.bin" | cut -d' ' -f1)" ] ||
    fail "the small object came back different"
  cap=$(($(vm VmPeak) + HEADROOM_KIB))
  stop_serve TERM
  echo "serve's VmPeak for a small object: $(((cap - HEADROOM_KIB) / 1024)) MiB; the cap: $((cap / 1024)) MiB"
  if [ $(((cap - HEADROOM_KIB) / 1024)) -gt 4096 ]; then
    echo "SKIP: this build reserves $(((cap - HEADROOM_KIB) / 1024)) MiB of address space (a sanitizer's shadow)"
    exit 77
  fi

  step "$mode: $MIB MiB put and sent back under the cap; peak resident memory under 96 MiB"
  SERVE_VM_KIB=$cap start_serve "${args[@]}"
  got=$(put_and_get big.bin "$WORK/big.bin")
  [ "$got" = "$want" ] || fail "the object came back different ($got, sent $want): $(tail -c 300 "$WORK/serve.err")"
  peak=$(vm VmHWM)
  echo "serve's peak resident memory after storing and sending back $MIB MiB: $((peak / 1024)) MiB"
  [ $((peak * 1024)) -lt "$BOUND" ] || fail "serve's peak resident memory reached $((peak / 1024)) MiB"

  step "$mode: the object copied into an upload's part (UploadPartCopy, the whole range), completed, sent back"
  lua "
    local s3 = cloud.storage
    local up = s3.create_multipart_upload{ Bucket = 'big', Object = 'copy.bin' }
    local part = s3.upload_part_copy{ Bucket = 'big', Object = 'copy.bin', uploadId = up.UploadId, partNumber = 1,
                                      CopySource = 'big/big.bin', CopySourceRange = 'bytes=0-$(((MIB << 20) - 1))' }
    s3.complete_multipart_upload{ Bucket = 'big', Object = 'copy.bin', uploadId = up.UploadId,
                                  Part = { { PartNumber = 1, ETag = part.ETag } } }
    local f = assert(io.open('$WORK/get.url', 'w'))
    f:write(cloud.storage.presign{ Bucket = 'big', Object = 'copy.bin' }); f:close()" >/dev/null ||
    fail "the copy failed: $(tail -c 300 "$WORK/serve.err")"
  got=$(curl -sf "$(cat "$WORK/get.url")" | sha256sum | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "the copy came back different ($got, sent $want): $(tail -c 300 "$WORK/serve.err")"
  peak=$(vm VmHWM)
  echo "serve's peak resident memory after the copy: $((peak / 1024)) MiB"
  [ $((peak * 1024)) -lt "$BOUND" ] || fail "serve's peak resident memory reached $((peak / 1024)) MiB"

  step "$mode: a body cut off mid-way leaves nothing stored and no file behind"
  folder=$([ "$mode" = state ] && echo "$WORK/state.bytes" || echo "$TMPDIR"/cloudlua-serve-*)
  [ -d "$folder" ] || fail "no folder of bytes at $folder"
  before=$(ls "$folder" | sort)
  lua "
    local f = assert(io.open('$WORK/put.url', 'w'))
    f:write(cloud.storage.presign{ Bucket = 'big', Object = 'cut.bin', method = 'PUT', expires = 60 }); f:close()"
  cut_body 0 || fail "the cut body could not be sent"
  for _ in $(seq 200); do  # until serve has seen the client go (10 s at most)
    ls "$folder" | grep -q '^incoming-' || break
    sleep 0.05
  done
  after=$(ls "$folder" | sort)
  [ "$before" = "$after" ] || fail "files changed in $folder: $(diff <(echo "$before") <(echo "$after") | tail -5)"
  lua "
    local ok, err = pcall(cloud.storage.head_object, { Bucket = 'big', Object = 'cut.bin' })
    assert(not ok and err.status == 404, 'the cut body was stored: ' .. tostring(err))"
  if [ "$mode" = state ]; then
    step "state: a body cut off by a kill -9 of serve leaves no file after the restart"
    cut_body 30 &
    cut_pid=$!
    for _ in $(seq 200); do  # until its file is there (10 s at most)
      ls "$folder" | grep -q '^incoming-' && break
      sleep 0.05
    done
    ls "$folder" | grep -q '^incoming-' || fail "no file for the body being received in $folder"
    stop_serve KILL
    kill "$cut_pid" 2>/dev/null || true
    start_serve "${args[@]}"
    after=$(ls "$folder" | sort)
    [ "$before" = "$after" ] || fail "files changed in $folder: $(diff <(echo "$before") <(echo "$after") | tail -5)"
  fi
  stop_serve TERM
  [ "$SERVE_STATUS" = 0 ] || fail "serve exited with $SERVE_STATUS"
done

step "without --state, serve's folder of bytes goes at SIGTERM and at SIGINT"
for signal in TERM INT; do
  start_serve
  lua "
    pcall(cloud.storage.create_bucket, { Bucket = 'big' })
    cloud.storage.put_object{ Bucket = 'big', Object = 'small.bin', file = '$WORK/small.bin' }"
  ls -d "$TMPDIR"/cloudlua-serve-* >/dev/null 2>&1 || fail "serve made no folder of bytes in \$TMPDIR"
  stop_serve "$signal"
  [ -z "$(ls -A "$TMPDIR")" ] || fail "SIG$signal left $(ls -A "$TMPDIR") in \$TMPDIR"
done
echo "PASS"
