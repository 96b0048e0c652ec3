-- Golden values: expect(v).to_match_snapshot(name) against __snapshots__/<file>/<name>.lua
-- beside the test file, written by --update-snapshots. Driven from outside: a test
-- file run without snapshots (fails, saying how to write them), with
-- --update-snapshots (writes them, passes), again (passes, files unchanged), then with
-- a changed value (fails with to_equal's paths). CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/snapshot_test.lua

local t = dofile("tests/lua/support/cli.lua")

-- A file whose values change with VERSION; its snapshots "bucket" and "listing".
local GOLDEN = [[
local version = os.getenv("VERSION") or "1"
test("a bucket's listing", function()
  cloud.storage.create_bucket{ Bucket = "golden" }
  cloud.storage.put_object{ Bucket = "golden", Object = "a.txt", Body = "v" .. version }
  local listing = cloud.storage.list_objects_v2{ Bucket = "golden" }
  listing.Contents[1].LastModified = nil  -- a time: left out of the golden value
  expect(listing).to_match_snapshot("listing")
end)
test("plain values", function()
  expect({ name = "snap-1", tags = { "a", "b" }, size = 3, note = cloud.null,
           text = "line 1\nline 2 \"quoted\" \1" }).to_match_snapshot("bucket")
end)
]]

local dir

local function run(args, env)
  local out, err, code = t.cloudlua("test " .. args, { cd = dir, env = env })
  return { out = out, err = err, code = code }
end

local function exists(path)
  local f = io.open(dir .. "/" .. path)
  if f then f:close() end
  return f ~= nil
end

before_each(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. t.quote(dir .. "/sub")))
  local f = assert(io.open(dir .. "/sub/golden_test.lua", "w"))
  f:write(GOLDEN)
  f:close()
end)

after_each(function()
  os.execute("rm -rf " .. t.quote(dir))
  t.cleanup()
end)

test("no snapshot yet: the case fails and says how to write it", function()
  local r = run("sub/golden_test.lua")
  expect(r.code).to_equal(1)
  expect(r.out).to_contain("no snapshot sub/__snapshots__/golden_test/listing.lua yet: run with --update-snapshots to write it")
  expect(exists("sub/__snapshots__")).to_be_falsy()
end)

test("--update-snapshots writes them beside the file, readable Lua; the run passes", function()
  local r = run("--update-snapshots sub/golden_test.lua")
  expect(r.code).to_equal(0)
  expect(t.read_file(dir .. "/sub/__snapshots__/golden_test/bucket.lua")).to_equal(
    'return {\n  name = "snap-1",\n  note = null,\n  size = 3,\n  tags = { "a", "b" },\n' ..
    '  text = "line 1\\nline 2 \\"quoted\\" \\001",\n}\n')
  expect(t.read_file(dir .. "/sub/__snapshots__/golden_test/listing.lua")).to_contain('Key = "a.txt"')
end)

test("the same values again: the run passes and the files stay as they were", function()
  run("--update-snapshots sub/golden_test.lua")
  local before = t.read_file(dir .. "/sub/__snapshots__/golden_test/listing.lua")
  local r = run("sub/golden_test.lua")
  expect(r.code).to_equal(0)
  expect(r.out).to_match("2 passed, 0 failed\n$")
  expect(t.read_file(dir .. "/sub/__snapshots__/golden_test/listing.lua")).to_equal(before)
end)

test("a changed value fails with the differing paths, as to_equal shows them", function()
  run("--update-snapshots sub/golden_test.lua")
  local r = run("sub/golden_test.lua", { VERSION = "22" })
  expect(r.code).to_equal(1)
  expect(r.out).to_contain("not ok 1 - a bucket's listing\n#   sub/golden_test.lua:7: snapshot " ..
                           "sub/__snapshots__/golden_test/listing.lua: values differ (2 differences):\n" ..
                           "#     Contents[1].ETag: expected")
  expect(r.out).to_contain("#     Contents[1].Size: expected 2, got 3\n")
  expect(r.out).to_contain("ok 2 - plain values\n")
end)

test("--update-snapshots rewrites a changed value", function()
  run("--update-snapshots sub/golden_test.lua")
  expect(run("--update-snapshots sub/golden_test.lua", { VERSION = "22" }).code).to_equal(0)
  expect(run("sub/golden_test.lua", { VERSION = "22" }).code).to_equal(0)
  expect(run("sub/golden_test.lua").code).to_equal(1)
end)

test("a name that could leave the folder is refused", function()
  expect(function() expect(1).to_match_snapshot("../x") end).to_fail("to_match_snapshot needs a name")
  expect(function() expect(1).to_match_snapshot(".hidden") end).to_fail("to_match_snapshot needs a name")
end)

test("a value with no stored form is refused", function()
  expect(function() expect({ f = print }).to_match_snapshot("f") end).to_fail("has no stored form")
end)
