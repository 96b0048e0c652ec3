-- ListMultipartUploads (GET /{Bucket}?uploads): the uploads neither completed nor
-- aborted, by key then start time; Prefix, Delimiter, MaxUploads with KeyMarker and
-- UploadIdMarker; every page through cloud.pages.
-- Run: cloudlua test tests/regression/list_multipart_uploads_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "ups" }
end)

-- A new upload of `key`; the next starts a second later (the same second orders by id).
local function start(key)
  local id = s3.create_multipart_upload{ Bucket = "ups", Object = key }.UploadId
  emu.advance(1)
  return id
end

test("the unfinished uploads, by key then start, with their owner", function()
  local b1, a, b2 = start("b/one"), start("a"), start("b/one")
  local r, meta = s3.list_multipart_uploads{ Bucket = "ups" }
  expect(meta.status).to_equal(200)
  local listed = {}
  for _, u in ipairs(r.Upload) do listed[#listed + 1] = u.Key .. " " .. u.UploadId end
  expect(listed).to_equal{ "a " .. a, "b/one " .. b1, "b/one " .. b2 }
  expect({ r.Bucket, r.IsTruncated, r.MaxUploads }).to_equal{ "ups", false, 1000 }
  expect(r.Upload[1].Initiated).to_match("^%d%d%d%d%-%d%d%-%d%dT")
  expect(r.Upload[1].Initiator.DisplayName).to_equal("cloudlua")
  s3.abort_multipart_upload{ Bucket = "ups", Object = "a", uploadId = a }
  expect(#s3.list_multipart_uploads{ Bucket = "ups" }.Upload).to_equal(2)
end)

test("Prefix and Delimiter", function()
  start("b/one"); start("b/two"); start("c")
  local r = s3.list_multipart_uploads{ Bucket = "ups", Delimiter = "/" }
  expect({ #r.Upload, r.Upload[1].Key, r.CommonPrefixes[1].Prefix }).to_equal{ 1, "c", "b/" }
  expect(#s3.list_multipart_uploads{ Bucket = "ups", Prefix = "b/" }.Upload).to_equal(2)
end)

test("pages: NextKeyMarker and NextUploadIdMarker, by hand and through cloud.pages", function()
  local ids = { start("k"), start("k"), start("k") }
  local first = s3.list_multipart_uploads{ Bucket = "ups", MaxUploads = 2 }
  expect({ first.IsTruncated, first.NextKeyMarker, first.NextUploadIdMarker }).to_equal{ true, "k", ids[2] }
  local rest = s3.list_multipart_uploads{ Bucket = "ups", MaxUploads = 2, KeyMarker = "k", UploadIdMarker = ids[2] }
  expect({ #rest.Upload, rest.Upload[1].UploadId, rest.IsTruncated }).to_equal{ 1, ids[3], false }
  local seen = {}
  for page in cloud.pages("ListMultipartUploads", { Bucket = "ups", MaxUploads = 1 }) do
    seen[#seen + 1] = page.Upload[1].UploadId
  end
  expect(seen).to_equal(ids)
end)

test("an empty bucket has no uploads; an unknown bucket is NoSuchBucket", function()
  expect(s3.list_multipart_uploads{ Bucket = "ups" }.Upload).to_equal{}
  expect(s3.list_multipart_uploads, { Bucket = "nope" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
