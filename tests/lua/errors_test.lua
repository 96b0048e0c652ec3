-- One test per error kind, as a script would meet them: validation (nothing sent),
-- api (the platform refused: wrong secret, unknown key, an XML and a JSON error
-- body), transport (nothing listening), timeout (an answer slower than the client's
-- time-out), config (no credentials, no endpoint). Error objects have a fixed shape
-- and print readably.
-- Run: cloudlua test tests/lua/errors_test.lua

local snap = { SnapshotName = "snap-1", snapshot = {} }

---------------------------------------------------------------- validation

-- An UpdateSnapshot with four mistakes; its error.
local function four_mistakes()
  return expect(cloud.cluster.update_snapshot, {
    SnapshotName = "snap-1",
    snapshot = { name = ("a"):rep(41), description = ("d"):rep(256), tags = { { key = "k", value = ("v"):rep(257) } },
                 expirationTime = "tomorrow" },
  }).to_fail()
end

local function problems_of(err)
  local problems = {}
  for _, f in ipairs(err.fields) do problems[f.path] = f.problem end
  return problems
end

test("validation: kind, code and operation; nothing was sent", function()
  local err = four_mistakes()
  expect(err.kind).to_equal("validation")
  expect(err.code).to_equal("ValidationError")
  expect(err.operation).to_equal("UpdateSnapshot")
  expect(err.status).to_equal(0)     -- no HTTP status
  expect(err.attempts).to_equal(0)   -- no attempt
end)

test("validation: every problem at once, each with its path", function()
  local problems = problems_of(four_mistakes())
  expect(problems["snapshot.name"]).to_equal("at most 40 characters (got 41)")
  expect(problems["snapshot.description"]).to_equal("at most 255 characters (got 256)")
  expect(problems["snapshot.tags[1].value"]).to_equal("at most 256 characters (got 257)")
  expect(problems["snapshot.expirationTime"]).to_contain("ISO 8601")
end)

test("validation: tostring lists the fields", function()
  expect(tostring(four_mistakes())).to_match("snapshot.tags%[1%]%.value: at most 256 characters")
end)

test("validation: a missing path parameter and a wrong type are named", function()
  local problems = problems_of(expect(cloud.cluster.update_snapshot, { snapshot = { name = 5 } }).to_fail())
  expect(problems["SnapshotName"]).to_equal("required")
  expect(problems["snapshot.name"]).to_equal("string expected, got integer")
end)

test("validation: functions cannot be sent", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = { fn = print } })
    .to_fail{ kind = "validation" }
end)

---------------------------------------------------------------- api

test("api: a wrong secret is refused by the platform's signature check", function()
  local wrong_secret = cloud.client{ credentials = { secret_access_key = "wrong" } }
  local err = expect(wrong_secret.cluster.update_snapshot, snap)
    .to_fail{ kind = "api", code = "SignatureDoesNotMatch", status = 403 }
  expect(err.request_id).to_not_equal("")
  expect(tostring(err):find("wrong", 1, true)).to_be_nil()  -- the secret never appears in the error
end)

test("api: an unknown access key", function()
  local unknown_key = cloud.client{ credentials = { access_key_id = "NOSUCHKEY", secret_access_key = "x" } }
  expect(unknown_key.cluster.update_snapshot, snap).to_fail{ code = "InvalidAccessKeyId" }
end)

-- A signature in the wrong dialect is still a valid signature: the emulator accepts both.
test("api: the aws dialect is accepted", function()
  local aws = cloud.client{ dialect = "aws" }
  expect(aws.cluster.update_snapshot(snap).snapshot.name).to_equal("snap-1")
end)

test("api: the storage API's XML error body gives code, message and request id", function()
  local err = expect(cloud.storage.get_object, { Bucket = "no-such-bucket", Object = "k" })
    .to_fail{ kind = "api", code = "NoSuchBucket", status = 404, operation = "GetObject" }
  expect(err.message).to_not_equal("")
  expect(err.message:find("<", 1, true)).to_be_nil()  -- the <Message> text, not the XML
  expect(err.request_id).to_not_equal("")
  expect(err.attempts).to_equal(1)
end)

test("api: a JSON API's error body", function()
  local err = expect(cloud.cluster.update_snapshot, { SnapshotName = "no-such-snapshot", snapshot = {} })
    .to_fail{ kind = "api", code = "SnapshotNotFound", status = 404 }
  expect(err.message).to_contain("no-such-snapshot")
end)

