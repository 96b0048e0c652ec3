-- DeleteObjects (POST /{Bucket}?delete): up to 1000 keys in one <Delete> document,
-- sent with its Content-MD5 (which the platform requires, as S3 does); every key is
-- reported Deleted, missing ones too; Quiet reports none.
-- Run: cloudlua test tests/regression/delete_objects_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = "many" }
  for _, k in ipairs{ "a", "b", "c" } do s3.put_object{ Bucket = "many", Object = k, Body = k } end
end)

local function left()
  local out = {}
  for _, o in ipairs(s3.list_objects_v2{ Bucket = "many" }.Contents) do out[#out + 1] = o.Key end
  return out
end

test("the keys go, each reported, a missing one too", function()
  local r, meta = s3.delete_objects{ Bucket = "many", Object = { { Key = "a" }, { Key = "missing" } } }
  expect(meta.status).to_equal(200)
  expect(r.Deleted).to_equal{ { Key = "a" }, { Key = "missing" } }
  expect(r.Error).to_equal{}
  expect(left()).to_equal{ "b", "c" }
end)

test("Quiet: nothing reported", function()
  local r = s3.delete_objects{ Bucket = "many", Quiet = true, Object = { { Key = "b" }, { Key = "c" } } }
  expect(r.Deleted).to_equal{}
  expect(left()).to_equal{ "a" }
end)

test("without Content-MD5 the platform refuses it, as S3 does", function()
  local raw = cloud.request{ api = "storage", method = "POST", path = "/many", query = { delete = "" },
                             body = "<Delete><Object><Key>a</Key></Object></Delete>" }
  expect(raw.status).to_equal(400)
  expect(raw.body).to_contain("<Code>InvalidRequest</Code>")
  expect(left()).to_equal{ "a", "b", "c" }
end)

test("1 to 1000 keys, each with a Key", function()
  expect(s3.delete_objects, { Bucket = "many", Object = {} }).to_fail{ kind = "validation", field = "Object" }
  local too_many = {}
  for i = 1, 1001 do too_many[i] = { Key = "k" .. i } end
  expect(s3.delete_objects, { Bucket = "many", Object = too_many }).to_fail{ kind = "validation", field = "Object" }
  expect(s3.delete_objects, { Bucket = "many", Object = { {} } }).to_fail{ kind = "validation", field = "Object[1].Key" }
  expect(#s3.delete_objects{ Bucket = "many", Object = { table.unpack(too_many, 1, 1000) } }.Deleted).to_equal(1000)
end)
