-- Every transition of the spec's States section and every rejection the emulator
-- makes, through Lua: fixtures from cloud.emulator.seed, durations from
-- cloud.emulator.configure, time from cloud.emulator.advance (virtual only: the clock
-- does not run by itself here). Also configure's own refusals and the fault kinds that
-- emulator_test.lua leaves out. Every case starts from an empty emulator with the
-- default durations and builds what it needs (the steps of its section before it, as
-- functions), so --filter runs any one case alone.
-- Run: cloudlua test tests/lua/emulator_states_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local once = cloud.client{ max_attempts = 1 }  -- InvalidPart would be waited for and repeated

setup(function()
  emu.configure{ real_time = false }
end)

before_each(function()
  emu.reset()
  emu.configure{ firewall_settle = 10, instance_restore = 60, cluster_provision = 120, mesh_upgrade = 30,
                 min_part_size = 5 * 1024 * 1024 }
end)

-- fn(...) must fail with an api error of `status` and `code`, with a message and a
-- request id; returns the error.
local function refused(status, code, fn, ...)
  local err = expect(fn, ...).to_fail{ kind = "api", status = status, code = code }
  expect(err.message).to_not_equal("")
  expect(err.request_id).to_not_equal("")
  return err
end

local function find(list, field, value)
  for _, rec in ipairs(emu.state()[list]) do
    if rec[field] == value then return rec end
  end
  error(("no %s = %s in state().%s"):format(field, tostring(value), list), 2)
end

local IPV4 = "^%d+%.%d+%.%d+%.%d+$"

---------------------------------------------------------------- configure

test("configure refuses an unknown setting and lists the known ones", function()
  local err = expect(emu.configure, { zzz = 1 }).to_fail("no setting named 'zzz'")
  for _, known in ipairs{ "firewall_settle", "instance_restore", "cluster_provision", "mesh_upgrade",
                          "min_part_size", "real_time" } do
    expect(err).to_contain(known)
  end
end)

test("configure: a duration must be a number", function()
  expect(emu.configure, { mesh_upgrade = "soon" }).to_fail("mesh_upgrade must be a number")
end)

test("configure: a duration must not be negative", function()
  expect(emu.configure, { mesh_upgrade = -1 }).to_fail("must not be negative")
end)

test("configure: real_time must be a boolean", function()
  expect(emu.configure, { real_time = 1 }).to_fail("real_time must be a boolean")
end)

---------------------------------------------------------------- firewall groups and rules

local function authorize(group, rules)
  return cloud.devops.authorize_firewall_rules{ FirewallGroupName = group, rules = rules }
end
local ssh = { { protocol = "TCP", port = 22, cidrIp = "192.0.2.1" } }
local https = { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } }

-- Firewall groups with rules AUTHORIZING, REVOKING and AUTH_FAILED, and a request to
-- the FAILED one (which still takes requests); its answer.
local function groups_in_every_state()
  emu.seed{ firewall_groups = {
    { firewallGroupName = "fw-adding",
      rules = { { protocol = "TCP", port = 22, cidrIp = "10.1.0.0/16", state = "AUTHORIZING" } } },
    { firewallGroupName = "fw-removing",
      rules = { { protocol = "ICMP", cidrIp = "10.2.0.0/16", state = "REVOKING" },
                { protocol = "TCP", port = 443, cidrIp = "10.3.0.0/16" } } },
    { firewallGroupName = "fw-failed", state = "FAILED",
      rules = { { protocol = "TCP", port = 22, cidrIp = "10.4.0.0/16", state = "AUTH_FAILED" } } },
  } }
  return authorize("fw-failed", ssh)
end

-- The groups settled (10 s), then a rule added to fw-adding with firewall_settle = 2;
-- the answer.
local function settled_then_added()
  groups_in_every_state()
  emu.advance(10)
  emu.configure{ firewall_settle = 2 }
  return authorize("fw-adding", https)
end

test("a rule AUTHORIZING refuses operations, naming the state", function()
  groups_in_every_state()
  expect(refused(409, "FirewallGroupBusy", authorize, "fw-adding", ssh).message).to_contain("AUTHORIZING")
end)

