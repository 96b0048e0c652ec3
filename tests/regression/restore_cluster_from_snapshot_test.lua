-- RestoreClusterFromSnapshot (POST /v1/snapshots/{SnapshotName}:restore): a new
-- cluster PROVISIONING with its pools and nodes, empty node addresses; then RUNNING
-- with addresses; refusals (unknown snapshot, snapshot not AVAILABLE, name in use);
-- every limit of the cluster fields.
-- Run: cloudlua test tests/regression/restore_cluster_from_snapshot_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")

before_each(function()
  emu.reset()
  emu.seed{ snapshots = {
    { name = "snap-1", cluster = { name = "prod", kubernetesVersion = "1.29.4",
                                   nodePools = { { name = "pool-1", instanceType = "e-large", nodeCount = 3 } } } },
    { name = "snap-creating", status = "CREATING" },
  } }
end)

local function restore(cluster, snapshot)
  return cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = snapshot or "snap-1", cluster = cluster }
end

local function find(list, name)
  for _, r in ipairs(emu.state()[list]) do if r.name == name then return r end end
end

local function addressed(cluster)
  for _, pool in ipairs(cluster.nodePools) do
    for _, node in ipairs(pool.nodes) do
      if node.privateIpAddress == "" or node.publicIpAddress == "" then return false end
    end
  end
  return true
end

