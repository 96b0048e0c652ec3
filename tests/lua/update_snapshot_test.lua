-- UpdateSnapshot end to end through Lua: validation, JSON, ext signing, HTTP to the
-- embedded emulator, which verifies the signature, changes its stored snapshot and
-- answers { snapshot = ... } as the spec shapes it. Fails by raising an error.

local function eq(actual, expected, what)
  if actual ~= expected then
    error(("%s: expected %s, got %s"):format(what, tostring(expected), tostring(actual)), 2)
  end
end

-- the result and meta of a successful call
local r, meta = cloud.cluster.update_snapshot{
  SnapshotName = "snap-1",
  snapshot = {
    description = "説明つきのスナップショット",  -- UTF-8 kept intact
    expirationTime = "2031-05-01T10:00:00Z",
    tags = { { key = "env", value = "qa" } },
  },
}
local s = r.snapshot
eq(type(s), "table", "result wrapped in snapshot")
eq(s.name, "snap-1", "name")
eq(s.description, "説明つきのスナップショット", "description")
eq(s.expirationTime, "2031-05-01T10:00:00Z", "expirationTime")
eq(s.status, "AVAILABLE", "status unchanged by an update")
eq(#s.tags, 1, "one tag")
eq(s.tags[1].key, "env", "tag key")
eq(s.tags[1].value, "qa", "tag value")
eq(type(s.tags[1].id), "string", "tag id given by the platform")
eq(math.type(s.cluster.nodePools[1].nodeCount), "integer", "integers stay integers")
assert(s.nrn:match("^nrn:[^:]+:cluster:[^:]+:[^:]+:snapshot:[%x-]+$"), "nrn shape: " .. s.nrn)
eq(meta.status, 200, "meta.status")
eq(meta.attempts, 1, "meta.attempts")
assert(meta.request_id ~= "" and meta.request_id == meta.headers["x-ext-request-id"], "request id from the header")
assert(meta.elapsed > 0, "elapsed time measured")

-- what one call changed, the next call sees
cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { name = "snap-renamed" } }
local again = cloud.cluster.update_snapshot{ SnapshotName = "snap-renamed", snapshot = {} }
eq(again.snapshot.description, "説明つきのスナップショット", "state kept across calls")
local ok, err = pcall(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = {} })
eq(ok, false, "old name gone")
eq(err.code, "SnapshotNotFound", "old name gone: code")
eq(err.status, 404, "old name gone: status")

-- an empty tag list clears the tags (an empty table is sent as [] because the model says list)
local cleared = cloud.cluster.update_snapshot{ SnapshotName = "snap-renamed", snapshot = { tags = {} } }
eq(#cleared.snapshot.tags, 0, "tags cleared")
eq(type(cleared.snapshot.tags), "table", "empty list stays a table")

-- the same operation through cloud.call
local via_call = cloud.call("UpdateSnapshot", { SnapshotName = "snap-2", snapshot = { description = "x" } })
eq(via_call.snapshot.description, "x", "cloud.call")

-- renaming onto an existing snapshot is refused
ok, err = pcall(cloud.cluster.update_snapshot, { SnapshotName = "snap-2", snapshot = { name = "snap-renamed" } })
eq(err.code, "SnapshotAlreadyExists", "rename collision")
eq(err.status, 409, "rename collision status")
print("update_snapshot_test: ok")
