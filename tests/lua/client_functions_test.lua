-- A cloud.client{} table has its own pages and wait_for, which make the client's calls
-- (its endpoints, credentials and retry settings), as cloud.pages and cloud.wait_for
-- make the default client's; before, a script with a client of its own had to loop
-- over its pages by hand.
-- Run: cloudlua test tests/lua/client_functions_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")

before_each(function()
  emu.reset()
end)

-- Runs fn with cloud.call counting its uses; returns that count.
local function default_calls_during(fn)
  local real, used = cloud.call, 0
  cloud.call = function(...) used = used + 1; return real(...) end  -- luacheck: ignore 122
  local ok, err = pcall(fn)
  cloud.call = real  -- luacheck: ignore 122
  if not ok then error(err, 0) end
  return used
end

test("a client's pages are its own calls, every page once", function()
  local client = cloud.client{}
  client.storage.create_bucket{ Bucket = "own" }
  for i = 1, 5 do client.storage.put_object{ Bucket = "own", Object = "k" .. i, Body = "" } end
  local counts = {}
  local used = default_calls_during(function()
    for page in client.pages("list_objects_v2", { Bucket = "own", MaxKeys = 2 }) do counts[#counts + 1] = page.KeyCount end
  end)
  expect(counts).to_equal{ 2, 2, 1 }
  expect(used).to_equal(0)
  local ok, err = pcall(client.pages, "GetObject")
  expect(ok).to_be(false)
  expect(err).to_match("bad argument #1 to 'pages' %(GetObject has no paginator")
end)

test("a client's wait_for polls with its own calls, and its errors are the client's", function()
  local client = cloud.client{ max_attempts = 1 }
  emu.seed{ snapshots = { { name = "snap-own" } } }
  client.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-own", cluster = { name = "own-cluster" } }
  local r
  local used = default_calls_during(function()
    r = client.wait_for("ClusterRunning", { ClusterName = "own-cluster" }, { progress = false })
  end)
  expect(r.cluster.status).to_equal("RUNNING")
  expect(used).to_equal(0)
  -- max_attempts = 1 is the client's: one 503 ends the wait, where the default client retries.
  emu.fault{ operation = "GetCluster", status = 503, code = "Server.Maintenance", times = 1 }
  expect(client.wait_for, "ClusterRunning", { ClusterName = "own-cluster" }, { progress = false })
    .to_fail{ status = 503 }
  local ok, err = pcall(client.wait_for, "NoSuchWaiter")
  expect(ok).to_be(false)
  expect(err).to_match("bad argument #1 to 'wait_for' %(no waiter named 'NoSuchWaiter'")
end)
