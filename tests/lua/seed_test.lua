-- The same output twice: `cloudlua test --seed N` and cloud.emulator.configure{ seed =
-- N } make the emulator's ids, request ids, Date headers and times, the retry
-- back-off and math.random repeatable. A test file that prints all of them is run
-- through the binary twice with one seed (the same bytes) and with another (they
-- differ). CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/seed_test.lua

local t = dofile("tests/lua/support/cli.lua")

-- Prints what a run makes up: a version id, request ids, Date headers, an upload id,
-- a cluster's time and nrn, the fixtures' times, math.random; with retries on the way.
local PRINTS = [[
test("prints what varies", function()
  local s3 = cloud.storage
  s3.create_bucket{ Bucket = "bkt" }
  local put, meta = s3.put_object{ Bucket = "bkt", Object = "k", Body = "x" }
  print(put.VersionId, meta.request_id, meta.headers.date)
  print(s3.create_multipart_upload{ Bucket = "bkt", Object = "m" }.UploadId)
  cloud.emulator.fault{ operation = "UpdateSnapshot", times = 2, status = 503, code = "SlowDown" }
  local _, m = cloud.cluster.update_snapshot{ SnapshotName = "snap-2", snapshot = { description = "retried" } }
  print(m.attempts, m.request_id, m.headers.date)
  local c = cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
  print(c.cluster.nrn)
  cloud.emulator.advance(3600)
  for _, s in ipairs(cloud.emulator.state().clusters) do print(s.name, s.status, s.createTime) end
  for _, s in ipairs(cloud.emulator.state().snapshots) do print(s.name, s.createTime) end
  print(math.random(1 << 40))
end)
]]

local dir

-- `cloudlua test ARGS` in the folder of the files; its stdout.
local function run(args, env)
  local out, err, code = t.cloudlua("test " .. args, { cd = dir, env = env })
  assert(code == 0, ("cloudlua test %s failed (%s):\n%s%s"):format(args, tostring(code), out, err))
  return out
end

setup(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. t.quote(dir)))
  for name, text in pairs{ ["prints_test.lua"] = PRINTS,
                           -- The fixture set was made before the seed: made again after it.
                           ["configured_test.lua"] = "cloud.emulator.configure{ seed = tonumber(os.getenv('SEED')) }\n"
                             .. "cloud.emulator.reset()\n"
                             .. "cloud.emulator.seed{ snapshots = { { name = 'snap-1' }, { name = 'snap-2' } } }\n" .. PRINTS } do
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
end)

teardown(function()
  if dir then os.execute("rm -rf " .. t.quote(dir)) end
  t.cleanup()
end)

test("--seed: two runs print the same bytes", function()
  local first = run("--seed 7 prints_test.lua")
  expect(run("--seed 7 prints_test.lua")).to_equal(first)
  expect(first).to_contain("\t2026-01-01T00:00:00Z\n")  -- the fixtures' times too: seeded from the start
end)

test("--seed: another seed, other ids and request ids", function()
  local seven, eight = run("--seed 7 prints_test.lua"), run("--seed 8 prints_test.lua")
  expect(seven).to_not_equal(eight)
  expect(seven:match("# (v%x+)")).to_not_equal(eight:match("# (v%x+)"))
  expect(seven:match("\t(emu%-%x+)\t")).to_not_equal(eight:match("\t(emu%-%x+)\t"))
end)

test("--seed: times run from 2026-01-01T00:00:00Z on the emulator's virtual clock", function()
  local out = run("--seed 7 prints_test.lua")
  expect(out).to_contain("\tThu, 01 Jan 2026 00:00:00 GMT\n")
  expect(out).to_match("# c1\tRUNNING\t2026%-01%-01T00:00:0%dZ\n")
end)

test("configure{ seed = N } in the file: two runs print the same bytes", function()
  local first = run("configured_test.lua", { SEED = "42" })
  expect(run("configured_test.lua", { SEED = "42" })).to_equal(first)
  expect(run("configured_test.lua", { SEED = "43" })).to_not_equal(first)
end)

test("configure refuses a seed that is not a whole number, 0 or more", function()
  expect(cloud.emulator.configure, { seed = -1 }).to_fail("seed must be a whole number, 0 or more")
  expect(cloud.emulator.configure, { seed = 1.5 }).to_fail("seed must be a whole number, 0 or more")
end)

test("--seed takes a number", function()
  local _, err, code = t.cloudlua("test --seed x prints_test.lua", { cd = dir })
  expect(code).to_equal(1)
  expect(err).to_contain("--seed")
end)
