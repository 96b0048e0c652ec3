-- cloud.wait_until: what it returns, how it passes the emulator's virtual time, its
-- time-out error, and its argument checks. Runs in `cloudlua test`, so the emulator's
-- clock moves only when told.

local emu = assert(cloud.emulator, "needs the embedded emulator")

before_each(function()
  emu.reset()
  emu.seed{ firewall_groups = { { firewallGroupName = "fw-1" } } }
end)

local function group_state()
  return emu.state().firewall_groups[1].state
end

local function make_busy()  -- the group PROCESSING for the emulator's default 10 s
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-1", rules = { { protocol = "ICMP", cidrIp = "10.0.0.1" } } }
end

test("returns every value the function returned; passes it the try number", function()
  local seen = {}
  local a, b, c = cloud.wait_until(function(try)
    seen[#seen + 1] = try
    if try == 3 then return "done", 2, false end
  end, { interval = 1 })
  expect({ a, b, c }).to_equal{ "done", 2, false }
  expect(seen).to_equal{ 1, 2, 3 }
end)

test("a condition already true returns at once, without moving time", function()
  make_busy()
  expect(cloud.wait_until(function() return true end)).to_be(true)
  expect(group_state()).to_equal("PROCESSING")
end)

test("time between tries is the emulator's virtual time, `interval` seconds a try", function()
  make_busy()
  local tries = 0
  cloud.wait_until(function() tries = tries + 1 return group_state() == "APPLIED" end, { interval = 3 })
  expect(tries).to_equal(5)  -- at 0, 3, 6, 9 s PROCESSING; at 12 s APPLIED (it settles at 10 s)
end)

test("a time-out raises a timeout error naming what was awaited and the last status", function()
  emu.configure{ firewall_settle = 1000 }
  make_busy()
  local tries = 0
  local err = expect_error(function()
    cloud.wait_until(function() tries = tries + 1 return group_state() == "APPLIED", group_state() end,
                     { timeout = 20, interval = 6, what = "fw-1 APPLIED" })
  end, { kind = "timeout", code = "WaitTimeout" })
  expect(tries).to_equal(5)  -- at 0, 6, 12, 18 and, last, at 20 s
  expect(err.message).to_equal("fw-1 APPLIED not reached after 20 s (5 tries); last seen: PROCESSING")
  expect(tostring(err)).to_contain("timeout error: WaitTimeout: fw-1 APPLIED not reached after 20 s")
end)

test("a timeout of 0 tries once", function()
  local tries = 0
  expect(cloud.wait_until, function() tries = tries + 1 end, { timeout = 0 }).to_fail{ code = "WaitTimeout" }
  expect(tries).to_equal(1)
end)

test("errors raised by the function are not caught", function()
  expect(cloud.wait_until, function() error("the probe broke", 0) end).to_fail("the probe broke")
  expect(cloud.wait_until, function() cloud.cluster.update_snapshot{ SnapshotName = "none" } end)
    .to_fail{ code = "SnapshotNotFound" }
end)

test("real_time = true sleeps instead of moving the emulator's clock", function()
  make_busy()
  local start = cloud.clock()
  expect(cloud.wait_until, function() return false end, { timeout = 0.05, interval = 0.01, real_time = true })
    .to_fail{ code = "WaitTimeout" }
  expect(cloud.clock() - start >= 0.05).to_be_truthy()
  expect(group_state()).to_equal("PROCESSING")  -- no virtual time passed
end)

test("cloud.sleep passes virtual time under cloudlua test: the emulator's clock follows it", function()
  emu.configure{ firewall_settle = 10 }  -- a case above made it 1000
  make_busy()
  local start = cloud.clock()
  cloud.sleep(12)
  expect(group_state()).to_equal("APPLIED")  -- settled at 10 s
  expect(cloud.clock() - start >= 12).to_be_truthy()
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-1", rules = { { protocol = "ICMP", cidrIp = "10.0.0.2" } } }
  cloud.sleep(0.02, { real_time = true })
  expect(group_state()).to_equal("PROCESSING")  -- real time is not the emulator's
  expect(cloud.sleep, 1, { real_tme = true }).to_fail("unknown field 'real_tme', did you mean 'real_time'?")
end)

test("bad arguments are named", function()
  expect(cloud.wait_until, 42).to_fail("bad argument #1 to 'cloud.wait_until' (function expected, got number)")
  expect(cloud.wait_until, function() end, "soon").to_fail("bad argument #2 to 'cloud.wait_until' (table expected")
  expect(cloud.wait_until, function() end, { timeout = -1 }).to_fail("field 'timeout' must be a number of seconds >= 0")
  expect(cloud.wait_until, function() end, { interval = 0 }).to_fail("field 'interval' must be a number of seconds > 0")
end)

test("an unknown option is refused in the one wording, naming the nearest", function()
  expect(cloud.wait_until, function() return true end, { timout = 1 })
    .to_fail("bad argument #2 to 'cloud.wait_until' (unknown field 'timout', did you mean 'timeout'?)")
end)

test("cloud.sleep and cloud.clock: a short sleep is measured; bad arguments refused", function()
  local start = cloud.clock()
  cloud.sleep(0.02)
  expect(cloud.clock() - start >= 0.02).to_be_truthy()
  expect(cloud.sleep, -1).to_fail("seconds must be a non-negative number")
  expect(cloud.isatty, "stderr").to_fail("FILE* expected")
  expect(cloud.isatty(io.stdout)).to_be_a("boolean")
end)
