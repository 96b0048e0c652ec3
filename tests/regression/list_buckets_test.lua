-- ListBuckets (GET /): every bucket by name with its creation time, and the owner;
-- in both dialects.
-- Run: cloudlua test tests/regression/list_buckets_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
end)

test("every bucket, in name order, with an ISO 8601 creation time", function()
  s3.create_bucket{ Bucket = "zeta" }
  s3.create_bucket{ Bucket = "alpha" }
  local r, meta = s3.list_buckets{}
  expect(meta.status).to_equal(200)
  expect(#r.Buckets).to_equal(2)
  expect({ r.Buckets[1].Name, r.Buckets[2].Name }).to_equal{ "alpha", "zeta" }
  expect(r.Buckets[1].CreationDate).to_match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d")
  expect(r.Owner.DisplayName).to_equal("cloudlua")
  expect(r.Owner.ID).to_match("^%x+$")
end)

test("no buckets: an empty list, and a deleted bucket is gone from it", function()
  expect(s3.list_buckets{}.Buckets).to_equal{}
  s3.create_bucket{ Bucket = "short-lived" }
  s3.delete_bucket{ Bucket = "short-lived" }
  expect(s3.list_buckets{}.Buckets).to_equal{}
end)

test("the aws dialect reads the same answer", function()
  s3.create_bucket{ Bucket = "both" }
  expect(cloud.client{ dialect = "aws" }.storage.list_buckets{}.Buckets[1].Name).to_equal("both")
end)
