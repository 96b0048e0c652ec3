-- ListObjects, version 1 (GET /{Bucket}): Prefix, Delimiter, Marker; NextMarker only
-- with a delimiter, as S3 answers, so cloud.pages continues from the last key
-- otherwise; each object with its Owner.
-- Run: cloudlua test tests/regression/list_objects_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "lv1" }
  for _, k in ipairs{ "a", "b/1", "b/2", "c", "d" } do s3.put_object{ Bucket = "lv1", Object = k, Body = k } end
end)

local function keys(page)
  local out = {}
  for _, o in ipairs(page.Contents or {}) do out[#out + 1] = o.Key end
  for _, p in ipairs(page.CommonPrefixes or {}) do out[#out + 1] = p.Prefix end
  return out
end

test("a page, the Marker it started after, no NextMarker without a delimiter", function()
  local r, meta = s3.list_objects{ Bucket = "lv1", MaxKeys = 2 }
  expect(meta.status).to_equal(200)
  expect(keys(r)).to_equal{ "a", "b/1" }
  expect({ r.IsTruncated, r.Marker, r.NextMarker, r.MaxKeys }).to_equal{ true, "", nil, 2 }
  expect(r.Contents[1].Owner.DisplayName).to_equal("cloudlua")
  local next_page = s3.list_objects{ Bucket = "lv1", MaxKeys = 2, Marker = "b/1" }
  expect(keys(next_page)).to_equal{ "b/2", "c" }
  expect(next_page.Marker).to_equal("b/1")
end)

test("with a delimiter: CommonPrefixes, and NextMarker", function()
  local r = s3.list_objects{ Bucket = "lv1", Delimiter = "/", MaxKeys = 2 }
  expect(keys(r)).to_equal{ "a", "b/" }
  expect(r.NextMarker).to_equal("b/")
  expect(keys(s3.list_objects{ Bucket = "lv1", Delimiter = "/", Marker = r.NextMarker })).to_equal{ "c", "d" }
  expect(keys(s3.list_objects{ Bucket = "lv1", Prefix = "b/" })).to_equal{ "b/1", "b/2" }
end)

test("cloud.pages: NextMarker, or the last key when there is none", function()
  for _, args in ipairs{ { Bucket = "lv1", MaxKeys = 2 }, { Bucket = "lv1", MaxKeys = 1, Delimiter = "/" } } do
    local seen = {}
    for page in cloud.pages("list_objects", args) do
      for _, k in ipairs(keys(page)) do seen[#seen + 1] = k end
    end
    expect(#seen).to_equal(args.Delimiter and 4 or 5)
  end
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.list_objects, { Bucket = "nope" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
