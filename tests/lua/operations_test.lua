-- One end-to-end call per operation of the devops, cluster and catalog APIs through
-- Lua: validation, JSON, ext signing, HTTP to the embedded emulator, which answers as
-- the spec's table of observable moves says. Then, when the session has
-- cloud.emulator, the transitions settle as its virtual time is advanced.
-- Run: cloudlua test tests/lua/operations_test.lua

local emu = cloud.emulator
local g, g_meta, instance, cluster, mesh  -- the answers of the four calls, made by setup

setup(function()
  if emu then emu.configure{ real_time = false } end  -- settle only when told
  g, g_meta = cloud.devops.authorize_firewall_rules{
    FirewallGroupName = "fw-1",
    rules = {
      { protocol = "TCP", port = 443, cidrIp = "198.51.100.0/24", description = "https" },
      { protocol = "ICMP", cidrIp = "192.0.2.10" },
    },
  }
  instance = cloud.devops.restore_instance{ backupId = "0123456789abcdef0123456789abcdef", instanceId = "code-1" }.instance
  cluster = cloud.cluster.restore_cluster_from_snapshot{
    SnapshotName = "snap-2",
    cluster = { name = "restored-1", locations = { "east-11" }, tags = { { key = "env", value = "qa" } } },
  }.cluster
  mesh = cloud.catalog.upgrade_meshplatform_service_mesh_version{
    ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.1",
  }
end)

local function empty(t)
  expect(t).to_be_a("table")
  expect(next(t)).to_be_nil()
end

---------------------------------------------------------------- AuthorizeFirewallRules

