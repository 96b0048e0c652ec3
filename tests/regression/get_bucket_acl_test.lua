-- GetBucketAcl (GET /{Bucket}?acl): the bucket's AccessControlPolicy, its owner and
-- grants. A bucket created without an ACL has the canned private: its owner's
-- FULL_CONTROL, the owner being the one ListBuckets names.
-- Run: cloudlua test tests/regression/get_bucket_acl_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage
local ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"

before_each(function()
  emu.reset()
end)

test("a new bucket: its owner's FULL_CONTROL alone", function()
  s3.create_bucket{ Bucket = "plain" }
  local owner = s3.list_buckets().Owner
  local r, meta = s3.get_bucket_acl{ Bucket = "plain" }
  expect(meta.status).to_equal(200)
  expect(r.Owner).to_equal(owner)
  expect(r.AccessControlList).to_equal{
    { Grantee = { Type = "CanonicalUser", ID = owner.ID, DisplayName = owner.DisplayName }, Permission = "FULL_CONTROL" },
  }
end)

test("CreateBucket's canned ACL: public-read-write adds AllUsers' READ and WRITE", function()
  s3.create_bucket{ Bucket = "open", ACL = "public-read-write" }
  local grants = s3.get_bucket_acl{ Bucket = "open" }.AccessControlList
  expect(#grants).to_equal(3)
  expect(grants[2]).to_equal{ Grantee = { Type = "Group", URI = ALL_USERS }, Permission = "READ" }
  expect(grants[3]).to_equal{ Grantee = { Type = "Group", URI = ALL_USERS }, Permission = "WRITE" }
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.get_bucket_acl, { Bucket = "nowhere" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
