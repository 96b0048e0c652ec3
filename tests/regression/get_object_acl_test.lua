-- GetObjectAcl (GET /{Bucket}/{Object+}?acl): the object's AccessControlPolicy, its
-- owner and grants. An object written without an ACL has the canned private: its
-- owner's FULL_CONTROL, the owner being the one ListBuckets names. Routing: ?acl on a
-- key is this operation, a plain GET of the key is still GetObject.
-- Run: cloudlua test tests/regression/get_object_acl_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "acls" }
  s3.put_object{ Bucket = "acls", Object = "dir/a b.txt", Body = "the bytes" }
end)

test("the owner, and one grant: the owner's FULL_CONTROL, as a CanonicalUser", function()
  local r, meta = s3.get_object_acl{ Bucket = "acls", Object = "dir/a b.txt" }
  expect(meta.status).to_equal(200)
  local owner = s3.list_buckets().Owner
  expect(owner.ID).to_match("^%x+$")
  expect(r.Owner).to_equal(owner)
  expect(r.AccessControlList).to_equal{
    { Grantee = { Type = "CanonicalUser", ID = owner.ID, DisplayName = owner.DisplayName }, Permission = "FULL_CONTROL" },
  }
end)

test("on the wire: S3's AccessControlPolicy, the grantee's type an xsi:type attribute", function()
  local raw = cloud.request{ api = "storage", method = "GET", path = "/acls/dir/a%20b.txt", query = { acl = "" } }
  expect(raw.status).to_equal(200)
  expect(raw.body).to_match('^<%?xml[^>]*%?><AccessControlPolicy xmlns="http://s3%.amazonaws%.com/doc/2006%-03%-01/"><Owner>')
  expect(raw.body).to_contain('<AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    .. 'xsi:type="CanonicalUser"><ID>')
  expect(raw.body).to_contain("</Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList>")
end)

test("a plain GET of the key is still the object, ?acl on the bucket is the bucket's ACL", function()
  expect(s3.get_object{ Bucket = "acls", Object = "dir/a b.txt" }.Body).to_equal("the bytes")
  local bucket = cloud.request{ api = "storage", method = "GET", path = "/acls", query = { acl = "" } }
  expect(bucket.body).to_contain("<AccessControlPolicy")
  expect(bucket.body:find("<Contents>", 1, true)).to_be_nil()
end)

test("the ACL an object was written with: PutObject's canned ACL and grant headers", function()
  s3.put_object{ Bucket = "acls", Object = "public", Body = "x", ACL = "public-read" }
  local grants = s3.get_object_acl{ Bucket = "acls", Object = "public" }.AccessControlList
  expect(#grants).to_equal(2)
  expect(grants[2]).to_equal{ Grantee = { Type = "Group", URI = "http://acs.amazonaws.com/groups/global/AllUsers" },
    Permission = "READ" }
  s3.put_object{ Bucket = "acls", Object = "signed-in", Body = "x",
    GrantRead = 'uri="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"' }
  expect(s3.get_object_acl{ Bucket = "acls", Object = "signed-in" }.AccessControlList).to_equal{
    { Grantee = { Type = "Group", URI = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers" }, Permission = "READ" },
  }
end)

test("a key that holds no object is NoSuchKey, as GetObject answers it", function()
  local e = expect(s3.get_object_acl, { Bucket = "acls", Object = "dir/nope" })
    .to_fail{ kind = "api", code = "NoSuchKey", status = 404 }
  expect(e.message).to_equal("The specified key does not exist.")
  local get = expect(s3.get_object, { Bucket = "acls", Object = "dir/nope" }).to_fail{ code = "NoSuchKey" }
  expect(get.message).to_equal(e.message)
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.get_object_acl, { Bucket = "nowhere", Object = "k" }).to_fail{ kind = "api", code = "NoSuchBucket", status = 404 }
end)
