#!/usr/bin/env bash
# Record and replay (docs/testing.md): `cloudlua serve` stands in for a real account
# (credentials of its own, a session token); a script, -e chunks, a scripted session
# and `cloudlua test` files are recorded with it running, then replayed with it
# stopped and no account configured: the same output. The recording holds an error
# answer, a waiter's polls and a listing's pages; a 503 retried is recorded against
# the embedded emulator's fault. The cassette holds no secret; a changed call names
# the nearest recorded one and the field that differs; bad folders and lines are
# clear errors.
source "$(dirname "$0")/lib.sh"

KEY=AKIDREPLAYTEST0001 SECRET=replay-test-secret-0123456789 TOKEN=replay-test-session-token-0123456789
cd "$WORK"

# offline: no endpoint, no credentials, no config file (the replay needs none).
offline() {
  env -u CLOUDLUA_ENDPOINT_STORAGE -u CLOUDLUA_ENDPOINT_CLUSTER -u CLOUDLUA_ENDPOINT_DEVOPS -u CLOUDLUA_ENDPOINT_CATALOG \
    -u CLOUDLUA_ACCESS_KEY_ID -u CLOUDLUA_SECRET_ACCESS_KEY -u CLOUDLUA_SESSION_TOKEN CLOUDLUA_CONFIG_FILE= "$CLOUDLUA" "$@"
}

