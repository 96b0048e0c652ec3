-- cloud.emulator's checkpoint, restore, fault and advance, written once: this file
-- passes unchanged against the embedded emulator (`cloudlua test FILE`, ctest
-- lua.emulator_anywhere_test) and against `cloudlua serve` over its control plane
-- (`cloudlua test --endpoint URL FILE`, with and without --record:
-- tests/serve/emulator_anywhere_test.sh). Same functions, same arguments, same errors.
-- Run: cloudlua test tests/lua/emulator_anywhere_test.lua

local emu = assert(cloud.emulator, "needs an emulator: the embedded one, or serve by endpoint_url")
local s3 = cloud.storage

-- A serve outlives a run (this file runs twice against one): start from nothing.
setup(function() emu.reset() end)

test("endpoints name the four APIs", function()
  local urls = emu.endpoints()
  for _, api in ipairs{ "storage", "devops", "cluster", "catalog" } do expect(urls[api]).to_match("^http://") end
end)

test("checkpoint, change, restore: the change is gone", function()
  s3.create_bucket{ Bucket = "anywhere" }
  s3.put_object{ Bucket = "anywhere", Object = "k", Body = "before" }
  emu.checkpoint("anywhere-base")
  s3.put_object{ Bucket = "anywhere", Object = "k", Body = "after" }
  s3.put_object{ Bucket = "anywhere", Object = "new", Body = "x" }
  emu.restore("anywhere-base")
  expect(s3.get_object{ Bucket = "anywhere", Object = "k" }.Body).to_equal("before")
  expect(s3.get_object, { Bucket = "anywhere", Object = "new" }).to_fail{ code = "NoSuchKey" }
  local listed = false
  for _, name in ipairs(emu.checkpoints()) do listed = listed or name == "anywhere-base" end
  expect(listed).to_equal(true)
end)

test("checkpoint errors: an unknown name, a name that cannot be one", function()
  local err = expect(emu.restore, "never-saved").to_fail{ kind = "validation", code = "NoSuchCheckpoint" }
  expect(err.message).to_match("^no checkpoint named 'never%-saved'")
  expect(emu.checkpoint, "../x").to_fail{ kind = "validation", code = "InvalidCheckpointName" }
  expect(emu.checkpoint).to_fail()  -- no name: lauxlib's bad argument
end)

test("a fault answers the next matching request, once", function()
  s3.create_bucket{ Bucket = "faulted" }
  s3.put_object{ Bucket = "faulted", Object = "k", Body = "v" }
  emu.fault{ operation = "GetObject", status = 400, code = "InvalidRequest", message = "injected", times = 1 }
  local err = expect(s3.get_object, { Bucket = "faulted", Object = "k" }).to_fail{ code = "InvalidRequest" }
  expect(err.message).to_equal("injected")
  expect(s3.get_object{ Bucket = "faulted", Object = "k" }.Body).to_equal("v")
end)

test("fault's arguments: the same bad-argument errors", function()
  local ok, message = pcall(emu.fault, { operation = "NoSuchOperation" })
  expect(ok).to_equal(false)
  expect(tostring(message)).to_contain("bad argument #1 to 'cloud.emulator.fault' (no operation named 'NoSuchOperation')")
  ok, message = pcall(emu.fault, { opreation = "GetObject" })
  expect(ok).to_equal(false)
  expect(tostring(message)).to_contain("unknown field 'opreation'")
end)

test("advance settles what falls due; a negative time is a bad argument", function()
  emu.configure{ real_time = false, instance_restore = 5 }
  local backup = ("b"):rep(32)
  emu.seed{ backups = { { backupId = backup } } }
  local i = cloud.devops.restore_instance{ backupId = backup, instanceId = "anywhere-1" }.instance
  expect(i.state).to_equal("RESTORING")
  emu.advance(5)
  local state
  for _, s in ipairs(emu.state().instances) do
    if s.instanceId == "anywhere-1" then state = s.state end
  end
  expect(state).to_equal("RUNNING")
  local ok, message = pcall(emu.advance, -1)
  expect(ok).to_equal(false)
  expect(tostring(message)).to_contain("seconds must not be negative")
end)

test("a waiter's pauses move the emulator's clock and cloud.clock alike, without waiting", function()
  emu.configure{ real_time = false, instance_restore = 600 }
  local backup = ("c"):rep(32)
  emu.seed{ backups = { { backupId = backup } } }
  cloud.devops.restore_instance{ backupId = backup, instanceId = "anywhere-2" }
  local start, pauses = cloud.clock(), 0
  local i = cloud.wait_for("InstanceRunning", { InstanceId = "anywhere-2" },
                           { delay = 300, max_attempts = 3, progress = function() pauses = pauses + 1 end }).instance
  expect(i.state).to_equal("RUNNING")
  expect(pauses).to_equal(2)
  expect(cloud.clock() - start >= 600).to_equal(true)
end)
