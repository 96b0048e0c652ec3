-- UpdateSnapshot (PUT /v1/snapshots/{SnapshotName}): the settings change, the status
-- does not; an unknown snapshot and a name already taken are refused; every limit of
-- the spec's table is checked at its largest valid value and one past it.
-- Run: cloudlua test tests/regression/update_snapshot_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")

before_each(function()
  emu.reset()
  emu.seed{ snapshots = { { name = "snap-1", description = "nightly" }, { name = "snap-2" } } }
end)

local function update(snapshot, name)
  return cloud.cluster.update_snapshot{ SnapshotName = name or "snap-1", snapshot = snapshot }
end

-- The snapshot as the platform keeps it now.
local function stored(name)
  for _, s in ipairs(emu.state().snapshots) do if s.name == name then return s end end
end

test("renames a snapshot and moves its expiry; later calls see the new name", function()
  local r, meta = update{ name = "snap-audit", expirationTime = "2030-01-31T00:00:00Z" }
  expect(meta.status).to_equal(200)
  expect(r.snapshot.name).to_equal("snap-audit")
  expect(r.snapshot.expirationTime).to_equal("2030-01-31T00:00:00Z")
  expect(r.snapshot.status).to_equal("AVAILABLE")
  expect(r.snapshot.description).to_equal("nightly")
  expect(update({ description = "kept" }, "snap-audit").snapshot.description).to_equal("kept")
  expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1" }).to_fail{ code = "SnapshotNotFound" }
end)

test("the answer has the spec's shape", function()
  local s = update{ description = "x" }.snapshot
  for _, field in ipairs{ "name", "expirationTime", "description", "resourceVersion", "createTime", "status", "nrn" } do
    expect(s[field]).to_be_a("string")
  end
  expect(s.cluster.nodePools[1].nodeCount).to_be_a("integer")
  expect(s.nrn).to_match("^nrn:[^:]+:[^:]+:[^:]+:[^:]+:snapshot:")
  expect(s.tags).to_equal({})
end)

test("tags are replaced, each with an id given by the platform", function()
  local tags = update{ tags = { { key = "env", value = "qa" }, { key = "team", value = "データ" } } }.snapshot.tags
  expect(#tags).to_equal(2)
  expect({ tags[1].key, tags[1].value, tags[2].key, tags[2].value }).to_equal{ "env", "qa", "team", "データ" }
  expect(tags[1].id).to_match("%S")
  expect(update{ tags = {} }.snapshot.tags).to_equal({})
  expect(stored("snap-1").tags).to_equal({})
end)

test("an unknown snapshot is refused with 404 SnapshotNotFound", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "no-such", snapshot = { description = "x" } })
    .to_fail{ kind = "api", code = "SnapshotNotFound", status = 404, operation = "UpdateSnapshot" }
end)

test("renaming onto an existing snapshot is refused with 409 and changes nothing", function()
  expect(update, { name = "snap-2", description = "changed" })
    .to_fail{ kind = "api", code = "SnapshotAlreadyExists", status = 409 }
  expect(stored("snap-1").description).to_equal("nightly")
end)

test("new name: at most 40 characters", function()
  local longest = ("a"):rep(39) .. "1"
  expect(update{ name = longest }.snapshot.name).to_equal(longest)
  expect(update, { name = ("a"):rep(41) })
    .to_fail{ kind = "validation", field = "snapshot.name", problem = "at most 40 characters (got 41)" }
end)

test("new name: lowercase letters, digits and hyphen, no hyphen at either end", function()
  expect(update{ name = "a-1-b" }.snapshot.name).to_equal("a-1-b")
  for _, bad in ipairs{ "-a", "a-", "Snap", "snap_1", "snap.1", "スナップ", "" } do
    expect(update, { name = bad }).to_fail{ kind = "validation", field = "snapshot.name" }
  end
end)

test("description: at most 255 characters, counted as characters not bytes", function()
  local wide = ("説"):rep(255)  -- 765 bytes
  expect(update{ description = wide }.snapshot.description).to_equal(wide)
  expect(update, { description = ("x"):rep(256) })
    .to_fail{ kind = "validation", field = "snapshot.description", problem = "(got 256)" }
end)

test("tags: key at most 128 characters, value at most 256", function()
  local key, value = ("k"):rep(128), ("値"):rep(256)
  local tag = update{ tags = { { key = key, value = value } } }.snapshot.tags[1]
  expect({ tag.key, tag.value }).to_equal{ key, value }
  expect(update, { tags = { { key = key .. "k", value = "v" } } }).to_fail{ kind = "validation", field = "snapshot.tags[1].key" }
  expect(update, { tags = { { key = "k" }, { key = "k", value = value .. "x" } } })
    .to_fail{ kind = "validation", field = "snapshot.tags[2].value" }
end)

test("expirationTime must be an ISO 8601 time", function()
  expect(update, { expirationTime = "next tuesday" }).to_fail{ kind = "validation", field = "snapshot.expirationTime" }
end)

test("every problem is reported at once, nothing is sent", function()
  local err = expect(update, { name = "-x", description = ("x"):rep(300), descripton = "typo" }).to_fail{ kind = "validation" }
  expect(#err.fields).to_equal(3)
  expect(err.message).to_contain("nothing was sent")
  expect(stored("snap-1").description).to_equal("nightly")
end)

test("cloud.null where a value is needed is refused before anything is sent", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = cloud.null })
    .to_fail{ kind = "validation", field = "snapshot", problem = "table expected, got cloud.null" }
  expect(update, { tags = { { key = cloud.null, value = "qa" } } })
    .to_fail{ kind = "validation", field = "snapshot.tags[1].key", problem = "string expected, got cloud.null" }
  expect(update, { description = cloud.null })
    .to_fail{ kind = "validation", field = "snapshot.description", problem = "string expected, got cloud.null" }
  expect(stored("snap-1").description).to_equal("nightly")
end)

test("an unknown field gets the nearest known name", function()
  expect(update, { descripton = "typo" })
    .to_fail{ kind = "validation", field = "snapshot.descripton", problem = "did you mean 'description'" }
end)
