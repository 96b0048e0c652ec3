#!/usr/bin/env bash
# serve --state with 100,000 objects (issue 24, item 1), at a size CI affords: a state
# of 100,000 small objects (each a body of its own) is made as a JSON state file and
# imported, as a state written before the database is; then serve restarts on the
# database, and its memory once started stays under 160 MiB (it held 231 MiB when
# every object's record was a JSON document read whole; not bounded in a sanitizer's
# build); the first and the last page of the bucket are listed, every key is counted
# through the listing's pages, objects at the start, the middle and the end are read
# back, one is replaced, one deleted and one added; after another restart the count
# and the contents are as they were left. No time is asserted
# (tests/bench/serve_state_bench.sh measures restarts).
source "$(dirname "$0")/lib.sh"
require_peer "$(command -v python3 || echo /usr/bin/python3)" python3
export SERVE_START_SECONDS=120  # the import, under a sanitizer on a loaded machine
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB) before it goes
# back: none here, so what is measured is what serve holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
COUNT=100000
BOUND_MIB=160

step "a JSON state file of $COUNT objects, imported"
COUNT=$COUNT python3 - "$WORK/state" "$(dirname "$0")/../data/state_json_v1/state.json" <<'PY'
import hashlib, json, os, sys
path, template, count = sys.argv[1], sys.argv[2], int(os.environ["COUNT"])
os.makedirs(path + ".bytes")
objects, files = {}, {}
for i in range(count):
    name, body = "v%012x" % (i + 1), b"object %d\n" % i
    files[name] = name + ".1"
    with open(os.path.join(path + ".bytes", files[name]), "wb") as f:
        f.write(body)
    objects["obj/%08d" % i] = {"etag": '"%s"' % hashlib.md5(body).hexdigest(), "version_id": name,
                               "last_modified": "Thu, 26 Nov 2026 12:00:00 GMT", "checksum": {}, "upload_id": ""}
doc = json.load(open(template))
doc.update({"counter": count + 1, "byte_files": files})
doc["services"]["storage"] = {"buckets": {"kept": objects}, "bucket_created": {"kept": "2026-11-26T12:00:00Z"},
                              "uploads": {}}
json.dump(doc, open(path, "w"))
PY
start_serve --state "$WORK/state"
stop_serve TERM

# count_and_check EXPECTED: every key counted through the listing's pages; the first and
# the last page as they should be; objects read back.
count_and_check() {
  EXPECTED=$1 lua '
    local s3, expected = cloud.storage, tonumber(os.getenv("EXPECTED"))
    local first = s3.list_objects_v2{ Bucket = "kept", MaxKeys = 1000 }
    assert(first.KeyCount == 1000 and first.IsTruncated, "the first page is not a full page")
    assert(first.Contents[1].Key == "obj/00000000" and first.Contents[1000].Key == "obj/00000999", first.Contents[1].Key)
    assert(first.Contents[1].Size == #"object 0\n", first.Contents[1].Size)
    local last = s3.list_objects_v2{ Bucket = "kept", StartAfter = "obj/00099000" }
    assert(not last.IsTruncated, "the last page says more follow")
    assert(last.Contents[1].Key == "obj/00099001", last.Contents[1].Key)
    local n = 0
    for page in cloud.pages("list_objects_v2", { Bucket = "kept" }) do n = n + page.KeyCount end
    assert(n == expected, ("%d keys listed, %d expected"):format(n, expected))
    for _, i in ipairs{ 0, 50000, 99998 } do
      local key = ("obj/%08d"):format(i)
      local got = s3.get_object{ Bucket = "kept", Object = key }
      assert(got.Body == ("object %d\n"):format(i), key .. ": " .. got.Body)
    end
    print(("%d keys listed; first and last page, contents right"):format(n))'
}

step "restarted on the database: serve's memory, the first and last page, every key, contents"
start_serve --state "$WORK/state"
rss=$(awk '$1 == "VmRSS:" { print int($2 / 1024) }' "/proc/$SERVE_PID/status")
echo "serve's memory once restarted on $COUNT objects: $rss MiB"
# (a sanitizer's build spends its own memory on each allocation: no bound there)
if ldd "$CLOUDLUA" 2>/dev/null | grep -q libasan; then
  echo "(a sanitizer's build: its memory is not bounded)"
else
  [ "$rss" -lt "$BOUND_MIB" ] || fail "serve holds $rss MiB once restarted on $COUNT objects (bound $BOUND_MIB MiB)"
fi
count_and_check "$COUNT"

step "one object replaced, one deleted, one added"
lua '
  local s3 = cloud.storage
  s3.put_object{ Bucket = "kept", Object = "obj/00000001", Body = "replaced" }
  s3.delete_object{ Bucket = "kept", Object = "obj/00050001" }
  s3.put_object{ Bucket = "kept", Object = "obj/00099999.new", Body = "added" }'
stop_serve TERM

step "restarted again: the changes kept, the rest as it was"
start_serve --state "$WORK/state"
count_and_check "$COUNT"
lua '
  local s3 = cloud.storage
  assert(s3.get_object{ Bucket = "kept", Object = "obj/00000001" }.Body == "replaced")
  assert(s3.get_object{ Bucket = "kept", Object = "obj/00099999.new" }.Body == "added")
  local ok, err = pcall(s3.get_object, { Bucket = "kept", Object = "obj/00050001" })
  assert(not ok and tostring(err):find("NoSuchKey"), tostring(err))
  local last = s3.list_objects_v2{ Bucket = "kept", StartAfter = "obj/00099998" }
  assert(last.KeyCount == 2 and last.Contents[2].Key == "obj/00099999.new", last.KeyCount)'
stop_serve TERM
echo "PASS"