test("a rule REVOKING refuses operations, naming the state", function()
  groups_in_every_state()
  expect(refused(409, "FirewallGroupBusy", authorize, "fw-removing", ssh).message).to_contain("REVOKING")
end)

test("an unknown group is Client.InvalidParameterNotFound.FirewallGroup", function()
  groups_in_every_state()
  refused(404, "Client.InvalidParameterNotFound.FirewallGroup", authorize, "fw-none", ssh)
end)

test("a FAILED group (a rule AUTH_FAILED) still takes requests", function()
  local g = groups_in_every_state()
  expect(g.state).to_equal("PROCESSING")
  expect(g.rules[2].state).to_equal("AUTHORIZED")  -- the new rule, in the answer
end)

test("at 9 s of firewall_settle (10 s) the rule is still AUTHORIZING and the group busy", function()
  groups_in_every_state()
  emu.advance(9)
  expect(find("firewall_groups", "firewallGroupName", "fw-adding").rules[1].state).to_equal("AUTHORIZING")
  refused(409, "FirewallGroupBusy", authorize, "fw-failed", ssh)
end)

test("at 10 s: AUTHORIZING -> AUTHORIZED, REVOKING -> gone, the groups settled", function()
  groups_in_every_state()
  emu.advance(10)
  local adding = find("firewall_groups", "firewallGroupName", "fw-adding")
  expect(adding.rules[1].state).to_equal("AUTHORIZED")
  expect(adding.state).to_equal("APPLIED")
  local removing = find("firewall_groups", "firewallGroupName", "fw-removing")
  expect(#removing.rules).to_equal(1)            -- the REVOKING rule is gone
  expect(removing.rules[1].port).to_equal(443)   -- the other rule stays
  expect(find("firewall_groups", "firewallGroupName", "fw-failed").state).to_equal("FAILED")  -- a rule failed
end)

test("a group PROCESSING after a request, every rule AUTHORIZED in the answer, busy meanwhile", function()
  local g = settled_then_added()
  expect(g.state).to_equal("PROCESSING")
  for _, r in ipairs(g.rules) do expect(r.state).to_equal("AUTHORIZED") end
  refused(409, "FirewallGroupBusy", authorize, "fw-adding", ssh)
end)

test("a group is PROCESSING at 1.5 s of firewall_settle = 2", function()
  settled_then_added()
  emu.advance(1.5)
  expect(find("firewall_groups", "firewallGroupName", "fw-adding").state).to_equal("PROCESSING")
end)

test("PROCESSING -> APPLIED at 2 s; an identical rule is then DuplicateRule", function()
  settled_then_added()
  emu.advance(2)
  expect(find("firewall_groups", "firewallGroupName", "fw-adding").state).to_equal("APPLIED")
  refused(409, "DuplicateRule", authorize, "fw-adding", https)
end)

---------------------------------------------------------------- code-host servers

local backup = ("b"):rep(32)
local function restore(args) return cloud.devops.restore_instance(args) end

-- A backup seeded and code-1 restored from it with instance_restore = 5; the answer.
local function restored_instance()
  emu.seed{ backups = { { backupId = backup } } }
  emu.configure{ instance_restore = 5 }
  return restore{ backupId = backup, instanceId = "code-1" }.instance
end

test("an unknown backup is BackupNotFound", function()
  emu.seed{ backups = { { backupId = backup } } }
  refused(404, "BackupNotFound", restore, { backupId = ("f"):rep(32), instanceId = "code-x" })
end)

test("(absent) -> RESTORING: status 200, no global IP; the id is taken", function()
  local i = restored_instance()
  expect(i.state).to_equal("RESTORING")
  expect(i.status.code).to_equal(200)
  expect(i.status.name).to_equal("RESTORING")
  expect(i.publicIpAddress).to_equal("")
  refused(409, "InstanceAlreadyExists", restore, { backupId = backup, instanceId = "code-1" })
end)

test("RESTORING at 4.9 s of instance_restore = 5", function()
  restored_instance()
  emu.advance(4.9)
  expect(find("instances", "instanceId", "code-1").state).to_equal("RESTORING")
end)

test("RESTORING -> RUNNING at 5 s: status 100, a global IP; the id still taken", function()
  restored_instance()
  emu.advance(5)
  local i = find("instances", "instanceId", "code-1")
  expect(i.state).to_equal("RUNNING")
  expect(i.status.code).to_equal(100)
  expect(i.status.name).to_equal("RUNNING")
  expect(i.publicIpAddress).to_match(IPV4)
  refused(409, "InstanceAlreadyExists", restore, { backupId = backup, instanceId = "code-1" })
end)

---------------------------------------------------------------- clusters from snapshots

local function restore_cluster(snapshot, name)
  return cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = snapshot, cluster = { name = name } }
