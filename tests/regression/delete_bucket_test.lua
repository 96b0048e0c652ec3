-- DeleteBucket (DELETE /{Bucket}): 204 for an empty bucket; one holding objects is
-- refused 409 BucketNotEmpty; the name can be used again afterwards.
-- Run: cloudlua test tests/regression/delete_bucket_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "temp" }
end)

test("an empty bucket goes: 204, then NoSuchBucket", function()
  local r, meta = s3.delete_bucket{ Bucket = "temp" }
  expect(meta.status).to_equal(204)
  expect(next(r)).to_be_nil()
  expect(s3.head_bucket, { Bucket = "temp" }).to_fail{ code = "NoSuchBucket" }
  expect(s3.delete_bucket, { Bucket = "temp" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
  expect(select(2, s3.create_bucket{ Bucket = "temp" }).status).to_equal(200)
end)

test("a bucket with objects is BucketNotEmpty (409) and stays", function()
  s3.put_object{ Bucket = "temp", Object = "keep", Body = "x" }
  expect(s3.delete_bucket, { Bucket = "temp" }).to_fail{ kind = "api", code = "BucketNotEmpty", status = 409 }
  expect(s3.get_object{ Bucket = "temp", Object = "keep" }.Body).to_equal("x")
  s3.delete_object{ Bucket = "temp", Object = "keep" }
  expect(select(2, s3.delete_bucket{ Bucket = "temp" }).status).to_equal(204)
end)

test("unfinished uploads do not keep a bucket, and go with it", function()
  s3.create_multipart_upload{ Bucket = "temp", Object = "big" }
  s3.delete_bucket{ Bucket = "temp" }
  expect(#emu.state().uploads).to_equal(0)
end)
