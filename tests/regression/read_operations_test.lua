-- The read operations (GetInstance, GetFirewallGroup, GetCluster, GetSnapshot), through
-- the client: the method and path of the vendor's models, the wrapper member of each
-- answer, the state as it moves, and the platform's code for a name it does not know.
-- Run: cloudlua test tests/regression/read_operations_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local BACKUP = "0123456789abcdef0123456789abcdef"

before_each(function()
  emu.reset()
  emu.seed{ backups = { { backupId = BACKUP } }, snapshots = { { name = "snap-1", description = "nightly" } },
            firewall_groups = { { firewallGroupName = "fw-web" } } }
end)

test("GetInstance: { instance }, RESTORING then RUNNING", function()
  cloud.devops.restore_instance{ backupId = BACKUP, instanceId = "code-1" }
  local r, meta = cloud.devops.get_instance{ InstanceId = "code-1" }
  expect(meta.status).to_equal(200)
  expect(r.instance.status).to_equal{ code = 200, name = "RESTORING" }
  emu.advance(60)
  expect(cloud.devops.get_instance{ InstanceId = "code-1" }.instance.status).to_equal{ code = 100, name = "RUNNING" }
end)

test("GetFirewallGroup: { firewallGroup }, PROCESSING then APPLIED", function()
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-web", rules = { { protocol = "ICMP", cidrIp = "10.0.0.1" } } }
  local g = cloud.devops.get_firewall_group{ FirewallGroupName = "fw-web" }.firewallGroup
  expect({ g.firewallGroupName, g.state, #g.rules, g.rules[1].state }).to_equal{ "fw-web", "PROCESSING", 1, "AUTHORIZED" }
  emu.advance(10)
  expect(cloud.devops.get_firewall_group{ FirewallGroupName = "fw-web" }.firewallGroup.state).to_equal("APPLIED")
end)

test("GetCluster and GetSnapshot: { cluster } PROVISIONING then RUNNING, { snapshot } RESTORING then AVAILABLE", function()
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
  expect(cloud.cluster.get_cluster{ ClusterName = "c1" }.cluster.status).to_equal("PROVISIONING")
  expect(cloud.cluster.get_snapshot{ SnapshotName = "snap-1" }.snapshot.status).to_equal("RESTORING")
  emu.advance(120)
  local c = cloud.cluster.get_cluster{ ClusterName = "c1" }.cluster
  expect(c.status).to_equal("RUNNING")
  expect(c.nodePools[1].nodes[1].publicIpAddress).to_match("^%d+%.%d+%.%d+%.%d+$")
  local s = cloud.cluster.get_snapshot{ SnapshotName = "snap-1" }.snapshot
  expect({ s.status, s.description }).to_equal{ "AVAILABLE", "nightly" }
end)

test("an unknown name is refused with the platform's own code", function()
  expect(cloud.devops.get_instance, { InstanceId = "nope" })
    .to_fail{ kind = "api", status = 404, code = "Client.InvalidParameterNotFound.Instance", operation = "GetInstance" }
  expect(cloud.devops.get_firewall_group, { FirewallGroupName = "nope" })
    .to_fail{ kind = "api", status = 404, code = "Client.InvalidParameterNotFound.FirewallGroup" }
  expect(cloud.cluster.get_cluster, { ClusterName = "nope" })
    .to_fail{ kind = "api", status = 404, code = "Client.InvalidParameterNotFound.Cluster" }
  expect(cloud.cluster.get_snapshot, { SnapshotName = "nope" }).to_fail{ kind = "api", status = 404, code = "SnapshotNotFound" }
end)

test("a name is required: nothing is sent without it", function()
  expect(cloud.cluster.get_cluster, {}).to_fail{ kind = "validation", field = "ClusterName" }
end)
