#!/usr/bin/env bash
# The read operations and the named waiters against `cloudlua serve --settle`: the
# waits poll the server over HTTP in real time (no emulator in the client), and each
# transition takes the --settle duration, so every waiter ends in about a second.
source "$(dirname "$0")/lib.sh"

step "--settle refuses what is not a duration"
if "$CLOUDLUA" serve --settle soon >/dev/null 2>"$WORK/settle.err"; then fail "serve accepted --settle soon"; fi
grep -q "settle wants a duration" "$WORK/settle.err" || fail "message: $(cat "$WORK/settle.err")"

start_serve --settle 500ms

step "each waiter succeeds once its resource settles, polling the server"
lua '
  assert(cloud.emulator == nil, "the client must talk to serve, not to an emulator of its own")
  local fast = { delay = 0.2, max_attempts = 50, progress = false }
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c1" } }
  assert(cloud.cluster.get_cluster{ ClusterName = "c1" }.cluster.status == "PROVISIONING")
  local seen = 0
  local r, meta = cloud.wait_for("ClusterRunning", { ClusterName = "c1" },
                                 { delay = 0.2, max_attempts = 50, progress = function() seen = seen + 1 end })
  assert(r.cluster.status == "RUNNING" and meta.status == 200 and seen >= 1, "ClusterRunning after " .. seen)
  assert(cloud.wait_for("SnapshotAvailable", { SnapshotName = "snap-1" }, fast).snapshot.status == "AVAILABLE")
  cloud.devops.restore_instance{ backupId = "0123456789abcdef0123456789abcdef", instanceId = "code-1" }
  assert(cloud.wait_for("InstanceRunning", { InstanceId = "code-1" }, fast).instance.status.code == 100)
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-1", rules = { { protocol = "ICMP", cidrIp = "10.0.0.1" } } }
  assert(cloud.wait_for("FirewallGroupApplied", { FirewallGroupName = "fw-1" }, fast).firewallGroup.state == "APPLIED")
  assert(#cloud.wait_for("FirewallRuleAuthorized", { FirewallGroupName = "fw-1" }, fast).firewallGroup.rules == 2)
  local mesh = { ResourceGroupName = "rg-1", ClusterName = "mesh-1" }
  cloud.catalog.upgrade_meshplatform_service_mesh_version{ ResourceGroupName = "rg-1", ClusterName = "mesh-1" }
  assert(cloud.catalog.get_meshplatform_cluster(mesh).status == "configuring")
  assert(cloud.wait_for("MeshClusterRunning", mesh, fast).status == "running")
'

step "an unknown name is the platform's code over the wire; a waiter that runs out of tries is a timeout"
lua '
  local ok, err = pcall(cloud.wait_for, "ClusterRunning", { ClusterName = "nope" }, { delay = 0.1 })
  assert(not ok and err.kind == "api" and err.code == "Client.InvalidParameterNotFound.Cluster" and err.status == 404,
         tostring(err))
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-2", cluster = { name = "c2" } }
  ok, err = pcall(cloud.wait_for, "ClusterRunning", { ClusterName = "c2" }, { delay = 0.01, max_attempts = 2, progress = false })
  assert(not ok and err.kind == "timeout" and err.code == "WaitTimeout", tostring(err))
'
stop_serve TERM
echo "ok"
