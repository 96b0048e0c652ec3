#!/usr/bin/env bash
# The read operations and the named waiters against `cloudlua serve --settle`: the
# waits poll the server over HTTP in real time (no emulator in the client), and each
# transition takes the --settle duration, so every waiter ends in about a second. A
# script that reaches serve by CLOUDLUA_ENDPOINT_URL (cloud.emulator over the control
# plane) waits in real time too: serve's clock is not moved, nothing is recorded that
# the script did not ask for.
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
# Through CLOUDLUA_ENDPOINT_URL alone the script reaches serve's control plane too
# (cloud.emulator is there), yet serve is shared: its clock is real time, and a waiter
# that did not ask for virtual time (cloud.emulator.configure{ real_time = false })
# waits in real time rather than moving serve's clock on for everyone.
served() {
  env -u CLOUDLUA_ENDPOINT_STORAGE -u CLOUDLUA_ENDPOINT_CLUSTER -u CLOUDLUA_ENDPOINT_DEVOPS -u CLOUDLUA_ENDPOINT_CATALOG \
    CLOUDLUA_ENDPOINT_URL="$CLOUDLUA_ENDPOINT_STORAGE" "$@"
}

step "a waiter through CLOUDLUA_ENDPOINT_URL polls serve in real time; its recording holds only the script's calls"
served "$CLOUDLUA" --record "$WORK/waited" -e '
  assert(cloud.emulator, "cloud.emulator over serve'"'"'s control plane")
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-1", cluster = { name = "c3" } }
  local r = cloud.wait_for("ClusterRunning", { ClusterName = "c3" }, { delay = 0.2, max_attempts = 100, progress = false })
  assert(r.cluster.status == "RUNNING", r.cluster.status)
  cloud.sleep(0.2)
' || fail "the waiter through CLOUDLUA_ENDPOINT_URL failed"
grep -q '"operation":"GetCluster"' "$WORK/waited/cluster.jsonl" || fail "the waiter's polls were not recorded"
if grep -rq '_cloudlua/advance' "$WORK/waited"; then
  fail "the recording holds advance requests the script never made: $(grep -rh '_cloudlua/advance' "$WORK/waited" | head -c 300)"
fi

step "a long waiter through CLOUDLUA_ENDPOINT_URL, interrupted: serve's clock stays the machine's"
# The waiter pauses 120 s between tries; once it has tried (the mark), SIGTERM ends it
# (a background job ignores SIGINT).
# A waiter that skipped its pauses would have moved serve's clock 240 s on by then.
served MARK="$WORK/tried" "$CLOUDLUA" -e '
  cloud.wait_until(function() return false end, { interval = 120, timeout = 240, progress = function()
    assert(io.open(os.getenv("MARK"), "w")):close()
  end })' >/dev/null 2>&1 &
waiter=$!
for _ in $(seq 200); do [ -e "$WORK/tried" ] && break; sleep 0.05; done
[ -e "$WORK/tried" ] || fail "the waiter never tried"
kill -TERM "$waiter" 2>/dev/null || true
wait "$waiter" || true
modified=$(served "$CLOUDLUA" -e '
  cloud.storage.create_bucket{ Bucket = "clock" }
  cloud.storage.put_object{ Bucket = "clock", Object = "k", Body = "x" }
  print(cloud.storage.head_object{ Bucket = "clock", Object = "k" }.LastModified)') || fail "the PutObject failed"
ahead=$(($(date -d "$modified" +%s) - $(date +%s)))
# A bound on skew, not on speed: serve's clock may not run ahead of the machine's.
[ "$ahead" -lt 30 ] || fail "serve's clock is $ahead s ahead of the machine's after the waiter (Last-Modified $modified)"

stop_serve TERM
echo "ok"