test("AuthorizeFirewallRules answers the whole group, PROCESSING", function()
  expect(g_meta.status).to_equal(200)
  expect(g.firewallGroupName).to_equal("fw-1")  -- not wrapped
  expect(g.state).to_equal("PROCESSING")
  expect(#g.rules).to_equal(3)  -- the fixture rule and the two new ones
end)

test("AuthorizeFirewallRules: the new TCP rule AUTHORIZED, its port an integer, an id given", function()
  local https = g.rules[2]
  expect(https.protocol).to_equal("TCP")
  expect(https.port).to_equal(443)
  expect(https.port).to_be_a("integer")
  expect(https.state).to_equal("AUTHORIZED")
  expect(https.id).to_be_a("string")
end)

test("AuthorizeFirewallRules: the new ICMP rule AUTHORIZED, with no port", function()
  local ping = g.rules[3]
  expect(ping.protocol).to_equal("ICMP")
  expect(ping.port).to_be_nil()
  expect(ping.state).to_equal("AUTHORIZED")
end)

test("a PROCESSING group refuses rules, naming its state", function()
  local err = expect(cloud.devops.authorize_firewall_rules,
                     { FirewallGroupName = "fw-1", rules = { { protocol = "TCP", port = 22, cidrIp = "10.0.0.1" } } })
    .to_fail{ kind = "api", code = "FirewallGroupBusy", status = 409 }
  expect(err.message).to_contain("PROCESSING")
end)

---------------------------------------------------------------- RestoreInstance

test("RestoreInstance answers { instance } RESTORING with status 200", function()
  expect(instance.instanceId).to_equal("code-1")
  expect(instance.state).to_equal("RESTORING")
  expect(instance.status.code).to_equal(200)
  expect(instance.status.name).to_equal("RESTORING")
end)

test("RestoreInstance: no global IP, default type and zone, empty network config and versions", function()
  expect(instance.publicIpAddress).to_equal("")
  expect(instance.instanceType).to_equal("e-large")
  expect(instance.availabilityZone).to_equal("east-11")  -- the default zone of jp-east-1
  empty(instance.networkConfig)
  empty(instance.upgradableCodehostVersions)
  expect(instance.createTime).to_match("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d UTC$")
end)

test("a JSON answer that leaves a list out gives it as an empty list (a nested one too)", function()
  if not emu then skip("needs cloud.emulator.seed to store a server without the list") end
  emu.seed{ instances = { { instanceId = "code-no-versions", upgradableCodehostVersions = cloud.null } } }
  local got = cloud.devops.get_instance{ InstanceId = "code-no-versions" }.instance
  expect(got.instanceId).to_equal("code-no-versions")
  expect(got.upgradableCodehostVersions).to_equal{}
end)

---------------------------------------------------------------- RestoreClusterFromSnapshot

test("RestoreClusterFromSnapshot answers { cluster } PROVISIONING with defaults and tags", function()
  expect(cluster.name).to_equal("restored-1")
  expect(cluster.status).to_equal("PROVISIONING")
  expect(cluster.networkConfig.networkId).to_equal("net-COMMON_PRIVATE")
  expect(cluster.addonsConfig.httpLoadBalancing.disabled).to_equal(false)  -- enabled by default
  expect(cluster.tags[1].key).to_equal("env")
  expect(cluster.tags[1].id).to_be_a("string")
  expect(cluster.nrn).to_match(":cluster:[%x-]+$")
end)

test("RestoreClusterFromSnapshot: the pool and its nodes PROVISIONING, with empty addresses", function()
  local pool = cluster.nodePools[1]
  expect(pool.status).to_equal("PROVISIONING")
  expect(#pool.nodes > 0).to_be_truthy()
  for _, n in ipairs(pool.nodes) do
    expect(n.status).to_equal("PROVISIONING")
    expect(n.publicIpAddress).to_equal("")
    expect(n.privateIpAddress).to_equal("")
  end
end)

---------------------------------------------------------------- UpgradeMeshplatformServiceMeshVersion

test("UpgradeMeshplatformServiceMeshVersion answers the whole cluster, configuring", function()
  expect(mesh.name).to_equal("mesh-1")  -- not wrapped
  expect(mesh.status).to_equal("configuring")
  expect(mesh.meshplatformServiceMeshConfig.version).to_equal("1.22.1")
  expect(mesh.meshplatformServiceMeshConfig.enabled).to_equal(true)
  expect(mesh.controlPlaneLoadBalancer.type).to_equal("elastic-load-balancer")
  expect(mesh.controlPlane.volumeSize).to_equal(100)
end)

test("a configuring mesh refuses another upgrade", function()
  expect(cloud.catalog.upgrade_meshplatform_service_mesh_version,
         { ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.2" })
    .to_fail{ code = "ClusterBusy", status = 409 }
end)

test("an unknown resource group is ClusterNotFound", function()
  expect(cloud.catalog.upgrade_meshplatform_service_mesh_version, { ResourceGroupName = "rg-9", ClusterName = "mesh-1" })
    .to_fail{ code = "ClusterNotFound", status = 404 }
end)

---------------------------------------------------------------- settling on virtual time

-- Moves the emulator's clock to `seconds` after the calls (default durations: 10, 60,
-- 120 and 30 s), whichever cases ran before.
local now = 0
local function at(seconds)
  if not (emu and emu.advance and emu.state) then skip("cloud.emulator.advance absent: settling left to the unit tests") end
  emu.advance(seconds - now)
  now = seconds
end

local function find(list, field, value)
  for _, rec in ipairs(emu.state()[list]) do
    if rec[field] == value then return rec end
  end
  error(("no %s = %s in state().%s"):format(field, value, list), 2)
end

test("at 9 s the group is still PROCESSING", function()
  at(9)
  expect(find("firewall_groups", "firewallGroupName", "fw-1").state).to_equal("PROCESSING")
end)

test("at 10 s the group is APPLIED; the mesh still configuring, the instance still RESTORING", function()
  at(10)
  expect(find("firewall_groups", "firewallGroupName", "fw-1").state).to_equal("APPLIED")
  expect(find("mesh_clusters", "name", "mesh-1").status).to_equal("configuring")
  expect(find("instances", "instanceId", "code-1").state).to_equal("RESTORING")
end)

test("at 30 s the mesh is running", function()
  at(30)
  expect(find("mesh_clusters", "name", "mesh-1").status).to_equal("running")
end)

test("at 60 s the instance is RUNNING with a global IP; the snapshot still RESTORING", function()
  at(60)
  local running = find("instances", "instanceId", "code-1")
  expect(running.state).to_equal("RUNNING")
  expect(running.status.code).to_equal(100)
  expect(running.publicIpAddress).to_not_equal("")
  expect(find("snapshots", "name", "snap-2").status).to_equal("RESTORING")
end)

test("at 120 s the cluster and its pool are RUNNING with addresses; the snapshot AVAILABLE again", function()
  at(120)
  local c = find("clusters", "name", "restored-1")
  expect(c.status).to_equal("RUNNING")
  expect(c.nodePools[1].status).to_equal("RUNNING")
  expect(c.nodePools[1].nodes[1].privateIpAddress).to_match("^10%.")
  expect(find("snapshots", "name", "snap-2").status).to_equal("AVAILABLE")
end)

test("once APPLIED the group takes rules again; an identical rule is then refused", function()
  at(120)
  local rule = { protocol = "TCP", port = 22, cidrIp = "10.0.0.1" }
  local again = cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-1", rules = { rule } }
  expect(#again.rules).to_equal(4)
  at(130)
  expect(cloud.devops.authorize_firewall_rules, { FirewallGroupName = "fw-1", rules = { rule } })
    .to_fail{ code = "DuplicateRule", status = 409 }
end)
