-- UpgradeMeshplatformServiceMeshVersion (POST /v1/resource-groups/{ResourceGroupName}/
-- meshplatform/clusters/{ClusterName}/meshplatform-service-mesh:upgrade): the whole
-- cluster, not wrapped, `configuring`, then `running`; refusals (unknown cluster or
-- resource group, an upgrade while configuring); the path parameters' limits.
-- Run: cloudlua test tests/regression/upgrade_meshplatform_service_mesh_version_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local upgrade = cloud.catalog.upgrade_meshplatform_service_mesh_version

before_each(function()
  emu.reset()
  emu.seed{ mesh_clusters = { { resourceGroupName = "rg-1", name = "mesh-1", version = "1.21.0" },
                              { resourceGroupName = "rg-2", name = "mesh-1", version = "1.20.0" } } }
end)

local function mesh(group, name)
  for _, c in ipairs(emu.state().mesh_clusters) do
    if c.resourceGroupName == group and c.name == name then return c end
  end
end

test("upgrades: the cluster configuring at the new version, then running", function()
  local c, meta = upgrade{ ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.1" }
  expect(meta.status).to_equal(200)
  expect({ c.name, c.status }).to_equal{ "mesh-1", "configuring" }
  expect(c.meshplatformServiceMeshConfig).to_equal{ enabled = true, version = "1.22.1" }
  expect(c.cluster).to_be_nil()  -- not wrapped
  expect(c.controlPlaneLoadBalancer.type).to_equal("elastic-load-balancer")
  expect(c.controlPlane.volumeSize).to_equal(100)
  expect(c.controlPlaneLoadBalancer.elasticLoadBalancer.networkInterfaces[1].isVipNetwork).to_be_a("boolean")
  local running = cloud.wait_until(function()
    local now = mesh("rg-1", "mesh-1")
    return now.status == "running" and now, now.status
  end, { timeout = 300, interval = 5, what = "mesh-1 running" })
  expect(running.meshplatformServiceMeshConfig.version).to_equal("1.22.1")
  expect(mesh("rg-2", "mesh-1").meshplatformServiceMeshConfig.version).to_equal("1.20.0")  -- same name, other group
end)

test("no version given: the platform's default mesh version", function()
  local c = upgrade{ ResourceGroupName = "rg-1", ClusterName = "mesh-1" }
  expect(c.meshplatformServiceMeshConfig.version).to_be_a("string")
  expect(c.meshplatformServiceMeshConfig.version).to_not_equal("1.21.0")
end)

test("an unknown cluster or resource group is refused with 404 ClusterNotFound", function()
  expect(upgrade, { ResourceGroupName = "rg-1", ClusterName = "mesh-9", version = "1.22.1" })
    .to_fail{ kind = "api", code = "ClusterNotFound", status = 404 }
  expect(upgrade, { ResourceGroupName = "rg-9", ClusterName = "mesh-1", version = "1.22.1" })
    .to_fail{ kind = "api", code = "ClusterNotFound", status = 404, message = "rg-9" }
end)

test("an upgrade while configuring is refused with 409 ClusterBusy, accepted once running", function()
  upgrade{ ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.1" }
  expect(upgrade, { ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.2" })
    .to_fail{ code = "ClusterBusy", status = 409 }
  cloud.wait_until(function() return mesh("rg-1", "mesh-1").status == "running" end, { timeout = 300, interval = 5 })
  expect(upgrade{ ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = "1.22.2" }.status).to_equal("configuring")
end)

test("path parameters: required and not empty; version a string", function()
  expect(upgrade, { ResourceGroupName = "", ClusterName = "mesh-1" }).to_fail{ kind = "validation", field = "ResourceGroupName" }
  expect(upgrade, { ResourceGroupName = "rg-1" }).to_fail{ kind = "validation", field = "ClusterName" }
  expect(upgrade, { ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = 1.22 })
    .to_fail{ kind = "validation", field = "version", problem = "string expected" }
  expect(upgrade, { ResourceGroupName = "rg-1", ClusterName = "mesh-1", version = cloud.null })
    .to_fail{ kind = "validation", field = "version", problem = "string expected, got cloud.null" }
  expect(mesh("rg-1", "mesh-1").status).to_equal("running")
end)

test("names with characters that need encoding reach the platform intact", function()
  emu.seed{ mesh_clusters = { { resourceGroupName = "rg 日本", name = "mesh:a" } } }
  expect(upgrade{ ResourceGroupName = "rg 日本", ClusterName = "mesh:a", version = "1.22.1" }.name).to_equal("mesh:a")
end)
