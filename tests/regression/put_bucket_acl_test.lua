-- PutBucketAcl (PUT /{Bucket}?acl): a bucket's ACL, as a canned ACL, grant headers or
-- an AccessControlPolicy body; kept and answered by GetBucketAcl. A bucket whose
-- Object Ownership is BucketOwnerEnforced has ACLs disabled, as S3 has them.
-- Run: cloudlua test tests/regression/put_bucket_acl_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage
local ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "acls" }
end)

test("a canned ACL, then grants in full, then the canned private again", function()
  local _, meta = s3.put_bucket_acl{ Bucket = "acls", ACL = "public-read" }
  expect(meta.status).to_equal(200)
  expect(#s3.get_bucket_acl{ Bucket = "acls" }.AccessControlList).to_equal(2)
  local owner = s3.list_buckets().Owner
  local write_for_all = { { Grantee = { Type = "Group", URI = ALL_USERS }, Permission = "WRITE" } }
  s3.put_bucket_acl{ Bucket = "acls", Owner = owner, AccessControlList = write_for_all }
  expect(s3.get_bucket_acl{ Bucket = "acls" }.AccessControlList).to_equal(write_for_all)
  s3.put_bucket_acl{ Bucket = "acls", ACL = "private" }
  expect(#s3.get_bucket_acl{ Bucket = "acls" }.AccessControlList).to_equal(1)
end)

test("no ACL at all is MalformedACLError; an object's canned ACL is not a bucket's", function()
  expect(s3.put_bucket_acl, { Bucket = "acls" }).to_fail{ kind = "api", code = "MalformedACLError", status = 400 }
  expect(s3.put_bucket_acl, { Bucket = "acls", ACL = "bucket-owner-read" }).to_fail{ kind = "validation" }
end)

test("BucketOwnerEnforced: AccessControlListNotSupported, but for the private ACL", function()
  s3.create_bucket{ Bucket = "enforced", ObjectOwnership = "BucketOwnerEnforced" }
  expect(s3.put_bucket_acl, { Bucket = "enforced", ACL = "public-read" })
    .to_fail{ kind = "api", code = "AccessControlListNotSupported", status = 400 }
  s3.put_bucket_acl{ Bucket = "enforced", ACL = "private" }
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.put_bucket_acl, { Bucket = "nowhere", ACL = "private" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