test("restores a cluster with tags: PROVISIONING, no node addresses yet", function()
  local r, meta = restore{ name = "restored", description = "from snap-1", locations = { "east-11", "east-12" },
                           tags = { { key = "env", value = "qa" }, { key = "owner", value = "チーム" } } }
  expect(meta.status).to_equal(201)  -- the vendor's model answers 201 Created; the client takes any 2xx
  local c = r.cluster
  expect({ c.name, c.status, c.kubernetesVersion, c.nodeCount }).to_equal{ "restored", "PROVISIONING", "1.29.4", 3 }
  expect({ c.tags[1].key, c.tags[1].value, c.tags[2].value }).to_equal{ "env", "qa", "チーム" }
  expect(c.tags[1].id).to_be_a("string")
  expect(c.networkConfig.networkId).to_equal("net-COMMON_PRIVATE")
  expect(c.addonsConfig.httpLoadBalancing.disabled).to_equal(false)
  expect(c.nodePools[1].status).to_equal("PROVISIONING")
  expect(#c.nodePools[1].nodes).to_equal(3)
  for _, node in ipairs(c.nodePools[1].nodes) do
    expect({ node.status, node.publicIpAddress, node.privateIpAddress }).to_equal{ "PROVISIONING", "", "" }
  end
  expect(c.nrn).to_match(":cluster:")
  expect(find("snapshots", "snap-1").status).to_equal("RESTORING")
end)

test("the nodes get addresses and everything runs; the snapshot is AVAILABLE again", function()
  restore{ name = "restored" }
  local c = cloud.wait_until(function()
    local now = find("clusters", "restored")
    return addressed(now) and now, now.status
  end, { timeout = 900, interval = 15, what = "node addresses of restored" })
  expect(c.status).to_equal("RUNNING")
  expect(c.nodePools[1].status).to_equal("RUNNING")
  expect(c.nodePools[1].nodes[1].privateIpAddress).to_match("^%d+%.%d+%.%d+%.%d+$")
  expect(find("snapshots", "snap-1").status).to_equal("AVAILABLE")
end)

test("settings given are kept: network, firewall group, add-on disabled", function()
  local c = restore{ name = "c2", firewallGroup = "fw-1", networkConfig = { networkId = "net-private-1" },
                     addonsConfig = { httpLoadBalancing = { disabled = true } } }.cluster
  expect({ c.firewallGroup, c.networkConfig.networkId, c.addonsConfig.httpLoadBalancing.disabled })
    .to_equal{ "fw-1", "net-private-1", true }
end)

test("an unknown snapshot is refused with 404 SnapshotNotFound", function()
  expect(restore, { name = "x" }, "snap-nope").to_fail{ kind = "api", code = "SnapshotNotFound", status = 404 }
end)

test("a snapshot that is not AVAILABLE is refused with 409", function()
  expect(restore, { name = "x" }, "snap-creating").to_fail{ code = "SnapshotNotAvailable", status = 409, message = "CREATING" }
  restore{ name = "first" }
  expect(restore, { name = "second" }).to_fail{ code = "SnapshotNotAvailable", message = "RESTORING" }
end)

test("a cluster name in use is refused with 409", function()
  restore{ name = "taken" }
  cloud.wait_until(function() return find("snapshots", "snap-1").status == "AVAILABLE" end, { timeout = 900, interval = 30 })
  expect(restore, { name = "taken" }).to_fail{ kind = "api", code = "ClusterAlreadyExists", status = 409 }
end)

test("a restore without a cluster or its name is refused before anything is sent", function()
  -- a fault queued for the operation would fail the first request that reached the platform
  emu.fault{ operation = "RestoreClusterFromSnapshot", status = 409, code = "ReachedThePlatform" }
  local err = expect(restore, {}).to_fail{ kind = "validation", field = "cluster.name", problem = "required" }
  expect(err.attempts).to_equal(0)
  expect(restore, { description = "no name" }).to_fail{ kind = "validation", field = "cluster.name", problem = "required" }
  expect(restore, nil).to_fail{ kind = "validation", field = "cluster", problem = "required" }
  expect(restore, cloud.null).to_fail{ kind = "validation", field = "cluster", problem = "table expected, got cloud.null" }
  expect(restore, { name = "x", tags = { { key = cloud.null, value = "v" } } })
    .to_fail{ kind = "validation", field = "cluster.tags[1].key", problem = "string expected, got cloud.null" }
  expect(restore, { name = "reached" }).to_fail{ code = "ReachedThePlatform" }
  expect(find("clusters", "reached")).to_be_nil()
end)

test("a restore is not resent after a dropped connection", function()
  emu.fault{ operation = "RestoreClusterFromSnapshot", times = 1, drop = true }
  expect(restore, { name = "dropped" }).to_fail{ kind = "transport" }
  expect(restore{ name = "dropped" }.cluster.status).to_equal("PROVISIONING")
end)

test("name: at most 40 characters, lowercase letters, digits, hyphen inside", function()
  local longest = ("c"):rep(20) .. "-" .. ("9"):rep(19)
  expect(restore{ name = longest }.cluster.name).to_equal(longest)
  expect(restore, { name = longest .. "9" }).to_fail{ kind = "validation", field = "cluster.name", problem = "(got 41)" }
  for _, bad in ipairs{ "-c", "c-", "Cluster", "c_1" } do
    expect(restore, { name = bad }).to_fail{ kind = "validation", field = "cluster.name" }
  end
end)

test("description: at most 255 characters, UTF-8", function()
  local wide = ("説"):rep(255)
  expect(restore{ name = "c3", description = wide }.cluster.description).to_equal(wide)
  expect(restore, { name = "c4", description = wide .. "x" }).to_fail{ kind = "validation", field = "cluster.description" }
end)

test("tags: key at most 128 characters, value at most 256", function()
  local tag = restore{ name = "c5", tags = { { key = ("キ"):rep(128), value = ("v"):rep(256) } } }.cluster.tags[1]
  expect({ utf8.len(tag.key), #tag.value }).to_equal{ 128, 256 }
  expect(restore, { name = "c6", tags = { { key = ("k"):rep(129), value = "v" } } })
    .to_fail{ kind = "validation", field = "cluster.tags[1].key" }
  expect(restore, { name = "c6", tags = { { key = "k", value = "v" }, { key = "k", value = ("v"):rep(257) } } })
    .to_fail{ kind = "validation", field = "cluster.tags[2].value" }
end)

test("types: locations is a list, disabled a boolean", function()
  expect(restore, { name = "c7", locations = "east-11" }).to_fail{ kind = "validation", field = "cluster.locations" }
  expect(restore, { name = "c7", addonsConfig = { httpLoadBalancing = { disabled = "yes" } } })
    .to_fail{ kind = "validation", field = "cluster.addonsConfig.httpLoadBalancing.disabled", problem = "boolean expected" }
end)
