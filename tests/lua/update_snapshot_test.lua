-- UpdateSnapshot end to end through Lua: validation, JSON, ext signing, HTTP to the
-- embedded emulator, which verifies the signature, changes its stored snapshot and
-- answers { snapshot = ... } as the spec shapes it.
-- Run: cloudlua test tests/lua/update_snapshot_test.lua

local DESCRIPTION = "説明つきのスナップショット"  -- UTF-8 kept intact
local r, meta  -- the result and meta of the first call, made by setup

setup(function()
  r, meta = cloud.cluster.update_snapshot{
    SnapshotName = "snap-1",
    snapshot = {
      description = DESCRIPTION,
      expirationTime = "2031-05-01T10:00:00Z",
      tags = { { key = "env", value = "qa" } },
    },
  }
end)

test("the result is wrapped in snapshot and holds what was sent", function()
  local s = r.snapshot
  expect(s).to_be_a("table")
  expect(s.name).to_equal("snap-1")
  expect(s.description).to_equal(DESCRIPTION)
  expect(s.expirationTime).to_equal("2031-05-01T10:00:00Z")
end)

test("an update leaves the status AVAILABLE", function()
  expect(r.snapshot.status).to_equal("AVAILABLE")
end)

test("tags come back with an id given by the platform", function()
  local tags = r.snapshot.tags
  expect(#tags).to_equal(1)
  expect(tags[1].key).to_equal("env")
  expect(tags[1].value).to_equal("qa")
  expect(tags[1].id).to_be_a("string")
end)

test("integers stay integers", function()
  expect(r.snapshot.cluster.nodePools[1].nodeCount).to_be_a("integer")
end)

test("the nrn has the platform's shape", function()
  expect(r.snapshot.nrn).to_match("^nrn:[^:]+:cluster:[^:]+:[^:]+:snapshot:[%x-]+$")
end)

test("meta: status, attempts, the request id from the header, elapsed time", function()
  expect(meta.status).to_equal(200)
  expect(meta.attempts).to_equal(1)
  expect(meta.request_id).to_not_equal("")
  expect(meta.request_id).to_equal(meta.headers["x-ext-request-id"])
  expect(meta.elapsed > 0).to_be_truthy()
end)

-- Before any rename, while snap-1 and snap-2 both exist.
test("renaming onto an existing snapshot is refused", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-2", snapshot = { name = "snap-1" } })
    .to_fail{ code = "SnapshotAlreadyExists", status = 409 }
end)

test("what one call changed, the next call sees", function()
  cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { name = "snap-renamed" } }
  local again = cloud.cluster.update_snapshot{ SnapshotName = "snap-renamed", snapshot = {} }
  expect(again.snapshot.description).to_equal(DESCRIPTION)
  expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
    .to_fail{ code = "SnapshotNotFound", status = 404 }
end)

-- An empty table is sent as [] because the model says list.
test("an empty tag list clears the tags", function()
  cloud.cluster.update_snapshot{ SnapshotName = "snap-2", snapshot = { tags = { { key = "env", value = "qa" } } } }
  local cleared = cloud.cluster.update_snapshot{ SnapshotName = "snap-2", snapshot = { tags = {} } }
  expect(cleared.snapshot.tags).to_be_a("table")
  expect(#cleared.snapshot.tags).to_equal(0)
end)

test("the same operation through cloud.call", function()
  local via_call = cloud.call("UpdateSnapshot", { SnapshotName = "snap-2", snapshot = { description = "x" } })
  expect(via_call.snapshot.description).to_equal("x")
end)
