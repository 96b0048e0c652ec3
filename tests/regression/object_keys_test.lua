-- Object keys are opaque (issue 10, item 4): a key with `.` or `..` segments goes on
-- the wire exactly as it was signed (libcurl used to remove the dot segments, so the
-- signature no longer matched and a lax server stored the object elsewhere), and the
-- emulator stores it as given. A path parameter of a JSON API that is `.` or `..`
-- would change the URL's meaning, so validation refuses it.
-- Run: cloudlua test tests/regression/object_keys_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local BUCKET = "dots"
local keys = { "a/../b", "./c/./d", "x/..", "..", "./", "e/./../f" }

before_each(function()
  emu.reset()
  cloud.storage.create_bucket{ Bucket = BUCKET }
end)

-- The keys the emulator holds in `bucket`, sorted.
local function stored_keys(bucket)
  for _, b in ipairs(emu.state().buckets) do
    if b.name == bucket then
      local out = {}
      for _, o in ipairs(b.objects) do out[#out + 1] = o.key end
      table.sort(out)
      return out
    end
  end
end

for _, key in ipairs(keys) do
  test("the key '" .. key .. "' is put and got back as given", function()
    cloud.storage.put_object{ Bucket = BUCKET, Object = key, Body = "bytes of " .. key }
    expect(cloud.storage.get_object{ Bucket = BUCKET, Object = key }.Body).to_equal("bytes of " .. key)
    expect(stored_keys(BUCKET)).to_equal{ key }
  end)
end

test("keys that normalise alike stay apart", function()
  for _, key in ipairs{ "b", "a/../b", "./b" } do
    cloud.storage.put_object{ Bucket = BUCKET, Object = key, Body = key }
  end
  expect(stored_keys(BUCKET)).to_equal{ "./b", "a/../b", "b" }
  expect(cloud.storage.get_object{ Bucket = BUCKET, Object = "a/../b" }.Body).to_equal("a/../b")
  expect(cloud.storage.head_object{ Bucket = BUCKET, Object = "./b" }.ContentLength).to_equal(3)
end)

test("the aws dialect sends the same keys as signed", function()
  local aws = cloud.client{ dialect = "aws" }
  aws.storage.put_object{ Bucket = BUCKET, Object = "x/..", Body = "aws" }
  expect(aws.storage.get_object{ Bucket = BUCKET, Object = "x/.." }.Body).to_equal("aws")
end)

for _, name in ipairs{ ".", ".." } do
  test("a JSON API path parameter '" .. name .. "' is a validation error, nothing sent", function()
    local cases = {
      { cloud.cluster.update_snapshot, { SnapshotName = name }, "SnapshotName" },
      { cloud.cluster.restore_cluster_from_snapshot, { SnapshotName = name, cluster = { name = "c1" } }, "SnapshotName" },
      { cloud.devops.authorize_firewall_rules, { FirewallGroupName = name, rules = {} }, "FirewallGroupName" },
      { cloud.catalog.upgrade_meshplatform_service_mesh_version, { ResourceGroupName = "rg-x", ClusterName = name }, "ClusterName" },
    }
    for _, c in ipairs(cases) do
      local err = expect(c[1], c[2]).to_fail{ kind = "validation", field = c[3], problem = "must not be '.' or '..'" }
      expect(err.attempts).to_equal(0)
    end
  end)
end

test("the emulator refuses a JSON API path parameter '..' sent as it is with 400", function()
  local r = cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/..",
                           headers = { ["Content-Type"] = "application/json" }, body = "{}" }
  expect(r.status).to_equal(400)
  expect(r.body).to_contain('"path":"SnapshotName"')
end)