end

-- Snapshots: one of two pools, one plain (snap-1), one CREATING, one FAILED.
local function snapshots_seeded()
  emu.seed{ snapshots = {
    { name = "snap-two-pools", cluster = { name = "src", kubernetesVersion = "1.28.9",
      nodePools = { { name = "web", instanceType = "e-large", nodeCount = 2 },
                    { name = "db", instanceType = "e-large16", nodeCount = 1 } } } },
    { name = "snap-1" },
    { name = "snap-creating", status = "CREATING" },
    { name = "snap-failed", status = "FAILED" },
  } }
end

-- c-1 restored from the two-pool snapshot with cluster_provision = 30; the answer.
local function restored_cluster()
  snapshots_seeded()
  emu.configure{ cluster_provision = 30 }
  return restore_cluster("snap-two-pools", "c-1").cluster
end

for _, case in ipairs{
  { "an unknown snapshot is SnapshotNotFound", 404, "SnapshotNotFound", "snap-none" },
  { "a CREATING snapshot is SnapshotNotAvailable", 409, "SnapshotNotAvailable", "snap-creating" },
  { "a FAILED snapshot is SnapshotNotAvailable", 409, "SnapshotNotAvailable", "snap-failed" },
} do
  test(case[1], function()
    snapshots_seeded()
    refused(case[2], case[3], restore_cluster, case[4], "c-1")
  end)
end

test("(absent) -> cluster PROVISIONING, every pool and node too, addresses empty", function()
  local c = restored_cluster()
  expect(c.status).to_equal("PROVISIONING")
  expect(c.nodeCount).to_equal(3)  -- the nodes of both pools
  for _, pool in ipairs(c.nodePools) do
    expect(pool.status).to_equal("PROVISIONING")
    for _, n in ipairs(pool.nodes) do
      expect(n.status).to_equal("PROVISIONING")
      expect(n.publicIpAddress).to_equal("")
      expect(n.privateIpAddress).to_equal("")
    end
  end
end)

test("the snapshot is RESTORING meanwhile and refuses another restore", function()
  restored_cluster()
  expect(find("snapshots", "name", "snap-two-pools").status).to_equal("RESTORING")
  refused(409, "SnapshotNotAvailable", restore_cluster, "snap-two-pools", "c-2")
end)

test("a cluster name in use is ClusterAlreadyExists", function()
  restored_cluster()
  refused(409, "ClusterAlreadyExists", restore_cluster, "snap-1", "c-1")
end)

test("PROVISIONING at 29 s of cluster_provision = 30", function()
  restored_cluster()
  emu.advance(29)
  expect(find("clusters", "name", "c-1").status).to_equal("PROVISIONING")
end)

test("PROVISIONING -> RUNNING at 30 s: the cluster, its pools and nodes, with distinct addresses", function()
  restored_cluster()
  emu.advance(30)
  local c = find("clusters", "name", "c-1")
  expect(c.status).to_equal("RUNNING")
  local seen = {}
  for _, pool in ipairs(c.nodePools) do
    expect(pool.status).to_equal("RUNNING")
    for _, n in ipairs(pool.nodes) do
      expect(n.status).to_equal("RUNNING")
      for _, ip in ipairs{ n.publicIpAddress, n.privateIpAddress } do
        expect(ip).to_match(IPV4)
        expect(seen[ip]).to_be_nil()  -- addresses are distinct
        seen[ip] = true
      end
    end
  end
end)

