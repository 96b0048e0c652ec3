-- RestoreInstance (POST /v1/instances:restore): a code-host server RESTORING (status
-- 200), then RUNNING (status 100) with a global IP; refusals (unknown backup, a name in
-- use); a restore is never resent once it may have reached the server; every limit.
-- Run: cloudlua test tests/regression/restore_instance_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local BACKUP = "0123456789abcdef0123456789abcdef"

before_each(function()
  emu.reset()
  emu.seed{ backups = { { backupId = BACKUP } } }
end)

local function restore(args)
  args.backupId = args.backupId or BACKUP
  args.instanceId = args.instanceId or "code-1"
  return cloud.devops.restore_instance(args)
end

local function instance(id)
  for _, i in ipairs(emu.state().instances) do if i.instanceId == id then return i end end
end

test("restores a server: RESTORING with status 200, then RUNNING with status 100", function()
  local r, meta = restore{ instanceType = "e-large16", diskSize = 200, description = "from the nightly backup" }
  expect(meta.status).to_equal(200)
  local i = r.instance
  expect({ i.instanceId, i.state, i.status.code, i.status.name }).to_equal{ "code-1", "RESTORING", 200, "RESTORING" }
  expect({ i.instanceType, i.diskSize, i.publicIpAddress }).to_equal{ "e-large16", 200, "" }
  expect(i.networkConfig).to_equal({})
  expect(i.upgradableCodehostVersions).to_equal({})
  expect(i.createTime).to_match("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d UTC$")
  local running = cloud.wait_until(function()
    local now = instance("code-1")
    return now.state == "RUNNING" and now, now.state
  end, { timeout = 600, interval = 10, what = "code-1 RUNNING" })
  expect(running.status).to_equal{ code = 100, name = "RUNNING" }
  expect(running.publicIpAddress).to_match("^%d+%.%d+%.%d+%.%d+$")
end)

test("defaults: instance type e-large, the region's zone", function()
  local i = restore{}.instance
  expect(i.instanceType).to_equal("e-large")
  expect(i.availabilityZone).to_equal("east-11")  -- jp-east-1's default zone
end)

test("an unknown backup is refused with 404 BackupNotFound", function()
  expect(restore, { backupId = ("f"):rep(32) }).to_fail{ kind = "api", code = "BackupNotFound", status = 404 }
end)

test("a server name in use is refused with 409", function()
  restore{}
  expect(restore, {}).to_fail{ kind = "api", code = "InstanceAlreadyExists", status = 409 }
end)

test("a restore is not resent after an error answer (it may have been carried out)", function()
  emu.fault{ operation = "RestoreInstance", times = 1, status = 503, code = "ServiceUnavailable" }
  expect(restore, {}).to_fail{ code = "ServiceUnavailable", status = 503 }
  expect(instance("code-1")).to_be_nil()
  expect(restore{}.instance.state).to_equal("RESTORING")  -- the fault was used up by one attempt
end)

