-- Upgrades the service mesh of a container-platform cluster and waits until the
-- cluster is `running` again.
--
--   cloudlua scripts/upgrade_mesh.lua RESOURCE_GROUP CLUSTER [VERSION] [--no-wait] [--timeout SECONDS] [--poll SECONDS]
--   cloudlua scripts/upgrade_mesh.lua rg-1 mesh-1 1.22.1
--
-- Without VERSION the platform picks its default mesh version. The wait is the model's
-- MeshClusterRunning waiter (GetMeshplatformCluster every 30 s): on the embedded
-- emulator it passes its virtual time, against `cloudlua serve` or a real endpoint it
-- polls.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local observe = require("lib.observe")
local args = require("lib.args").parse({
  usage = "cloudlua scripts/upgrade_mesh.lua RESOURCE_GROUP CLUSTER [VERSION] [--no-wait] [--timeout SECONDS] [--poll SECONDS]",
  about = "Upgrades the service mesh of CLUSTER in RESOURCE_GROUP (to VERSION, else the\n" ..
          "platform's default) and waits until the cluster is running again.",
  positional = { "group", "cluster", "version?" },
  options = {
    { "no-wait", doc = "Send the upgrade, do not wait until the cluster is running" },
    { "timeout", value = "SECONDS", check = "seconds", doc = "Wait at most SECONDS (default 1800)" },
    observe.poll_option,
  },
}, ...)
if not args then return end

local c = cloud.catalog.upgrade_meshplatform_service_mesh_version{
  ResourceGroupName = args.group, ClusterName = args.cluster, version = args.version,
}
print(("upgrading the mesh of %s/%s to %s: %s"):format(args.group, c.name, c.meshplatformServiceMeshConfig.version, c.status))
if args.no_wait then return end

local done = observe.wait("MeshClusterRunning", { ResourceGroupName = args.group, ClusterName = args.cluster },
                          args.timeout, args.poll)
print(("%s is %s with mesh %s"):format(done.name, done.status, done.meshplatformServiceMeshConfig.version))
