-- cloud.emulator from Lua: faults (status and code, dropped connections, delays
-- against a client time-out, the 200-with-error body), seeding, state and reset.
-- Each fault is checked through what a script sees: the error object or meta.attempts.
-- Run: cloudlua test tests/lua/emulator_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local update = { SnapshotName = "snap-1", snapshot = { description = "x" } }

-- Every case starts from snap-1 alone, with no fault left queued by another.
before_each(function()
  emu.reset()
  emu.seed{ snapshots = { { name = "snap-1" } } }
end)

test("a 503 SlowDown twice: the client retries and succeeds on the third attempt", function()
  emu.fault{ operation = "UpdateSnapshot", times = 2, status = 503, code = "SlowDown" }
  local r, meta = cloud.cluster.update_snapshot(update)
  expect(meta.attempts).to_equal(3)
  expect(r.snapshot.description).to_equal("x")
end)

test("the fault's code and status reach the script when retries run out", function()
  emu.fault{ operation = "UpdateSnapshot", times = 3, status = 500, code = "InternalError" }
  expect(cloud.cluster.update_snapshot, update).to_fail{ kind = "api", code = "InternalError", status = 500 }
end)

test("a fault for another operation leaves this one alone", function()
  emu.fault{ operation = "RestoreInstance", status = 500 }
  expect(select(2, cloud.cluster.update_snapshot(update)).attempts).to_equal(1)
end)

test("a dropped connection is a transport error", function()
  emu.fault{ drop = true }
  expect(cloud.client{ max_attempts = 1 }.cluster.update_snapshot, update).to_fail{ kind = "transport" }
end)

test("a delay longer than the client's time-out is a timeout", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 0.8 }
  expect(cloud.client{ max_attempts = 1, timeout = 0.2 }.cluster.update_snapshot, update)
    .to_fail{ kind = "timeout", code = "Timeout" }
end)

test("seed: fields left out get plausible values; state shows what the calls changed", function()
  emu.seed{ snapshots = { { name = "seeded", description = "from the test" } } }
  local r = cloud.cluster.update_snapshot{ SnapshotName = "seeded", snapshot = { tags = { { key = "a", value = "b" } } } }
  expect(r.snapshot.description).to_equal("from the test")
  expect(r.snapshot.status).to_equal("AVAILABLE")
  local names = {}
  for _, s in ipairs(emu.state().snapshots) do names[s.name] = s end
  expect(names.seeded).to_be_a("table")
  expect(names["snap-1"]).to_be_a("table")
  expect(names.seeded.tags[1].key).to_equal("a")
end)

test("reset: nothing left", function()
  emu.reset()
  expect(#emu.state().snapshots).to_equal(0)
  expect(cloud.cluster.update_snapshot, update).to_fail{ code = "SnapshotNotFound" }
end)

test("seed names an unknown kind", function()
  expect(emu.seed, { snapshot = {} }).to_fail("unknown field 'snapshot'")
end)

test("fault names an unknown operation", function()
  expect(emu.fault, { operation = "NoSuchThing" }).to_fail("no operation named 'NoSuchThing'")
end)

test("the control plane names the nearest field, operation and setting of a typo", function()
  expect(emu.fault, { opreation = "PutObject" }).to_fail("unknown field 'opreation', did you mean 'operation'?")
  expect(emu.fault, { operation = "PutObjet" }).to_fail("no operation named 'PutObjet'; did you mean 'PutObject'?")
  expect(emu.seed, { snapshot = {} }).to_fail("unknown field 'snapshot', did you mean 'snapshots'?")
  expect(emu.configure, { firewall_setle = 1 }).to_fail("no setting named 'firewall_setle'; did you mean 'firewall_settle'?")
end)

test("advance refuses a negative time", function()
  expect(emu.advance, -1).to_fail("must not be negative")
end)

test("advance refuses a time that is not finite or would take the clock past what a date can say", function()
  expect(emu.advance, 1e308).to_fail("seconds must be at most")
  expect(emu.advance, math.huge).to_fail("seconds must be")
  expect(emu.advance, 0 / 0).to_fail("seconds must be")
  emu.seed{ buckets = { "dated" } }
  cloud.storage.put_object{ Bucket = "dated", Object = "k", Body = "x" }
  local year = tonumber(tostring(cloud.storage.head_object{ Bucket = "dated", Object = "k" }.LastModified):match("%d%d%d%d"))
  expect(year >= 2020 and year < 9000).to_be_truthy()
end)

test("seed refuses a name the platform refuses, naming where and what is allowed", function()
  expect(emu.seed, { buckets = { "../../x" } }).to_fail("buckets[1]")
  expect(emu.seed, { buckets = { { name = "Upper_Case" } } }).to_fail("lowercase letters")
  expect(emu.seed, { firewall_groups = { { firewallGroupName = "" } } }).to_fail("firewall_groups[1].firewallGroupName")
  expect(emu.seed, { backups = { { backupId = "../x" } } }).to_fail("backups[1].backupId")
  expect(emu.seed, { snapshots = { { name = 7 } } }).to_fail("snapshots[1].name")
  expect(emu.seed, { mesh_clusters = { { resourceGroupName = "" } } }).to_fail("mesh_clusters[1].resourceGroupName")
  for _, b in ipairs(emu.state().buckets) do expect(b.name).to_not_equal("../../x") end
end)
