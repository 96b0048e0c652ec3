-- scripts/restore_instance.lua, run in this state against the embedded emulator: the
-- restore with options, the wait for RUNNING, --no-wait, a time-out and a refusal.

local emu = assert(cloud.emulator, "needs the embedded emulator")
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/restore_instance.lua")
local BACKUP = "0123456789abcdef0123456789abcdef"

local function instance(id) return support.find(emu.state().instances, "instanceId", id) end

before_each(function()
  emu.reset()
  emu.seed{ backups = { { backupId = BACKUP } } }
end)

test("restores with the options given and waits until RUNNING", function()
  local out = run(BACKUP, "code-1", "--type", "e-large16", "--disk", "200", "--zone", "east-12", "--description", "drill")
  expect(out[1]).to_equal("restoring code-1 (e-large16, 200 GB, east-12): RESTORING")
  expect(out[2]).to_match("^code%-1 is RUNNING %(status 100%): https://%S+, global IP %d+%.%d+%.%d+%.%d+$")
  local i = instance("code-1")
  expect({ i.state, i.instanceType, i.diskSize, i.availabilityZone, i.description })
    .to_equal{ "RUNNING", "e-large16", 200, "east-12", "drill" }
end)

test("--no-wait returns while the server is RESTORING", function()
  expect(#run(BACKUP, "code-2", "--no-wait")).to_equal(1)
  expect(instance("code-2").state).to_equal("RESTORING")
end)

test("a time-out shorter than the restore is a timeout error naming the last state", function()
  emu.configure{ instance_restore = 600 }
  expect(run, BACKUP, "code-3", "--timeout", "60")
    .to_fail{ kind = "timeout", code = "WaitTimeout", message = "InstanceRunning not reached after 3 tries (60 s); last seen: RESTORING" }
end)

test("refusals reach the user: an unknown backup, a bad disk size", function()
  expect(run, ("f"):rep(32), "code-4").to_fail{ kind = "api", code = "BackupNotFound" }
  expect(run, BACKUP, "code-4", "--disk", "250").to_fail("--disk 250: must be one of 100, 200, 300, 400")
  expect(instance("code-4")).to_be_nil()
end)
