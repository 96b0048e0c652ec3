-- storage.sync and storage.check cannot lose data, against the embedded emulator: one
-- grammar for a location (storage.location, s3:// strings in sync and check, a typo
-- refused naming both forms); a missing source, folder or bucket, refused before
-- anything is read or deleted; deletions after the copies; an empty source under
-- delete refused unless delete_all; max_delete; a listing out of order or repeating a
-- name an error, never a delete; a folder that cannot be listed a failure of its own,
-- the rest copied and nothing deleted.
-- Run: cloudlua test tests/lua/sync_safety_test.lua

local s3 = cloud.storage
local emu = cloud.emulator
local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
local dir

local function write_tree(root, tree)
  for path, content in pairs(tree) do
    fs.mkdir((root .. "/" .. path):match("^(.*)/"))
    files.write(root .. "/" .. path, content)
  end
end

-- The keys of `bucket`, sorted.
local function keys(bucket)
  local out = {}
  for _, o in ipairs(s3.list_objects_v2{ Bucket = bucket }.Contents or {}) do out[#out + 1] = o.Key end
  return out
end

local function put(bucket, list)
  for _, key in ipairs(list) do s3.put_object{ Bucket = bucket, Object = key, Body = key } end
end

before_each(function()
  if not emu then skip("needs the embedded emulator") end
  emu.reset()
  emu.seed{ buckets = { "site", "other" } }
  dir = files.make_dir()
  write_tree(dir .. "/src", { ["a.txt"] = "a", ["b/c.txt"] = "c" })
end)

after_each(function()
  if dir then os.execute("rm -rf '" .. dir .. "'") end
end)

test("storage.location reads s3:// and cloud:// locations, and says why anything else is not one", function()
  expect(s3.location("s3://site/www")).to_equal{ Bucket = "site", Prefix = "www" }
  expect(s3.location("s3://site")).to_equal{ Bucket = "site" }
  expect(s3.location("s3://site/")).to_equal{ Bucket = "site" }
  expect(s3.location("cloud://site/a/b/")).to_equal{ Bucket = "site", Prefix = "a/b/" }
  for text, why in pairs{ ["s3://"] = "names no bucket", ["s3:///x"] = "names no bucket", ["./dir"] = "is not a bucket location",
                          ["gs://b/p"] = "unknown scheme 'gs'", ["s3://a b/c"] = "no spaces" } do
    local where, err = s3.location(text)
    expect(where).to_be_nil()
    expect(err).to_contain(why)
  end
  expect(select(2, s3.location(42))).to_contain("string expected")
end)

test("sync and check take s3:// strings; a string that is neither a path nor a location is refused naming both", function()
  local r = s3.sync{ from = dir .. "/src", to = "s3://site/www", progress = false }
  expect(r.copied).to_equal(2)
  expect(keys("site")).to_equal{ "www/a.txt", "www/b/c.txt" }
  expect(s3.sync{ from = "cloud://site/www", to = "s3://other", progress = false }.copied).to_equal(2)
  expect(s3.check{ from = dir .. "/src", to = "s3://other" }.same).to_equal(2)
  expect(function() s3.sync{ from = dir .. "/src", to = "s3:/site/www" } end)
    .to_fail("neither an existing local path nor a bucket location")
  expect(function() s3.sync{ from = dir .. "/src", to = "S3://site" } end).to_fail("unknown scheme 'S3'")
  expect(keys("other")).to_equal{ "a.txt", "b/c.txt" }
end)

test("a source folder that does not exist, or is a file, is refused before anything is read or deleted", function()
  put("site", { "p/keep1", "p/keep2" })
  local before = emu.requests().ListObjectsV2 or 0
  local err = expect(function()
    s3.sync{ from = dir .. "/no-such-dir", to = "s3://site/p", delete = true, progress = false }
  end).to_fail{ kind = "validation", code = "NoSuchSource" }
  expect(err.message).to_contain("neither an existing local path nor a bucket location")
  expect(emu.requests().ListObjectsV2 or 0).to_equal(before)  -- nothing listed
  expect(keys("site")).to_equal{ "p/keep1", "p/keep2" }
  expect(function() s3.sync{ from = dir .. "/src/a.txt", to = "s3://site/p", delete = true } end)
    .to_fail{ code = "SourceNotAFolder" }
  expect(function() s3.sync{ from = dir .. "/no-such-dir", to = "s3://site/p", dry_run = true } end)
    .to_fail{ code = "NoSuchSource" }
  expect(function() s3.check{ from = dir .. "/no-such-dir", to = "s3://site/p" } end).to_fail{ code = "NoSuchSource" }
  expect(keys("site")).to_equal{ "p/keep1", "p/keep2" }
end)

test("a source bucket that does not exist is refused, the local target untouched", function()
  write_tree(dir .. "/mirror", { ["mine.txt"] = "mine" })
  expect(function() s3.sync{ from = "s3://no-such-bucket/p", to = dir .. "/mirror", delete = true, progress = false } end)
    .to_fail{ kind = "validation", code = "NoSuchSource" }
  expect(fs.stat(dir .. "/mirror/mine.txt") ~= nil).to_equal(true)
end)

test("an empty source under delete refuses to empty the target unless delete_all", function()
  put("site", { "p/x", "p/y" })
  fs.mkdir(dir .. "/empty")
  local err = expect(function() s3.sync{ from = dir .. "/empty", to = "s3://site/p", delete = true, progress = false } end)
    .to_fail{ kind = "validation", code = "EmptySource" }
  expect(err.message).to_contain("delete_all = true")
  expect(function() s3.sync{ from = dir .. "/empty", to = "s3://site/p", delete = true, dry_run = true } end)
    .to_fail{ code = "EmptySource" }
  -- filters that leave nothing of the source count as empty too
  expect(function() s3.sync{ from = dir .. "/src", to = "s3://site/p", delete = true, exclude = { "a.txt", "b/**" }, progress = false } end)
    .to_fail{ code = "EmptySource" }
  expect(keys("site")).to_equal{ "p/x", "p/y" }
  local r = s3.sync{ from = dir .. "/empty", to = "s3://site/p", delete = true, delete_all = true, progress = false }
  expect(r.deleted).to_equal(2)
  expect(keys("site")).to_equal{}
end)

test("max_delete stops at N, says so, and the error carries the summary", function()
  put("site", { "p/1", "p/2", "p/3", "p/4", "p/5" })
  local err = expect(function()
    s3.sync{ from = dir .. "/src", to = "s3://site/p", delete = true, max_delete = 2, progress = false }
  end).to_fail{ code = "SyncFailed" }
  expect(err.message).to_contain("3 deletions not made: more than max_delete = 2")
  expect(err.summary.deleted).to_equal(2)
  expect(err.summary.not_deleted).to_equal(3)
  expect(err.summary.copied).to_equal(2)
  expect(#keys("site")).to_equal(2 + 3)
  local r = s3.sync{ from = dir .. "/src", to = "s3://site/p", delete = true, max_delete = 3, collect = true, progress = false }
  expect(r.deleted).to_equal(3)
  expect(r.not_deleted).to_be_nil()
  expect(keys("site")).to_equal{ "p/a.txt", "p/b/c.txt" }
  expect(function() s3.sync{ from = dir .. "/src", to = "s3://site", max_delete = -1 } end)
    .to_fail("field 'max_delete' must be an integer >= 0")
end)

test("deletions come after the copies, even when a copy is slow", function()
  put("site", { "p/stale" })
  emu.fault{ operation = "PutObject", delay = 0.2, times = 2 }
  local order = {}
  s3.sync{ from = dir .. "/src", to = "s3://site/p", delete = true, concurrency = 4, progress = false,
           on_action = function(action, path) order[#order + 1] = action .. " " .. path end }
  expect(order[#order]).to_equal("delete stale")
  expect(#order).to_equal(3)
end)

-- A client whose bucket lists `names` (in that order) on one page, and whose storage
-- records what it is asked.
local function lying_client(names)
  local asked = {}
  local contents = {}
  for i, name in ipairs(names) do contents[i] = { Key = name, Size = 1, ETag = '"x"', LastModified = "2026-01-01T00:00:00.000Z" } end
  local storage = setmetatable({}, { __index = function(_, op)
    return function() asked[#asked + 1] = op; error(cloud.error{ kind = "api", code = "Refused", message = "not here" }) end
  end })
  local client = { storage = storage, asked = asked }
  function client.pages()
    local sent = false
    return function()
      if sent then return nil end
      sent = true
      return { Contents = contents }
    end
  end
  return client
end

test("a listing that goes backwards or repeats a name is an error, never a delete", function()
  local sync = require("cloud.sync")
  for _, names in ipairs{ { "b", "a" }, { "a", "a" }, { "a", "c", "b" } } do
    write_tree(dir .. "/mirror", { ["a"] = "1", ["zzz"] = "mine" })
    local err = expect(function()
      sync.sync(lying_client(names), { from = "s3://lying/", to = dir .. "/mirror", delete = true, progress = false })
    end).to_fail{ code = "ListingOutOfOrder" }
    expect(err.message).to_contain("not in byte order")
    expect(fs.stat(dir .. "/mirror/zzz") ~= nil).to_equal(true)
    expect(function() sync.check(lying_client(names), { from = "s3://lying/", to = dir .. "/mirror" }) end)
      .to_fail{ code = "ListingOutOfOrder" }
  end
end)

-- Makes `root`/deep, a folder whose path is longer than the system takes (PATH_MAX),
-- so that a walk cannot list what is inside it, even as root.
local function unlistable(root)
  local name = ("d"):rep(250)
  local script = ("cd '%s' && mkdir deep && cd deep && for i in $(seq 18); do mkdir %s && cd -P %s || exit 1; done && echo x > f")
    :format(root, name, name)
  assert(os.execute(script))
end

test("a folder that cannot be listed is a failure of its own: the rest is copied, nothing deleted, and it says why", function()
  unlistable(dir .. "/src")
  put("site", { "p/stale" })
  local r = s3.sync{ from = dir .. "/src", to = "s3://site/p", delete = true, collect = true, progress = false }
  expect(r.copied).to_equal(2)
  expect(r.failed).to_equal(1)
  expect(r.errors[1].error.kind).to_equal("io")
  expect(r.errors[1].path).to_contain("deep/")
  expect(r.deletes_withheld).to_equal(1)
  expect(r.delete_note).to_contain("1 deletions not made")
  expect(keys("site")).to_equal{ "p/a.txt", "p/b/c.txt", "p/stale" }
  local err = expect(function() s3.sync{ from = dir .. "/src", to = "s3://site/p", delete = true, progress = false } end)
    .to_fail{ code = "SyncFailed" }
  expect(err.message).to_contain("deletions not made")
  local report = s3.check{ from = dir .. "/src", to = "s3://site/p" }
  expect(#report.failed).to_equal(1)
end)
