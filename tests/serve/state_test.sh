#!/usr/bin/env bash
# `cloudlua serve --state FILE`: what was acknowledged survives a kill -9 between
# requests (every resource kind, object bytes, an upload in progress, ids, an upload's
# checksum algorithm and its parts' checksums), the
# restarted server carries on from it, SIGTERM and SIGINT stop it cleanly with exit
# status 0, and a state file that is not one it wrote is refused at start.
source "$(dirname "$0")/lib.sh"
STATE="$WORK/state.json"

step "changes acknowledged by a server with --state"
start_serve --state "$STATE"
[ -s "$STATE" ] || fail "no state file written at start"
lua '
  local bytes = {}
  for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
  cloud.storage.create_bucket{ Bucket = "persist" }
  cloud.storage.put_object{ Bucket = "persist", Object = "dir/all bytes", Body = table.concat(bytes) }
  local up = cloud.storage.create_multipart_upload{ Bucket = "persist", Object = "big" }
  local part = cloud.storage.upload_part{ Bucket = "persist", Object = "big", uploadId = up.UploadId,
                                          partNumber = 1, body = "part one" }
  local summed = cloud.storage.create_multipart_upload{ Bucket = "persist", Object = "summed", ChecksumAlgorithm = "CRC32" }
  local crc = cloud.storage.upload_part{ Bucket = "persist", Object = "summed", uploadId = summed.UploadId,
                                         partNumber = 1, body = "hello" }
  local f = assert(io.open(os.getenv("WORK") .. "/upload", "w"))
  f:write(up.UploadId, " ", part.ETag, " ", summed.UploadId, " ", crc.ETag)
  f:close()
  cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "kept" } }
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-1",
    rules = { { protocol = "TCP", port = 443, cidrIp = "198.51.100.0/24" } } }
  cloud.devops.restore_instance{ backupId = "0123456789abcdef0123456789abcdef", instanceId = "code-1" }
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-2", cluster = { name = "restored" } }
  cloud.catalog.upgrade_meshplatform_service_mesh_version{ ResourceGroupName = "rg-1", ClusterName = "mesh-1",
                                                           version = "1.22.1" }
' 

step "kill -9 right after the last answer, then a restart on the same file"
stop_serve KILL
[ "$SERVE_STATUS" -eq 137 ] || fail "kill -9 should end serve with 137, got $SERVE_STATUS"
start_serve --state "$STATE"
lua '
  local function refused(fn, args, code)
    local ok, err = pcall(fn, args)
    assert(not ok, "should have been refused with " .. code)
    assert(err.code == code, ("expected %s, got %s: %s"):format(code, tostring(err.code), tostring(err.message)))
  end
  local body = cloud.storage.get_object{ Bucket = "persist", Object = "dir/all bytes" }.Body
  assert(#body == 256, "object size after restart: " .. #body)
  for i = 0, 255 do assert(body:byte(i + 1) == i, "byte " .. i .. " after restart") end
  local f = assert(io.open(os.getenv("WORK") .. "/upload"))
  local id, etag, summed, crc_etag = f:read("a"):match("^(%S+) (%S+) (%S+) (%S+)$")
  f:close()
  -- the upload keeps its algorithm and the part its CRC32 (computed: none was given)
  refused(cloud.storage.complete_multipart_upload, { Bucket = "persist", Object = "summed", uploadId = summed,
          Part = { { PartNumber = 1, ETag = crc_etag } } }, "InvalidRequest")
  local both = cloud.storage.complete_multipart_upload{ Bucket = "persist", Object = "summed", uploadId = summed,
                                                        Part = { { PartNumber = 1, ETag = crc_etag, ChecksumCRC32 = "NhCmhg==" } } }
  assert(both.ChecksumCRC32 == "FKTmaw==-1", "composite CRC32 after restart: " .. tostring(both.ChecksumCRC32))
  local done = cloud.storage.complete_multipart_upload{ Bucket = "persist", Object = "big", uploadId = id,
                                                        Part = { { PartNumber = 1, ETag = etag } } }
  assert(done.ETag:match("%-1\"$"), "completed after restart: " .. done.ETag)
  assert(cloud.storage.get_object{ Bucket = "persist", Object = "big" }.Body == "part one", "upload bytes")
  local s = cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} }.snapshot
  assert(s.description == "kept", "snapshot change kept: " .. s.description)
  refused(cloud.storage.create_bucket, { Bucket = "persist" }, "BucketAlreadyOwnedByYou")
  refused(cloud.devops.restore_instance, { backupId = "0123456789abcdef0123456789abcdef", instanceId = "code-1" },
          "InstanceAlreadyExists")
  refused(cloud.cluster.restore_cluster_from_snapshot, { SnapshotName = "snap-1", cluster = { name = "restored" } },
          "ClusterAlreadyExists")
  -- still PROCESSING (10 s of real time have not passed): the rule was kept with its group
  refused(cloud.devops.authorize_firewall_rules, { FirewallGroupName = "fw-1",
    rules = { { protocol = "TCP", port = 22, cidrIp = "10.0.0.1" } } }, "FirewallGroupBusy")
  refused(cloud.catalog.upgrade_meshplatform_service_mesh_version, { ResourceGroupName = "rg-1",
    ClusterName = "mesh-1" }, "ClusterBusy")
