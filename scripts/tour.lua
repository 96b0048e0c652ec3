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
ok, err = pcall(cloud.cluster.update_snapshot, { SnapshotName = "no-such-snapshot", snapshot = {} })
print(("  kind=%s code=%s status=%d: %s"):format(err.kind, err.code, err.status, err.message))
local wrong = cloud.client{ credentials = { secret_access_key = "not-the-secret" } }
ok, err = pcall(wrong.cluster.update_snapshot, { SnapshotName = "snap-2", snapshot = {} })
print(("  wrong secret: kind=%s code=%s status=%d"):format(err.kind, err.code, err.status))

section("Signing without sending (cloud.sign)")
local signed = cloud.sign{
  method = "GET", url = "https://example.amazonaws.com/",
  region = "us-east-1", service = "service", dialect = "aws",
  access_key_id = "AKIDEXAMPLE", secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  time = "20150830T123600Z",
}
print("  " .. signed.authorization)

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
  local ok, err = pcall(cloud.devops.authorize_firewall_rules, {
    FirewallGroupName = "tour-fw", rules = { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } },
  })
  print(("  while PROCESSING: %s %d: %s"):format(err.code, err.status, err.message))
  emu.advance(10)
  local g = cloud.devops.authorize_firewall_rules{
    FirewallGroupName = "tour-fw", rules = { { protocol = "TCP", port = 443, cidrIp = "192.0.2.0/24" } },
  }
  print(("  10 s later: accepted, rule %s, group %s"):format(g.rules[1].state, g.state))

  section("Faults on demand (cloud.emulator.fault)")
  emu.fault{ operation = "UpdateSnapshot", times = 2, status = 503, code = "SlowDown" }
  local _, meta = cloud.cluster.update_snapshot{ SnapshotName = "snap-2", snapshot = {} }
  print(("  two 503 SlowDown answers, retried: HTTP %d after %d attempts"):format(meta.status, meta.attempts))
end
