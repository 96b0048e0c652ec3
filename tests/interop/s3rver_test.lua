-- The client against s3rver, a real S3 implementation of another project, in the aws
-- dialect: the whole multipart flow with awkward object keys, a completion of 1,001
-- parts, and what the client does with what s3rver really answers. s3rver is a peer,
-- not a reference: version 3.7.1 checks the access key and the x-amz-* headers but
-- not V4 signatures themselves, enforces no minimum part size, checks neither part
-- ETags nor their order, answers an unknown upload id with 500 InternalError and
-- AbortMultipartUpload with 405 MethodNotAllowed, stores an aws-chunked body (a file
-- streamed signed) with its framing. Each of those is pinned down below.
-- Run by tests/interop/run_s3rver_test.sh, which starts s3rver and passes --endpoint.

local s3 = cloud.storage
local BUCKET = "interop"
local MiB = 1024 * 1024

setup(function()
  if cloud.emulator then error("this file runs against s3rver: see tests/interop/run_s3rver_test.sh", 0) end
  local ok, err = pcall(s3.create_bucket, { Bucket = BUCKET })
  if not ok and err.code ~= "BucketAlreadyOwnedByYou" and err.code ~= "BucketAlreadyExists" then error(err, 0) end
end)

-- Creates an upload for `key`, sends `bodies` as its parts; returns the id and Part list.
local function upload(key, bodies)
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = key }
  expect({ up.Bucket, up.Key }).to_equal{ BUCKET, key }
  local listed = {}
  for n, body in ipairs(bodies) do
    local r = s3.upload_part{ Bucket = BUCKET, Object = key, uploadId = up.UploadId, partNumber = n, body = body }
    expect(r.ETag).to_match('^"%x+"$')
    listed[n] = { PartNumber = n, ETag = r.ETag }
  end
  return up.UploadId, listed
end

local function complete(key, id, parts, client)
  return (client or cloud).storage.complete_multipart_upload{ Bucket = BUCKET, Object = key, uploadId = id, Part = parts }
end

-- The object a completion made, read once it is all there: s3rver 3.7.1 answers a
-- CompleteMultipartUpload when it has hashed the parts, before its file of the object
-- is all written (putObject resolves on the hashing stream's end, not the file's), so
-- a GET at once may read it short. Read again, 0.1 s apart, for at most 5 s.
local function completed_object(key, size)
  for _ = 1, 50 do
    local got = s3.get_object{ Bucket = BUCKET, Object = key }
    if #got.Body >= size then return got end
    cloud.sleep(0.1, { real_time = true })
  end
  return s3.get_object{ Bucket = BUCKET, Object = key }
end