'

step "SIGTERM: clean stop, exit status 0, state still readable"
stop_serve TERM
[ "$SERVE_STATUS" -eq 0 ] || fail "SIGTERM should end serve with 0, got $SERVE_STATUS"
grep -q 'SIGTERM received' "$WORK/serve.err" || fail "no shutdown message: $(cat "$WORK/serve.err")"

step "SIGINT: clean stop, exit status 0"
start_serve --state "$STATE"
lua 'assert(cloud.storage.head_object{ Bucket = "persist", Object = "big" }.ContentLength == 8, "object kept")'
stop_serve INT
[ "$SERVE_STATUS" -eq 0 ] || fail "SIGINT should end serve with 0, got $SERVE_STATUS"

step "a seed, an advance and a reset are kept as a request's change is, and a kill -9 loses none"
start_serve --state "$STATE"
ctl seed '{"buckets":["seeded"],"snapshots":[{"name":"snap-seeded"}]}' >/dev/null
stop_serve KILL
start_serve --state "$STATE"
lua 'assert(cloud.cluster.get_snapshot{ SnapshotName = "snap-seeded" }, "the seeded snapshot")
     assert(cloud.storage.head_bucket{ Bucket = "seeded" }, "the seeded bucket")'
lua 'cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-seeded", cluster = { name = "ticking" } }'
ctl advance '{"seconds":3600}' >/dev/null
stop_serve KILL
start_serve --state "$STATE"
lua 'local status = cloud.cluster.get_cluster{ ClusterName = "ticking" }.cluster.status
     assert(status == "RUNNING", "an advance of an hour was not kept: the cluster is " .. status)'
stop_serve KILL
start_serve --state "$STATE"
ctl reset >/dev/null
stop_serve KILL
start_serve --state "$STATE"
ctl state | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert all(not v for v in s.values()), "a reset came back after a restart: %s" % {k: len(v) for k, v in s.items()}' ||
  fail "the reset was not kept"
stop_serve TERM

step "a state file that is not one serve wrote is refused at start"
echo '{"format": 1}' >"$WORK/other.json"
if "$CLOUDLUA" serve --state "$WORK/other.json" >"$WORK/bad.out" 2>"$WORK/bad.err"; then
  fail "serve started on a foreign state file"
fi
grep -q "other.json" "$WORK/bad.err" || fail "the error does not name the file: $(cat "$WORK/bad.err")"
grep -q '^storage ' "$WORK/bad.out" && fail "serve printed endpoints before refusing its state file"
echo "state_test: ok"
