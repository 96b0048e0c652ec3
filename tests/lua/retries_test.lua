-- Retries end to end, driven by the embedded emulator's faults: InvalidPart waited
-- for and repeated, 5xx, throttling and dropped connections repeated with back-off,
-- the two restores never resent unless the script asks, and meta.attempts (or
-- err.attempts) saying how many requests it took. Every delay is set to 0, so no
-- test waits: the waiting itself is checked with a fake clock in client_test.cpp.
-- Run: cloudlua test tests/lua/retries_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local fast = cloud.client{ retry_base_delay = 0, invalid_part_delay = 0 }  -- 3 attempts, no waiting
local s3 = fast.storage

setup(function()
  if not emu then return end
  emu.configure{ min_part_size = 1 }
  s3.create_bucket{ Bucket = "retries" }
end)

-- A new upload of `key` with one part per body, ready to complete: the arguments of
-- its CompleteMultipartUpload.
local function upload(key, bodies)
  local up = s3.create_multipart_upload{ Bucket = "retries", Object = key }
  local parts = {}
  for n, bytes in ipairs(bodies) do
    parts[n] = { PartNumber = n, ETag = s3.upload_part{ Bucket = "retries", Object = key, uploadId = up.UploadId,
                                                       partNumber = n, body = bytes }.ETag }
  end
  return { Bucket = "retries", Object = key, uploadId = up.UploadId, Part = parts }
end

---------------------------------------------------------------- InvalidPart

test("InvalidPart answered twice: waited for and repeated; the third attempt completes", function()
  local complete = upload("k", { "hello", "world" })
  emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 2 }
  local done, meta = s3.complete_multipart_upload(complete)
  expect(meta.attempts).to_equal(3)
  expect(meta.status).to_equal(200)
  expect(done.ETag).to_match('%-2"$')
end)

test("with max_attempts = 1, InvalidPart reaches the script at once", function()
  local complete = upload("k2", { "x" })
  emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 1 }
  local err = expect(cloud.client{ max_attempts = 1 }.storage.complete_multipart_upload, complete)
    .to_fail{ code = "InvalidPart", kind = "api" }
  expect(err.attempts).to_equal(1)
end)

test("with max_attempts = 5, four InvalidPart answers are outlasted", function()
  local complete = upload("k5", { "x" })
  emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 4 }
  local patient = cloud.client{ max_attempts = 5, invalid_part_delay = 0 }
  expect(select(2, patient.storage.complete_multipart_upload(complete)).attempts).to_equal(5)
end)

test("when the attempts run out the last answer is the error, and says how many were made", function()
  local complete = upload("k3", { "x" })
  emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 3 }
  local err = expect(s3.complete_multipart_upload, complete).to_fail{ code = "InvalidPart" }
  expect(err.attempts).to_equal(3)
  expect(tostring(err)).to_contain("attempts: 3")
  expect(select(2, s3.complete_multipart_upload(complete)).attempts).to_equal(1)  -- the upload was left intact
end)

---------------------------------------------------------------- 5xx, throttling, dropped connections

local update = { SnapshotName = "snap-1", snapshot = { description = "retried" } }
for _, fault in ipairs{
  { status = 500, code = "InternalError" },
  { status = 503, code = "ServiceUnavailable" },
  { status = 429, code = "TooManyRequests" },
  { status = 400, code = "ThrottlingException" },
  { drop = true },
} do
  test((fault.code or "a dropped connection") .. " twice: repeated, the third attempt succeeds", function()
    fault.operation, fault.times = "UpdateSnapshot", 2
    emu.fault(fault)
    local r, m = fast.cluster.update_snapshot(update)
    expect(m.attempts).to_equal(3)
    expect(r.snapshot.description).to_equal("retried")
  end)
end

test("the platform in maintenance (503 Server.Maintenance) twice: repeated, the third attempt succeeds", function()
  emu.fault{ maintenance = true, times = 2 }
  local r, m = fast.cluster.update_snapshot(update)
  expect({ m.attempts, r.snapshot.description }).to_equal{ 3, "retried" }
end)

test("a maintenance that outlasts the attempts is the platform's 503 Server.Maintenance", function()
  emu.fault{ maintenance = true, operation = "GetCluster", times = 3 }
  local err = expect(fast.cluster.get_cluster, { ClusterName = "prod-cluster" })
    .to_fail{ kind = "api", status = 503, code = "Server.Maintenance", message = "The system is in maintenance now." }
  expect(err.attempts).to_equal(3)
end)

test("maintenance is a fault of the JSON APIs: storage requests pass it by", function()
  emu.fault{ maintenance = true }
  expect(select(2, s3.put_object{ Bucket = "retries", Object = "m", Body = "x" }).attempts).to_equal(1)
  expect(select(2, fast.cluster.update_snapshot(update)).attempts).to_equal(2)  -- the fault was still queued
  expect(emu.fault, { maintenance = true, operation = "PutObject" }).to_fail("JSON APIs")
end)

