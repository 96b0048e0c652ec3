-- How the scripts in scripts/ wait for a resource to settle.
--
-- wait(name, args, timeout): through the model's named waiter `name` (cloud.wait_for),
-- so the wait reads the platform with its read operations and works the same against
-- the embedded emulator (virtual time), `cloudlua serve` and a real endpoint. A script's
-- --timeout SECONDS becomes the waiter's number of tries (one every `delay` seconds).
--
-- mesh_cluster(group, name): the catalog API has no read operation in the model yet,
-- so the service-mesh cluster is read from the embedded emulator's state; against a
-- real endpoint this refuses, and upgrade_mesh.lua's --no-wait skips the waiting.
local M = {}

-- The tries that fit in `timeout` seconds with `delay` seconds between them.
local function attempts(timeout, delay)
  return math.max(1, math.floor(timeout / delay) + 1)
end

function M.wait(name, args, timeout)
  local opts = {}
  if timeout then
    for _, w in ipairs(cloud.waiters()) do
      if w.name == name then opts.max_attempts = attempts(tonumber(timeout), w.delay) end
    end
  end
  return cloud.wait_for(name, args, opts)
end

function M.mesh_cluster(group, name)
  local emulator = cloud.emulator
  if not emulator then
    error(("cannot watch mesh cluster %s: the catalog API has no read operation in the model, so only the " ..
           "embedded emulator's state can be read; run with --no-wait against a real endpoint"):format(name), 0)
  end
  for _, c in ipairs(emulator.state().mesh_clusters or {}) do
    if c.resourceGroupName == group and c.name == name then return c end
  end
end

return M