test("the snapshot is AVAILABLE again; the cluster's name still taken", function()
  restored_cluster()
  emu.advance(30)
  expect(find("snapshots", "name", "snap-two-pools").status).to_equal("AVAILABLE")
  refused(409, "ClusterAlreadyExists", restore_cluster, "snap-two-pools", "c-1")
end)

test("UpdateSnapshot after a restore changes the settings and leaves the status AVAILABLE", function()
  restored_cluster()
  emu.advance(30)
  local s = cloud.cluster.update_snapshot{ SnapshotName = "snap-two-pools", snapshot = { description = "changed" } }.snapshot
  expect(s.status).to_equal("AVAILABLE")
  expect(s.description).to_equal("changed")
end)

test("UpdateSnapshot renames a snapshot in place: the new name keeps its settings, the old name is gone", function()
  restored_cluster()
  emu.advance(30)
  cloud.cluster.update_snapshot{ SnapshotName = "snap-two-pools",
                                 snapshot = { description = "kept", tags = { { key = "k", value = "v" } } } }
  local s = cloud.cluster.update_snapshot{ SnapshotName = "snap-two-pools", snapshot = { name = "snap-renamed" } }.snapshot
  expect(s.name).to_equal("snap-renamed")
  expect(s.description).to_equal("kept")
  expect(s.tags[1].key).to_equal("k")
  expect(s.status).to_equal("AVAILABLE")
  local got = cloud.cluster.get_snapshot{ SnapshotName = "snap-renamed" }.snapshot
  expect(got.description).to_equal("kept")
  expect(got.tags[1].value).to_equal("v")
  refused(404, "SnapshotNotFound", cloud.cluster.get_snapshot, { SnapshotName = "snap-two-pools" })
end)

test("UpdateSnapshot of an unknown snapshot is SnapshotNotFound", function()
  refused(404, "SnapshotNotFound", cloud.cluster.update_snapshot, { SnapshotName = "snap-none", snapshot = {} })
end)

---------------------------------------------------------------- service meshes

local function upgrade(group, name)
  return cloud.catalog.upgrade_meshplatform_service_mesh_version{ ResourceGroupName = group, ClusterName = name,
                                                                  version = "1.22.1" }
end

-- mesh-9 of rg-9 seeded in status warning, and mesh_upgrade = 3.
local function mesh_seeded()
  emu.seed{ mesh_clusters = { { resourceGroupName = "rg-9", name = "mesh-9", status = "warning" } } }
  emu.configure{ mesh_upgrade = 3 }
end

test("an unknown mesh cluster or resource group is ClusterNotFound", function()
  mesh_seeded()
  refused(404, "ClusterNotFound", upgrade, "rg-9", "mesh-none")
  refused(404, "ClusterNotFound", upgrade, "rg-none", "mesh-9")
end)

test("any status (warning) -> configuring; busy meanwhile", function()
  mesh_seeded()
  expect(upgrade("rg-9", "mesh-9").status).to_equal("configuring")
  refused(409, "ClusterBusy", upgrade, "rg-9", "mesh-9")
end)

test("configuring -> running after mesh_upgrade", function()
  mesh_seeded()
  upgrade("rg-9", "mesh-9")
  emu.advance(3)
  expect(find("mesh_clusters", "name", "mesh-9").status).to_equal("running")
end)

---------------------------------------------------------------- multipart completion

local s3 = cloud.storage

-- An upload of "k" to bucket "parts" with parts "12345" and "678", min_part_size = 6:
-- the upload id and the two ETags.
local function upload_of_two_parts()
  s3.create_bucket{ Bucket = "parts" }
  emu.configure{ min_part_size = 6 }
  local id = s3.create_multipart_upload{ Bucket = "parts", Object = "k" }.UploadId
  local e1 = s3.upload_part{ Bucket = "parts", Object = "k", uploadId = id, partNumber = 1, body = "12345" }.ETag
  local e2 = s3.upload_part{ Bucket = "parts", Object = "k", uploadId = id, partNumber = 2, body = "678" }.ETag
  return id, e1, e2
