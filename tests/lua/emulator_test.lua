-- cloud.emulator from Lua: faults (status and code, dropped connections, delays
-- against a client time-out, the 200-with-error body), seeding, state and reset.
-- Each fault is checked through what a script sees: the error object or meta.attempts.

local check = dofile(arg[0]:match("^(.*/)") .. "support/check.lua")
local eq, failure = check.eq, check.failure

local update = { SnapshotName = "snap-1", snapshot = { description = "x" } }

-- a 503 SlowDown twice: the client retries and succeeds on the third attempt
cloud.emulator.fault{ operation = "UpdateSnapshot", times = 2, status = 503, code = "SlowDown" }
local r, meta = cloud.cluster.update_snapshot(update)
eq(meta.attempts, 3, "attempts after two throttled answers")
eq(r.snapshot.description, "x", "result after retries")

-- the fault's code and status reach the script when retries run out
cloud.emulator.fault{ operation = "UpdateSnapshot", times = 3, status = 500, code = "InternalError" }
local err = failure(cloud.cluster.update_snapshot, update)
eq(err.kind, "api", "5xx kind")
eq(err.code, "InternalError", "5xx code")
eq(err.status, 500, "5xx status")

-- a fault for another operation leaves this one alone
cloud.emulator.fault{ operation = "RestoreInstance", status = 500 }
eq(select(2, cloud.cluster.update_snapshot(update)).attempts, 1, "unrelated fault ignored")
cloud.emulator.reset()
cloud.emulator.seed{ snapshots = { { name = "snap-1" } } }

-- a dropped connection is a transport error
local once = cloud.client{ max_attempts = 1 }
cloud.emulator.fault{ drop = true }
err = failure(once.cluster.update_snapshot, update)
eq(err.kind, "transport", "dropped connection kind")

-- a delay longer than the client's time-out is a timeout
local impatient = cloud.client{ max_attempts = 1, timeout = 0.2 }
cloud.emulator.fault{ operation = "UpdateSnapshot", delay = 0.8 }
err = failure(impatient.cluster.update_snapshot, update)
eq(err.kind, "timeout", "delay beyond the time-out")
eq(err.code, "Timeout", "timeout code")

-- seed: fields left out get plausible values; state shows what the calls changed
cloud.emulator.seed{ snapshots = { { name = "seeded", description = "from the test" } } }
r = cloud.cluster.update_snapshot{ SnapshotName = "seeded", snapshot = { tags = { { key = "a", value = "b" } } } }
eq(r.snapshot.description, "from the test", "seeded field kept")
eq(r.snapshot.status, "AVAILABLE", "left-out field filled in")
local names = {}
for _, s in ipairs(cloud.emulator.state().snapshots) do names[s.name] = s end
assert(names.seeded and names["snap-1"], "state lists the snapshots")
eq(names.seeded.tags[1].key, "a", "state shows the change")

-- reset: nothing left
cloud.emulator.reset()
eq(#cloud.emulator.state().snapshots, 0, "reset empties the platform")
err = failure(cloud.cluster.update_snapshot, update)
eq(err.code, "SnapshotNotFound", "after reset")

-- bad arguments are named
local ok, msg = pcall(cloud.emulator.seed, { snapshot = {} })
assert(not ok and msg:find("unknown field 'snapshot'"), tostring(msg))
ok, msg = pcall(cloud.emulator.fault, { operation = "NoSuchThing" })
assert(not ok and msg:find("no operation named 'NoSuchThing'"), tostring(msg))
ok, msg = pcall(cloud.emulator.advance, -1)
assert(not ok and msg:find("must not be negative"), tostring(msg))
print("emulator_test: ok")
