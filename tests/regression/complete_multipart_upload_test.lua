-- CompleteMultipartUpload (POST /{Bucket}/{Object}?uploadId=U) and the steps before it
-- (CreateMultipartUpload, UploadPart, AbortMultipartUpload): the object is the parts
-- joined, its ETag "<md5 of the parts' md5s>-<parts>"; InvalidPart (spec, Errors rule
-- 1) is waited for and repeated; the other refusals (wrong ETag, unknown part, order,
-- unknown upload, too small, an error inside a 200 answer); the limits; the parts'
-- checksums of an upload created with a ChecksumAlgorithm (right, wrong, missing, of
-- another algorithm) and the object's checksum they make.
-- Run: cloudlua test tests/regression/complete_multipart_upload_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage
local once = cloud.client{ max_attempts = 1 }  -- sees InvalidPart at once instead of retrying
local BUCKET, KEY = "regression", "reports/2024 Q1/total+net 100%.csv"

before_each(function()
  emu.reset()
  emu.configure{ min_part_size = 4 }  -- parts of a few bytes stand for 5 MiB ones
  s3.create_bucket{ Bucket = BUCKET }
end)

-- A new upload with the given part bodies uploaded; returns its id and the Part list.
-- With `algorithm` (CRC32, ...) the upload is created with it and each Part carries
-- the part's checksum as UploadPart answered it.
local function upload(bodies, key, algorithm)
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = key or KEY, ChecksumAlgorithm = algorithm }
  local parts = {}
  for n, body in ipairs(bodies) do
    local r = s3.upload_part{ Bucket = BUCKET, Object = key or KEY, uploadId = up.UploadId, partNumber = n, body = body }
    parts[n] = { PartNumber = n, ETag = r.ETag }
    if algorithm then parts[n]["Checksum" .. algorithm] = r["Checksum" .. algorithm] end
  end
  return up.UploadId, parts
end

local function complete(id, parts, client)
  return (client or cloud).storage.complete_multipart_upload{ Bucket = BUCKET, Object = KEY, uploadId = id, Part = parts }
end

test("completes: the object is the parts joined, ETag <hash>-<parts>, the spec's headers", function()
  local id, parts = upload{ "hello", "world", "!" }
  local r, meta = complete(id, parts)
  expect(meta.status).to_equal(200)
  expect({ r.Bucket, r.Key }).to_equal{ BUCKET, KEY }
  expect(r.ETag).to_match('^"%x+%-3"$')
  expect(r.Location).to_contain("/regression/reports/2024%20Q1/total%2Bnet%20100%25.csv")
  expect(meta.request_id).to_match("%S")
  for _, h in ipairs{ "x-ext-request-id", "x-ext-version-id", "x-ext-server-side-encryption" } do
    expect(meta.headers[h]).to_be_a("string")
  end
  local object = s3.get_object{ Bucket = BUCKET, Object = KEY }
  expect(object.Body).to_equal("helloworld!")
  expect(object.ETag).to_equal(r.ETag)
end)

test("part ETags are the quoted MD5 of each part, the upload id in the answer", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY }
  expect({ up.Bucket, up.Key }).to_equal{ BUCKET, KEY }
  local r = s3.upload_part{ Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = 1, body = "hello" }
  expect(r.ETag).to_equal('"5d41402abc4b2a76b9719d911017c592"')
end)

test("InvalidPart is waited for and repeated (spec: errors, rule 1)", function()
  local id, parts = upload{ "hello", "world" }
  emu.fault{ operation = "CompleteMultipartUpload", times = 1, status = 400, code = "InvalidPart" }
  local r, meta = complete(id, parts)
  expect(meta.attempts).to_equal(2)
  expect(r.ETag).to_match("%-2\"$")
end)

test("InvalidPart that persists reaches the caller as an api error", function()
  local id, parts = upload{ "hello", "world" }
  parts[2].ETag = '"00000000000000000000000000000000"'
  local err = expect(complete, id, parts, once).to_fail{ kind = "api", code = "InvalidPart", status = 400 }
  expect(err.message).to_match("%S")
end)

test("a part never uploaded is InvalidPart", function()
  local id, parts = upload{ "hello" }
  parts[2] = { PartNumber = 2, ETag = parts[1].ETag }
  expect(complete, id, parts, once).to_fail{ code = "InvalidPart" }
end)

