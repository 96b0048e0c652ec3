-- scripts/open_firewall.lua, run in this state against the embedded emulator: both
-- rules in one request, the wait for APPLIED (before and after), a second run that
-- finds the rules open, and the failures a user meets.

local emu = assert(cloud.emulator, "needs the embedded emulator")
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/open_firewall.lua")

local function group(name) return support.find(emu.state().firewall_groups, "firewallGroupName", name) end

before_each(function()
  emu.reset()
  emu.seed{ firewall_groups = { { firewallGroupName = "fw-web" } } }
end)

test("opens SSH and HTTPS in one request and waits until the group is APPLIED", function()
  local out = run("fw-web", "203.0.113.0/24")
  expect(out).to_equal{ "opened TCP 22 from 203.0.113.0/24", "opened TCP 443 from 203.0.113.0/24",
                        "firewall group fw-web is APPLIED with 2 rules" }
  local g = group("fw-web")
  expect(g.state).to_equal("APPLIED")
  expect({ g.rules[1].port, g.rules[2].port, g.rules[2].cidrIp }).to_equal{ 22, 443, "203.0.113.0/24" }
end)

test("waits first for a group still PROCESSING an earlier change", function()
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-web", rules = { { protocol = "ICMP", cidrIp = "10.0.0.1" } } }
  expect(group("fw-web").state).to_equal("PROCESSING")
  local out = run("fw-web", "198.51.100.7")
  expect(out[3]).to_equal("firewall group fw-web is APPLIED with 3 rules")
end)

test("a second run finds both rules open and changes nothing", function()
  run("fw-web", "203.0.113.0/24")
  local out = run("fw-web", "203.0.113.0/24")
  expect(out).to_equal{ "TCP 22 from 203.0.113.0/24 was open already", "TCP 443 from 203.0.113.0/24 was open already",
                        "firewall group fw-web is APPLIED with 2 rules" }
end)

test("one rule open already: the other is added on its own", function()
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-web",
    rules = { { protocol = "TCP", port = 443, cidrIp = "203.0.113.0/24" } } }
  local out = run("fw-web", "203.0.113.0/24")
  expect(out).to_equal{ "opened TCP 22 from 203.0.113.0/24", "TCP 443 from 203.0.113.0/24 was open already",
                        "firewall group fw-web is APPLIED with 2 rules" }
end)

test("--no-wait sends the change and returns while the group is PROCESSING", function()
  local out = run("fw-web", "203.0.113.0/24", "--no-wait")
  expect(out[3]).to_equal("firewall group fw-web: changes sent; not waiting (--no-wait)")
  expect(group("fw-web").state).to_equal("PROCESSING")
end)

test("failures: unknown group, a bad CIDR (nothing sent), a missing argument", function()
  expect(run, "fw-nope", "203.0.113.0/24").to_fail("no firewall group named 'fw-nope'")
  expect(run, "fw-web", "2001:db8::/32").to_fail{ kind = "validation", field = "rules[1].cidrIp" }
  expect(#group("fw-web").rules).to_equal(0)
  expect(run, "fw-web").to_fail("missing CIDR\nusage: cloudlua scripts/open_firewall.lua GROUP CIDR")
  expect(run, "fw-web", "10.0.0.1", "--bogus").to_fail("unknown option '--bogus'\nusage:")
  expect(run, "fw-web", "10.0.0.1", "--bogus").to_fail("(exit 2)")
end)

test("the waits read the group with GetFirewallGroup, never the emulator's state", function()
  local state = emu.state
  emu.state = function() error("the script read the emulator's state", 0) end
  local ok, out = pcall(run, "fw-web", "203.0.113.0/24")
  emu.state = state
  expect(ok).to_be(true)
  expect(out[3]).to_equal("firewall group fw-web is APPLIED with 2 rules")
end)
