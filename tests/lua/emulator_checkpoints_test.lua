-- cloud.emulator.checkpoint/restore/checkpoints from Lua (the embedded emulator keeps
-- them in memory): a change after a checkpoint is gone once it is restored; names
-- checked; an unknown name is an error naming the known ones; the old names
-- snapshot/snapshots still work (kept for one release). And what a suite gains: a
-- prepared platform restored before each case, timed (printed, not asserted).
-- Run: cloudlua test tests/lua/emulator_checkpoints_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local s3 = cloud.storage

test("checkpoint, change, restore: the change is gone", function()
  emu.reset()
  s3.create_bucket{ Bucket = "snaps" }
  s3.put_object{ Bucket = "snaps", Object = "k", Body = "before" }
  emu.checkpoint("base")
  s3.put_object{ Bucket = "snaps", Object = "k", Body = "after" }
  s3.put_object{ Bucket = "snaps", Object = "new", Body = "x" }
  emu.restore("base")
  expect(s3.get_object{ Bucket = "snaps", Object = "k" }.Body).to_equal("before")
  expect(s3.get_object, { Bucket = "snaps", Object = "new" }).to_fail{ code = "NoSuchKey" }
  local names = emu.checkpoints()
  expect(names[1]).to_equal("base")
end)

test("an unknown name is a clear error and changes nothing", function()
  emu.reset()
  s3.create_bucket{ Bucket = "kept" }
  emu.checkpoint("known")
  local err = expect(emu.restore, "unknown").to_fail{ kind = "validation", code = "NoSuchCheckpoint" }
  expect(err.message:match("^no checkpoint named 'unknown' %(checkpoints: .*known%)$") ~= nil).to_equal(true)
  expect(s3.head_bucket{ Bucket = "kept" }).to_be_a("table")
end)

test("a name that cannot be one is refused, saying what is allowed", function()
  expect(emu.checkpoint, "../x").to_fail{ kind = "validation", code = "InvalidCheckpointName" }
  expect(emu.checkpoint).to_fail()  -- no name: lauxlib's bad argument
end)

test("the old names snapshot and snapshots still work, kept for one release", function()
  emu.reset()
  s3.create_bucket{ Bucket = "old-names" }
  emu.snapshot("by-old-name")
  s3.delete_bucket{ Bucket = "old-names" }
  local listed = false
  for _, name in ipairs(emu.snapshots()) do listed = listed or name == "by-old-name" end
  expect(listed).to_equal(true)
  expect(emu.checkpoints()).to_equal(emu.snapshots())
  emu.restore("by-old-name")
  expect(s3.head_bucket{ Bucket = "old-names" }).to_be_a("table")
  expect(emu.snapshot).to_equal(emu.checkpoint)
  expect(emu.snapshots).to_equal(emu.checkpoints)
end)

test("a prepared platform, restored before each of 100 cases", function()
  emu.reset()
  s3.create_bucket{ Bucket = "prepared" }
  for i = 1, 1000 do s3.put_object{ Bucket = "prepared", Object = ("k%04d"):format(i), Body = ("x"):rep(100) } end
  emu.checkpoint("prepared")
  local start = os.clock()
  for _ = 1, 100 do
    emu.restore("prepared")
    s3.put_object{ Bucket = "prepared", Object = "k0001", Body = "changed" }
  end
  print(("# restore of 1,000 objects: %.2f ms each (CPU)"):format((os.clock() - start) * 10))
  emu.restore("prepared")
  expect(s3.get_object{ Bucket = "prepared", Object = "k0001" }.Body).to_equal(("x"):rep(100))
end)
