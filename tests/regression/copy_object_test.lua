-- CopyObject (PUT /{Bucket}/{Object+} with x-ext-copy-source, x-amz-copy-source in
-- the aws dialect): the bytes and ETag copied on the server, from any bucket; the
-- answer's CopyObjectResult; the refusals (no source, copying onto itself).
-- Run: cloudlua test tests/regression/copy_object_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "src" }
  s3.create_bucket{ Bucket = "dst" }
  s3.put_object{ Bucket = "src", Object = "dir/a b.txt", Body = "original" }
end)

test("a copy in another bucket: same bytes and ETag, a time and versions", function()
  local r, meta = s3.copy_object{ Bucket = "dst", Object = "copy.txt", CopySource = "src/dir/a%20b.txt" }
  expect(meta.status).to_equal(200)
  local source = s3.head_object{ Bucket = "src", Object = "dir/a b.txt" }
  expect(r.ETag).to_equal(source.ETag)
  expect(r.LastModified).to_match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d")
  expect(r.CopySourceVersionId).to_equal(source.VersionId)
  expect(r.VersionId).to_not_equal(source.VersionId)
  expect(s3.get_object{ Bucket = "dst", Object = "copy.txt" }.Body).to_equal("original")
end)

test("the copy is its own object: changing the source leaves it", function()
  s3.copy_object{ Bucket = "dst", Object = "copy.txt", CopySource = "/src/dir/a%20b.txt" }
  s3.put_object{ Bucket = "src", Object = "dir/a b.txt", Body = "changed" }
  expect(s3.get_object{ Bucket = "dst", Object = "copy.txt" }.Body).to_equal("original")
end)

test("the aws dialect sends x-amz-copy-source", function()
  local r = cloud.client{ dialect = "aws" }.storage.copy_object{ Bucket = "dst", Object = "aws.txt", CopySource = "src/dir/a%20b.txt" }
  expect(r.ETag).to_match('^"%x+"$')
end)

test("refusals: a missing source, a source without a key, a copy onto itself without REPLACE", function()
  expect(s3.copy_object, { Bucket = "dst", Object = "k", CopySource = "src/nope" }).to_fail{ code = "NoSuchKey", status = 404 }
  expect(s3.copy_object, { Bucket = "dst", Object = "k", CopySource = "nope/k" }).to_fail{ code = "NoSuchBucket", status = 404 }
  expect(s3.copy_object, { Bucket = "dst", Object = "k", CopySource = "src" }).to_fail{ code = "InvalidArgument", status = 400 }
  local self = { Bucket = "src", Object = "dir/a b.txt", CopySource = "src/dir/a%20b.txt" }
  expect(s3.copy_object, self).to_fail{ kind = "api", code = "InvalidRequest", status = 400 }
  self.MetadataDirective = "REPLACE"
  expect(select(2, s3.copy_object(self)).status).to_equal(200)
  expect(s3.copy_object, { Bucket = "dst", Object = "k" }).to_fail{ kind = "validation", field = "CopySource", problem = "required" }
end)
