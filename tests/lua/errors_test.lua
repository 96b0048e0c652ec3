-- One test per error kind, as a script would meet them: validation (nothing sent),
-- api (the platform refused: wrong secret, unknown key, an XML and a JSON error
-- body), transport (nothing listening), timeout (an answer slower than the client's
-- time-out), config (no credentials, no endpoint). Error objects have a fixed shape
-- and print readably.

local check = dofile(arg[0]:match("^(.*/)") .. "support/check.lua")
local eq, failure = check.eq, check.failure

-- validation: every problem at once, with paths; nothing is sent
local err = failure(cloud.cluster.update_snapshot, {
  SnapshotName = "snap-1",
  snapshot = { name = ("a"):rep(41), description = ("d"):rep(256), tags = { { key = "k", value = ("v"):rep(257) } },
               expirationTime = "tomorrow" },
})
eq(err.kind, "validation", "kind")
eq(err.code, "ValidationError", "code")
eq(err.operation, "UpdateSnapshot", "operation")
eq(err.status, 0, "no HTTP status: nothing was sent")
eq(err.attempts, 0, "no attempt: nothing was sent")
local paths = {}
for _, f in ipairs(err.fields) do paths[f.path] = f.problem end
eq(paths["snapshot.name"], "at most 40 characters (got 41)", "name limit")
eq(paths["snapshot.description"], "at most 255 characters (got 256)", "description limit")
eq(paths["snapshot.tags[1].value"], "at most 256 characters (got 257)", "tag value limit")
assert(paths["snapshot.expirationTime"]:find("ISO 8601"), "expirationTime format")
assert(tostring(err):find("snapshot.tags%[1%]%.value: at most 256 characters"), "tostring lists the fields")

err = failure(cloud.cluster.update_snapshot, { snapshot = { name = 5 } })
local problems = {}
for _, f in ipairs(err.fields) do problems[f.path] = f.problem end
eq(problems["SnapshotName"], "required", "missing path parameter")
eq(problems["snapshot.name"], "string expected, got integer", "wrong type named")

err = failure(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = { fn = print } })
eq(err.kind, "validation", "functions cannot be sent")

