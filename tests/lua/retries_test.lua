-- Retries end to end, driven by the embedded emulator's faults: InvalidPart waited
-- for and repeated, 5xx, throttling and dropped connections repeated with back-off,
-- the two restores never resent unless the script asks, and meta.attempts (or
-- err.attempts) saying how many requests it took. Every delay is set to 0, so no
-- test waits: the waiting itself is checked with a fake clock in client_test.cpp.

local check = dofile(arg[0]:match("^(.*/)") .. "support/check.lua")
local eq, failure = check.eq, check.failure

local emu = cloud.emulator
emu.configure{ min_part_size = 1 }
local fast = cloud.client{ retry_base_delay = 0, invalid_part_delay = 0 }  -- 3 attempts, no waiting
local s3 = fast.storage

-- an upload of two parts, ready to complete
s3.create_bucket{ Bucket = "retries" }
local up = s3.create_multipart_upload{ Bucket = "retries", Object = "k" }
local parts = {}
for n, bytes in ipairs{ "hello", "world" } do
  parts[n] = { PartNumber = n, ETag = s3.upload_part{ Bucket = "retries", Object = "k", uploadId = up.UploadId,
                                                     partNumber = n, body = bytes }.ETag }
end
local complete = { Bucket = "retries", Object = "k", uploadId = up.UploadId, Part = parts }

-- InvalidPart answered twice: waited for and repeated; the third attempt completes
emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 2 }
local done, meta = s3.complete_multipart_upload(complete)
eq(meta.attempts, 3, "InvalidPart twice: attempts")
eq(meta.status, 200, "InvalidPart twice: completed")
assert(done.ETag:match('%-2"$'), "completed ETag: " .. done.ETag)

-- how often is max_attempts: with one attempt InvalidPart reaches the script at once
local up2 = s3.create_multipart_upload{ Bucket = "retries", Object = "k2" }
local e1 = s3.upload_part{ Bucket = "retries", Object = "k2", uploadId = up2.UploadId, partNumber = 1, body = "x" }.ETag
local complete2 = { Bucket = "retries", Object = "k2", uploadId = up2.UploadId, Part = { { PartNumber = 1, ETag = e1 } } }
emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 1 }
local err = failure(cloud.client{ max_attempts = 1 }.storage.complete_multipart_upload, complete2)
eq(err.code, "InvalidPart", "one attempt: code")
eq(err.kind, "api", "one attempt: kind")
eq(err.attempts, 1, "one attempt: err.attempts")
-- ... and with five, four InvalidPart answers are outlasted
emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 4 }
local patient = cloud.client{ max_attempts = 5, invalid_part_delay = 0 }
eq(select(2, patient.storage.complete_multipart_upload(complete2)).attempts, 5, "five attempts")

-- when the attempts run out the last answer is the error, and says how many were made
local up3 = s3.create_multipart_upload{ Bucket = "retries", Object = "k3" }
local e3 = s3.upload_part{ Bucket = "retries", Object = "k3", uploadId = up3.UploadId, partNumber = 1, body = "x" }.ETag
local complete3 = { Bucket = "retries", Object = "k3", uploadId = up3.UploadId, Part = { { PartNumber = 1, ETag = e3 } } }
emu.fault{ operation = "CompleteMultipartUpload", code = "InvalidPart", status = 400, times = 3 }
err = failure(s3.complete_multipart_upload, complete3)
eq(err.code, "InvalidPart", "attempts exhausted: code")
eq(err.attempts, 3, "attempts exhausted: err.attempts")
assert(tostring(err):find("attempts: 3", 1, true), "tostring says how many attempts: " .. tostring(err))
eq(select(2, s3.complete_multipart_upload(complete3)).attempts, 1, "the upload was left intact")

-- 5xx, throttling (429, or a throttling code) and a dropped connection: repeated
local update = { SnapshotName = "snap-1", snapshot = { description = "retried" } }
for _, fault in ipairs{
  { status = 500, code = "InternalError" },
  { status = 503, code = "ServiceUnavailable" },
  { status = 429, code = "TooManyRequests" },
  { status = 400, code = "ThrottlingException" },
  { drop = true },
} do
  fault.operation, fault.times = "UpdateSnapshot", 2
  emu.fault(fault)
  local r, m = fast.cluster.update_snapshot(update)
  local what = fault.code or "dropped connection"
  eq(m.attempts, 3, what .. ": attempts")
  eq(r.snapshot.description, "retried", what .. ": result")
