-- Opens SSH (TCP 22) and HTTPS (TCP 443) from one source on a code-host firewall
-- group, then waits until the group is APPLIED.
--
--   cloudlua scripts/open_firewall.lua GROUP CIDR [--no-wait] [--timeout SECONDS] [--poll SECONDS]
--   cloudlua scripts/open_firewall.lua fw-1 203.0.113.0/24
--
-- A group still PROCESSING an earlier change is waited for first. Rules the group
-- already has are reported as already open, so running the script twice is harmless.
-- The waits are the model's FirewallGroupApplied waiter (GetFirewallGroup every 10 s):
-- on the embedded emulator they pass its virtual time, against `cloudlua serve` or a
-- real endpoint they poll.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local observe = require("lib.observe")
local args = require("lib.args").parse({
  usage = "cloudlua scripts/open_firewall.lua GROUP CIDR [--no-wait] [--timeout SECONDS] [--poll SECONDS]",
  about = "Opens SSH (TCP 22) and HTTPS (TCP 443) from CIDR on the firewall group GROUP,\n" ..
          "then waits until the group is APPLIED.",
  positional = { "group", "cidr" },
  options = {
    { "no-wait", doc = "Send the rules, do not wait until the group is APPLIED" },
    { "timeout", value = "SECONDS", check = "seconds", doc = "Wait at most SECONDS (default 600)" },
    observe.poll_option,
  },
}, ...)
if not args then return end

local rules = {
  { protocol = "TCP", port = 22, cidrIp = args.cidr, description = "ssh" },
  { protocol = "TCP", port = 443, cidrIp = args.cidr, description = "https" },
}

local function wait_applied()
  if args.no_wait then return end
  return observe.wait("FirewallGroupApplied", { FirewallGroupName = args.group }, args.timeout, args.poll).firewallGroup
end

-- Adds the rules; true when added, false when the group has them already.
local function authorize(list)
  local ok, result = pcall(cloud.devops.authorize_firewall_rules, { FirewallGroupName = args.group, rules = list })
  if ok then return true, result end
  if type(result) == "table" and result.code == "DuplicateRule" then return false end
  error(result, 0)
end

-- Both rules in one request; when one exists already, each on its own.
local function open_all()
  wait_applied()
  if authorize(rules) then
    for _, r in ipairs(rules) do print(("opened TCP %d from %s"):format(r.port, r.cidrIp)) end
    return
  end
  for _, r in ipairs(rules) do
    wait_applied()
    print(authorize{ r } and ("opened TCP %d from %s"):format(r.port, r.cidrIp)
                          or ("TCP %d from %s was open already"):format(r.port, r.cidrIp))
  end
end

open_all()
local group = wait_applied()
if group then
  print(("firewall group %s is %s with %d rules"):format(group.firewallGroupName, group.state, #group.rules))
else
  print(("firewall group %s: changes sent; not waiting (--no-wait)"):format(args.group))
end
