-- HeadBucket (HEAD /{Bucket}): 200 with the bucket's region, or 404 NoSuchBucket
-- without a body (the code comes from the model's errorsByStatus).
-- Run: cloudlua test tests/regression/head_bucket_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "present" }
end)

test("a bucket that exists: 200, its region, no body", function()
  local r, meta = s3.head_bucket{ Bucket = "present" }
  expect(meta.status).to_equal(200)
  expect(r.BucketRegion).to_equal("jp-east-1")
  expect(meta.headers["x-ext-bucket-region"]).to_equal("jp-east-1")
end)

test("a bucket that does not: 404 NoSuchBucket", function()
  expect(s3.head_bucket, { Bucket = "absent" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)

test("a bucket name is required", function()
  expect(s3.head_bucket, {}).to_fail{ kind = "validation", field = "Bucket", problem = "required" }
end)
