-- cloud.wait_for and the model's named waiters: each waiter's success and failure
-- acceptors on the emulator's virtual time, the options, the time-out, API errors no
-- acceptor names, cloud.waiters() and help("ClusterRunning").

local emu = assert(cloud.emulator, "needs the embedded emulator")
local BACKUP = "0123456789abcdef0123456789abcdef"

before_each(function()
  emu.reset()
  emu.seed{ backups = { { backupId = BACKUP } }, snapshots = { { name = "snap-1" } },
            firewall_groups = { { firewallGroupName = "fw-web" } } }
end)

-- Runs the waiter, counting the tries that did not end it (through `progress`).
local function wait(name, args, opts)
  local seen = {}
  opts = opts or {}
  opts.progress = function(info) seen[#seen + 1] = info.status end
  local result, meta = cloud.wait_for(name, args, opts)
  return result, meta, seen
end

local function refused_by_acceptor(name, args, acceptor, status)
  local err = expect_error(function() cloud.wait_for(name, args) end, { kind = "waiter", code = "WaiterFailed" })
  expect(err.message).to_contain(name .. " failed: acceptor " .. acceptor .. " (failure when ")
  expect(err.message).to_contain("last seen: " .. status)
  return err
end

test("cloud.waiters() lists the model's waiters with their operation, delay and tries", function()
  local by_name = {}
  for _, w in ipairs(cloud.waiters()) do by_name[w.name] = w end
  expect({ by_name.ClusterRunning.operation, by_name.ClusterRunning.delay, by_name.ClusterRunning.max_attempts })
    .to_equal{ "GetCluster", 60, 40 }
  expect({ by_name.SnapshotAvailable.delay, by_name.SnapshotAvailable.max_attempts }).to_equal{ 20, 40 }
  expect({ by_name.FirewallRuleAuthorized.delay, by_name.FirewallRuleAuthorized.max_attempts }).to_equal{ 20, 20 }
  expect(by_name.FirewallGroupApplied.operation).to_equal("GetFirewallGroup")
  expect(by_name.InstanceRunning.operation).to_equal("GetInstance")
  expect(by_name.ClusterRunning.source).to_contain("hatoba.smithy")
  expect(by_name.ClusterRunning.acceptors[1]).to_equal{ state = "success", path = "cluster.status",
                                                          comparator = "equals", expected = "RUNNING" }
end)

test("ClusterRunning: GetCluster every 60 s until RUNNING; returns the last result and meta", function()
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
  local r, meta, seen = wait("ClusterRunning", { ClusterName = "c1" })
  expect(r.cluster.status).to_equal("RUNNING")
  expect(meta.status).to_equal(200)
  expect(seen).to_equal{ "PROVISIONING", "PROVISIONING" }  -- at 0 and 60 s; RUNNING at 120 s
end)

test("ClusterRunning fails on ERROR, DEGRADED and STOPPING, naming the acceptor", function()
  emu.seed{ clusters = { { name = "c-error", status = "ERROR" }, { name = "c-degraded", status = "DEGRADED" },
                         { name = "c-stopping", status = "STOPPING" } } }
  refused_by_acceptor("ClusterRunning", { ClusterName = "c-error" }, 2, "ERROR")
  refused_by_acceptor("ClusterRunning", { ClusterName = "c-degraded" }, 3, "DEGRADED")
  local err = refused_by_acceptor("ClusterRunning", { ClusterName = "c-stopping" }, 4, "STOPPING")
  expect(err.operation).to_equal("GetCluster")
  expect(tostring(err)).to_contain("waiter error in GetCluster: WaiterFailed: ClusterRunning failed")
end)

test("SnapshotAvailable: AVAILABLE again after a restore; FAILED fails", function()
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
  local r, _, seen = wait("SnapshotAvailable", { SnapshotName = "snap-1" })
  expect(r.snapshot.status).to_equal("AVAILABLE")
  expect(#seen).to_equal(6)  -- RESTORING at 0, 20, ..., 100 s; AVAILABLE at 120 s
  emu.seed{ snapshots = { { name = "snap-bad", status = "FAILED" } } }
  refused_by_acceptor("SnapshotAvailable", { SnapshotName = "snap-bad" }, 2, "FAILED")
end)

test("FirewallRuleAuthorized: every rule AUTHORIZED, or no rules at all", function()
  local r = wait("FirewallRuleAuthorized", { FirewallGroupName = "fw-web" })  -- no rules
  expect(r.firewallGroup.rules).to_equal({})
  emu.seed{ firewall_groups = { { firewallGroupName = "fw-moving", rules = {
    { protocol = "ICMP", cidrIp = "10.0.0.1", state = "AUTHORIZED" },
    { protocol = "TCP", port = 443, cidrIp = "10.0.0.2", state = "AUTHORIZING" } } } } }
  local moved, _, seen = wait("FirewallRuleAuthorized", { FirewallGroupName = "fw-moving" })
  expect({ moved.firewallGroup.rules[1].state, moved.firewallGroup.rules[2].state }).to_equal{ "AUTHORIZED", "AUTHORIZED" }
  expect(seen).to_equal{ "AUTHORIZED,AUTHORIZING" }  -- settles at 10 s, seen at 20 s
end)

test("FirewallRuleAuthorized has no failure acceptor: a failed rule runs out of tries", function()
  emu.seed{ firewall_groups = { { firewallGroupName = "fw-failed", state = "FAILED", rules = {
    { protocol = "ICMP", cidrIp = "10.0.0.1", state = "AUTH_FAILED" } } } } }
  local err = expect_error(function()
    cloud.wait_for("FirewallRuleAuthorized", { FirewallGroupName = "fw-failed" }, { max_attempts = 3, progress = false })
  end, { kind = "timeout", code = "WaitTimeout" })
  expect(err.message).to_equal("FirewallRuleAuthorized not reached after 3 tries (40 s); last seen: AUTH_FAILED")
end)

test("FirewallGroupApplied: APPLIED after PROCESSING; FAILED fails", function()
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-web", rules = { { protocol = "ICMP", cidrIp = "10.0.0.1" } } }
  local r, _, seen = wait("FirewallGroupApplied", { FirewallGroupName = "fw-web" })
  expect(r.firewallGroup.state).to_equal("APPLIED")
  expect(seen).to_equal{ "PROCESSING" }  -- delay 10 s, the emulator's firewall_settle
  emu.seed{ firewall_groups = { { firewallGroupName = "fw-bad", state = "PROCESSING", rules = {
    { protocol = "ICMP", cidrIp = "10.0.0.1", state = "AUTH_FAILED" } } } } }
  refused_by_acceptor("FirewallGroupApplied", { FirewallGroupName = "fw-bad" }, 2, "FAILED")
end)

test("InstanceRunning: RUNNING with status 100; any FAILED_* status name fails", function()
  cloud.devops.restore_instance{ backupId = BACKUP, instanceId = "code-1" }
  local r, _, seen = wait("InstanceRunning", { InstanceId = "code-1" })
  expect(r.instance.status).to_equal{ code = 100, name = "RUNNING" }
  expect(seen).to_equal{ "RESTORING", "RESTORING" }  -- at 0 and 30 s; RUNNING at 60 s
  emu.seed{ instances = { { instanceId = "code-bad", state = "FAILED",
                            status = { code = 400, name = "FAILED_INSTANCE_RESTORE" } } } }
  refused_by_acceptor("InstanceRunning", { InstanceId = "code-bad" }, 2, "FAILED_INSTANCE_RESTORE")
end)

test("MeshClusterRunning: GetMeshplatformCluster every 30 s until running; failed and deleting fail", function()
  emu.seed{ mesh_clusters = { { resourceGroupName = "rg-1", name = "m1" },
                              { resourceGroupName = "rg-1", name = "m-failed", status = "failed" },
                              { resourceGroupName = "rg-1", name = "m-deleting", status = "deleting" } } }
  cloud.catalog.upgrade_meshplatform_service_mesh_version{ ResourceGroupName = "rg-1", ClusterName = "m1", version = "1.22.1" }
  expect(cloud.catalog.get_meshplatform_cluster{ ResourceGroupName = "rg-1", ClusterName = "m1" }.status)
    .to_equal("configuring")
  local r, _, seen = wait("MeshClusterRunning", { ResourceGroupName = "rg-1", ClusterName = "m1" })
  expect({ r.status, r.meshplatformServiceMeshConfig.version }).to_equal{ "running", "1.22.1" }
  expect(seen).to_equal{ "configuring" }  -- at 0 s; running at 30 s
  refused_by_acceptor("MeshClusterRunning", { ResourceGroupName = "rg-1", ClusterName = "m-failed" }, 2, "failed")
  refused_by_acceptor("MeshClusterRunning", { ResourceGroupName = "rg-1", ClusterName = "m-deleting" }, 3, "deleting")
  expect_error(function() cloud.wait_for("MeshClusterRunning", { ResourceGroupName = "rg-2", ClusterName = "m1" }) end,
               { kind = "api", code = "ClusterNotFound", status = 404 })
end)

test("delay and max_attempts override the waiter's", function()
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
  local _, _, seen = wait("ClusterRunning", { ClusterName = "c1" }, { delay = 30 })
  expect(#seen).to_equal(4)  -- 0, 30, 60, 90 s; RUNNING at 120 s
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c2" } }
  expect(cloud.wait_for, "ClusterRunning", { ClusterName = "c2" }, { max_attempts = 2, progress = false })
    .to_fail{ kind = "timeout", code = "WaitTimeout", message = "ClusterRunning not reached after 2 tries (60 s); last seen: PROVISIONING" }
end)

test("an API error no acceptor names is raised as it is", function()
  expect(cloud.wait_for, "ClusterRunning", { ClusterName = "nope" })
    .to_fail{ kind = "api", code = "Client.InvalidParameterNotFound.Cluster", status = 404 }
end)

test("bad arguments are named", function()
  expect(cloud.wait_for, "NoSuchWaiter", {}).to_fail(
    "bad argument #1 to 'cloud.wait_for' (no waiter named 'NoSuchWaiter'; cloud.waiters() lists them)")
  expect(cloud.wait_for, 1).to_fail("bad argument #1 to 'cloud.wait_for' (string expected, got number)")
  expect(cloud.wait_for, "ClusterRunning", "c1").to_fail("bad argument #2 to 'cloud.wait_for' (table expected, got string)")
  expect(cloud.wait_for, "ClusterRunning", {}, { delay = 0 })
    .to_fail("bad argument #3 to 'cloud.wait_for' (field 'delay' must be a number of seconds > 0, got 0)")
  expect(cloud.wait_for, "ClusterRunning", {}, { max_attempts = 1.5 }).to_fail("field 'max_attempts' must be an integer >= 1")
  expect(cloud.wait_for, "ClusterRunning", {}, { progress = "yes" }).to_fail("field 'progress' must be a boolean or a function")
end)

test("a mistyped waiter name gets the nearest one", function()
  expect(cloud.wait_for, "ClusterRuning", {}).to_fail(
    "bad argument #1 to 'cloud.wait_for' (no waiter named 'ClusterRuning'; did you mean 'ClusterRunning'?)")
end)

test("an unknown option is refused in the one wording, naming the nearest", function()
  expect(cloud.wait_for, "ClusterRunning", { ClusterName = "c1" }, { dealy = 1 })
    .to_fail("bad argument #3 to 'cloud.wait_for' (unknown field 'dealy', did you mean 'delay'?)")
end)

test("help(\"ClusterRunning\") describes the waiter from the model", function()
  local out = {}
  local write = io.write
  io.write = function(...) for _, s in ipairs{ ... } do out[#out + 1] = s end end  -- luacheck: ignore 122
  help("ClusterRunning")
  io.write = write  -- luacheck: ignore 122
  local text = table.concat(out)
  expect(text).to_contain('cloud.wait_for("ClusterRunning", args')
  expect(text).to_contain("cloud.cluster.get_cluster (GetCluster) every 60 s, at most 40 tries")
  expect(text).to_contain('4. failure when cluster.status equals "STOPPING"')
  expect(text).to_contain("Source: vendor model hatoba.smithy")
end)
