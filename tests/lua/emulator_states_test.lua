-- Every transition of the spec's States section and every rejection the emulator
-- makes, through Lua: fixtures from cloud.emulator.seed, durations from
-- cloud.emulator.configure, time from cloud.emulator.advance (virtual only: the clock
-- does not run by itself here). Also configure's own refusals and the fault kinds that
-- emulator_test.lua leaves out. Fails by raising an error.

local emu = assert(cloud.emulator, "needs the embedded emulator")
emu.configure{ real_time = false }
local once = cloud.client{ max_attempts = 1 }  -- InvalidPart would be waited for and repeated

local function eq(actual, expected, what)
  if actual ~= expected then
    error(("%s: expected %s, got %s"):format(what, tostring(expected), tostring(actual)), 2)
  end
end

-- fn(...) must fail with an api error of `status` and `code`; returns the error.
local function refused(status, code, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected " .. code .. ", the call succeeded", 2) end
  if type(err) ~= "table" or err.code ~= code or err.status ~= status then
    error(("expected %d %s, got %s"):format(status, code, tostring(err)), 2)
  end
  eq(err.kind, "api", code .. ": kind")
  assert(err.message ~= "", code .. ": a message")
  assert(err.request_id ~= "", code .. ": a request id")
  return err
end

local function find(list, field, value)
  for _, rec in ipairs(emu.state()[list]) do
    if rec[field] == value then return rec end
  end
  error(("no %s = %s in state().%s"):format(field, tostring(value), list), 2)
end

local function authorize(group, rules)
  return cloud.devops.authorize_firewall_rules{ FirewallGroupName = group, rules = rules }
end
local ssh = { { protocol = "TCP", port = 22, cidrIp = "192.0.2.1" } }

-- ------------------------------------------------------------------ configure

local ok, msg = pcall(emu.configure, { firewall_setle = 1 })
assert(not ok and msg:find("no setting named 'firewall_setle'"), tostring(msg))
for _, known in ipairs{ "firewall_settle", "instance_restore", "cluster_provision", "mesh_upgrade",
                        "min_part_size", "real_time" } do
  assert(msg:find(known, 1, true), "known settings listed: " .. known .. " missing from " .. msg)
end
ok, msg = pcall(emu.configure, { mesh_upgrade = "soon" })
assert(not ok and msg:find("mesh_upgrade must be a number"), tostring(msg))
ok, msg = pcall(emu.configure, { mesh_upgrade = -1 })
assert(not ok and msg:find("must not be negative"), tostring(msg))
ok, msg = pcall(emu.configure, { real_time = 1 })
assert(not ok and msg:find("real_time must be a boolean"), tostring(msg))

-- ------------------------------------------------------------------ firewall groups and rules

emu.seed{ firewall_groups = {
  { firewallGroupName = "fw-adding",
    rules = { { protocol = "TCP", port = 22, cidrIp = "10.1.0.0/16", state = "AUTHORIZING" } } },
  { firewallGroupName = "fw-removing",
    rules = { { protocol = "ICMP", cidrIp = "10.2.0.0/16", state = "REVOKING" },
              { protocol = "TCP", port = 443, cidrIp = "10.3.0.0/16" } } },
  { firewallGroupName = "fw-failed", state = "FAILED",
    rules = { { protocol = "TCP", port = 22, cidrIp = "10.4.0.0/16", state = "AUTH_FAILED" } } },
} }

-- rules AUTHORIZING or REVOKING refuse operations, naming the state
local err = refused(409, "FirewallGroupBusy", authorize, "fw-adding", ssh)
assert(err.message:find("AUTHORIZING"), err.message)
err = refused(409, "FirewallGroupBusy", authorize, "fw-removing", ssh)
assert(err.message:find("REVOKING"), err.message)
refused(404, "FirewallGroupNotFound", authorize, "fw-none", ssh)

-- a FAILED group (a rule AUTH_FAILED) still takes requests, and settles FAILED again
local g = authorize("fw-failed", ssh)
eq(g.state, "PROCESSING", "failed group: PROCESSING after the request")
eq(g.rules[2].state, "AUTHORIZED", "failed group: the new rule AUTHORIZED in the answer")

-- after firewall_settle (10 s): AUTHORIZING -> AUTHORIZED, REVOKING -> gone, groups settled
emu.advance(9)
eq(find("firewall_groups", "firewallGroupName", "fw-adding").rules[1].state, "AUTHORIZING", "AUTHORIZING at 9 s")
refused(409, "FirewallGroupBusy", authorize, "fw-failed", ssh)
emu.advance(1)
local adding = find("firewall_groups", "firewallGroupName", "fw-adding")
eq(adding.rules[1].state, "AUTHORIZED", "AUTHORIZING -> AUTHORIZED")
eq(adding.state, "APPLIED", "group APPLIED")
local removing = find("firewall_groups", "firewallGroupName", "fw-removing")
eq(#removing.rules, 1, "the REVOKING rule is gone")
eq(removing.rules[1].port, 443, "the other rule stays")
eq(find("firewall_groups", "firewallGroupName", "fw-failed").state, "FAILED", "PROCESSING -> FAILED (a rule failed)")

-- group PROCESSING -> APPLIED, with a duration set by configure
emu.configure{ firewall_settle = 2 }
g = authorize("fw-adding", { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } })
eq(g.state, "PROCESSING", "PROCESSING after the request")
for _, r in ipairs(g.rules) do eq(r.state, "AUTHORIZED", "every rule AUTHORIZED in the answer") end
refused(409, "FirewallGroupBusy", authorize, "fw-adding", ssh)
emu.advance(1.5)
eq(find("firewall_groups", "firewallGroupName", "fw-adding").state, "PROCESSING", "PROCESSING at 1.5 s of 2")
emu.advance(0.5)
eq(find("firewall_groups", "firewallGroupName", "fw-adding").state, "APPLIED", "PROCESSING -> APPLIED at 2 s")
refused(409, "DuplicateRule", authorize, "fw-adding", { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } })

