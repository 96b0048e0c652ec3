-- S3's multipart behaviour where the platform's spec is silent, pinned case by case
-- after the public S3 conformance suites: each case is named after the suite's own
-- (ceph's s3-tests, s3tests/functional/test_s3.py; versitygw's
-- tests/integration/CompleteMultipartUpload.go) and checks what that case checks, as
-- S3 answers it. Parts are S3's real sizes (5 MiB), through the embedded emulator.
-- A case the client would refuse before sending (no parts, a part without its ETag)
-- goes as a raw request, so the emulator's own answer is what is checked.
-- Run: cloudlua test tests/regression/s3_conformance_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage
local once = cloud.client{ max_attempts = 1 }  -- InvalidPart is otherwise retried
local MIB = 1024 * 1024
local BUCKET = "conformance"

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = BUCKET }
end)

-- `size` bytes of a pattern that differs from byte to byte and from seed to seed.
local function data(size, seed)
  local unit = ("%08d|"):format(seed or 0):rep(8)
  return unit:rep(size // #unit + 1):sub(1, size)
end

-- Uploads `body` to `key` in parts of `part_size` (the last one shorter); the upload
-- id and the Part list, not completed (ceph's _multipart_upload).
local function multipart_upload(key, body, part_size)
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = key }.UploadId
  local parts = {}
  for offset = 0, math.max(#body - 1, 0), part_size do
    local n = #parts + 1
    local r = s3.upload_part{ Bucket = BUCKET, Object = key, uploadId = id, partNumber = n,
                              body = body:sub(offset + 1, offset + part_size) }
    parts[n] = { PartNumber = n, ETag = r.ETag }
  end
  return id, parts
end

local function complete(key, id, parts, client)
  return (client or cloud).storage.complete_multipart_upload{ Bucket = BUCKET, Object = key, uploadId = id, Part = parts }
end

local function get(key) return s3.get_object{ Bucket = BUCKET, Object = key }.Body end

-- A CompleteMultipartUpload sent as it is, body and all: its status and error code.
local function raw_complete(key, id, xml)
  local r = cloud.request{ api = "storage", method = "POST", path = "/" .. BUCKET .. "/" .. key,
                           query = { uploadId = id }, headers = { ["Content-Type"] = "application/xml" }, body = xml }
  return r.status, r.body:match("<Code>(.-)</Code>")
end

-- fn(...) fails with an api error of `status` and `code`.
local function refused(status, code, fn, ...)
  local ok, err = pcall(fn, ...)
  expect(ok).to_equal(false)
  expect({ err.kind, err.status, err.code }).to_equal{ "api", status, code }
end

-- ceph s3-tests --------------------------------------------------------------------

test("test_multipart_upload_empty: no parts is MalformedXML", function()
  local id = multipart_upload("mymultipart", "", 5 * MIB)
  expect({ raw_complete("mymultipart", id, "<CompleteMultipartUpload></CompleteMultipartUpload>") })
    .to_equal{ 400, "MalformedXML" }
end)

test("test_multipart_upload_complete_without_create: NoSuchUpload, 404", function()
  refused(404, "NoSuchUpload", s3.complete_multipart_upload, { Bucket = BUCKET, Object = "mymultipart", uploadId = "abc1234def",
                                          Part = { { PartNumber = 1, ETag = '"1234"' } } })
end)

test("test_multipart_upload_small: one part of one byte, completed twice", function()
  local id, parts = multipart_upload("mymultipart", "x", 5 * MIB)
  local first = complete("mymultipart", id, parts)
  expect(#get("mymultipart")).to_equal(1)
  expect(complete("mymultipart", id, parts).ETag).to_equal(first.ETag)
end)

test("test_multipart_upload: 30 MiB in 5 MiB parts, completed twice, read whole and in ranges", function()
  local body = data(30 * MIB, 1)
  local id, parts = multipart_upload("mymultipart", body, 5 * MIB)
  complete("mymultipart", id, parts)
  complete("mymultipart", id, parts)
  local listed = s3.list_objects_v2{ Bucket = BUCKET, Prefix = "mymultipart" }
  expect(#listed.Contents).to_equal(1)
  expect(listed.Contents[1].Size).to_equal(30 * MIB)
  expect(get("mymultipart") == body).to_be_truthy()
  for _, step in ipairs{ 1000000, 10000000 } do  -- ceph's _check_content_using_range
    for first = 0, #body - 1, step do
      local last = math.min(first + step, #body) - 1
      local got = s3.get_object{ Bucket = BUCKET, Object = "mymultipart", Range = ("bytes=%d-%d"):format(first, last) }
      expect(got.Body == body:sub(first + 1, last + 1)).to_be_truthy()
    end
  end
end)

test("test_multipart_upload_resend_part: a part sent again replaces the first bytes", function()
  local body = data(30 * MIB, 2)
  for _, resend in ipairs{ { 1 }, { 2 }, { 3 }, { 2, 3 }, { 1, 2, 3, 4, 5, 6 } } do
    local id, parts = multipart_upload("mymultipart", data(30 * MIB, 3), 5 * MIB)
    for n = 1, 6 do  -- every part again with the expected bytes, the listed ones once more before
      local piece = body:sub((n - 1) * 5 * MIB + 1, n * 5 * MIB)
      for _, again in ipairs(resend) do
        if again == n then s3.upload_part{ Bucket = BUCKET, Object = "mymultipart", uploadId = id, partNumber = n, body = "stale" } end
      end
      parts[n].ETag = s3.upload_part{ Bucket = BUCKET, Object = "mymultipart", uploadId = id, partNumber = n, body = piece }.ETag
    end
    complete("mymultipart", id, parts)
    expect(get("mymultipart") == body).to_be_truthy()
  end
end)

test("test_multipart_upload_multiple_sizes: 5 MiB and a bit, up to 10 MiB and a bit", function()
  for _, size in ipairs{ 5 * MIB, 5 * MIB + 100 * 1024, 5 * MIB + 600 * 1024, 10 * MIB + 100 * 1024,
                         10 * MIB + 600 * 1024, 10 * MIB } do
    local body = data(size, size)
    local id, parts = multipart_upload("mymultipart", body, 5 * MIB)
    complete("mymultipart", id, parts)
    expect(#get("mymultipart")).to_equal(size)
  end
end)

test("test_multipart_upload_size_too_small: parts of 10 KiB are EntityTooSmall", function()
  local id, parts = multipart_upload("mymultipart", data(100 * 1024), 10 * 1024)
  refused(400, "EntityTooSmall", complete, "mymultipart", id, parts)
end)

test("test_multipart_upload_contents: three 5 MiB parts and a 3 MiB one, joined in order", function()
  local payload, last = data(5 * MIB, 4), ("123"):rep(MIB)
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = "mymultipart" }.UploadId
  local parts = {}
  for n, body in ipairs{ payload, payload, payload, last } do
    parts[n] = { PartNumber = n, ETag = s3.upload_part{ Bucket = BUCKET, Object = "mymultipart", uploadId = id,
                                                        partNumber = n, body = body }.ETag }
  end
  expect(complete("mymultipart", id, parts).ETag).to_match('^"%x+%-4"$')
  expect(get("mymultipart") == payload:rep(3) .. last).to_be_truthy()
end)

test("test_multipart_upload_overwrite_existing_object: the completed upload replaces the object", function()
  local payload = ("12345"):rep(MIB)
  s3.put_object{ Bucket = BUCKET, Object = "mymultipart", Body = payload }
  local id, parts = multipart_upload("mymultipart", payload:rep(2), #payload)
  complete("mymultipart", id, parts)
  expect(get("mymultipart") == payload:rep(2)).to_be_truthy()
end)

test("test_abort_multipart_upload: no object after an abort", function()
  local id = multipart_upload("mymultipart", data(10 * MIB), 5 * MIB)
  s3.abort_multipart_upload{ Bucket = BUCKET, Object = "mymultipart", uploadId = id }
  expect(s3.list_objects_v2{ Bucket = BUCKET, Prefix = "mymultipart" }.Contents).to_equal{}
end)

test("test_abort_multipart_upload_not_found: NoSuchUpload, 404", function()
  s3.put_object{ Bucket = BUCKET, Object = "mymultipart", Body = "" }
  refused(404, "NoSuchUpload", s3.abort_multipart_upload, { Bucket = BUCKET, Object = "mymultipart", uploadId = "56788" })
end)

test("test_list_multipart_upload: every upload in progress is listed", function()
  local ids = {
    (multipart_upload("mymultipart", data(5 * MIB), 5 * MIB)),
    (multipart_upload("mymultipart", data(6 * MIB), 5 * MIB)),
    (multipart_upload("mymultipart2", data(5 * MIB), 5 * MIB)),
  }
  local listed = {}
  for _, u in ipairs(s3.list_multipart_uploads{ Bucket = BUCKET }.Upload or {}) do listed[u.UploadId] = u.Key end
  expect(listed).to_equal{ [ids[1]] = "mymultipart", [ids[2]] = "mymultipart", [ids[3]] = "mymultipart2" }
  for i, key in ipairs{ "mymultipart", "mymultipart", "mymultipart2" } do
    s3.abort_multipart_upload{ Bucket = BUCKET, Object = key, uploadId = ids[i] }
  end
  expect(s3.list_multipart_uploads{ Bucket = BUCKET }.Upload).to_equal{}
end)

test("test_multipart_upload_missing_part: a part number never uploaded is InvalidPart", function()
  local id, parts = multipart_upload("mymultipart", "\0", 5 * MIB)
  parts[1].PartNumber = 9999
  refused(400, "InvalidPart", complete, "mymultipart", id, parts, once)
end)

test("test_multipart_upload_incorrect_etag: an ETag not the part's is InvalidPart", function()
  local id, parts = multipart_upload("mymultipart", "\0", 5 * MIB)
  parts[1].ETag = '"ffffffffffffffffffffffffffffffff"'
  refused(400, "InvalidPart", complete, "mymultipart", id, parts, once)
end)

test("test_atomic_multipart_upload_write: an upload in progress or aborted leaves the object alone", function()
  s3.put_object{ Bucket = BUCKET, Object = "foo", Body = "bar" }
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = "foo" }.UploadId
  expect(get("foo")).to_equal("bar")
  s3.abort_multipart_upload{ Bucket = BUCKET, Object = "foo", uploadId = id }
  expect(get("foo")).to_equal("bar")
end)

test("test_multipart_resend_first_finishes_last: the part that arrived last is the one kept", function()
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = "mymultipart" }.UploadId
  local first = s3.upload_part{ Bucket = BUCKET, Object = "mymultipart", uploadId = id, partNumber = 1, body = ("A"):rep(8) }
  local second = s3.upload_part{ Bucket = BUCKET, Object = "mymultipart", uploadId = id, partNumber = 1, body = ("B"):rep(8) }
  refused(400, "InvalidPart", complete, "mymultipart", id, { { PartNumber = 1, ETag = first.ETag } }, once)
  complete("mymultipart", id, { { PartNumber = 1, ETag = second.ETag } })
  expect(get("mymultipart")).to_equal(("B"):rep(8))
end)

-- versitygw ------------------------------------------------------------------------

test("CompleteMultipartUpload_incorrect_part_number: InvalidPart", function()
  local id, parts = multipart_upload("my-obj", "x", 5 * MIB)
  parts[1].PartNumber = 5
  refused(400, "InvalidPart", complete, "my-obj", id, parts, once)
end)

test("CompleteMultipartUpload_invalid_ETag: InvalidPart", function()
  local id, parts = multipart_upload("my-obj", "x", 5 * MIB)
  parts[1].ETag = "invalidETag"
  refused(400, "InvalidPart", complete, "my-obj", id, parts, once)
end)

test("CompleteMultipartUpload_small_upload_size: four parts of 256 bytes are EntityTooSmall", function()
  local id, parts = multipart_upload("my-obj", data(1024), 256)
  refused(400, "EntityTooSmall", complete, "my-obj", id, parts)
end)

test("CompleteMultipartUpload_empty_parts: MalformedXML", function()
  local id = multipart_upload("my-obj", data(5 * MIB), 5 * MIB)
  expect({ raw_complete("my-obj", id, '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' ..
                                      "</CompleteMultipartUpload>") }).to_equal{ 400, "MalformedXML" }
end)

test("CompleteMultipartUpload_missing_part_fields: a part without its ETag or PartNumber is MalformedXML", function()
  local id, parts = multipart_upload("my-obj", data(5 * MIB), 5 * MIB)
  for _, part in ipairs{ "<PartNumber>1</PartNumber>", "<ETag>" .. parts[1].ETag .. "</ETag>" } do
    local xml = '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part>' .. part ..
                "</Part></CompleteMultipartUpload>"
    expect({ raw_complete("my-obj", id, xml) }).to_equal{ 400, "MalformedXML" }
  end
end)

test("CompleteMultipartUpload_incorrect_parts_order: InvalidPartOrder", function()
  local id, parts = multipart_upload("my-obj", data(15 * MIB), 5 * MIB)
  local xml = "<CompleteMultipartUpload>"
  for _, n in ipairs{ 2, 1, 3 } do
    xml = xml .. ("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>"):format(n, parts[n].ETag)
  end
  expect({ raw_complete("my-obj", id, xml .. "</CompleteMultipartUpload>") }).to_equal{ 400, "InvalidPartOrder" }
end)

test("CompleteMultipartUpload_success: Bucket, Key, Location and an ETag that HEAD and GET agree with", function()
  local body = data(25 * MIB, 5)
  local id, parts = multipart_upload("my-obj", body, 5 * MIB)
  local r = complete("my-obj", id, parts)
  expect({ r.Bucket, r.Key }).to_equal{ BUCKET, "my-obj" }
  expect(r.Location).to_match("/" .. BUCKET .. "/my%-obj$")
  local head = s3.head_object{ Bucket = BUCKET, Object = "my-obj" }
  expect({ head.ETag, head.ContentLength }).to_equal{ r.ETag, 25 * MIB }
  expect(get("my-obj") == body).to_be_truthy()
end)

test("CompleteMultipartUpload_already_completed: completing again answers the same", function()
  local id, parts = multipart_upload("my-obj", data(5 * MIB), 5 * MIB)
  local first = complete("my-obj", id, parts)
  local second = complete("my-obj", id, parts)
  expect({ second.Bucket, second.Key, second.ETag, second.Location })
    .to_equal{ BUCKET, "my-obj", first.ETag, first.Location }
end)

test("an upload completed again after its object was replaced is NoSuchUpload (S3 keeps no record then)", function()
  local id, parts = multipart_upload("my-obj", data(5 * MIB), 5 * MIB)
  complete("my-obj", id, parts)
  s3.put_object{ Bucket = BUCKET, Object = "my-obj", Body = "newer" }
  refused(404, "NoSuchUpload", complete, "my-obj", id, parts)
end)
