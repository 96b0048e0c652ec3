-- cloud.emulator.snapshot/restore/snapshots from Lua (the embedded emulator keeps them
-- in memory): a change after a snapshot is gone once it is restored; names checked; an
-- unknown name is an error naming the known ones. And what a suite gains: a prepared
-- platform restored before each case, timed (printed, not asserted).
-- Run: cloudlua test tests/lua/emulator_snapshots_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

test("snapshot, change, restore: the change is gone", function()
  emu.reset()
  s3.create_bucket{ Bucket = "snaps" }
  s3.put_object{ Bucket = "snaps", Object = "k", Body = "before" }
  emu.snapshot("base")
  s3.put_object{ Bucket = "snaps", Object = "k", Body = "after" }
  s3.put_object{ Bucket = "snaps", Object = "new", Body = "x" }
  emu.restore("base")
  expect(s3.get_object{ Bucket = "snaps", Object = "k" }.Body).to_equal("before")
  expect(s3.get_object, { Bucket = "snaps", Object = "new" }).to_fail{ code = "NoSuchKey" }
  local names = emu.snapshots()
  expect(names[1]).to_equal("base")
end)

test("an unknown name is a clear error and changes nothing", function()
  emu.reset()
  s3.create_bucket{ Bucket = "kept" }
  emu.snapshot("known")
  local err = expect(emu.restore, "unknown").to_fail{ kind = "validation", code = "NoSuchSnapshot" }
  expect(err.message:match("^no snapshot named 'unknown' %(snapshots: .*known%)$") ~= nil).to_equal(true)
  expect(s3.head_bucket{ Bucket = "kept" }).to_be_a("table")
end)

test("a name that cannot be one is refused, saying what is allowed", function()
  expect(emu.snapshot, "../x").to_fail{ kind = "validation", code = "InvalidSnapshotName" }
  expect(emu.snapshot).to_fail()  -- no name: lauxlib's bad argument
end)

test("a prepared platform, restored before each of 100 cases", function()
  emu.reset()
  s3.create_bucket{ Bucket = "prepared" }
  for i = 1, 1000 do s3.put_object{ Bucket = "prepared", Object = ("k%04d"):format(i), Body = ("x"):rep(100) } end
  emu.snapshot("prepared")
  local start = os.clock()
  for _ = 1, 100 do
    emu.restore("prepared")
    s3.put_object{ Bucket = "prepared", Object = "k0001", Body = "changed" }
  end
  print(("# restore of 1,000 objects: %.2f ms each (CPU)"):format((os.clock() - start) * 10))
  emu.restore("prepared")
  expect(s3.get_object{ Bucket = "prepared", Object = "k0001" }.Body).to_equal(("x"):rep(100))
end)
