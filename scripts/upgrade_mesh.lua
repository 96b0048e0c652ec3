-- Upgrades the service mesh of a container-platform cluster and waits until the
-- cluster is `running` again.
--
--   cloudlua scripts/upgrade_mesh.lua RESOURCE_GROUP CLUSTER [VERSION] [--no-wait] [--timeout SECONDS]
--   cloudlua scripts/upgrade_mesh.lua rg-1 mesh-1 1.22.1
--
-- Without VERSION the platform picks its default mesh version. Against the embedded
-- emulator the wait passes its virtual time; against a real endpoint give --no-wait
-- (the spec shows no operation to read a cluster's status).

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local args = require("lib.args").parse({
  usage = "cloudlua scripts/upgrade_mesh.lua RESOURCE_GROUP CLUSTER [VERSION] [--no-wait] [--timeout SECONDS]",
  about = "Upgrades the service mesh of CLUSTER in RESOURCE_GROUP (to VERSION, else the\n" ..
          "platform's default) and waits until the cluster is running again.",
  positional = { "group", "cluster", "version?" },
  options = {
    { "no-wait", doc = "Send the upgrade, do not wait until the cluster is running" },
    { "timeout", value = "SECONDS", check = "seconds", doc = "Wait at most SECONDS (default 1800)" },
  },
}, ...)
if not args then return end
local observe = require("lib.observe")

local c = cloud.catalog.upgrade_meshplatform_service_mesh_version{
  ResourceGroupName = args.group, ClusterName = args.cluster, version = args.version,
}
print(("upgrading the mesh of %s/%s to %s: %s"):format(args.group, c.name, c.meshplatformServiceMeshConfig.version, c.status))
if args.no_wait then return end

local done = cloud.wait_until(function()
  local now = observe.mesh_cluster(args.group, args.cluster)
  return now and now.status == "running" and now, now and now.status
end, { timeout = args.timeout or 1800, interval = 10, what = "cluster " .. args.cluster .. " running" })
print(("%s is %s with mesh %s"):format(done.name, done.status, done.meshplatformServiceMeshConfig.version))
