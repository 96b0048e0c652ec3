-- A tour of cloudlua. Run it with `./setup.sh tour` (or `build/cloudlua scripts/tour.lua`).
-- With nothing configured it talks to the embedded emulator on 127.0.0.1, so it
-- works on a fresh machine without an account. Every result printed is real: it
-- went through validation, signing, HTTP and the emulator's checks.

local function section(title) print(("\n== %s"):format(title)) end

section("What can I call?")
for _, op in ipairs(cloud.operations()) do
  print(("  cloud.%s.%-42s %-6s %s"):format(op.api, op.fn, op.method, op.path))
end

section("Change a snapshot's settings (cloud.cluster.update_snapshot)")
local r, meta = cloud.cluster.update_snapshot{
  SnapshotName = "snap-1",
  snapshot = {
    description = "nightly, kept for the audit",
    expirationTime = "2030-01-31T00:00:00Z",
    tags = { { key = "env", value = "qa" }, { key = "owner", value = "platform-team" } },
  },
}
local s = r.snapshot
print(("  %s: %s, expires %s, status %s"):format(s.name, s.description, s.expirationTime, s.status))
for _, tag in ipairs(s.tags) do print(("  tag %s  %s=%s"):format(tag.id, tag.key, tag.value)) end
print(("  HTTP %d, request id %s, %d attempt(s), %.1f ms"):format(
  meta.status, meta.request_id, meta.attempts, meta.elapsed * 1000))

section("Rename it; later calls see the change")
cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { name = "snap-audit" } }
local again = cloud.cluster.update_snapshot{ SnapshotName = "snap-audit", snapshot = {} }
print("  now called " .. again.snapshot.name .. ", still tagged " .. again.snapshot.tags[1].key)

section("Bad input is caught before anything is sent, every problem at once")
local ok, err = pcall(cloud.cluster.update_snapshot, {
  SnapshotName = "snap-audit",
  snapshot = { name = "-Audit-", descripton = "typo", tags = { { key = ("k"):rep(129) } } },
})
print(("  ok=%s kind=%s code=%s"):format(ok, err.kind, err.code))
for _, f in ipairs(err.fields) do print(("  %s: %s"):format(f.path, f.problem)) end

section("Errors from the platform are values with a kind and a code")
err = select(2, pcall(cloud.cluster.update_snapshot, { SnapshotName = "no-such-snapshot", snapshot = {} }))
print(("  kind=%s code=%s status=%d: %s"):format(err.kind, err.code, err.status, err.message))
local wrong = cloud.client{ credentials = { secret_access_key = "not-the-secret" } }
err = select(2, pcall(wrong.cluster.update_snapshot, { SnapshotName = "snap-2", snapshot = {} }))
print(("  wrong secret: kind=%s code=%s status=%d"):format(err.kind, err.code, err.status))

section("Signing without sending (cloud.sign)")
local signed = cloud.sign{
  method = "GET", url = "https://example.amazonaws.com/",
  region = "us-east-1", service = "service", dialect = "aws",
  access_key_id = "AKIDEXAMPLE", secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  time = "20150830T123600Z",
}
print("  " .. signed.authorization)

-- ==================================================================== every operation
-- One call of each remaining operation of the model, with what came back.

section("Storage: a bucket, an object, a multipart upload, a file up and down (cloud.storage.*)")
local s3 = cloud.storage
s3.create_bucket{ Bucket = "tour" }
local put = s3.put_object{ Bucket = "tour", Object = "notes/hello world.txt", Body = "hello, tour" }
local got = s3.get_object{ Bucket = "tour", Object = "notes/hello world.txt", Range = "bytes=7-10" }
local head = s3.head_object{ Bucket = "tour", Object = "notes/hello world.txt" }
print(("  put %s, range %q (%s), head ETag %s"):format(put.ETag, got.Body, got.ContentRange, head.ETag))
local up = s3.create_multipart_upload{ Bucket = "tour", Object = "video/clip.bin" }
local first = s3.upload_part{ Bucket = "tour", Object = "video/clip.bin", uploadId = up.UploadId, partNumber = 1,
                              body = ("v"):rep(5 * 1024 * 1024) }  -- every part but the last: at least 5 MiB
local path = os.tmpname()
local f = assert(io.open(path, "wb"))
f:write("the end")
f:close()
local last = s3.upload_part{ Bucket = "tour", Object = "video/clip.bin", uploadId = up.UploadId, partNumber = 2,
                             file = path }  -- a part read from a file
os.remove(path)
local done, done_meta = s3.complete_multipart_upload{ Bucket = "tour", Object = "video/clip.bin", uploadId = up.UploadId,
  Part = { { PartNumber = 1, ETag = first.ETag }, { PartNumber = 2, ETag = last.ETag } } }
