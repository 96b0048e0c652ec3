-- Long values (issue 10, item 1): a value of any length is a validation error in the
-- client or a clean 4xx from the emulator, never a crash. Pattern fields, ISO 8601
-- times and path templates used to go through std::regex, which recurses once per
-- character: a 50,000-character instanceId killed the process with SIGSEGV.
-- Run: cloudlua test tests/regression/long_values_test.lua

local BACKUP = ("f"):rep(32)
local sizes = { { "50,000 characters", 50000 }, { "1 MB", 1024 * 1024 } }

-- A RestoreInstance body with `instance_id`, as the wire has it (plain ASCII: no escaping).
local function restore_body(instance_id)
  return ('{"backupId":"%s","instanceId":"%s"}'):format(BACKUP, instance_id)
end

for _, size in ipairs(sizes) do
  local what, n = size[1], size[2]
  test("an instanceId of " .. what .. " is a validation error, nothing sent", function()
    local err = expect(cloud.devops.restore_instance, { backupId = BACKUP, instanceId = ("a"):rep(n) })
      .to_fail{ kind = "validation", field = "instanceId", problem = "at most 30 characters" }
    expect(err.attempts).to_equal(0)
  end)

  test("an instanceId of " .. what .. " breaking the pattern is a validation error", function()
    expect(cloud.devops.restore_instance, { backupId = BACKUP, instanceId = ("a"):rep(n) .. "-" })
      .to_fail{ kind = "validation", field = "instanceId", problem = "lowercase letters, digits and hyphen" }
  end)

  test("a time of " .. what .. " is a validation error", function()
    expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1",
                                            snapshot = { expirationTime = "2026-01-01T00:00:00." .. ("1"):rep(n) } })
      .to_fail{ kind = "validation", field = "snapshot.expirationTime", problem = "ISO 8601" }
  end)

  test("the emulator answers a signed request with an instanceId of " .. what .. " with 400", function()
    local r = cloud.request{ api = "devops", method = "POST", path = "/v1/instances:restore",
                             headers = { ["Content-Type"] = "application/json" },
                             body = restore_body(("a"):rep(n) .. "-") }
    expect(r.status).to_equal(400)
    expect(r.body).to_contain('"code":"ValidationError"')
    expect(r.body).to_contain('"path":"instanceId"')
  end)

  test("the emulator answers a time of " .. what .. " with 400", function()
    local r = cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/snap-1",
                             headers = { ["Content-Type"] = "application/json" },
                             body = ('{"snapshot":{"expirationTime":"2026-01-01T00:00:00.%s"}}'):format(("1"):rep(n)) }
    expect(r.status).to_equal(400)
    expect(r.body).to_contain('"path":"snapshot.expirationTime"')
  end)
end

test("a path longer than the emulator takes is a clean 4xx", function()
  local r = cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/" .. ("a"):rep(50000),
                           headers = { ["Content-Type"] = "application/json" }, body = "{}" }
  expect(r.status >= 400 and r.status < 500).to_be_truthy()
end)

test("the emulator still answers after the long values", function()
  local r, meta = cloud.cluster.update_snapshot{ SnapshotName = "snap-1" }
  expect({ meta.status, r.snapshot.name }).to_equal{ 200, "snap-1" }
end)
