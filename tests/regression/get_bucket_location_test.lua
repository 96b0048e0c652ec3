-- GetBucketLocation (GET /{Bucket}?location): the bucket's region, the whole body
-- being <LocationConstraint>region</LocationConstraint>.
-- Run: cloudlua test tests/regression/get_bucket_location_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "placed" }
end)

test("the region the emulator runs in", function()
  local r, meta = s3.get_bucket_location{ Bucket = "placed" }
  expect(meta.status).to_equal(200)
  expect(r.LocationConstraint).to_equal("jp-east-1")
end)

test("on the wire: one element, its text the region", function()
  local raw = cloud.request{ api = "storage", method = "GET", path = "/placed", query = { location = "" } }
  expect(raw.status).to_equal(200)
  expect(raw.body).to_match("<LocationConstraint[^>]*>jp%-east%-1</LocationConstraint>$")
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.get_bucket_location, { Bucket = "nowhere" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