print(("  upload %s... completed: %s, ETag %s, version %s, %d attempt(s)"):format(
  up.UploadId:sub(1, 8), done.Location, done.ETag, done.VersionId, done_meta.attempts))
err = select(2, pcall(s3.complete_multipart_upload, { Bucket = "tour", Object = "video/clip.bin", uploadId = up.UploadId,
  Part = { { PartNumber = 2, ETag = last.ETag }, { PartNumber = 1, ETag = first.ETag } } }))
print(("  parts out of order: %s error, %s: %s"):format(err.kind, err.fields[1].path, err.fields[1].problem))
local abandoned = s3.create_multipart_upload{ Bucket = "tour", Object = "video/abandoned.bin" }
local _, abort_meta = s3.abort_multipart_upload{ Bucket = "tour", Object = "video/abandoned.bin",
                                                  uploadId = abandoned.UploadId }
print(("  aborted another upload: HTTP %d"):format(abort_meta.status))
-- a file of any size in one call: parts in parallel, read from disk as they go
path = os.tmpname()
f = assert(io.open(path, "wb"))
f:write(("0123456789abcdef"):rep(11 * 65536))  -- 11 MiB: parts of 5, 5 and 1 MiB
f:close()
local percents = {}
local file_up, file_meta = s3.upload_file{ Bucket = "tour", Object = "video/file.bin", file = path,
  part_size = 5 * 1024 * 1024, concurrency = 3,
  progress = function(done, total) percents[#percents + 1] = done * 100 // total end }  -- true: a line on stderr
local file_back = s3.download_file{ Bucket = "tour", Object = "video/file.bin", file = path .. ".back" }
os.remove(path)
os.remove(path .. ".back")
print(("  upload_file: %d bytes in %d parts, ETag %s, progress from %d%% to %d%%; download_file: %d bytes"):format(
  file_meta.size, file_meta.parts, file_up.ETag, percents[1], percents[#percents], file_back.ContentLength))

section("A folder and a bucket made the same (cloud.fs, cloud.storage.sync and check)")
local site = os.tmpname()
os.remove(site)
for name, text in pairs{ ["index.html"] = "<h1>tour</h1>", ["css/site.css"] = "h1 { color: teal }",
                         ["img/logo.svg"] = "<svg/>", ["drafts/todo.tmp"] = "later" } do
  cloud.fs.mkdir((site .. "/" .. name):match("^(.*)/"))
  f = assert(io.open(site .. "/" .. name, "wb"))
  f:write(text)
  f:close()
end
local plan = s3.sync{ from = site, to = { Bucket = "tour", Prefix = "www" }, exclude = { "*.tmp" }, dry_run = true,
  on_action = function(action, p) print(("  (dry run) %s %s"):format(action, p)) end }
local synced = s3.sync{ from = site, to = { Bucket = "tour", Prefix = "www" }, exclude = { "*.tmp" } }
local again_synced = s3.sync{ from = site, to = { Bucket = "tour", Prefix = "www" }, exclude = { "*.tmp" } }
print(("  planned %d copies; sync: %d copied (%d bytes); again: %d copied, %d the same"):format(
  plan.copied, synced.copied, synced.bytes, again_synced.copied, again_synced.skipped))
local down = s3.sync{ from = { Bucket = "tour", Prefix = "www" }, to = site .. "-copy" }
local report = s3.check{ from = site, to = { Bucket = "tour", Prefix = "www" } }
print(("  down again: %d files; check: %d the same, only here: %s"):format(
  down.copied, report.same, table.concat(report.only_in_from, ", ")))
cloud.fs.remove(site, { recursive = true })
cloud.fs.remove(site .. "-copy", { recursive = true })

section("Open HTTPS and ping on a firewall group (cloud.devops.authorize_firewall_rules)")
local g = cloud.devops.authorize_firewall_rules{
  FirewallGroupName = "fw-1",
  rules = {
    { protocol = "TCP", port = 443, cidrIp = "0.0.0.0/0", description = "https" },
    { protocol = "ICMP", cidrIp = "203.0.113.7", description = "監視サーバーからのping" },
  },
}
print(("  group %s is %s"):format(g.firewallGroupName, g.state))
for _, rule in ipairs(g.rules) do
  print(("  %-5s %-4s %-18s %s"):format(rule.protocol, rule.port or "-", rule.cidrIp, rule.state))
end

section("Restore a code-host server from a backup (cloud.devops.restore_instance)")
local inst = cloud.devops.restore_instance{ backupId = "0123456789abcdef0123456789abcdef", instanceId = "code-tour",
                                            diskSize = 200 }.instance
print(("  %s in %s: %s (status %d %s), %d GB, %s"):format(inst.instanceId, inst.availabilityZone, inst.state,
  inst.status.code, inst.status.name, inst.diskSize, inst.codehostUrl))

section("Restore a cluster from a snapshot (cloud.cluster.restore_cluster_from_snapshot)")
local cl = cloud.cluster.restore_cluster_from_snapshot{
  SnapshotName = "snap-2", cluster = { name = "tour-cluster", tags = { { key = "env", value = "tour" } } },
}.cluster
print(("  %s: %s, %d nodes, first node %s with IP %q"):format(cl.name, cl.status, cl.nodeCount,
  cl.nodePools[1].nodes[1].status, cl.nodePools[1].nodes[1].privateIpAddress))

section("Upgrade a service mesh (cloud.catalog.upgrade_meshplatform_service_mesh_version)")
local mesh = cloud.catalog.upgrade_meshplatform_service_mesh_version{
  ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.1",
}
print(("  %s: %s, mesh %s"):format(mesh.name, mesh.status, mesh.meshplatformServiceMeshConfig.version))

section("By name, and outside the model (cloud.call, cloud.request)")
local by_name = cloud.call("UpdateSnapshot", { SnapshotName = "snap-audit", snapshot = { description = "by name" } })
print("  cloud.call: " .. by_name.snapshot.description)
local raw = cloud.request{ api = "storage", method = "GET", path = "/tour/notes/hello%20world.txt" }
print(("  cloud.request: HTTP %d, %d bytes: %q"):format(raw.status, #raw.body, raw.body))

------------------------------------------------------------------ waiting and scripted tests
section("Waiting for a transition (cloud.wait_until)")
print(("  fw-1 was %s after the rules above; the group refuses more changes until APPLIED"):format(g.state))
if cloud.emulator then
  local tries = 0
  local applied = cloud.wait_until(function()
    tries = tries + 1
    for _, g in ipairs(cloud.emulator.state().firewall_groups) do
      if g.firewallGroupName == "fw-1" then return g.state == "APPLIED" and g, g.state end
    end
  end, { timeout = 120, interval = 5, what = "fw-1 APPLIED" })
  print(("  fw-1 is %s after %d tries, on the emulator's virtual time (no real waiting)"):format(applied.state, tries))
end
print("  scripts/ has ready-made automation; `cloudlua test tests/regression` runs the regression suites")

-- ---------------------------------------------------------------- the emulator
-- With the embedded emulator, cloud.emulator seeds it, faults it and moves its clock.
if cloud.emulator then
  local emu = cloud.emulator
  section("The emulator's clock: watch a restore settle (cloud.emulator.advance)")
  emu.configure{ real_time = false }  -- from here on time moves only when told
  local i = cloud.devops.restore_instance{
    backupId = "0123456789abcdef0123456789abcdef", instanceId = "tour-server",
  }.instance
  print(("  restore answered: %s, status %d %s, global IP %q"):format(
    i.state, i.status.code, i.status.name, i.publicIpAddress))
  for _, step in ipairs{ 30, 30 } do
    emu.advance(step)
    for _, s in ipairs(emu.state().instances) do
      if s.instanceId == "tour-server" then
        print(("  +%ds: %s, status %d %s, global IP %q"):format(
          step, s.state, s.status.code, s.status.name, s.publicIpAddress))
      end
    end
  end

  section("Seeded fixtures and rejections (cloud.emulator.seed)")
  emu.seed{ firewall_groups = { { firewallGroupName = "tour-fw", state = "PROCESSING" } } }
  local _, err = pcall(cloud.devops.authorize_firewall_rules, {
    FirewallGroupName = "tour-fw", rules = { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } },
  })
  print(("  while PROCESSING: %s %d: %s"):format(err.code, err.status, err.message))
  emu.advance(10)
  local g = cloud.devops.authorize_firewall_rules{
    FirewallGroupName = "tour-fw", rules = { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } },
  }
  print(("  10 s later: accepted, rule %s, group %s"):format(g.rules[1].state, g.state))

  section("Many calls at once (cloud.map): eight answers each 0.3 s away")
  emu.fault{ operation = "UpdateSnapshot", delay = 0.3, times = 8 }
  local names, started = {}, cloud.clock()
  for n = 1, 8 do names[n] = n % 2 == 1 and "snap-audit" or "snap-2" end
  local statuses = cloud.map(names, function(name)
    return cloud.cluster.update_snapshot{ SnapshotName = name, snapshot = {} }.snapshot.status
  end, { concurrency = 8 })
  print(("  %d answers (%s, ...) in %.1f s rather than %.1f s one after another"):format(
    #statuses, statuses[1], cloud.clock() - started, 8 * 0.3))

  section("Faults on demand (cloud.emulator.fault)")
  emu.fault{ operation = "UpdateSnapshot", times = 2, status = 503, code = "SlowDown" }
  local _, meta = cloud.cluster.update_snapshot{ SnapshotName = "snap-2", snapshot = {} }
  print(("  two 503 SlowDown answers, retried: HTTP %d after %d attempts"):format(meta.status, meta.attempts))
end
