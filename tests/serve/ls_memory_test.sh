#!/usr/bin/env bash
# `cloudlua ls --recursive` prints a listing as it comes and keeps none of it: its peak
# memory (the child's maximum resident set, from getrusage) listing 20,000 keys is
# within 3 MiB of its peak listing 2,000, against one `cloudlua serve` (which holds
# the keys; it is not measured). Kept, the entries cost some 0.4 KiB a key: 7 MiB more.
source "$(dirname "$0")/lib.sh"
# Under AddressSanitizer freed memory waits in a quarantine: none, so what is measured
# is what ls holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"

start_serve

# peak_kib ARGS...: runs cloudlua ARGS (its output discarded) and prints its peak KiB.
peak_kib() {
  python3 - "$CLOUDLUA" "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

step "20,000 keys in two buckets: 2,000 and 20,000"
"$CLOUDLUA" -e "
  for _, b in ipairs{ { 'small', 2000 }, { 'large', 20000 } } do
    cloud.storage.create_bucket{ Bucket = b[1] }
    local keys = {}
    for i = 1, b[2] do keys[i] = ('folder-%02d/key-%06d'):format(i % 40, i) end
    cloud.map(keys, function(k) cloud.storage.put_object{ Bucket = b[1], Object = k, Body = '' } end, { concurrency = 16 })
  end" || fail "filling the buckets failed"
[ "$("$CLOUDLUA" ls --recursive s3://large | wc -l)" = 20000 ] || fail "ls did not list the 20,000 keys"

step "the peak memory of ls --recursive, at 2,000 keys and at 20,000"
small=$(peak_kib ls --recursive s3://small) || fail "ls of 2,000 keys failed"
large=$(peak_kib ls --recursive --summarize s3://large) || fail "ls of 20,000 keys failed"
echo "peak: $((small / 1024)) MiB at 2,000 keys, $((large / 1024)) MiB at 20,000"
[ $((large - small)) -le 3072 ] || fail "ls's peak memory grew by $(((large - small) / 1024)) MiB from 2,000 keys to 20,000"

stop_serve TERM
echo "PASS"