-- Retried like a 5xx; here with one attempt.
test("api: an <Error> in a 200 answer", function()
  local s3 = cloud.storage
  local up = s3.create_multipart_upload{ Bucket = "demo-bucket", Object = "k" }
  local etag = s3.upload_part{ Bucket = "demo-bucket", Object = "k", uploadId = up.UploadId, partNumber = 1, body = "x" }.ETag
  cloud.emulator.fault{ operation = "CompleteMultipartUpload", error_in_200 = true, code = "InternalError" }
  expect(cloud.client{ max_attempts = 1 }.storage.complete_multipart_upload,
         { Bucket = "demo-bucket", Object = "k", uploadId = up.UploadId, Part = { { PartNumber = 1, ETag = etag } } })
    .to_fail{ kind = "api", code = "InternalError", status = 200 }
end)

---------------------------------------------------------------- transport and timeout

test("transport: nothing listens on the endpoint", function()
  local nowhere = cloud.client{ endpoints = { cluster = "http://127.0.0.1:9" }, max_attempts = 1 }
  expect(nowhere.cluster.update_snapshot, snap)
    .to_fail{ kind = "transport", code = "ConnectionFailed", operation = "UpdateSnapshot" }
end)

test("transport: connection failures are retried, attempts counted up to the limit", function()
  local nowhere = cloud.client{ endpoints = { cluster = "http://127.0.0.1:9" }, max_attempts = 2 }
  local err = expect(nowhere.cluster.update_snapshot, snap).to_fail{ code = "ConnectionFailed" }
  expect(err.attempts).to_equal(2)
end)

test("transport: a host name that does not resolve is tried once, naming the host", function()
  local nowhere = cloud.client{ endpoints = { cluster = "http://nonexistent.invalid" } }
  local err = expect(nowhere.cluster.update_snapshot, snap)
    .to_fail{ kind = "transport", code = "UnknownHost", operation = "UpdateSnapshot" }
  expect(err.attempts).to_equal(1)
  expect(err.message).to_contain("nonexistent.invalid")
  expect(err.message).to_contain("check the endpoint")
end)

-- The answer comes later than the client waits (a short emulator delay).
test("timeout: kind, code, no status, the operation", function()
  cloud.emulator.fault{ operation = "UpdateSnapshot", delay = 0.3 }
  local err = expect(cloud.client{ timeout = 0.05, max_attempts = 1 }.cluster.update_snapshot, snap)
    .to_fail{ kind = "timeout", code = "Timeout" }
  expect(err.status).to_equal(0)
  expect(err.operation).to_equal("UpdateSnapshot")
end)

---------------------------------------------------------------- config

test("config: no credentials; nothing is sent", function()
  local client = cloud.client{ credentials = { access_key_id = "", secret_access_key = "" } }
  local err = expect(client.cluster.update_snapshot, snap).to_fail{ kind = "config", code = "NoCredentials" }
  expect(err.attempts).to_equal(0)
end)

local function no_endpoint()
  return expect(cloud.client{ endpoints = { devops = "" } }.devops.restore_instance,
                { backupId = ("a"):rep(32), instanceId = "x" }).to_fail()
end

test("config: no endpoint; the API is named", function()
  local err = no_endpoint()
  expect(err.kind).to_equal("config")
  expect(err.code).to_equal("NoEndpoint")
  expect(err.message).to_contain("devops")
end)

test("every error object has the same fields", function()
  local err, missing = no_endpoint(), {}
  for _, k in ipairs{ "kind", "code", "message", "status", "request_id", "operation", "fields", "attempts" } do
    if err[k] == nil then missing[#missing + 1] = k end
  end
  expect(missing).to_equal({})
end)

---------------------------------------------------------------- the module's own errors

test("a bad dialect is a config error, worded as the config file's", function()
  expect(cloud.client, { dialect = "sigv2" }).to_fail{ kind = "config", code = "InvalidSetting",
    message = "cloud.client: dialect must be ext or aws (got 'sigv2')" }
end)

test("a bad argument to an operation gets lauxlib's wording", function()
  expect(cloud.cluster.update_snapshot, "snap-1")
    .to_fail("bad argument #1 to 'cloud.cluster.update_snapshot' (table expected, got string)")
end)

test("cloud.null prints as cloud.null", function()
  expect(tostring(cloud.null)).to_equal("cloud.null")
end)
