-- AuthorizeFirewallRules (POST /v1/firewallGroups/{FirewallGroupName}/rules): new
-- rules AUTHORIZED and the group PROCESSING, then APPLIED; the refusals of the spec's
-- Errors rule 2 (group PROCESSING, a rule AUTHORIZING or REVOKING) and the obvious ones;
-- every limit of the rule fields.
-- Run: cloudlua test tests/regression/authorize_firewall_rules_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local ssh = { protocol = "TCP", port = 22, cidrIp = "203.0.113.0/24", description = "ssh" }

before_each(function()
  emu.reset()
  emu.seed{ firewall_groups = {
    { firewallGroupName = "fw-1", availabilityZone = "east-11" },
    { firewallGroupName = "fw-busy", state = "PROCESSING" },
    { firewallGroupName = "fw-adding", rules = { { protocol = "TCP", port = 22, cidrIp = "10.0.0.1", state = "AUTHORIZING" } } },
    { firewallGroupName = "fw-removing", rules = { { protocol = "TCP", port = 443, cidrIp = "10.0.0.2", state = "REVOKING" } } },
  } }
end)

local function authorize(rules, group)
  return cloud.devops.authorize_firewall_rules{ FirewallGroupName = group or "fw-1", rules = rules }
end

local function group_state(name)
  for _, g in ipairs(emu.state().firewall_groups) do if g.firewallGroupName == name then return g.state, g end end
end