-- ------------------------------------------------------------------ code-host servers

local backup = ("b"):rep(32)
emu.seed{ backups = { { backupId = backup } } }
local function restore(args) return cloud.devops.restore_instance(args) end
refused(404, "BackupNotFound", restore, { backupId = ("f"):rep(32), instanceId = "code-x" })

emu.configure{ instance_restore = 5 }
local i = restore{ backupId = backup, instanceId = "code-1" }.instance
eq(i.state, "RESTORING", "(absent) -> RESTORING")
eq(i.status.code, 200, "status code 200 while restoring")
eq(i.status.name, "RESTORING", "status name RESTORING")
eq(i.publicIpAddress, "", "no global IP while restoring")
refused(409, "InstanceAlreadyExists", restore, { backupId = backup, instanceId = "code-1" })
emu.advance(4.9)
eq(find("instances", "instanceId", "code-1").state, "RESTORING", "RESTORING at 4.9 s of 5")
emu.advance(0.1)
i = find("instances", "instanceId", "code-1")
eq(i.state, "RUNNING", "RESTORING -> RUNNING")
eq(i.status.code, 100, "status code 100")
eq(i.status.name, "RUNNING", "status name RUNNING")
assert(i.publicIpAddress:match("^%d+%.%d+%.%d+%.%d+$"), "global IP filled in: " .. i.publicIpAddress)
refused(409, "InstanceAlreadyExists", restore, { backupId = backup, instanceId = "code-1" })

-- ------------------------------------------------------------------ clusters from snapshots

emu.seed{ snapshots = {
  { name = "snap-two-pools", cluster = { name = "src", kubernetesVersion = "1.28.9",
    nodePools = { { name = "web", instanceType = "e-large", nodeCount = 2 },
                  { name = "db", instanceType = "e-large16", nodeCount = 1 } } } },
  { name = "snap-creating", status = "CREATING" },
  { name = "snap-failed", status = "FAILED" },
} }
local function restore_cluster(snapshot, name)
  return cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = snapshot, cluster = { name = name } }