test("parts out of order or repeated are refused and nothing is stored", function()
  local id, parts = upload{ "hello", "world" }
  for _, wrong in ipairs{ { parts[2], parts[1] }, { parts[1], parts[1] } } do
    local err = expect(complete, id, wrong, once).to_fail()
    -- the platform's InvalidPartOrder, or the client's own check before sending
    expect(err.code == "InvalidPartOrder" or err.kind == "validation").to_be_truthy()
  end
  expect(s3.get_object, { Bucket = BUCKET, Object = KEY }).to_fail{ code = "NoSuchKey" }
end)

test("an unknown upload is 404 NoSuchUpload", function()
  local _, parts = upload{ "hello" }
  expect(complete, ("0"):rep(32), parts).to_fail{ kind = "api", code = "NoSuchUpload", status = 404 }
end)

test("a completed upload completed again answers the same; an aborted one is gone", function()
  local id, parts = upload{ "hello" }
  local first = complete(id, parts)
  expect(complete(id, parts).ETag).to_equal(first.ETag)  -- as S3 (s3_conformance_test)
  local id2, parts2 = upload{ "hello" }
  local _, meta = s3.abort_multipart_upload{ Bucket = BUCKET, Object = KEY, uploadId = id2 }
  expect(meta.status).to_equal(204)
  expect(complete, id2, parts2).to_fail{ code = "NoSuchUpload" }
end)

test("a part under the minimum size that is not the last is EntityTooSmall", function()
  local id, parts = upload{ "abc", "defgh" }
  expect(complete, id, parts).to_fail{ kind = "api", code = "EntityTooSmall", status = 400 }
  local id2, parts2 = upload{ "abcd", "e" }  -- the last part may be smaller
  expect(complete(id2, parts2).Key).to_equal(KEY)
end)

test("an error inside a 200 answer is an error, not a success", function()
  local id, parts = upload{ "hello" }
  emu.fault{ operation = "CompleteMultipartUpload", times = 3, error_in_200 = true, code = "InternalError" }
  expect(complete, id, parts).to_fail{ kind = "api", code = "InternalError" }
end)

test("part numbers: 1 to 10000", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY }
  local last = s3.upload_part{ Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = 10000, body = "z" }
  expect(last.ETag).to_match("^\"%x+\"$")
  for _, n in ipairs{ 0, 10001 } do
    expect(s3.upload_part, { Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = n, body = "z" })
      .to_fail{ kind = "validation", field = "partNumber" }
    expect(complete, up.UploadId, { { PartNumber = n, ETag = last.ETag } })
      .to_fail{ kind = "validation", field = "Part[1].PartNumber" }
  end
  expect(complete(up.UploadId, { { PartNumber = 10000, ETag = last.ETag } }).ETag).to_match("%-1\"$")
end)

test("Part: at least one, each with ETag and PartNumber", function()
  expect(complete, "u", {}).to_fail{ kind = "validation", field = "Part" }
  expect(complete, "u", { { PartNumber = 1 } }).to_fail{ kind = "validation", field = "Part[1].ETag", problem = "required" }
  expect(cloud.storage.complete_multipart_upload, { Bucket = BUCKET, Object = KEY, Part = { { PartNumber = 1, ETag = "x" } } })
    .to_fail{ kind = "validation", field = "uploadId" }
end)

---------------------------------------------------------------- checksums

-- CRC-32 of "hello" and of "world", and S3's composite of the two (the CRC-32 of the
-- two raw CRCs, then -2), as Python's zlib computes them.
local CRC_HELLO, CRC_WORLD, CRC_BOTH = "NhCmhg==", "OncRQw==", "wpn7tg==-2"

