-- A file written as if it had the platform to itself: a fixed bucket name, and
-- cloud.emulator.reset() to start from nothing. `cloudlua test --endpoint URL` runs it
-- in a world of its own on a shared serve, so two runs at once both pass and neither
-- touches what others keep there (tests/serve/worlds_test.sh). It passes against the
-- embedded emulator too (ctest lua.shared_serve_test).
-- Run: cloudlua test tests/lua/shared_serve_test.lua

local emu = assert(cloud.emulator, "needs an emulator: the embedded one, or serve by endpoint_url")
local s3 = cloud.storage

setup(function() emu.reset() end)

test("a fixed bucket name, its objects, and reset", function()
  s3.create_bucket{ Bucket = "fixed-name" }
  for i = 1, 20 do s3.put_object{ Bucket = "fixed-name", Object = "k" .. i, Body = tostring(i) } end
  -- only this file's bucket: nobody else's is in its world
  local names = {}
  for _, b in ipairs(s3.list_buckets{}.Buckets) do names[#names + 1] = b.Name end
  expect(names).to_equal{ "fixed-name" }
  expect(s3.get_object{ Bucket = "fixed-name", Object = "k20" }.Body).to_equal("20")
  emu.reset()
  expect(#s3.list_buckets{}.Buckets).to_equal(0)
  s3.create_bucket{ Bucket = "fixed-name" }
  expect(s3.list_objects_v2{ Bucket = "fixed-name" }.KeyCount).to_equal(0)
end)
