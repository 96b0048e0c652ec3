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

------------------------------------------------------------------ waiting and scripted tests
section("Waiting for a transition (cloud.wait_until)")
local group = cloud.devops.authorize_firewall_rules{
  FirewallGroupName = "fw-1", rules = { { protocol = "TCP", port = 443, cidrIp = "198.51.100.0/24" } },
}
print(("  fw-1 is %s after adding HTTPS"):format(group.state))
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