test("an upload created with CRC32: each part's CRC32, the object's composite one", function()
  local id, parts = upload({ "hello", "world" }, KEY, "CRC32")
  expect({ parts[1].ChecksumCRC32, parts[2].ChecksumCRC32 }).to_equal{ CRC_HELLO, CRC_WORLD }
  local r = complete(id, parts)
  expect(r.ChecksumCRC32).to_equal(CRC_BOTH)
  expect(s3.head_object{ Bucket = BUCKET, Object = KEY, ChecksumMode = "ENABLED" }.ChecksumCRC32).to_equal(CRC_BOTH)
  local got = s3.get_object{ Bucket = BUCKET, Object = KEY, ChecksumMode = "ENABLED" }
  expect({ got.Body, got.ChecksumCRC32 }).to_equal{ "helloworld", CRC_BOTH }
  expect(s3.get_object{ Bucket = BUCKET, Object = KEY }.ChecksumCRC32).to_be_nil()
  expect(complete(id, parts).ChecksumCRC32).to_equal(CRC_BOTH)  -- completed again: the same answer
end)

test("a part's checksum that is not the one it was uploaded with is InvalidPart", function()
  local id, parts = upload({ "hello", "world" }, KEY, "CRC32")
  parts[1].ChecksumCRC32 = CRC_WORLD
  expect(complete, id, parts, once).to_fail{ kind = "api", code = "InvalidPart", status = 400 }
  parts[1].ChecksumCRC32, parts[2].ChecksumSHA256 = CRC_HELLO, "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="
  expect(complete, id, parts, once).to_fail{ code = "InvalidPart" }  -- an algorithm the part was not kept with
  expect(s3.get_object, { Bucket = BUCKET, Object = KEY }).to_fail{ code = "NoSuchKey" }
end)

test("a part's checksum missing from the completion of an upload with an algorithm is InvalidRequest", function()
  local id, parts = upload({ "hello", "world" }, KEY, "CRC32")
  parts[2].ChecksumCRC32 = nil
  local err = expect(complete, id, parts, once).to_fail{ kind = "api", code = "InvalidRequest", status = 400 }
  expect(err.message).to_contain("missing for part 2")
end)

test("an upload without an algorithm: checksums given are checked, the object has none", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY }
  local r = s3.upload_part{ Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = 1, body = "hello",
                            ChecksumCRC32 = CRC_HELLO }
  expect(r.ChecksumCRC32).to_equal(CRC_HELLO)
  expect(complete, up.UploadId, { { PartNumber = 1, ETag = r.ETag, ChecksumCRC32 = CRC_WORLD } }, once)
    .to_fail{ code = "InvalidPart" }
  local done = complete(up.UploadId, { { PartNumber = 1, ETag = r.ETag, ChecksumCRC32 = CRC_HELLO } })
  expect(done.ChecksumCRC32).to_be_nil()
  expect(s3.head_object{ Bucket = BUCKET, Object = KEY, ChecksumMode = "ENABLED" }.ChecksumCRC32).to_be_nil()
end)

test("a part sent with another algorithm's checksum than the upload's is InvalidRequest", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY, ChecksumAlgorithm = "SHA256" }
  expect(s3.upload_part, { Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = 1, body = "hello",
                           ChecksumCRC32 = CRC_HELLO })
    .to_fail{ kind = "api", code = "InvalidRequest", status = 400 }
end)

test("SHA256 parts make the composite SHA-256; CRC64NVME the whole object's CRC", function()
  local id, parts = upload({ "hello", "world" }, KEY, "SHA256")
  expect(complete(id, parts).ChecksumSHA256).to_equal("cwXbmyq8zXBsJW2z2X5f9I1nfP5NOlkEr7faDjlQ4eI=-2")
  local id2, parts2 = upload({ "hello", "world" }, "nvme", "CRC64NVME")
  local r = s3.complete_multipart_upload{ Bucket = BUCKET, Object = "nvme", uploadId = id2, Part = parts2 }
  expect(r.ChecksumCRC64NVME).to_equal("dlX6YCbD8/M=")  -- of "helloworld"
end)

test("UploadPartCopy's part gets the upload's checksum", function()
  s3.put_object{ Bucket = BUCKET, Object = "source", Body = "hello" }
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY, ChecksumAlgorithm = "CRC32" }
  local copied = s3.upload_part_copy{ Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = 1,
                                      CopySource = BUCKET .. "/source" }
  local r = complete(up.UploadId, { { PartNumber = 1, ETag = copied.ETag, ChecksumCRC32 = CRC_HELLO } })
  expect(r.ChecksumCRC32).to_match("%-1$")  -- a CRC32 given for the copied bytes matched the one computed
end)
