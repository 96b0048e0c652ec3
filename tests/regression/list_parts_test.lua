-- ListParts (GET /{Bucket}/{Object}?uploadId=U, query max-parts and
-- part-number-marker, answering ListPartsResult): the parts of an upload in number
-- order with their ETag, Size and LastModified; pages of MaxParts followed by
-- NextPartNumberMarker; an unknown, completed or other key's upload is NoSuchUpload;
-- both signing dialects; the limits checked before anything is sent.
-- Run: cloudlua test tests/regression/list_parts_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage
local BUCKET, KEY = "regression", "parts/of a key+1.bin"

before_each(function()
  emu.reset()
  emu.configure{ min_part_size = 4 }
  s3.create_bucket{ Bucket = BUCKET }
end)

-- A new upload with parts of the given numbers, each holding "part <n>"; its id.
local function upload(numbers)
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY }.UploadId
  for _, n in ipairs(numbers) do
    s3.upload_part{ Bucket = BUCKET, Object = KEY, uploadId = id, partNumber = n, body = "part " .. n }
  end
  return id
end

local function list(id, extra, client)
  local args = { Bucket = BUCKET, Object = KEY, uploadId = id }
  for k, v in pairs(extra or {}) do args[k] = v end
  return (client or cloud).storage.list_parts(args)
end

local function numbers(r)
  local out = {}
  for i, p in ipairs(r.Part or {}) do out[i] = p.PartNumber end
  return out
end

test("lists every part in number order with its ETag, Size and LastModified", function()
  local id = upload{ 3, 1, 10 }
  local r, meta = list(id)
  expect(meta.status).to_equal(200)
  expect({ r.Bucket, r.Key, r.UploadId, r.StorageClass }).to_equal{ BUCKET, KEY, id, "STANDARD" }
  expect(numbers(r)).to_equal{ 1, 3, 10 }
  expect(r.Part[1].ETag).to_equal('"7d3fedcaf1bbe1100d0d2b19f56cfdd4"')  -- MD5 of "part 1"
  expect(r.Part[3].Size).to_equal(7)                                     -- "part 10"
  expect(r.Part[2].LastModified).to_match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$")
  expect({ r.IsTruncated, r.MaxParts, r.PartNumberMarker, r.NextPartNumberMarker }).to_equal{ false, 1000, 0, 10 }
end)

test("a part uploaded again is listed once, with its new bytes", function()
  local id = upload{ 1, 2 }
  s3.upload_part{ Bucket = BUCKET, Object = KEY, uploadId = id, partNumber = 2, body = "longer part 2" }
  local r = list(id)
  expect(numbers(r)).to_equal{ 1, 2 }
  expect(r.Part[2].Size).to_equal(13)
end)

test("pages: MaxParts at a time, NextPartNumberMarker leads to the next page, the last is not truncated", function()
  local id = upload{ 1, 2, 4, 5, 9 }
  local pages, marker = {}, nil
  repeat
    local r = list(id, { MaxParts = 2, PartNumberMarker = marker })
    expect(r.MaxParts).to_equal(2)
    expect(r.PartNumberMarker).to_equal(marker or 0)
    pages[#pages + 1] = numbers(r)
    marker = r.NextPartNumberMarker
  until not r.IsTruncated
  expect(pages).to_equal{ { 1, 2 }, { 4, 5 }, { 9 } }
  local after = list(id, { PartNumberMarker = 9 })  -- past the last: an empty page
  expect(after.Part).to_equal{}
  expect(after.IsTruncated).to_equal(false)
  expect(list(id, { PartNumberMarker = 3, MaxParts = 1 }).Part[1].PartNumber).to_equal(4)
end)

test("a page ending exactly at the last part is not truncated", function()
  local id = upload{ 1, 2 }
  local r = list(id, { MaxParts = 2 })
  expect(numbers(r)).to_equal{ 1, 2 }
  expect(r.IsTruncated).to_equal(false)
end)

test("an upload with no parts lists none", function()
  local r = list(upload{})
  expect(r.Part).to_equal{}
  expect({ r.IsTruncated, r.NextPartNumberMarker }).to_equal{ false, 0 }
end)

test("an unknown, aborted or completed upload, or one of another key, is 404 NoSuchUpload", function()
  expect(list, ("0"):rep(32)).to_fail{ kind = "api", code = "NoSuchUpload", status = 404 }
  local id = upload{ 1 }
  expect(s3.list_parts, { Bucket = BUCKET, Object = "another key", uploadId = id }).to_fail{ code = "NoSuchUpload" }
  s3.abort_multipart_upload{ Bucket = BUCKET, Object = KEY, uploadId = id }
  expect(list, id).to_fail{ code = "NoSuchUpload", status = 404 }
  local done = upload{ 1 }
  s3.complete_multipart_upload{ Bucket = BUCKET, Object = KEY, uploadId = done,
                                Part = { { PartNumber = 1, ETag = list(done).Part[1].ETag } } }
  expect(list, done).to_fail{ code = "NoSuchUpload" }
  expect(s3.list_parts, { Bucket = "no-such-bucket", Object = KEY, uploadId = done }).to_fail{ code = "NoSuchBucket" }
end)

test("the aws dialect lists the same", function()
  local id = upload{ 2, 1 }
  expect(numbers(list(id, nil, cloud.client{ dialect = "aws" }))).to_equal{ 1, 2 }
end)

test("limits: MaxParts 1 to 1000, PartNumberMarker 0 to 10000, uploadId required; nothing is sent", function()
  local id = upload{ 1 }
  expect(list, id, { MaxParts = 0 }).to_fail{ kind = "validation", field = "MaxParts" }
  expect(list, id, { MaxParts = 1001 }).to_fail{ kind = "validation", field = "MaxParts" }
  expect(list, id, { PartNumberMarker = -1 }).to_fail{ kind = "validation", field = "PartNumberMarker" }
  expect(list, id, { PartNumberMarker = 10001 }).to_fail{ kind = "validation", field = "PartNumberMarker" }
  expect(s3.list_parts, { Bucket = BUCKET, Object = KEY }).to_fail{ kind = "validation", field = "uploadId" }
  expect(numbers(list(id, { MaxParts = 1000, PartNumberMarker = 0 }))).to_equal{ 1 }
end)

test("on the wire: GET with uploadId, max-parts and part-number-marker in the query", function()
  local id = upload{ 1 }
  local raw = cloud.request{ api = "storage", method = "GET", path = "/" .. BUCKET .. "/parts/of%20a%20key%2B1.bin",
                             query = { uploadId = id, ["max-parts"] = "1", ["part-number-marker"] = "0" } }
  expect(raw.status).to_equal(200)
  expect(raw.body).to_contain("<ListPartsResult")
  expect(raw.body).to_contain("<MaxParts>1</MaxParts>")
  expect(raw.body).to_contain("<Part><PartNumber>1</PartNumber><LastModified>")
  expect(raw.body).to_contain("<IsTruncated>false</IsTruncated>")
end)
