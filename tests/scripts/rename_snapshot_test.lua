-- scripts/rename_snapshot.lua, run in this state against the embedded emulator: the
-- rename with an absolute or relative expiry, and refusals before anything is sent.

local emu = assert(cloud.emulator, "needs the embedded emulator")
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/rename_snapshot.lua")

local function snapshot(name) return support.find(emu.state().snapshots, "name", name) end

before_each(function()
  emu.reset()
  emu.seed{ snapshots = { { name = "snap-1" }, { name = "snap-2" } } }
end)

test("renames and moves the expiry to the time given", function()
  expect(run("snap-1", "snap-audit", "--expires", "2030-01-31T00:00:00Z"))
    .to_equal{ "snapshot snap-1 is now snap-audit, expires 2030-01-31T00:00:00Z, status AVAILABLE" }
  expect(snapshot("snap-1")).to_be_nil()
  expect(snapshot("snap-audit").expirationTime).to_equal("2030-01-31T00:00:00Z")
end)

test("+DAYSd moves the expiry that many days from now", function()
  run("snap-1", "snap-later", "--expires", "+90d")
  local y, m, d = snapshot("snap-later").expirationTime:match("^(%d+)%-(%d+)%-(%d+)T%d%d:%d%d:%d%dZ$")
  local days = (os.time{ year = y, month = m, day = d, hour = 12 } - os.time()) / 86400
  expect(days > 88 and days < 92).to_be_truthy()
end)

test("a rename without --expires keeps the expiry", function()
  local before = snapshot("snap-1").expirationTime
  run("snap-1", "snap-kept")
  expect(snapshot("snap-kept").expirationTime).to_equal(before)
end)

test("refusals: a taken name, a bad name, a bad time", function()
  expect(run, "snap-1", "snap-2").to_fail{ kind = "api", code = "SnapshotAlreadyExists" }
  expect(run, "snap-1", "Snap_Audit").to_fail{ kind = "validation", field = "snapshot.name" }
  expect(run, "snap-1", "snap-x", "--expires", "next week").to_fail{ kind = "validation", field = "snapshot.expirationTime" }
  expect(snapshot("snap-1")).to_not_equal(nil)
end)