test("restore_instance{} is refused before anything is sent: the backup and the name are needed", function()
  -- a fault queued for the operation would fail the first request that reached the platform
  emu.fault{ operation = "RestoreInstance", status = 409, code = "ReachedThePlatform" }
  local err = expect(cloud.devops.restore_instance, {}).to_fail{ kind = "validation", field = "backupId", problem = "required" }
  expect(err.attempts).to_equal(0)
  expect(#err.fields).to_equal(2)
  expect(err.fields[2]).to_equal{ path = "instanceId", problem = "required" }
  expect(cloud.devops.restore_instance, { backupId = cloud.null, instanceId = "code-1" })
    .to_fail{ kind = "validation", field = "backupId", problem = "string expected, got cloud.null" }
  expect(restore, {}).to_fail{ code = "ReachedThePlatform" }
  expect(instance("code-1")).to_be_nil()
end)

test("backupId: exactly 32 lowercase letters and digits", function()
  for _, bad in ipairs{ ("a"):rep(31), ("a"):rep(33), ("A"):rep(32), ("a"):rep(31) .. "-" } do
    expect(restore, { backupId = bad }).to_fail{ kind = "validation", field = "backupId" }
  end
end)

test("instanceId: at most 30 characters, lowercase letters, digits, hyphen inside", function()
  local longest = "a" .. ("-1"):rep(14) .. "z"
  expect(#longest).to_equal(30)
  expect(restore{ instanceId = longest }.instance.instanceId).to_equal(longest)
  expect(restore, { instanceId = longest .. "z" })
    .to_fail{ kind = "validation", field = "instanceId", problem = "at most 30 characters (got 31)" }
  for _, bad in ipairs{ "-code", "code-", "Code", "code_1" } do
    expect(restore, { instanceId = bad }).to_fail{ kind = "validation", field = "instanceId" }
  end
end)

test("instanceType, availabilityZone, diskSize: the spec's values only", function()
  local i = restore{ instanceType = "h2-double-large96", availabilityZone = "jp-west-21", diskSize = 400 }.instance
  expect({ i.instanceType, i.availabilityZone, i.diskSize }).to_equal{ "h2-double-large96", "jp-west-21", 400 }
  expect(restore, { instanceType = "h2-huge" }).to_fail{ kind = "validation", field = "instanceType" }
  expect(restore, { availabilityZone = "west-99" }).to_fail{ kind = "validation", field = "availabilityZone" }
  for _, size in ipairs{ 50, 150, 500 } do
    expect(restore, { diskSize = size }).to_fail{ kind = "validation", field = "diskSize", problem = "100, 200, 300 or 400" }
  end
end)

test("firewallGroupName and parameterGroupName: at most 63 characters", function()
  local longest = ("g"):rep(63)
  local i = restore{ firewallGroupName = longest, parameterGroupName = longest }.instance
  expect({ i.firewallGroupName, i.parameterGroupName }).to_equal{ longest, longest }
  expect(restore, { instanceId = "code-2", firewallGroupName = longest .. "g" })
    .to_fail{ kind = "validation", field = "firewallGroupName", problem = "(got 64)" }
  expect(restore, { instanceId = "code-2", parameterGroupName = longest .. "g" })
    .to_fail{ kind = "validation", field = "parameterGroupName", problem = "(got 64)" }
  expect(restore, { instanceId = "code-2", parameterGroupName = "-pg" }).to_fail{ kind = "validation", field = "parameterGroupName" }
end)

test("description: at most 255 characters", function()
  expect(restore{ description = ("メ"):rep(255) }.instance.description).to_equal(("メ"):rep(255))
  expect(restore, { instanceId = "code-2", description = ("x"):rep(256) }).to_fail{ kind = "validation", field = "description" }
end)

test("networkConfig.privateAddress: CIDR notation", function()
  local i = restore{ networkConfig = { networkId = "net-1", privateAddress = "192.168.0.10/24" } }.instance
  expect(i.networkConfig).to_equal{ networkId = "net-1", privateAddress = "192.168.0.10/24" }
  expect(restore, { instanceId = "code-2", networkConfig = { privateAddress = "192.168.0.10" } })
    .to_fail{ kind = "validation", field = "networkConfig.privateAddress" }
end)

test("objectStorageConfig: account 1 to 128 letters and digits, region, bucket names 3 to 32", function()
  local buckets = { lfs = "abc", packages = ("p"):rep(32), containerRegistry = "reg-1" }
  local config = { account = ("A1"):rep(64), region = "jp-west-2", bucketUseObjects = buckets }
  expect(restore{ objectStorageConfig = config }.instance.objectStorageConfig).to_equal(config)
  local function broken(change, field)
    local c = { account = "acct", region = "jp-east-1", bucketUseObjects = { lfs = "abc", packages = "abc", containerRegistry = "abc" } }
    change(c)
    expect(restore, { instanceId = "code-2", objectStorageConfig = c })
      .to_fail{ kind = "validation", field = "objectStorageConfig." .. field }
  end
  broken(function(c) c.account = "" end, "account")
  broken(function(c) c.account = ("a"):rep(129) end, "account")
  broken(function(c) c.account = "acct-1" end, "account")
  broken(function(c) c.region = "jp-east-3" end, "region")
  broken(function(c) c.bucketUseObjects.lfs = "ab" end, "bucketUseObjects.lfs")
  broken(function(c) c.bucketUseObjects.packages = ("p"):rep(33) end, "bucketUseObjects.packages")
  broken(function(c) c.bucketUseObjects.containerRegistry = "-reg" end, "bucketUseObjects.containerRegistry")
end)
