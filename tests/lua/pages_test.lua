-- cloud.pages(name, args): the paginator of the model followed page after page, the
-- caller's table left alone, the arguments checked, and an answer that would never
-- end (truncated, without a new token) refused with PaginationError.
-- Run: cloudlua test tests/lua/pages_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")

before_each(function()
  emu.reset()
  cloud.storage.create_bucket{ Bucket = "pgs" }
  for i = 1, 5 do cloud.storage.put_object{ Bucket = "pgs", Object = "k" .. i, Body = "" } end
end)

-- cloud.call replaced by `fake` while `fn` runs (pages.lua calls through it).
local function with_call(fake, fn)
  local real = cloud.call
  cloud.call = fake  -- luacheck: ignore 122
  local ok, err = pcall(fn)
  cloud.call = real  -- luacheck: ignore 122
  if not ok then error(err, 0) end
end

test("every page once, by name or function name, and the caller's table unchanged", function()
  local args = { Bucket = "pgs", MaxKeys = 2 }
  for _, name in ipairs{ "ListObjectsV2", "list_objects_v2" } do
    local counts = {}
    for page in cloud.pages(name, args) do counts[#counts + 1] = page.KeyCount end
    expect(counts).to_equal{ 2, 2, 1 }
  end
  expect(args).to_equal{ Bucket = "pgs", MaxKeys = 2 }
end)

test("a ContinuationToken given starts from it", function()
  local first = cloud.storage.list_objects_v2{ Bucket = "pgs", MaxKeys = 3 }
  local keys = {}
  for page in cloud.pages("ListObjectsV2", { Bucket = "pgs", ContinuationToken = first.NextContinuationToken }) do
    for _, o in ipairs(page.Contents) do keys[#keys + 1] = o.Key end
  end
  expect(keys).to_equal{ "k4", "k5" }
end)

test("a call's error is raised as it is", function()
  local pages = cloud.pages("ListObjectsV2", { Bucket = "nope" })
  expect(pages).to_fail{ kind = "api", code = "NoSuchBucket" }
end)

test("truncated without a new token: PaginationError, not a loop", function()
  with_call(function() return { IsTruncated = true }, {} end, function()
    expect(cloud.pages("ListObjectsV2", { Bucket = "pgs" })).to_fail{ kind = "api", code = "PaginationError", operation = "ListObjectsV2" }
  end)
  with_call(function(_, args) return { IsTruncated = true, NextContinuationToken = args.ContinuationToken or "t" }, {} end, function()
    local next_page = cloud.pages("ListObjectsV2", { Bucket = "pgs" })
    next_page()
    expect(next_page).to_fail{ code = "PaginationError", message = "again" }
  end)
end)

test("arguments: a name with a paginator, a table", function()
  expect(function() cloud.pages(1) end).to_fail{ message = "string expected" }
  expect(function() cloud.pages("NoSuch") end).to_fail{ message = "no operation named 'NoSuch'" }
  expect(function() cloud.pages("GetObject", {}) end).to_fail{ message = "GetObject has no paginator" }
  expect(function() cloud.pages("ListObjects", "b") end).to_fail{ message = "table expected" }
end)

test("a mistyped operation name gets the nearest one", function()
  expect(function() cloud.pages("ListObjectV2") end)
    .to_fail{ message = "bad argument #1 to 'cloud.pages' (no operation named 'ListObjectV2'; did you mean 'ListObjectsV2'?)" }
end)

-- pages.ahead (storage.sync's listings): the next page's call made as a page is handed over.
local ahead = require("cloud.pages").ahead

test("ahead: the same pages, the next one's call made while the caller holds one", function()
  local calls = 0
  local next_page = ahead(function()
    calls = calls + 1
    if calls <= 3 then return { n = calls } end
  end)
  for n = 1, 3 do
    expect(next_page().n).to_equal(n)
    expect(calls).to_equal(n + 1)  -- the call for page n + 1 made already
  end
  expect(next_page()).to_equal(nil)
  expect(calls).to_equal(4)
end)

test("ahead: the next page's request is on its way to the server before it is asked for", function()
  local counts = {}
  local next_page = ahead(cloud.pages("ListObjectsV2", { Bucket = "pgs", MaxKeys = 2 }))
  local first = next_page()
  expect(first.KeyCount).to_equal(2)
  -- The loop does not turn here: only a request sent already reaches the server.
  local deadline = cloud.clock() + 30
  while (emu.requests().ListObjectsV2 or 0) < 2 and cloud.clock() < deadline do os.execute("sleep 0.02") end
  expect(emu.requests().ListObjectsV2).to_equal(2)
  counts[1] = first.KeyCount
  for page in next_page do counts[#counts + 1] = page.KeyCount end
  expect(counts).to_equal{ 2, 2, 1 }
  expect(emu.requests().ListObjectsV2).to_equal(3)
end)

test("ahead: a call's error is raised when its page is asked for", function()
  local next_page = ahead(cloud.pages("ListObjectsV2", { Bucket = "nope" }))
  expect(next_page).to_fail{ kind = "api", code = "NoSuchBucket" }
end)
