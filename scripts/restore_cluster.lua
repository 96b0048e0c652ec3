-- Restores a container cluster from a snapshot, with tags, and waits until every node
-- of every node pool has its IP addresses.
--
--   cloudlua scripts/restore_cluster.lua SNAPSHOT CLUSTER [KEY=VALUE ...] [--description TEXT]
--            [--location ZONE] [--no-wait] [--timeout SECONDS] [--poll SECONDS]
--   cloudlua scripts/restore_cluster.lua snap-1 restored-1 env=qa owner=platform-team
--
-- Prints one line per node (pool, name, zone, private and public address). The restore
-- is sent once. The wait is the model's ClusterRunning waiter (GetCluster every 60 s):
-- on the embedded emulator it passes its virtual time, against `cloudlua serve` or a
-- real endpoint it polls. A running cluster's nodes have their addresses.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local observe = require("lib.observe")
local spec = {
  usage = "cloudlua scripts/restore_cluster.lua SNAPSHOT CLUSTER [KEY=VALUE ...] [--description TEXT] " ..
          "[--location ZONE] [--no-wait] [--timeout SECONDS] [--poll SECONDS]",
  about = "Restores the container cluster CLUSTER from SNAPSHOT, each KEY=VALUE a tag, and\n" ..
          "waits until every node of every node pool has its IP addresses.",
  positional = { "snapshot", "cluster" },
  options = {
    { "description", value = "TEXT", doc = "Description of the cluster" },
    { "location", value = "ZONE", doc = "Zone of the cluster" },
    { "no-wait", doc = "Send the restore, do not wait for the nodes' addresses" },
    { "timeout", value = "SECONDS", check = "seconds", doc = "Wait at most SECONDS (default 3600)" },
    observe.poll_option,
  },
}

-- KEY=VALUE arguments become tags; the rest goes to the argument parser.
local rest, tags = {}, {}
for _, a in ipairs{ ... } do
  local key, value = a:match("^([^-][^=]*)=(.*)$")
  if key then tags[#tags + 1] = { key = key, value = value } else rest[#rest + 1] = a end
end
local args = require("lib.args").parse(spec, table.unpack(rest))
if not args then return end

local c = cloud.cluster.restore_cluster_from_snapshot{
  SnapshotName = args.snapshot,
  cluster = { name = args.cluster, description = args.description, tags = tags,
              locations = args.location and { args.location } or nil },
}
c = c.cluster
print(("restoring %s from %s: %s, %d nodes, tags %d"):format(c.name, args.snapshot, c.status, c.nodeCount, #c.tags))
if args.no_wait then return end

local ready = observe.wait("ClusterRunning", { ClusterName = args.cluster }, args.timeout, args.poll).cluster
print(("%s is %s"):format(ready.name, ready.status))
for _, pool in ipairs(ready.nodePools) do
  for _, node in ipairs(pool.nodes) do
    print(("  %-10s %-20s %-10s %-15s %s"):format(pool.name, node.name, node.availabilityZone,
                                                 node.privateIpAddress, node.publicIpAddress))
  end
end
