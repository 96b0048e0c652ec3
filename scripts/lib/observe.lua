-- How the scripts in scripts/ see a resource's current state while they wait.
-- The spec shows no read operation ("Other operations of these APIs: not shown"), so
-- the only state a script can read is the embedded emulator's (cloud.emulator.state()).
-- Against a real endpoint these functions refuse with an error that says so,
-- and the scripts' --no-wait option skips the waiting instead of guessing at paths
-- the spec does not give.
local M = {}

local function no_reader(what)
  error(("cannot watch %s: the platform's read operations are not in the spec, so only the embedded " ..
         "emulator's state can be read; run with --no-wait against a real endpoint"):format(what), 0)
end

-- The first record of state()[list] for which match(record) is true, or nil.
local function find(list, what, match)
  local emulator = cloud.emulator
  if not emulator then no_reader(what) end
  for _, record in ipairs(emulator.state()[list] or {}) do
    if match(record) then return record end
  end
end

function M.firewall_group(name)
  return find("firewall_groups", "firewall group " .. name, function(g) return g.firewallGroupName == name end)
end

function M.instance(id)
  return find("instances", "server " .. id, function(i) return i.instanceId == id end)
end

function M.cluster(name)
  return find("clusters", "cluster " .. name, function(c) return c.name == name end)
end

function M.mesh_cluster(group, name)
  return find("mesh_clusters", "mesh cluster " .. name,
              function(c) return c.resourceGroupName == group and c.name == name end)
end

-- Whether the waits can be watched in this session.
function M.available() return cloud.emulator ~= nil end

return M