end

local function complete(id, parts)
  return once.storage.complete_multipart_upload{ Bucket = "parts", Object = "k", uploadId = id, Part = parts }
end

-- No parts and parts out of order never leave the client (validation); sent raw,
-- the emulator refuses them too. Returns the status and the error code.
local function raw_completion(id, parts_xml)
  local r = cloud.request{ api = "storage", method = "POST", path = "/parts/k", query = { uploadId = id },
    body = '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' .. parts_xml
           .. "</CompleteMultipartUpload>" }
  return r.status, r.body:match("<Code>(.-)</Code>")
end
local function part_xml(n, etag) return ("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>"):format(n, etag) end

test("a part smaller than min_part_size (not the last) is EntityTooSmall", function()
  local id, e1, e2 = upload_of_two_parts()
  refused(400, "EntityTooSmall", complete, id, { { PartNumber = 1, ETag = e1 }, { PartNumber = 2, ETag = e2 } })
end)

test("another part's ETag is InvalidPart", function()
  local id, _, e2 = upload_of_two_parts()
  refused(400, "InvalidPart", complete, id, { { PartNumber = 1, ETag = e2 } })
end)

test("a part never uploaded is InvalidPart", function()
  local id, _, e2 = upload_of_two_parts()
  refused(400, "InvalidPart", complete, id, { { PartNumber = 3, ETag = e2 } })
end)

test("an unknown upload is NoSuchUpload", function()
  local _, e1 = upload_of_two_parts()
  refused(404, "NoSuchUpload", complete, ("0"):rep(32), { { PartNumber = 1, ETag = e1 } })
end)

test("no parts, sent raw: 400 MalformedXML", function()
  local status, code = raw_completion((upload_of_two_parts()), "")
  expect(status).to_equal(400)
  expect(code).to_equal("MalformedXML")
end)

test("parts out of order, sent raw: 400 InvalidPartOrder", function()
  local id, e1, e2 = upload_of_two_parts()
  local status, code = raw_completion(id, part_xml(2, e2) .. part_xml(1, e1))
  expect(status).to_equal(400)
  expect(code).to_equal("InvalidPartOrder")
end)

test("the upload completes once the minimum allows it", function()
  local id, e1, e2 = upload_of_two_parts()
  emu.configure{ min_part_size = 5 }
  local done = complete(id, { { PartNumber = 1, ETag = e1 }, { PartNumber = 2, ETag = e2 } })
  expect(done.ETag).to_match('%-2"$')
  expect(s3.get_object{ Bucket = "parts", Object = "k" }.Body).to_equal("12345678")
end)

---------------------------------------------------------------- the 200-with-error fault

-- An upload of "k2" with one part, and the fault queued for its completion: the
-- arguments of the completion.
local function completion_with_fault()
  s3.create_bucket{ Bucket = "parts" }
  local id = s3.create_multipart_upload{ Bucket = "parts", Object = "k2" }.UploadId
  local etag = s3.upload_part{ Bucket = "parts", Object = "k2", uploadId = id, partNumber = 1, body = "x" }.ETag
  emu.fault{ operation = "CompleteMultipartUpload", error_in_200 = true, code = "InternalError",
             message = "We encountered an internal error. Please try again." }
  return { Bucket = "parts", Object = "k2", uploadId = id, Part = { { PartNumber = 1, ETag = etag } } }
end

test("a 200 answer with an error body is an error; the fault answered instead of the platform", function()
  local err = expect(once.storage.complete_multipart_upload, completion_with_fault())
    .to_fail{ code = "InternalError", status = 200 }
  expect(err).to_be_a("table")
  expect(err.message).to_contain("internal error")
  expect(#emu.state().uploads).to_equal(1)  -- the upload is still open
end)

test("the fault is used up: the next completion goes through", function()
  local args = completion_with_fault()
  expect(once.storage.complete_multipart_upload, args).to_fail{ code = "InternalError" }
  expect(once.storage.complete_multipart_upload(args).Key).to_equal("k2")
end)