-- api: a wrong secret is refused by the platform's signature check
local wrong_secret = cloud.client{ credentials = { secret_access_key = "wrong" } }
err = failure(wrong_secret.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
eq(err.kind, "api", "wrong secret kind")
eq(err.code, "SignatureDoesNotMatch", "wrong secret code")
eq(err.status, 403, "wrong secret status")
assert(err.request_id ~= "", "request id on api errors")
assert(not tostring(err):find("wrong", 1, true), "the secret never appears in the error")

local unknown_key = cloud.client{ credentials = { access_key_id = "NOSUCHKEY", secret_access_key = "x" } }
err = failure(unknown_key.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
eq(err.code, "InvalidAccessKeyId", "unknown key")

-- a signature in the wrong dialect is still a valid signature: the emulator accepts both
local aws = cloud.client{ dialect = "aws" }
eq(aws.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = {} }.snapshot.name, "snap-1", "aws dialect accepted")

-- transport: nothing listens on the endpoint
local nowhere = cloud.client{ endpoints = { cluster = "http://127.0.0.1:9" }, max_attempts = 1 }
err = failure(nowhere.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
eq(err.kind, "transport", "unreachable kind")
eq(err.code, "ConnectionFailed", "unreachable code")
eq(err.operation, "UpdateSnapshot", "operation named on transport errors")

-- connection failures are retried: attempts counted up to the limit
local ok, e = pcall(cloud.client{ endpoints = { cluster = "http://127.0.0.1:9" }, max_attempts = 2 }.cluster.update_snapshot,
                    { SnapshotName = "snap-1", snapshot = {} })
eq(e.code, "ConnectionFailed", "retried, still failing")

-- api, from the storage API's XML error body: code, message and request id read from it
err = failure(cloud.storage.get_object, { Bucket = "no-such-bucket", Object = "k" })
eq(err.kind, "api", "XML error: kind")
eq(err.code, "NoSuchBucket", "XML error: code")
eq(err.status, 404, "XML error: status")
eq(err.operation, "GetObject", "XML error: operation")
assert(err.message ~= "" and not err.message:find("<"), "XML error: message is the <Message> text: " .. err.message)
assert(err.request_id ~= "", "XML error: request id")
eq(err.attempts, 1, "XML error: one attempt")

-- api, from a JSON API's error body
err = failure(cloud.cluster.update_snapshot, { SnapshotName = "no-such-snapshot", snapshot = {} })
eq(err.kind, "api", "JSON error: kind")
eq(err.code, "SnapshotNotFound", "JSON error: code")
eq(err.status, 404, "JSON error: status")
assert(err.message:find("no-such-snapshot", 1, true), "JSON error: message names the snapshot: " .. err.message)

-- api, from an <Error> in a 200 answer (retried like a 5xx; here with one attempt)
if cloud.emulator then
  local s3 = cloud.storage
  local up = s3.create_multipart_upload{ Bucket = "demo-bucket", Object = "k" }
  local etag = s3.upload_part{ Bucket = "demo-bucket", Object = "k", uploadId = up.UploadId, partNumber = 1, body = "x" }.ETag
  cloud.emulator.fault{ operation = "CompleteMultipartUpload", error_in_200 = true, code = "InternalError" }
  err = failure(cloud.client{ max_attempts = 1 }.storage.complete_multipart_upload,
                { Bucket = "demo-bucket", Object = "k", uploadId = up.UploadId, Part = { { PartNumber = 1, ETag = etag } } })
  eq(err.kind, "api", "error in 200: kind")
  eq(err.code, "InternalError", "error in 200: code")
  eq(err.status, 200, "error in 200: status")
end

-- timeout: the answer comes later than the client waits (a short emulator delay)
if cloud.emulator then
  cloud.emulator.fault{ operation = "UpdateSnapshot", delay = 0.3 }
  err = failure(cloud.client{ timeout = 0.05, max_attempts = 1 }.cluster.update_snapshot,
                { SnapshotName = "snap-1", snapshot = {} })
  eq(err.kind, "timeout", "timeout: kind")
  eq(err.code, "Timeout", "timeout: code")
  eq(err.status, 0, "timeout: no status")
  eq(err.operation, "UpdateSnapshot", "timeout: operation")
end

-- config: a client that cannot work; nothing is sent (attempts 0)
err = failure(cloud.client{ credentials = { access_key_id = "", secret_access_key = "" } }.cluster.update_snapshot,
              { SnapshotName = "snap-1", snapshot = {} })
eq(err.kind, "config", "no credentials: kind")
eq(err.code, "NoCredentials", "no credentials: code")
eq(err.attempts, 0, "no credentials: nothing sent")
err = failure(cloud.client{ endpoints = { devops = "" } }.devops.restore_instance, { backupId = ("a"):rep(32), instanceId = "x" })
eq(err.kind, "config", "no endpoint: kind")
eq(err.code, "NoEndpoint", "no endpoint: code")
assert(err.message:find("devops"), "no endpoint: the API is named: " .. err.message)

-- every error object has the same fields
for _, k in ipairs{ "kind", "code", "message", "status", "request_id", "operation", "fields", "attempts" } do
  assert(err[k] ~= nil, "error objects carry " .. k)
end

-- bad arguments to the module itself get lauxlib's wording
ok, e = pcall(cloud.client, { dialect = "sigv2" })
assert(not ok and e:find("dialect must be \"ext\" or \"aws\""), "bad dialect: " .. tostring(e))
ok, e = pcall(cloud.cluster.update_snapshot, "snap-1")
assert(not ok and e:find("bad argument #1 to 'cloud.cluster.update_snapshot' %(table expected, got string%)"), tostring(e))

-- cloud.null is one value that prints as cloud.null
eq(tostring(cloud.null), "cloud.null", "cloud.null prints")
print("errors_test: ok")