test("storage SlowDown: repeated", function()
  emu.fault{ operation = "PutObject", status = 503, code = "SlowDown" }
  expect(select(2, s3.put_object{ Bucket = "retries", Object = "small", Body = "x" }).attempts).to_equal(2)
end)

test("a body from a Lua string, NUL bytes and all, is sent again whole by the next attempt", function()
  local bytes = {}
  for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
  local body = ("\0" .. table.concat(bytes)):rep(4099)  -- about 1 MiB, every byte value
  emu.fault{ operation = "PutObject", status = 503, code = "SlowDown" }
  local _, meta = s3.put_object{ Bucket = "retries", Object = "nul-body", Body = body }
  expect(meta.attempts).to_equal(2)
  local got = s3.get_object{ Bucket = "retries", Object = "nul-body" }.Body
  expect(#got).to_equal(#body)
  expect(got == body).to_be_truthy()
end)

test("an <Error> in a 200 answer is a failure, retried like a 5xx", function()
  local complete = upload("k4", { "x" })
  emu.fault{ operation = "CompleteMultipartUpload", error_in_200 = true, code = "InternalError" }
  expect(select(2, s3.complete_multipart_upload(complete)).attempts).to_equal(2)
end)

test("an error that retrying cannot mend is reported at once", function()
  local err = expect(fast.cluster.update_snapshot, { SnapshotName = "no-such-snapshot", snapshot = {} })
    .to_fail{ code = "SnapshotNotFound" }
  expect(err.attempts).to_equal(1)
end)

---------------------------------------------------------------- the restores

local function count(list) return #emu.state()[list] end
local BACKUP = "0123456789abcdef0123456789abcdef"

test("RestoreInstance answered 503 is not resent", function()
  local instances = count("instances")
  emu.fault{ operation = "RestoreInstance", status = 503, code = "ServiceUnavailable" }
  local err = expect(fast.devops.restore_instance, { backupId = BACKUP, instanceId = "retry-503" })
    .to_fail{ status = 503 }
  expect(err.attempts).to_equal(1)
  expect(count("instances")).to_equal(instances)  -- no server was created
end)

test("RestoreInstance whose connection dropped is not resent", function()
  local instances = count("instances")
  emu.fault{ operation = "RestoreInstance", drop = true }
  local err = expect(fast.devops.restore_instance, { backupId = BACKUP, instanceId = "retry-dropped" })
    .to_fail{ kind = "transport" }
  expect(err.attempts).to_equal(1)
  expect(count("instances")).to_equal(instances)  -- no server was created
end)

-- snap-2 stays AVAILABLE (nothing restored), for the opted-in restore below.
test("RestoreClusterFromSnapshot answered 500 is not resent", function()
  emu.fault{ operation = "RestoreClusterFromSnapshot", status = 500 }
  local err = expect(fast.cluster.restore_cluster_from_snapshot,
                     { SnapshotName = "snap-2", cluster = { name = "retry-cluster" } }).to_fail()
  expect(err.attempts).to_equal(1)
end)

local bold = cloud.client{ retry_base_delay = 0, retry_restores = true }

test("RestoreInstance is resent when the script asks (retry_restores)", function()
  emu.fault{ operation = "RestoreInstance", status = 503, code = "ServiceUnavailable" }
  local r, m = bold.devops.restore_instance{ backupId = BACKUP, instanceId = "retry-1" }
  expect(m.attempts).to_equal(2)
  expect(r.instance.instanceId).to_equal("retry-1")
end)

test("RestoreClusterFromSnapshot is resent when the script asks (retry_restores)", function()
  emu.fault{ operation = "RestoreClusterFromSnapshot", drop = true }
  local r, m = bold.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-2", cluster = { name = "retry-cluster" } }
  expect(m.attempts).to_equal(2)
  expect(r.cluster.name).to_equal("retry-cluster")
end)

test("a refused connection never arrived: even a restore is tried again", function()
  local nowhere = cloud.client{ endpoints = { devops = "http://127.0.0.1:9" }, retry_base_delay = 0 }
  local err = expect(nowhere.devops.restore_instance, { backupId = BACKUP, instanceId = "retry-refused" })
    .to_fail{ code = "ConnectionFailed" }
  expect(err.attempts).to_equal(3)
end)

---------------------------------------------------------------- options

test("a negative invalid_part_delay is named", function()
  expect(cloud.client, { invalid_part_delay = -1 }).to_fail{ kind = "config", code = "InvalidSetting",
    message = "cloud.client: invalid_part_delay must be a number of seconds from 0 to 3600 (got -1)" }
end)

test("max_attempts = 0 is named", function()
  expect(cloud.client, { max_attempts = 0 })
    .to_fail{ kind = "config", message = "cloud.client: max_attempts must be an integer from 1 to 10 (got 0)" }
end)

test("a retry_base_delay that is no number is named", function()
  expect(cloud.client, { retry_base_delay = "fast" })
    .to_fail{ kind = "config", message = "retry_base_delay must be a number of seconds from 0 to 3600 (got 'fast')" }
end)
