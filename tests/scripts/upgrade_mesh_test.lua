-- scripts/upgrade_mesh.lua, run in this state against the embedded emulator: the
-- upgrade, the wait for `running` (the MeshClusterRunning waiter), the platform's
-- default version, refusals.

local emu = assert(cloud.emulator, "needs the embedded emulator")
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/upgrade_mesh.lua")

before_each(function()
  emu.reset()
  emu.seed{ mesh_clusters = { { resourceGroupName = "rg-1", name = "mesh-1", version = "1.21.0" } } }
end)

test("upgrades and waits until the cluster is running", function()
  expect(run("rg-1", "mesh-1", "1.22.1")).to_equal{ "upgrading the mesh of rg-1/mesh-1 to 1.22.1: configuring",
                                                    "mesh-1 is running with mesh 1.22.1" }
  expect(emu.state().mesh_clusters[1].status).to_equal("running")
end)

test("the wait is the MeshClusterRunning waiter: --timeout shorter than one delay is one try", function()
  expect(run, "rg-1", "mesh-1", "1.22.1", "--timeout", "10")
    .to_fail{ kind = "timeout", message = "MeshClusterRunning not reached after 1 try" }
end)

test("without a version the platform's default is used", function()
  local out = run("rg-1", "mesh-1")
  expect(out[2]).to_match("^mesh%-1 is running with mesh %d+%.%d+%.%d+$")
end)

test("--no-wait leaves the cluster configuring", function()
  run("rg-1", "mesh-1", "1.22.1", "--no-wait")
  expect(emu.state().mesh_clusters[1].status).to_equal("configuring")
  expect(run, "rg-1", "mesh-1", "1.22.2").to_fail{ code = "ClusterBusy" }
end)

test("an unknown cluster is refused", function()
  expect(run, "rg-1", "mesh-9", "1.22.1").to_fail{ kind = "api", code = "ClusterNotFound", status = 404 }
end)
