-- PutObjectAcl (PUT /{Bucket}/{Object+}?acl): an object's ACL, as a canned ACL in a
-- header, as grant headers or as an AccessControlPolicy body; kept, and answered by
-- GetObjectAcl (what s3cmd cp and mv copy from the source). The object's bytes are
-- never touched.
-- Run: cloudlua test tests/regression/put_object_acl_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "acls" }
  s3.put_object{ Bucket = "acls", Object = "k", Body = "the bytes" }
end)

test("the ACL GetObjectAcl answers, given back, is taken; the object is unchanged", function()
  local acl = s3.get_object_acl{ Bucket = "acls", Object = "k" }
  local r, meta = s3.put_object_acl{ Bucket = "acls", Object = "k", Owner = acl.Owner, AccessControlList = acl.AccessControlList }
  expect(meta.status).to_equal(200)
  expect(r).to_equal({})
  expect(s3.get_object{ Bucket = "acls", Object = "k" }.Body).to_equal("the bytes")
  expect(s3.get_object_acl{ Bucket = "acls", Object = "k" }).to_equal(acl)
end)

test("the canned private, sent with no body", function()
  local _, meta = s3.put_object_acl{ Bucket = "acls", Object = "k", ACL = "private" }
  expect(meta.status).to_equal(200)
  expect(s3.get_object{ Bucket = "acls", Object = "k" }.Body).to_equal("the bytes")
end)

local ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"

test("a canned ACL is kept as its grants: public-read is the owner's FULL_CONTROL and AllUsers' READ", function()
  local owner = s3.list_buckets().Owner
  s3.put_object_acl{ Bucket = "acls", Object = "k", ACL = "public-read" }
  expect(s3.get_object_acl{ Bucket = "acls", Object = "k" }.AccessControlList).to_equal{
    { Grantee = { Type = "CanonicalUser", ID = owner.ID, DisplayName = owner.DisplayName }, Permission = "FULL_CONTROL" },
    { Grantee = { Type = "Group", URI = ALL_USERS }, Permission = "READ" },
  }
end)

test("grants in full and grant headers replace the ACL", function()
  local owner = s3.list_buckets().Owner
  local read_for_all = { { Grantee = { Type = "Group", URI = ALL_USERS }, Permission = "READ" } }
  s3.put_object_acl{ Bucket = "acls", Object = "k", Owner = owner, AccessControlList = read_for_all }
  expect(s3.get_object_acl{ Bucket = "acls", Object = "k" }.AccessControlList).to_equal(read_for_all)
  s3.put_object_acl{ Bucket = "acls", Object = "k", GrantReadACP = 'id="' .. owner.ID .. '"' }
  expect(s3.get_object_acl{ Bucket = "acls", Object = "k" }.AccessControlList).to_equal{
    { Grantee = { Type = "CanonicalUser", ID = owner.ID }, Permission = "READ_ACP" },
  }
end)

test("an ACL given two ways, an unknown group or an id that is none is refused", function()
  expect(s3.put_object_acl, { Bucket = "acls", Object = "k", ACL = "public-read", GrantRead = 'uri="' .. ALL_USERS .. '"' })
    .to_fail{ kind = "api", code = "InvalidRequest", status = 400 }
  expect(s3.put_object_acl, { Bucket = "acls", Object = "k", GrantRead = 'uri="http://example.com/group"' })
    .to_fail{ kind = "api", code = "InvalidArgument", status = 400 }
  expect(s3.put_object_acl, { Bucket = "acls", Object = "k", GrantRead = 'id="me"' })
    .to_fail{ kind = "api", code = "InvalidArgument", status = 400 }
  expect(s3.put_object_acl, { Bucket = "acls", Object = "k", GrantRead = 'emailAddress="a@example.com"' })
    .to_fail{ kind = "api", code = "UnresolvableGrantByEmailAddress", status = 400 }
end)

test("no ACL at all is MalformedACLError", function()
  expect(s3.put_object_acl, { Bucket = "acls", Object = "k" }).to_fail{ kind = "api", code = "MalformedACLError", status = 400 }
end)

test("a grantee without its type is refused before sending", function()
  expect(s3.put_object_acl, { Bucket = "acls", Object = "k",
    AccessControlList = { { Grantee = { ID = "x" }, Permission = "READ" } } })
    .to_fail{ kind = "validation", field = "AccessControlList[1].Grantee.Type" }
end)

test("a missing key is NoSuchKey, a missing bucket NoSuchBucket", function()
  expect(s3.put_object_acl, { Bucket = "acls", Object = "nope", ACL = "private" }).to_fail{ code = "NoSuchKey", status = 404 }
  expect(s3.put_object_acl, { Bucket = "nowhere", Object = "k", ACL = "private" }).to_fail{ code = "NoSuchBucket", status = 404 }
end)
