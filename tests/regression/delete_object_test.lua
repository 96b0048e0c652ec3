-- DeleteObject (DELETE /{Bucket}/{Object+}): 204, whether or not the key existed;
-- a key with '/' and spaces is the key; an abort (with uploadId) is another operation.
-- Run: cloudlua test tests/regression/delete_object_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "del" }
end)

test("the object goes: 204, then NoSuchKey", function()
  s3.put_object{ Bucket = "del", Object = "dir/a b.txt", Body = "x" }
  local r, meta = s3.delete_object{ Bucket = "del", Object = "dir/a b.txt" }
  expect(meta.status).to_equal(204)
  expect(next(r)).to_be_nil()
  expect(s3.get_object, { Bucket = "del", Object = "dir/a b.txt" }).to_fail{ code = "NoSuchKey", status = 404 }
end)

test("a key that is not there is 204 too, as S3 answers", function()
  expect(select(2, s3.delete_object{ Bucket = "del", Object = "never" }).status).to_equal(204)
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.delete_object, { Bucket = "nope", Object = "k" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)

test("an upload of the same key is left alone", function()
  local up = s3.create_multipart_upload{ Bucket = "del", Object = "k" }
  s3.delete_object{ Bucket = "del", Object = "k" }
  expect(emu.state().uploads[1].uploadId).to_equal(up.UploadId)
end)