test("adds TCP and ICMP rules: rules AUTHORIZED, group PROCESSING, then APPLIED", function()
  local g, meta = authorize{ ssh, { protocol = "ICMP", cidrIp = "192.0.2.10", description = "ping" } }
  expect(meta.status).to_equal(200)
  expect({ g.firewallGroupName, g.state, #g.rules }).to_equal{ "fw-1", "PROCESSING", 2 }
  expect({ g.rules[1].protocol, g.rules[1].port, g.rules[1].state }).to_equal{ "TCP", 22, "AUTHORIZED" }
  expect(g.rules[1].id).to_be_a("string")
  expect(g.rules[2].port).to_be_nil()  -- the ICMP rule carries no port at all
  expect(g.region).to_be_a("string")
  local applied = cloud.wait_until(function()
    local state, group = group_state("fw-1")
    return state == "APPLIED" and group, state
  end, { timeout = 120, interval = 2, what = "fw-1 APPLIED" })
  expect(#applied.rules).to_equal(2)
end)

test("a PROCESSING group refuses operations (409 FirewallGroupBusy)", function()
  expect(authorize, { ssh }, "fw-busy").to_fail{ kind = "api", code = "FirewallGroupBusy", status = 409, message = "PROCESSING" }
end)

test("a group just changed refuses the next change until it is APPLIED", function()
  authorize{ ssh }
  local https = { protocol = "TCP", port = 443, cidrIp = "0.0.0.0/0" }
  expect(authorize, { https }).to_fail{ code = "FirewallGroupBusy" }
  cloud.wait_until(function() return group_state("fw-1") == "APPLIED" end, { timeout = 120, interval = 1 })
  expect(#authorize({ https }).rules).to_equal(2)
end)

test("a rule AUTHORIZING makes the group refuse operations", function()
  expect(authorize, { ssh }, "fw-adding").to_fail{ code = "FirewallGroupBusy", status = 409, message = "AUTHORIZING" }
end)

test("a rule REVOKING makes the group refuse operations", function()
  expect(authorize, { ssh }, "fw-removing").to_fail{ code = "FirewallGroupBusy", status = 409, message = "REVOKING" }
end)

test("an unknown group is refused with 404", function()
  expect(authorize, { ssh }, "fw-nope").to_fail{ kind = "api", code = "Client.InvalidParameterNotFound.FirewallGroup", status = 404 }
end)

test("a rule the group already has is refused with 409 DuplicateRule", function()
  authorize{ ssh }
  cloud.wait_until(function() return group_state("fw-1") == "APPLIED" end, { timeout = 120, interval = 5 })
  expect(authorize, { ssh }).to_fail{ code = "DuplicateRule", status = 409 }
end)

test("no rules, or a rule without protocol or source, is refused before anything is sent", function()
  -- a fault queued for the operation would fail the first request that reached the platform
  emu.fault{ operation = "AuthorizeFirewallRules", status = 409, code = "ReachedThePlatform" }
  local err = expect(authorize, {}).to_fail{ kind = "validation", field = "rules", problem = "at least 1 item (got 0)" }
  expect(err.attempts).to_equal(0)
  expect(authorize, nil).to_fail{ kind = "validation", field = "rules", problem = "required" }
  expect(authorize, { { port = 22, cidrIp = "10.1.1.1" } })
    .to_fail{ kind = "validation", field = "rules[1].protocol", problem = "required" }
  expect(authorize, { { protocol = "ICMP" } }).to_fail{ kind = "validation", field = "rules[1].cidrIp", problem = "required" }
  expect(authorize, { ssh }).to_fail{ code = "ReachedThePlatform" }
end)

test("cloud.null is the ICMP rule's port left out, and refused where a value is needed", function()
  local g = authorize{ { protocol = "ICMP", port = cloud.null, cidrIp = "192.0.2.10" } }
  expect(g.rules[1].port).to_be_nil()
  expect(authorize, { { protocol = "TCP", port = cloud.null, cidrIp = "10.1.1.1" } })
    .to_fail{ kind = "validation", field = "rules[1].port", problem = "required when protocol is TCP" }
  expect(authorize, { { protocol = "ICMP", cidrIp = cloud.null } })
    .to_fail{ kind = "validation", field = "rules[1].cidrIp", problem = "string expected, got cloud.null" }
end)

test("port: 22 or 443 only", function()
  expect(authorize{ { protocol = "TCP", port = 443, cidrIp = "10.1.1.1" } }.rules[1].port).to_equal(443)
  for _, port in ipairs{ 80, 21, 444, 0, -22 } do
    expect(authorize, { { protocol = "TCP", port = port, cidrIp = "10.1.1.1" } })
      .to_fail{ kind = "validation", field = "rules[1].port", problem = "must be 22 or 443" }
  end
end)

test("port: required when protocol is TCP, left out for ICMP", function()
  expect(authorize, { { protocol = "TCP", cidrIp = "10.1.1.1" } })
    .to_fail{ kind = "validation", field = "rules[1].port", problem = "required when protocol is TCP" }
  expect(authorize, { ssh, { protocol = "ICMP", port = 22, cidrIp = "10.1.1.1" } })
    .to_fail{ kind = "validation", field = "rules[2].port" }
end)

test("protocol: TCP or ICMP", function()
  expect(authorize, { { protocol = "UDP", cidrIp = "10.1.1.1" } })
    .to_fail{ kind = "validation", field = "rules[1].protocol", problem = "must be TCP or ICMP" }
end)

test("cidrIp: an IPv4 address or CIDR block only", function()
  local g = authorize{ { protocol = "ICMP", cidrIp = "0.0.0.0/0" }, { protocol = "TCP", port = 22, cidrIp = "255.255.255.255/32" } }
  expect(g.rules[2].cidrIp).to_equal("255.255.255.255/32")
  for _, bad in ipairs{ "::1", "2001:db8::/32", "10.0.0.0/33", "256.1.1.1", "10.0.0", "example.com" } do
    expect(authorize, { { protocol = "ICMP", cidrIp = bad } }).to_fail{ kind = "validation", field = "rules[1].cidrIp" }
  end
end)

test("description: at most 40 characters, full-width or half-width", function()
  local wide = ("ファ"):rep(20)  -- 40 full-width characters, 120 bytes
  expect(authorize{ { protocol = "ICMP", cidrIp = "10.0.0.9", description = wide } }.rules[1].description).to_equal(wide)
  expect(authorize, { { protocol = "ICMP", cidrIp = "10.0.0.9", description = wide .. "x" } })
    .to_fail{ kind = "validation", field = "rules[1].description", problem = "at most 40 characters (got 41)" }
  expect(authorize, { { protocol = "ICMP", cidrIp = "10.0.0.9", description = ("x"):rep(41) } })
    .to_fail{ kind = "validation", field = "rules[1].description" }
end)

test("every broken rule is reported at once with its position, nothing is sent", function()
  local err = expect(authorize, { ssh, { protocol = "TCP", port = 80, cidrIp = "::1" },
                                  { protocol = "ICMP", cidrIp = "1.2.3.4", descripton = "x" } })
    .to_fail{ kind = "validation" }
  local paths = {}
  for _, f in ipairs(err.fields) do paths[#paths + 1] = f.path end
  table.sort(paths)
  expect(paths).to_equal{ "rules[2].cidrIp", "rules[2].port", "rules[3].descripton" }
  expect(group_state("fw-1")).to_equal("APPLIED")
end)