end
emu.fault{ operation = "PutObject", status = 503, code = "SlowDown" }
eq(select(2, s3.put_object{ Bucket = "retries", Object = "small", Body = "x" }).attempts, 2, "storage SlowDown")

-- an <Error> in a 200 answer is a failure, retried like a 5xx
emu.fault{ operation = "CompleteMultipartUpload", error_in_200 = true, code = "InternalError" }
local up4 = s3.create_multipart_upload{ Bucket = "retries", Object = "k4" }
local e4 = s3.upload_part{ Bucket = "retries", Object = "k4", uploadId = up4.UploadId, partNumber = 1, body = "x" }.ETag
local _, m4 = s3.complete_multipart_upload{ Bucket = "retries", Object = "k4", uploadId = up4.UploadId,
                                            Part = { { PartNumber = 1, ETag = e4 } } }
eq(m4.attempts, 2, "error in 200: retried")

-- an error that retrying cannot mend is reported at once
err = failure(fast.cluster.update_snapshot, { SnapshotName = "no-such-snapshot", snapshot = {} })
eq(err.code, "SnapshotNotFound", "not retried: code")
eq(err.attempts, 1, "not retried: attempts")

-- the restores are never resent once they may have reached the server...
local function count(list)
  return #emu.state()[list]
end
local restore = { backupId = "0123456789abcdef0123456789abcdef", instanceId = "retry-1" }
local instances = count("instances")
emu.fault{ operation = "RestoreInstance", status = 503, code = "ServiceUnavailable" }
err = failure(fast.devops.restore_instance, restore)
eq(err.status, 503, "restore 503: status")
eq(err.attempts, 1, "restore 503: not resent")
emu.fault{ operation = "RestoreInstance", drop = true }
err = failure(fast.devops.restore_instance, restore)
eq(err.kind, "transport", "restore dropped: kind")
eq(err.attempts, 1, "restore dropped: not resent")
eq(count("instances"), instances, "no server was created")
local cluster = { SnapshotName = "snap-2", cluster = { name = "retry-cluster" } }
emu.fault{ operation = "RestoreClusterFromSnapshot", status = 500 }
eq(failure(fast.cluster.restore_cluster_from_snapshot, cluster).attempts, 1, "cluster restore 500: not resent")

-- ... unless the script asks for it
local bold = cloud.client{ retry_base_delay = 0, retry_restores = true }
emu.fault{ operation = "RestoreInstance", status = 503, code = "ServiceUnavailable" }
local r, m = bold.devops.restore_instance(restore)
eq(m.attempts, 2, "restore opted in: attempts")
eq(r.instance.instanceId, "retry-1", "restore opted in: result")
emu.fault{ operation = "RestoreClusterFromSnapshot", drop = true }
r, m = bold.cluster.restore_cluster_from_snapshot(cluster)
eq(m.attempts, 2, "cluster restore opted in: attempts")
eq(r.cluster.name, "retry-cluster", "cluster restore opted in: result")

-- a refused connection never arrived: even a restore is tried again
local nowhere = cloud.client{ endpoints = { devops = "http://127.0.0.1:9" }, retry_base_delay = 0 }
err = failure(nowhere.devops.restore_instance, restore)
eq(err.code, "ConnectionFailed", "refused: code")
eq(err.attempts, 3, "refused: retried")

-- bad retry options are named
local ok, msg = pcall(cloud.client, { invalid_part_delay = -1 })
assert(not ok and msg:find("field 'invalid_part_delay' must be a number of seconds, 0 or more", 1, true), msg)
ok, msg = pcall(cloud.client, { max_attempts = 0 })
assert(not ok and msg:find("field 'max_attempts' must be an integer, 1 or more", 1, true), msg)
ok, msg = pcall(cloud.client, { retry_base_delay = "fast" })
assert(not ok and msg:find("field 'retry_base_delay' must be a number of seconds", 1, true), msg)
print("retries_test: ok")