cat >script.lua <<'EOF'
local s3 = cloud.storage
s3.create_bucket{ Bucket = "bkt" }
for i = 1, 5 do s3.put_object{ Bucket = "bkt", Object = "k" .. i, Body = "body " .. i } end
print("get", s3.get_object{ Bucket = "bkt", Object = "k2" }.Body)
local ok, err = pcall(s3.get_object, { Bucket = "bkt", Object = "missing" })
print("error", ok, err.kind, err.code, err.status)
local keys = {}
for page in cloud.pages("ListObjectsV2", { Bucket = "bkt", MaxKeys = 2 }) do
  for _, o in ipairs(page.Contents or {}) do keys[#keys + 1] = o.Key end
  keys[#keys + 1] = "|"
end
print("pages", table.concat(keys, " "))
local r = cloud.request{ api = "storage", method = "GET", path = "/bkt", query = { ["max-keys"] = "1" } }
print("request", r.status, r.body:match("<Key>(.-)</Key>"))
cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
local polls = 0
local c = cloud.wait_for("ClusterRunning", { ClusterName = "c1" },
                         { delay = 0.2, max_attempts = 100, progress = function() polls = polls + 1 end })
print("waiter", c.cluster.status, polls > 1)
local wrong = cloud.client{ credentials = { access_key_id = "AKIDWRONGKEY0001", secret_access_key = "wrong-secret-0123456789" } }
print("wrong key", select(2, pcall(wrong.storage.list_buckets, {})).code)
EOF

start_serve --access-key "$KEY" --secret-key "$SECRET" --settle 600ms
export CLOUDLUA_ACCESS_KEY_ID=$KEY CLOUDLUA_SECRET_ACCESS_KEY=$SECRET CLOUDLUA_SESSION_TOKEN=$TOKEN

step "a script recorded against serve"
"$CLOUDLUA" --record cassette script.lua >recorded.out || fail "the recording run failed"
grep -q "^error	false	api	NoSuchKey	404$" recorded.out || fail "no NoSuchKey answer: $(cat recorded.out)"
grep -q "^pages	k1 k2 | k3 k4 | k5 |$" recorded.out || fail "pages: $(cat recorded.out)"
grep -q "^waiter	RUNNING	true$" recorded.out || fail "the waiter did not poll: $(cat recorded.out)"
grep -q "^wrong key	InvalidAccessKeyId$" recorded.out || fail "the wrong key: $(cat recorded.out)"
[ -s cassette/storage.jsonl ] && [ -s cassette/cluster.jsonl ] && [ -s cassette/endpoints.json ] || fail "cassette files: $(ls cassette)"
polls=$(grep -c '"operation":"GetCluster"' cassette/cluster.jsonl)
[ "$polls" -ge 2 ] || fail "$polls GetCluster polls recorded"

step "-e and a scripted session recorded"
"$CLOUDLUA" --record cassette-e -e 'print(#cloud.storage.list_buckets{}.Buckets)' >e.out || fail "-e recording failed"
echo 'print("session", cloud.storage.head_bucket{ Bucket = "bkt" } ~= nil)' | "$CLOUDLUA" --record cassette-repl >repl.out ||
  fail "scripted session recording failed"

step "a cloudlua test file recorded"
mkdir suite
cat >suite/bucket_test.lua <<'EOF'
test("a bucket's objects", function()
  cloud.storage.put_object{ Bucket = "bkt", Object = "t", Body = "from the test" }
  expect(cloud.storage.get_object{ Bucket = "bkt", Object = "t" }.Body).to_equal("from the test")
  local ok, err = pcall(cloud.storage.get_object, { Bucket = "bkt", Object = "nope" })
  expect(err.code).to_equal("NoSuchKey")
end)
EOF
cat >suite/second_test.lua <<'EOF'
test("another file's calls", function()
  expect(cloud.storage.head_bucket{ Bucket = "bkt" }).to_be_truthy()
end)
EOF
"$CLOUDLUA" test --record tests-cassette suite >test-recorded.out || fail "test recording: $(cat test-recorded.out)"
[ -s tests-cassette/bucket_test/storage.jsonl ] && [ -s tests-cassette/second_test/storage.jsonl ] ||
  fail "no per-file cassette: $(find tests-cassette)"

stop_serve TERM
unset CLOUDLUA_ACCESS_KEY_ID CLOUDLUA_SECRET_ACCESS_KEY CLOUDLUA_SESSION_TOKEN

step "the cassette holds no secret, signature, date or access key"
grep -q "unknown access key 'AKID-RECORDED'" cassette/storage.jsonl || fail "the echoed access key was not replaced"
for secret in "$KEY" "$SECRET" "$TOKEN" AKIDWRONGKEY0001 wrong-secret-0123456789 Authorization authorization Signature signature X-Amz-Date x-amz-date X-Ext-Date x-ext-date; do
  if grep -rq -- "$secret" cassette cassette-e cassette-repl tests-cassette; then fail "the cassette holds $secret"; fi
done
# one JSON object a line, its keys sorted
head -n 1 cassette/storage.jsonl | grep -q '^{"api":"storage","body":"","headers":{' || fail "first line: $(head -n 1 cassette/storage.jsonl)"

step "replayed with serve stopped and no account: the same output"
offline --replay cassette script.lua >replayed.out 2>replayed.err || fail "replay failed: $(cat replayed.err)"
cmp recorded.out replayed.out || fail "replay differs: $(diff recorded.out replayed.out)"
offline --replay cassette-e -e 'print(#cloud.storage.list_buckets{}.Buckets)' >e-replayed.out || fail "-e replay failed"
cmp e.out e-replayed.out || fail "-e replay differs"
echo 'print("session", cloud.storage.head_bucket{ Bucket = "bkt" } ~= nil)' | offline --replay cassette-repl >repl-replayed.out ||
  fail "scripted session replay failed"
cmp repl.out repl-replayed.out || fail "scripted session replay differs"
offline test --replay tests-cassette suite >test-replayed.out || fail "test replay: $(cat test-replayed.out)"
cmp test-recorded.out test-replayed.out || fail "test replay differs: $(diff test-recorded.out test-replayed.out)"
offline test -j 2 --replay tests-cassette suite/second_test.lua suite/bucket_test.lua >test-j2.out ||
  fail "test -j 2 replay: $(cat test-j2.out)"
grep -q "^2 passed, 0 failed$" test-j2.out || fail "test -j 2 replay: $(cat test-j2.out)"
if grep -q "not replayed" test-replayed.out; then fail "a warning where every call was replayed: $(cat test-replayed.out)"; fi

step "replayed, time is virtual on the loop's one clock: sleeps fall due in order, at once, on cloud.clock"
offline --replay cassette -e '
local order, start = {}, cloud.clock()
local long = cloud.spawn(function() cloud.sleep(3600); order[#order + 1] = "long" end)
local short = cloud.spawn(function() cloud.sleep(600); order[#order + 1] = "short" end)
long:join(); short:join()
local moved = cloud.clock() - start
print(table.concat(order, ","), moved >= 3600 and moved < 4200)' >sleeps.out 2>&1 || fail "sleeps under replay: $(cat sleeps.out)"
[ "$(cat sleeps.out)" = "short,long	true" ] || fail "sleeps under replay: $(cat sleeps.out)"

step "cloud.client{ replay = DIR } and { record = DIR }: one client"
offline -e 'local c = cloud.client{ replay = "cassette-e" }; print(#c.storage.list_buckets{}.Buckets)' >client.out ||
  fail "cloud.client{ replay } failed"
cmp e.out client.out || fail "cloud.client{ replay } differs"
offline -e '
  local c = cloud.client{ record = "one-client" }
  c.storage.create_bucket{ Bucket = "only-this" }
  cloud.storage.list_buckets{}  -- the default client: not recorded
' || fail "cloud.client{ record } failed"
grep -q CreateBucket one-client/storage.jsonl || fail "the client's call was not recorded"
offline --record mixed -e '
  local replayed = cloud.client{ replay = "cassette-e" }  -- its own replay replaces --record
  print(#replayed.storage.list_buckets{}.Buckets)
  cloud.storage.create_bucket{ Bucket = "recorded" }' >mixed.out || fail "cloud.client{ replay } under --record failed"
cmp e.out mixed.out || fail "the client did not replay"
grep -q CreateBucket mixed/storage.jsonl || fail "the default client did not record"
if grep -q ListBuckets mixed/storage.jsonl; then fail "the replaying client was recorded"; fi
if grep -q ListBuckets one-client/storage.jsonl; then fail "the default client was recorded"; fi

step "a 503 retried: recorded with the emulator's fault, replayed the same way"
retry='
  if cloud.emulator then cloud.emulator.fault{ operation = "ListBuckets", status = 503, code = "ServiceUnavailable", times = 1 } end
  local _, meta = cloud.storage.list_buckets{}
  print("attempts", meta.attempts, meta.status)'
offline --record cassette-retry -e "$retry" >retry.out || fail "retry recording failed"
grep -q "^attempts	2	200$" retry.out || fail "retry: $(cat retry.out)"
[ "$(grep -c '"status":503' cassette-retry/storage.jsonl)" = 1 ] || fail "no 503 recorded: $(cat cassette-retry/storage.jsonl)"
offline --replay cassette-retry -e "$retry" >retry-replayed.out || fail "retry replay failed"
cmp retry.out retry-replayed.out || fail "retry replay differs: $(cat retry-replayed.out)"

step "a changed call names the nearest recorded call and what differs"
sed 's/MaxKeys = 2/MaxKeys = 3/' script.lua >changed.lua
if offline --replay cassette changed.lua >/dev/null 2>changed.err; then fail "a changed call replayed"; fi
grep -q "config error in ListObjectsV2: NoRecordedCall: no recorded call in cassette matches ListObjectsV2 GET /bkt?list-type=2&max-keys=3; the nearest is storage.jsonl:[0-9]* (ListObjectsV2 GET /bkt?list-type=2&max-keys=2)" changed.err ||
  fail "message: $(cat changed.err)"
grep -q '  query.max-keys: recorded "2", sent "3"' changed.err || fail "differing field: $(cat changed.err)"
offline --replay cassette -e '
  local ok, err = pcall(cloud.storage.put_object, { Bucket = "bkt", Object = "k1", Body = "other" })
  assert(not ok and err.kind == "config" and err.code == "NoRecordedCall" and err.attempts == 1, tostring(err))
  assert(err.fields[1].path == "body" and err.fields[1].problem == "recorded \"body 1\", sent \"other\"", tostring(err))
' || fail "a changed body"

step "a recorded call left unused is a warning line of cloudlua test"
cp tests-cassette/bucket_test/storage.jsonl extra.jsonl
tail -n 1 extra.jsonl >>tests-cassette/bucket_test/storage.jsonl
offline test --replay tests-cassette suite >unused.out || fail "unused calls failed the file: $(cat unused.out)"
grep -q "^# 1 recorded call not replayed (GetObject (storage.jsonl:[0-9]*))$" unused.out || fail "no warning: $(cat unused.out)"

step "clear errors: no folder, a malformed line, --record with --replay"
if offline --replay nowhere -e 'print(1)' >/dev/null 2>nowhere.err; then fail "a missing folder replayed"; fi
grep -q "config error: NoCassette: --replay: no cassette folder nowhere" nowhere.err || fail "message: $(cat nowhere.err)"
mkdir bad && printf '{"api":"storage"}\nnot json\n' >bad/storage.jsonl
if offline --replay bad -e 'print(1)' >/dev/null 2>bad.err; then fail "a malformed cassette replayed"; fi
grep -q "MalformedCassette: bad/storage.jsonl:1: 'operation' must be a string" bad.err || fail "message: $(cat bad.err)"
printf '{"api":"storage","body":"","method":"GET","operation":"ListBuckets","path":"/","query":"","status":200}\nnot json\n' >bad/storage.jsonl
if offline --replay bad -e 'print(1)' >/dev/null 2>bad.err; then fail "a malformed cassette replayed"; fi
grep -q "MalformedCassette: bad/storage.jsonl:2: not valid JSON" bad.err || fail "message: $(cat bad.err)"
if offline --record a --replay b -e 'print(1)' >/dev/null 2>both.err; then fail "--record with --replay ran"; fi
grep -q "cloudlua: --record and --replay cannot be given together" both.err || fail "message: $(cat both.err)"
if offline -e 'cloud.client{ record = "a", replay = "b" }' >/dev/null 2>both.err; then fail "record and replay ran"; fi
grep -q "RecordAndReplay: record (a) and replay (b) were both given" both.err || fail "message: $(cat both.err)"
if offline --record gone -e 'cloud.storage.list_buckets{}; os.execute("rm -r gone"); cloud.storage.list_buckets{}' \
  >/dev/null 2>gone.err; then fail "a recording that could not be written succeeded"; fi
grep -q "config error in ListBuckets: CassetteUnwritable: --record: cannot write gone/storage.jsonl" gone.err ||
  fail "message: $(cat gone.err)"
echo "ok"
