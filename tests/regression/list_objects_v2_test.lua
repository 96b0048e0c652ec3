-- ListObjectsV2 (GET /{Bucket}?list-type=2): keys in order under a prefix, rolled up
-- at a delimiter into CommonPrefixes, MaxKeys at a time with continuation tokens,
-- StartAfter, FetchOwner, encoding-type=url; and every page through cloud.pages.
-- Run: cloudlua test tests/regression/list_objects_v2_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage
local KEYS = { "a.txt", "photos/2024/x.jpg", "photos/2024/y.jpg", "photos/2025/z.jpg", "photos/top.jpg", "z.txt" }

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "lib" }
  for _, k in ipairs(KEYS) do s3.put_object{ Bucket = "lib", Object = k, Body = k } end
end)

-- The keys, then the common prefixes, of a page.
local function names(page)
  local out = {}
  for _, o in ipairs(page.Contents or {}) do out[#out + 1] = o.Key end
  for _, p in ipairs(page.CommonPrefixes or {}) do out[#out + 1] = p.Prefix end
  return out
end

test("every key in order, typed: Size an integer, IsTruncated a boolean", function()
  local r, meta = s3.list_objects_v2{ Bucket = "lib" }
  expect(meta.status).to_equal(200)
  expect(names(r)).to_equal(KEYS)
  expect({ r.Name, r.Prefix, r.KeyCount, r.MaxKeys, r.IsTruncated }).to_equal{ "lib", "", 6, 1000, false }
  local first = r.Contents[1]
  expect({ first.Key, first.Size, first.StorageClass }).to_equal{ "a.txt", 5, "STANDARD" }
  expect(first.ETag).to_equal(s3.head_object{ Bucket = "lib", Object = "a.txt" }.ETag)
  expect(first.LastModified).to_match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.000Z$")
  expect(first.Owner).to_be_nil()
  expect(s3.list_objects_v2{ Bucket = "lib", FetchOwner = true }.Contents[1].Owner.DisplayName).to_equal("cloudlua")
end)

test("Prefix and Delimiter: CommonPrefixes stand for the keys under them", function()
  expect(names(s3.list_objects_v2{ Bucket = "lib", Prefix = "photos/2024/" })).to_equal{ "photos/2024/x.jpg", "photos/2024/y.jpg" }
  local top = s3.list_objects_v2{ Bucket = "lib", Delimiter = "/" }
  expect(names(top)).to_equal{ "a.txt", "z.txt", "photos/" }
  expect({ top.KeyCount, top.Delimiter }).to_equal{ 3, "/" }
  expect(names(s3.list_objects_v2{ Bucket = "lib", Prefix = "photos/", Delimiter = "/" }))
    .to_equal{ "photos/top.jpg", "photos/2024/", "photos/2025/" }
  expect(s3.list_objects_v2{ Bucket = "lib", Prefix = "none/" }.Contents).to_equal{}
end)

test("MaxKeys and continuation tokens: each key once, a common prefix counted once", function()
  local seen, token, pages = {}, nil, 0
  repeat
    local r = s3.list_objects_v2{ Bucket = "lib", MaxKeys = 2, Delimiter = "/", ContinuationToken = token }
    pages = pages + 1
    for _, n in ipairs(names(r)) do seen[#seen + 1] = n end
    expect(r.KeyCount <= 2).to_be_truthy()
    token = r.NextContinuationToken
    expect(token ~= nil).to_equal(r.IsTruncated)
  until not r.IsTruncated
  expect(pages).to_equal(2)
  table.sort(seen)
  expect(seen).to_equal{ "a.txt", "photos/", "z.txt" }
end)

test("cloud.pages walks every page", function()
  local keys, pages = {}, 0
  for page, meta in cloud.pages("ListObjectsV2", { Bucket = "lib", MaxKeys = 4 }) do
    pages = pages + 1
    expect(meta.status).to_equal(200)
    for _, o in ipairs(page.Contents) do keys[#keys + 1] = o.Key end
  end
  expect(pages).to_equal(2)
  expect(keys).to_equal(KEYS)
end)

test("StartAfter, and encoding-type=url", function()
  expect(names(s3.list_objects_v2{ Bucket = "lib", StartAfter = "photos/2025/z.jpg" })).to_equal{ "photos/top.jpg", "z.txt" }
  s3.put_object{ Bucket = "lib", Object = "with space+plus", Body = "" }
  local r = s3.list_objects_v2{ Bucket = "lib", Prefix = "with", EncodingType = "url" }
  expect({ r.Contents[1].Key, r.EncodingType }).to_equal{ "with%20space%2Bplus", "url" }
end)

test("limits and refusals: MaxKeys 0 to 2147483647, encoding-type url only, a bad token, an unknown bucket", function()
  local none = s3.list_objects_v2{ Bucket = "lib", MaxKeys = 0 }
  expect({ none.KeyCount, none.IsTruncated }).to_equal{ 0, false }
  expect(s3.list_objects_v2, { Bucket = "lib", MaxKeys = -1 }).to_fail{ kind = "validation", field = "MaxKeys" }
  expect(s3.list_objects_v2, { Bucket = "lib", EncodingType = "URL" }).to_fail{ kind = "validation", field = "EncodingType" }
  expect(s3.list_objects_v2, { Bucket = "lib", ContinuationToken = "!!" }).to_fail{ kind = "api", code = "InvalidArgument", status = 400 }
  expect(s3.list_objects_v2, { Bucket = "nope" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