-- Distinct bytes for part n of a key, every byte value included.
local function part_body(n, size)
  local block = {}
  for i = 0, 255 do block[#block + 1] = string.char((i + n) % 256) end
  block = table.concat(block)
  return (block:rep(size // 256 + 1)):sub(1, size)
end

local awkward_keys = {
  "with space/and more spaces.bin",
  "日本語/ファイル名.bin",
  "plus+sign+a+b.bin",
  "percent 100%25%.bin",
  "question?mark.bin",
  "hash#tag.bin",
  "equals=sign&amp=1.bin",
  "all of them: + % ? # = 日本 ~ (1).bin",
}

for _, key in ipairs(awkward_keys) do
  test("multipart flow with the key " .. key, function()
    local bodies = { part_body(1, 1000), part_body(2, 2000), part_body(3, 10) }
    local id, parts = upload(key, bodies)
    local done, meta = complete(key, id, parts)
    expect(meta.status).to_equal(200)
    expect({ done.Bucket, done.Key }).to_equal{ BUCKET, key }
    expect(done.ETag).to_match('^"%x+"$')  -- s3rver's form: the MD5 of the whole object, not <hash>-<parts>
    local got = completed_object(key, 3010)
    expect(got.Body == table.concat(bodies)).to_be_truthy()
    expect(got.ETag).to_equal(done.ETag)
  end)
end

test("5 MiB parts: two of them and a small last one, downloaded whole and by range", function()
  local bodies = { part_body(7, 5 * MiB), part_body(8, 5 * MiB), part_body(9, 12345) }
  local key = "big/five MiB parts.bin"
  local id, parts = upload(key, bodies)
  complete(key, id, parts)
  local whole = table.concat(bodies)
  local got = completed_object(key, #whole)
  expect(#got.Body).to_equal(#whole)
  expect(got.Body == whole).to_be_truthy()
  local ranged, meta = s3.get_object{ Bucket = BUCKET, Object = key, Range = ("bytes=%d-%d"):format(5 * MiB - 3, 5 * MiB + 2) }
  expect(meta.status).to_equal(206)
  expect(ranged.Body).to_equal(whole:sub(5 * MiB - 2, 5 * MiB + 3))
end)

test("a completion of 1,001 parts", function()
  local key = "many parts/1001 parts+.bin"
  local bodies = {}
  for n = 1, 1001 do bodies[n] = ("part %04d|"):format(n) .. part_body(n, 100) end
  local id, parts = upload(key, bodies)
  expect(#parts).to_equal(1001)
  local done = complete(key, id, parts)
  expect(done.Key).to_equal(key)
  local got = completed_object(key, 1001 * 110)
  expect(#got.Body).to_equal(1001 * 110)
  expect(got.Body == table.concat(bodies)).to_be_truthy()
end)

test("an unknown upload id: s3rver answers 500 InternalError; the client raises it (after its 5xx retries)", function()
  local _, parts = upload("unknown-upload.bin", { "x" })
  expect(complete, "unknown-upload.bin", ("0"):rep(32), parts)
    .to_fail{ kind = "api", code = "InternalError", status = 500, operation = "CompleteMultipartUpload" }
end)

test("a wrong part ETag is accepted by s3rver (it does not check ETags); the client reports success", function()
  local id, parts = upload("wrong-etag.bin", { "hello", "world" })
  parts[1].ETag = '"00000000000000000000000000000000"'
  expect(complete("wrong-etag.bin", id, parts).Key).to_equal("wrong-etag.bin")
  expect(s3.get_object{ Bucket = BUCKET, Object = "wrong-etag.bin" }.Body).to_equal("helloworld")
end)

test("AbortMultipartUpload: s3rver answers 405 MethodNotAllowed; the client raises it", function()
  local id = upload("abort.bin", { "x" })
  expect(s3.abort_multipart_upload, { Bucket = BUCKET, Object = "abort.bin", uploadId = id })
    .to_fail{ kind = "api", code = "MethodNotAllowed", status = 405 }
end)

test("an unknown bucket is 404 NoSuchBucket", function()
  expect(s3.create_multipart_upload, { Bucket = "no-such-bucket", Object = "k" })
    .to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)

test("an unknown access key is refused with 403 InvalidAccessKeyId", function()
  local stranger = cloud.client{ credentials = { access_key_id = "NOT-S3RVER", secret_access_key = "S3RVER" }, max_attempts = 1 }
  expect(stranger.storage.create_multipart_upload, { Bucket = BUCKET, Object = "k" })
    .to_fail{ kind = "api", code = "InvalidAccessKeyId", status = 403 }
end)

test("a wrong secret passes: s3rver 3.7.1 does not verify V4 signatures (a peer, not a reference)", function()
  local wrong = cloud.client{ credentials = { access_key_id = "S3RVER", secret_access_key = "wrong" }, max_attempts = 1 }
  expect(wrong.storage.create_multipart_upload{ Bucket = BUCKET, Object = "k" }.UploadId).to_match("%x+")
end)

test("the ext dialect is refused: s3rver knows only AWS's signature names", function()
  local ext = cloud.client{ dialect = "ext", max_attempts = 1 }
  expect(ext.storage.create_multipart_upload, { Bucket = BUCKET, Object = "k" }).to_fail{ kind = "api", status = 400 }
end)

-- A file of `size` distinct bytes, and its path.
local function temp_file(size)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(part_body(7, size))
  f:close()
  return path
end

test("a file body streamed aws-chunked is stored undecoded by s3rver 3.7.1; payload_signing = whole sends it plain", function()
  local path = temp_file(MiB + 3)
  s3.put_object{ Bucket = BUCKET, Object = "streamed.bin", file = path }
  local got = s3.get_object{ Bucket = BUCKET, Object = "streamed.bin" }
  expect(got.Body:sub(1, 22)).to_equal("40000;chunk-signature=")  -- s3rver keeps the framing: it knows no aws-chunked
  local whole = cloud.client{ payload_signing = "whole" }.storage
  local put = whole.put_object{ Bucket = BUCKET, Object = "whole.bin", file = path }
  expect(whole.get_object{ Bucket = BUCKET, Object = "whole.bin" }.Body).to_equal(part_body(7, MiB + 3))
  expect(put.ETag).to_equal('"' .. cloud.md5(part_body(7, MiB + 3)) .. '"')
  local up = whole.create_multipart_upload{ Bucket = BUCKET, Object = "whole-parts.bin" }
  local part = whole.upload_part{ Bucket = BUCKET, Object = "whole-parts.bin", uploadId = up.UploadId, partNumber = 1,
                                  file = path, offset = 10, length = 300000 }
  complete("whole-parts.bin", up.UploadId, { { PartNumber = 1, ETag = part.ETag } })
  expect(whole.get_object{ Bucket = BUCKET, Object = "whole-parts.bin" }.Body).to_equal(part_body(7, MiB + 3):sub(11, 300010))
  os.remove(path)
end)
