-- One end-to-end call per operation of the devops, cluster and catalog APIs through
-- Lua: validation, JSON, ext signing, HTTP to the embedded emulator, which answers as
-- the spec's table of observable moves says. Then, when the session has
-- cloud.emulator, the transitions settle as its virtual time is advanced.
-- Fails by raising an error.

local eq = dofile(arg[0]:match("^(.*/)") .. "support/check.lua").eq

local function empty(t, what)
  eq(type(t), "table", what .. " is a table")
  eq(next(t), nil, what .. " is empty")
end

local function refused(fn, args)
  local ok, err = pcall(fn, args)
  assert(not ok, "the call should have been refused")
  eq(type(err), "table", "error object")
  return err
end

local emu = cloud.emulator
if emu and emu.configure then emu.configure{ real_time = false } end  -- settle only when told

-- AuthorizeFirewallRules: the whole group, new rules AUTHORIZED, group PROCESSING
local g, meta = cloud.devops.authorize_firewall_rules{
  FirewallGroupName = "fw-1",
  rules = {
    { protocol = "TCP", port = 443, cidrIp = "198.51.100.0/24", description = "https" },
    { protocol = "ICMP", cidrIp = "192.0.2.10" },
  },
}
eq(meta.status, 200, "authorize: meta.status")
eq(g.firewallGroupName, "fw-1", "group not wrapped")
eq(g.state, "PROCESSING", "group PROCESSING")
eq(#g.rules, 3, "the fixture rule and the two new ones")
local https, ping = g.rules[2], g.rules[3]
eq(https.protocol, "TCP", "https rule protocol")
eq(https.port, 443, "https rule port")
eq(math.type(https.port), "integer", "port stays an integer")
eq(https.state, "AUTHORIZED", "https rule AUTHORIZED")
eq(type(https.id), "string", "rule id given by the platform")
eq(ping.protocol, "ICMP", "icmp rule protocol")
eq(ping.port, nil, "the ICMP rule carries no port")
eq(ping.state, "AUTHORIZED", "icmp rule AUTHORIZED")

local err = refused(cloud.devops.authorize_firewall_rules,
                    { FirewallGroupName = "fw-1", rules = { { protocol = "TCP", port = 22, cidrIp = "10.0.0.1" } } })
eq(err.kind, "api", "busy: kind")
eq(err.code, "FirewallGroupBusy", "busy: code")
eq(err.status, 409, "busy: status")
assert(err.message:find("PROCESSING"), "busy: message names the state: " .. err.message)

-- RestoreInstance: { instance } RESTORING, status 200, empty network config and versions
local r = cloud.devops.restore_instance{ backupId = "0123456789abcdef0123456789abcdef", instanceId = "code-1" }
local i = r.instance
eq(i.instanceId, "code-1", "instance id")
eq(i.state, "RESTORING", "instance state")
eq(i.status.code, 200, "status code")
eq(i.status.name, "RESTORING", "status name")
eq(i.publicIpAddress, "", "no global IP while restoring")
eq(i.instanceType, "e-large", "default instance type")
eq(i.availabilityZone, "east-11", "default zone of jp-east-1")
empty(i.networkConfig, "networkConfig")
empty(i.upgradableCodehostVersions, "upgradableCodehostVersions")
assert(i.createTime:match("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d UTC$"), "createTime form: " .. i.createTime)

-- RestoreClusterFromSnapshot: { cluster } PROVISIONING with empty node addresses
local c = cloud.cluster.restore_cluster_from_snapshot{
  SnapshotName = "snap-2",
  cluster = { name = "restored-1", locations = { "east-11" }, tags = { { key = "env", value = "qa" } } },
}
c = c.cluster
eq(c.name, "restored-1", "cluster name")
eq(c.status, "PROVISIONING", "cluster PROVISIONING")
eq(c.networkConfig.networkId, "net-COMMON_PRIVATE", "default network")
eq(c.addonsConfig.httpLoadBalancing.disabled, false, "add-on enabled by default")
eq(c.tags[1].key, "env", "tag key")
eq(type(c.tags[1].id), "string", "tag id")
local pool = c.nodePools[1]
eq(pool.status, "PROVISIONING", "node pool PROVISIONING")
assert(#pool.nodes > 0, "nodes")
for _, n in ipairs(pool.nodes) do
  eq(n.status, "PROVISIONING", "node PROVISIONING")
  eq(n.publicIpAddress, "", "empty public IP")
  eq(n.privateIpAddress, "", "empty private IP")
end
assert(c.nrn:match(":cluster:[%x-]+$"), "cluster nrn: " .. c.nrn)

-- UpgradeMeshplatformServiceMeshVersion: the whole cluster, configuring
local m = cloud.catalog.upgrade_meshplatform_service_mesh_version{
  ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.1",
}
eq(m.name, "mesh-1", "mesh cluster not wrapped")
eq(m.status, "configuring", "mesh configuring")
eq(m.meshplatformServiceMeshConfig.version, "1.22.1", "mesh version")
eq(m.meshplatformServiceMeshConfig.enabled, true, "mesh enabled")
eq(m.controlPlaneLoadBalancer.type, "elastic-load-balancer", "load balancer type")
eq(m.controlPlane.volumeSize, 100, "volume size")
err = refused(cloud.catalog.upgrade_meshplatform_service_mesh_version,
              { ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.2" })
eq(err.code, "ClusterBusy", "mesh busy: code")
eq(err.status, 409, "mesh busy: status")
err = refused(cloud.catalog.upgrade_meshplatform_service_mesh_version, { ResourceGroupName = "rg-9", ClusterName = "mesh-1" })
eq(err.code, "ClusterNotFound", "unknown resource group: code")
eq(err.status, 404, "unknown resource group: status")

-- settling, through the emulator's virtual time (default durations 10, 60, 120, 30 s)
if not (emu and emu.advance and emu.state) then
  print("operations_test: ok (cloud.emulator.advance absent: settling left to the unit tests)")
  return
end

local function find(list, field, value)
  for _, rec in ipairs(emu.state()[list]) do
    if rec[field] == value then return rec end
  end
  error(("no %s = %s in state().%s"):format(field, value, list), 2)
end

emu.advance(9)
eq(find("firewall_groups", "firewallGroupName", "fw-1").state, "PROCESSING", "still PROCESSING at 9 s")
emu.advance(1)
eq(find("firewall_groups", "firewallGroupName", "fw-1").state, "APPLIED", "APPLIED at 10 s")
eq(find("mesh_clusters", "name", "mesh-1").status, "configuring", "mesh still configuring at 10 s")
eq(find("instances", "instanceId", "code-1").state, "RESTORING", "still RESTORING at 10 s")
emu.advance(20)
eq(find("mesh_clusters", "name", "mesh-1").status, "running", "mesh running at 30 s")
emu.advance(30)
local running = find("instances", "instanceId", "code-1")
eq(running.state, "RUNNING", "instance RUNNING at 60 s")
eq(running.status.code, 100, "status code 100")
assert(running.publicIpAddress ~= "", "global IP filled in")
eq(find("snapshots", "name", "snap-2").status, "RESTORING", "snapshot RESTORING at 60 s")
emu.advance(60)
local cluster = find("clusters", "name", "restored-1")
eq(cluster.status, "RUNNING", "cluster RUNNING at 120 s")
eq(cluster.nodePools[1].status, "RUNNING", "pool RUNNING")
assert(cluster.nodePools[1].nodes[1].privateIpAddress:match("^10%."), "private IP filled in")
eq(find("snapshots", "name", "snap-2").status, "AVAILABLE", "snapshot AVAILABLE again")

-- once APPLIED, the group takes rules again; an identical rule is refused
local again = cloud.devops.authorize_firewall_rules{
  FirewallGroupName = "fw-1", rules = { { protocol = "TCP", port = 22, cidrIp = "10.0.0.1" } },
}
eq(#again.rules, 4, "rule added after settling")
emu.advance(10)
err = refused(cloud.devops.authorize_firewall_rules,
              { FirewallGroupName = "fw-1", rules = { { protocol = "TCP", port = 22, cidrIp = "10.0.0.1" } } })
eq(err.code, "DuplicateRule", "duplicate: code")
eq(err.status, 409, "duplicate: status")
print("operations_test: ok")