end
refused(404, "SnapshotNotFound", restore_cluster, "snap-none", "c-1")
refused(409, "SnapshotNotAvailable", restore_cluster, "snap-creating", "c-1")
refused(409, "SnapshotNotAvailable", restore_cluster, "snap-failed", "c-1")

emu.configure{ cluster_provision = 30 }
local c = restore_cluster("snap-two-pools", "c-1").cluster
eq(c.status, "PROVISIONING", "(absent) -> cluster PROVISIONING")
eq(c.nodeCount, 3, "nodes of both pools")
for _, pool in ipairs(c.nodePools) do
  eq(pool.status, "PROVISIONING", "node pool PROVISIONING")
  for _, n in ipairs(pool.nodes) do
    eq(n.status, "PROVISIONING", "node PROVISIONING")
    eq(n.publicIpAddress, "", "public IP empty while provisioning")
    eq(n.privateIpAddress, "", "private IP empty while provisioning")
  end
end
eq(find("snapshots", "name", "snap-two-pools").status, "RESTORING", "the snapshot RESTORING meanwhile")
refused(409, "SnapshotNotAvailable", restore_cluster, "snap-two-pools", "c-2")
refused(409, "ClusterAlreadyExists", restore_cluster, "snap-1", "c-1")
emu.advance(29)
eq(find("clusters", "name", "c-1").status, "PROVISIONING", "PROVISIONING at 29 s of 30")
emu.advance(1)
c = find("clusters", "name", "c-1")
eq(c.status, "RUNNING", "cluster PROVISIONING -> RUNNING")
local seen = {}
for _, pool in ipairs(c.nodePools) do
  eq(pool.status, "RUNNING", "node pool PROVISIONING -> RUNNING")
  for _, n in ipairs(pool.nodes) do
    eq(n.status, "RUNNING", "node PROVISIONING -> RUNNING")
    for _, ip in ipairs{ n.publicIpAddress, n.privateIpAddress } do
      assert(ip:match("^%d+%.%d+%.%d+%.%d+$"), "node address filled in: " .. ip)
      assert(not seen[ip], "addresses are distinct: " .. ip)
      seen[ip] = true
    end
  end
end
eq(find("snapshots", "name", "snap-two-pools").status, "AVAILABLE", "the snapshot AVAILABLE again")
refused(409, "ClusterAlreadyExists", restore_cluster, "snap-two-pools", "c-1")

-- UpdateSnapshot: settings change, the status stays AVAILABLE
local s = cloud.cluster.update_snapshot{ SnapshotName = "snap-two-pools", snapshot = { description = "changed" } }.snapshot
eq(s.status, "AVAILABLE", "UpdateSnapshot leaves AVAILABLE")
eq(s.description, "changed", "UpdateSnapshot changes the settings")
refused(404, "SnapshotNotFound", cloud.cluster.update_snapshot, { SnapshotName = "snap-none", snapshot = {} })

-- ------------------------------------------------------------------ service meshes

emu.seed{ mesh_clusters = { { resourceGroupName = "rg-9", name = "mesh-9", status = "warning" } } }
local function upgrade(group, name)
  return cloud.catalog.upgrade_meshplatform_service_mesh_version{ ResourceGroupName = group, ClusterName = name,
                                                                  version = "1.22.1" }
end
refused(404, "ClusterNotFound", upgrade, "rg-9", "mesh-none")
refused(404, "ClusterNotFound", upgrade, "rg-none", "mesh-9")
emu.configure{ mesh_upgrade = 3 }
eq(upgrade("rg-9", "mesh-9").status, "configuring", "any (warning) -> configuring")
refused(409, "ClusterBusy", upgrade, "rg-9", "mesh-9")
emu.advance(3)
eq(find("mesh_clusters", "name", "mesh-9").status, "running", "configuring -> running")

