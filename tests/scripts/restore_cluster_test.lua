-- scripts/restore_cluster.lua, run in this state against the embedded emulator: tags
-- from KEY=VALUE arguments, the wait until every node has addresses, the node table.

local emu = assert(cloud.emulator, "needs the embedded emulator")
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/restore_cluster.lua")

local function cluster(name) return support.find(emu.state().clusters, "name", name) end

before_each(function()
  emu.reset()
  emu.seed{ snapshots = { { name = "snap-1", cluster = { name = "prod", kubernetesVersion = "1.29.4", nodePools = {
    { name = "pool-a", instanceType = "e-large", nodeCount = 2 }, { name = "pool-b", instanceType = "e-large", nodeCount = 1 } } } } } }
end)

test("restores with tags and waits until every node has its addresses", function()
  local out = run("snap-1", "restored-1", "env=qa", "owner=platform team", "--location", "east-12")
  expect(out[1]).to_equal("restoring restored-1 from snap-1: PROVISIONING, 3 nodes, tags 2")
  expect(out[2]).to_equal("restored-1 is RUNNING")
  expect(#out).to_equal(5)  -- one line per node
  expect(out[3]).to_match("^  pool%-a%s+%S+%s+east%-12%s+%d+%.%d+%.%d+%.%d+%s+%d+%.%d+%.%d+%.%d+$")
  local c = cluster("restored-1")
  expect({ c.tags[1].key, c.tags[1].value, c.tags[2].key, c.tags[2].value }).to_equal{ "env", "qa", "owner", "platform team" }
  for _, pool in ipairs(c.nodePools) do
    for _, node in ipairs(pool.nodes) do expect(node.privateIpAddress).to_not_equal("") end
  end
end)

test("--no-wait returns while the nodes have no addresses", function()
  run("snap-1", "restored-2", "--no-wait")
  expect(cluster("restored-2").nodePools[1].nodes[1].privateIpAddress).to_equal("")
end)

test("refusals reach the user: unknown snapshot, a bad name, a tag key too long", function()
  expect(run, "snap-9", "restored-3").to_fail{ code = "SnapshotNotFound" }
  expect(run, "snap-1", "Restored").to_fail{ kind = "validation", field = "cluster.name" }
  expect(run, "snap-1", "restored-3", ("k"):rep(129) .. "=v").to_fail{ kind = "validation", field = "cluster.tags[1].key" }
  expect(cluster("restored-3")).to_be_nil()
end)