-- ------------------------------------------------------------------ multipart completion

local s3 = cloud.storage
s3.create_bucket{ Bucket = "parts" }
emu.configure{ min_part_size = 6 }
local up = s3.create_multipart_upload{ Bucket = "parts", Object = "k" }
local e1 = s3.upload_part{ Bucket = "parts", Object = "k", uploadId = up.UploadId, partNumber = 1, body = "12345" }.ETag
local e2 = s3.upload_part{ Bucket = "parts", Object = "k", uploadId = up.UploadId, partNumber = 2, body = "678" }.ETag
local function complete(parts, id)
  return once.storage.complete_multipart_upload{ Bucket = "parts", Object = "k", uploadId = id or up.UploadId, Part = parts }
end
err = refused(400, "EntityTooSmall", complete, { { PartNumber = 1, ETag = e1 }, { PartNumber = 2, ETag = e2 } })
refused(400, "InvalidPart", complete, { { PartNumber = 1, ETag = e2 } })
refused(400, "InvalidPart", complete, { { PartNumber = 3, ETag = e2 } })
refused(404, "NoSuchUpload", complete, { { PartNumber = 1, ETag = e1 } }, ("0"):rep(32))
-- no parts and parts out of order never leave the client (validation); sent raw, the
-- emulator refuses them too
local function raw_completion(xml)
  local r = cloud.request{ api = "storage", method = "POST", path = "/parts/k",
                           query = { uploadId = up.UploadId }, body = xml }
  return r.status, r.body:match("<Code>(.-)</Code>")
end
local ns = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
local status, code = raw_completion("<CompleteMultipartUpload " .. ns .. "></CompleteMultipartUpload>")
eq(status, 400, "no parts: status")
eq(code, "MalformedXML", "no parts: code")
local function part_xml(n, etag) return ("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>"):format(n, etag) end
status, code = raw_completion("<CompleteMultipartUpload " .. ns .. ">" .. part_xml(2, e2) .. part_xml(1, e1)
                              .. "</CompleteMultipartUpload>")
eq(status, 400, "parts out of order: status")
eq(code, "InvalidPartOrder", "parts out of order: code")
emu.configure{ min_part_size = 5 }
local done = complete{ { PartNumber = 1, ETag = e1 }, { PartNumber = 2, ETag = e2 } }
assert(done.ETag:match('%-2"$'), "completed once the minimum allows it: " .. done.ETag)
eq(s3.get_object{ Bucket = "parts", Object = "k" }.Body, "12345678", "the object")

-- ------------------------------------------------------------------ the 200-with-error fault

local up2 = s3.create_multipart_upload{ Bucket = "parts", Object = "k2" }
local p = s3.upload_part{ Bucket = "parts", Object = "k2", uploadId = up2.UploadId, partNumber = 1, body = "x" }.ETag
emu.fault{ operation = "CompleteMultipartUpload", error_in_200 = true, code = "InternalError",
           message = "We encountered an internal error. Please try again." }
err = select(2, pcall(once.storage.complete_multipart_upload,
                      { Bucket = "parts", Object = "k2", uploadId = up2.UploadId, Part = { { PartNumber = 1, ETag = p } } }))
eq(type(err), "table", "a 200 with an error body is an error")
eq(err.code, "InternalError", "200 with error: code")
eq(err.status, 200, "200 with error: status")
assert(err.message:find("internal error"), "200 with error: message " .. tostring(err.message))
eq(#emu.state().uploads, 1, "the fault answered instead of the platform: the upload is still open")
-- the fault is used up: the next completion goes through
eq(once.storage.complete_multipart_upload{ Bucket = "parts", Object = "k2", uploadId = up2.UploadId,
                                           Part = { { PartNumber = 1, ETag = p } } }.Key, "k2", "after the fault")
print("emulator_states_test: ok")
