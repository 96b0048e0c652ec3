-- storage.sync and storage.check against the embedded emulator: a tree with nested and
-- empty folders and awkward names (spaces, unicode, %, +, #, leading and trailing
-- spaces, a 900-byte path) up, down and from bucket to bucket, byte for byte; a second
-- sync sends nothing in every direction (requests counted at the emulator); delete
-- keeping what an exclude keeps out; a dry run that writes nothing; filters in order;
-- the compare modes, checksum against single-part and multipart ETags; failures on
-- three objects (the rest copied, the summary, the raised error, a rerun that sends
-- exactly those three); a local name that cannot be a key and a key that cannot be a
-- local name; shards (delete too); check; downloads without a flush each; progress, its totals final
-- once planning ends; the options table given is left as it was (sync, check, commands.sync).
-- Run: cloudlua test tests/lua/sync_test.lua

local s3 = cloud.storage
local emu = cloud.emulator
local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
local MiB = 1024 * 1024
local dir

-- The long name: eight folders of 99 bytes and a file, 900 bytes in all.
local LONG = {}
for i = 1, 8 do LONG[i] = ("%d"):format(i):rep(99) end
LONG = table.concat(LONG, "/") .. "/" .. ("f"):rep(100)

-- The tree: relative path -> content.
local TREE = {
  ["index.html"] = "<h1>home</h1>",
  ["a/b/c/deep.txt"] = "deep",
  ["with space.txt"] = "spaces",
  [" leading and trailing "] = "edges",
  ["unicode/café ☕.txt"] = "unicode",
  ["odd/100% + #1.txt"] = "percent plus hash",
  [LONG] = "long",
}

-- Writes `tree` (path -> content) under root, making folders as needed.
local function write_tree(root, tree)
  for path, content in pairs(tree) do
    local parent = (root .. "/" .. path):match("^(.*)/")
    fs.mkdir(parent)
    files.write(root .. "/" .. path, content)
  end
end

-- The files under root: path -> content.
local function read_tree(root)
  local out = {}
  for _, e in ipairs(fs.list(root, { recursive = true })) do
    if e.type == "file" then out[e.path] = files.read(root .. "/" .. e.path) end
  end
  return out
end

-- The objects under bucket/prefix: relative path -> content.
local function read_bucket(bucket, prefix)
  prefix = prefix or ""
  local out = {}
  for page in cloud.pages("ListObjectsV2", { Bucket = bucket, Prefix = prefix }) do
    for _, o in ipairs(page.Contents or {}) do
      out[o.Key:sub(#prefix + 1)] = s3.get_object{ Bucket = bucket, Object = o.Key }.Body
    end
  end
  return out
end

local requests = dofile("tests/lua/support/requests.lua")
local mark, since = requests.mark, requests.since

-- The requests of the operations that write (and GetObject) since the last mark(); marks.
local WRITES = { "PutObject", "CopyObject", "UploadPart", "UploadPartCopy", "CreateMultipartUpload",
                 "CompleteMultipartUpload", "DeleteObject", "DeleteObjects", "GetObject" }
local function writes()
  local served, out = since(), {}
  for _, op in ipairs(WRITES) do if served[op] then out[op] = served[op] end end
  mark()
  return out
end

before_each(function()
  if not emu then skip("needs the embedded emulator") end
  emu.reset()
  s3.create_bucket{ Bucket = "site" }
  s3.create_bucket{ Bucket = "mirror" }
  dir = files.make_dir()
  fs.mkdir(dir .. "/src/empty/folder")
  write_tree(dir .. "/src", TREE)
  mark()
end)

after_each(function()
  if dir then files.remove_dir(dir) end
  if emu then emu.configure{ max_copy_size = 5368709120, min_part_size = 5 * MiB } end
end)

test("a tree goes up, comes down and is copied bucket to bucket byte for byte; a second sync sends nothing", function()
  local up = s3.sync{ from = dir .. "/src", to = { Bucket = "site", Prefix = "www" }, progress = false }
  expect(up).to_equal{ copied = 7, skipped = 0, deleted = 0, failed = 0, bytes = up.bytes, errors = {} }
  expect(writes()).to_equal{ PutObject = 7 }
  expect(read_bucket("site", "www/")).to_equal(TREE)
  mark()

  local down = s3.sync{ from = { Bucket = "site", Prefix = "www/" }, to = dir .. "/down", progress = false }
  expect(down.copied).to_equal(7)
  expect(read_tree(dir .. "/down")).to_equal(TREE)

  local across = s3.sync{ from = { Bucket = "site", Prefix = "www" }, to = { Bucket = "mirror" }, progress = false }
  expect(across.copied).to_equal(7)
  expect(read_bucket("mirror")).to_equal(TREE)
  expect(writes()).to_equal{ GetObject = 14, CopyObject = 7 }  -- 7 downloads, 7 reads of read_bucket

  for _, again in ipairs{
    s3.sync{ from = dir .. "/src", to = { Bucket = "site", Prefix = "www" }, progress = false },
    s3.sync{ from = { Bucket = "site", Prefix = "www" }, to = dir .. "/down", progress = false },
    s3.sync{ from = { Bucket = "site", Prefix = "www" }, to = { Bucket = "mirror" }, progress = false },
    s3.sync{ from = dir .. "/down", to = { Bucket = "site", Prefix = "www" }, progress = false },
  } do
    expect(again).to_equal{ copied = 0, skipped = 7, deleted = 0, failed = 0, bytes = 0, errors = {} }
  end
  expect(writes()).to_equal{}
end)

test("delete removes what the source lacks, never what an exclude keeps out, on either side", function()
  s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false }
  s3.put_object{ Bucket = "site", Object = "stale.txt", Body = "old" }
  s3.put_object{ Bucket = "site", Object = "keep/me.log", Body = "excluded" }
  local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, delete = true, exclude = { "*.log" }, progress = false }
  expect(r.deleted).to_equal(1)
  expect(r.copied).to_equal(0)
  local left = read_bucket("site")
  expect(left["stale.txt"]).to_be_nil()
  expect(left["keep/me.log"]).to_equal("excluded")

  s3.sync{ from = { Bucket = "site" }, to = dir .. "/down", progress = false }
  files.write(dir .. "/down/extra.txt", "x")
  files.write(dir .. "/down/local.log", "kept")
  local d = s3.sync{ from = { Bucket = "site" }, to = dir .. "/down", delete = true, exclude = { "*.log" }, progress = false }
  expect(d.deleted).to_equal(1)
  expect(fs.stat(dir .. "/down/extra.txt")).to_be_nil()
  expect(files.read(dir .. "/down/local.log")).to_equal("kept")
end)

test("a dry run returns the plan and sends no write", function()
  s3.put_object{ Bucket = "site", Object = "stale.txt", Body = "old" }
  mark()
  local seen = {}
  local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, delete = true, dry_run = true,
                     on_action = function(action, path) seen[#seen + 1] = action .. " " .. path end }
  expect(r.copied).to_equal(7)
  expect(r.deleted).to_equal(1)
  expect(r.dry_run).to_be(true)
  expect(seen).to_contain("copy index.html")
  expect(seen).to_contain("delete stale.txt")
  expect(since()).to_equal{ ListObjectsV2 = 1 }
  expect(read_bucket("site")).to_equal{ ["stale.txt"] = "old" }
end)

test("filters apply in order, the later winning", function()
  local function synced(args)
    emu.reset()
    s3.create_bucket{ Bucket = "site" }
    args.from, args.to, args.progress = dir .. "/src", { Bucket = "site" }, false
    s3.sync(args)
    local keys = {}
    for k in pairs(read_bucket("site")) do keys[#keys + 1] = k end
    table.sort(keys)
    return keys
  end
  expect(synced{ exclude = { "*" }, include = { "*.txt" } }).to_equal{ "a/b/c/deep.txt", "odd/100% + #1.txt",
    "unicode/café ☕.txt", "with space.txt" }
  expect(synced{ filters = { { "include", "*.txt" }, { "exclude", "*" } } }).to_equal{}
  expect(synced{ filters = { { "exclude", "/a/**" }, { "exclude", "/unicode/" }, { "exclude", "/odd/*" },
                             { "exclude", "/[0-9]*/**" } } }).to_equal{ " leading and trailing ", "index.html", "with space.txt" }
end)

test("compare: size ignores times, size-mtime sees a newer source, checksum sees equal sizes and times with other bytes", function()
  s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false }
  local object = s3.head_object{ Bucket = "site", Object = "index.html" }
  files.write(dir .. "/src/index.html", "<h1>HOME</h1>")  -- same size, other bytes
  local now = fs.stat(dir .. "/src/index.html").mtime
  fs.set_mtime(dir .. "/src/index.html", now - 3600)      -- and older than the object
  expect(s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, compare = "size", progress = false }.copied).to_equal(0)
  expect(s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false }.copied).to_equal(0)
  local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, compare = "checksum", progress = false }
  expect(r.copied).to_equal(1)
  expect(r.skipped).to_equal(6)
  expect(s3.get_object{ Bucket = "site", Object = "index.html" }.Body).to_equal("<h1>HOME</h1>")
  expect(object.ETag).to_not_equal(s3.head_object{ Bucket = "site", Object = "index.html" }.ETag)
  fs.set_mtime(dir .. "/src/with space.txt", now + 3600)  -- newer than its object
  expect(s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false }.copied).to_equal(1)
  expect(s3.check{ from = dir .. "/src", to = { Bucket = "site" } })
    .to_equal{ same = 7, differ = {}, only_in_from = {}, only_in_to = {}, failed = {} }
end)

test("checksum compares a file with a multipart ETag through the parts' MD5s", function()
  local big = ("0123456789abcdef"):rep(11 * MiB // 16)
  files.write(dir .. "/src/big.bin", big)
  local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, part_size = 5 * MiB, progress = false }
  expect(r.copied).to_equal(8)
  expect(s3.head_object{ Bucket = "site", Object = "big.bin" }.ETag).to_match('%-3"$')
  expect(s3.check{ from = dir .. "/src", to = { Bucket = "site" } }.same).to_equal(8)
  files.write(dir .. "/src/big.bin", big:sub(1, -2) .. "X")
  expect(s3.check{ from = dir .. "/src", to = { Bucket = "site" } }.differ).to_equal{ "big.bin" }
  expect(s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, compare = "checksum", part_size = 5 * MiB,
                  progress = false }.copied).to_equal(1)
  local down = s3.sync{ from = { Bucket = "site" }, to = dir .. "/down", part_size = 5 * MiB, progress = false }
  expect(down.copied).to_equal(8)
  expect(files.read(dir .. "/down/big.bin")).to_equal(big:sub(1, -2) .. "X")
  expect(s3.check{ from = { Bucket = "site" }, to = dir .. "/down" }.same).to_equal(8)
end)

test("failures on three objects: the rest are copied, the error carries the summary, a rerun sends those three", function()
  emu.fault{ operation = "PutObject", status = 403, code = "AccessDenied", times = 3 }
  local err = expect(function() s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false } end)
    .to_fail{ code = "SyncFailed", kind = "api" }
  expect(err.summary.copied).to_equal(4)
  expect(err.summary.failed).to_equal(3)
  expect(#err.summary.errors).to_equal(3)
  expect(err.summary.errors[1].error.code).to_equal("AccessDenied")
  expect(err.message).to_contain("3 of 7 copies and deletions failed")
  local failed = {}
  for _, e in ipairs(err.summary.errors) do failed[#failed + 1] = e.path end
  mark()
  local sent = {}
  local again = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false,
                         on_action = function(action, path) if action == "copy" then sent[#sent + 1] = path end end }
  expect(again.copied).to_equal(3)
  expect(again.skipped).to_equal(4)
  expect(writes()).to_equal{ PutObject = 3 }
  table.sort(failed)
  table.sort(sent)
  expect(sent).to_equal(failed)
  expect(read_bucket("site")).to_equal(TREE)

  emu.fault{ operation = "PutObject", status = 403, code = "AccessDenied", times = 1 }
  files.write(dir .. "/src/new.txt", "new")
  local collected = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, collect = true, progress = false }
  expect(collected.failed).to_equal(1)
  expect(collected.errors[1].path).to_equal("new.txt")
end)

test("a local name that is not UTF-8 fails with its reason; a key that cannot be a local name is not written", function()
  files.write(dir .. "/src/caf\xe9.txt", "latin-1")
  local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, collect = true, progress = false }
  expect(r.copied).to_equal(7)
  expect(r.failed).to_equal(1)
  expect(r.errors[1]).to_equal{ path = "caf\xe9.txt", error = "the name is not UTF-8, which an object key must be" }
  s3.put_object{ Bucket = "mirror", Object = "x/../../escape.txt", Body = "no" }
  s3.put_object{ Bucket = "mirror", Object = "fine.txt", Body = "yes" }
  local d = s3.sync{ from = { Bucket = "mirror", Prefix = "x" }, to = dir .. "/down/in", collect = true, progress = false }
  expect(d.failed).to_equal(1)
  expect(d.errors[1].error).to_contain("'..'")
  expect(fs.stat(dir .. "/escape.txt")).to_be_nil()
  expect(fs.stat(dir .. "/down/escape.txt")).to_be_nil()
end)

test("shards split the paths by their FNV-1a hash: disjoint, and together the whole tree", function()
  local seen = {}
  for index = 0, 2 do
    local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, shard = { index = index, count = 3 }, progress = false }
    seen[#seen + 1] = r.copied
  end
  expect(seen[1] + seen[2] + seen[3]).to_equal(7)
  expect(read_bucket("site")).to_equal(TREE)
  expect(require("cloud.sync").fnv1a32("a")).to_equal(0xe40c292c)  -- the published FNV-1a 32 value
  expect(function() s3.sync{ from = dir, to = { Bucket = "site" }, shard = { index = 3, count = 3 } } end)
    .to_fail("field 'shard' must be { index = 0 .. count - 1, count = n >= 1 }")
end)

test("progress sees done grow to total; the totals are final once planning is false", function()
  s3.put_object{ Bucket = "site", Object = "stale.txt", Body = "old" }
  local seen = {}
  local r = s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, delete = true,
                     progress = function(s) seen[#seen + 1] = s end }
  expect(r.copied + r.deleted).to_equal(8)
  expect(#seen).to_equal(9)  -- one call per action, and one at the end
  for i, s in ipairs(seen) do
    expect(s.done).to_equal(math.min(i, 8))
    expect(s.total >= s.done).to_be(true)
    expect(s.planning == true or s.planning == false).to_be(true)
  end
  local last = seen[#seen]
  expect(last.planning).to_be(false)
  expect(last.done).to_equal(8)
  expect(last.total).to_equal(8)
  expect(last.bytes).to_equal(r.bytes)
  expect(last.bytes_total).to_equal(r.bytes)
end)

test("delete keeps to the shard: each shard removes only its own paths, together every stale one", function()
  local fnv1a32 = require("cloud.sync").fnv1a32
  local stale = {}
  for i = 1, 8 do
    stale[i] = "stale-" .. i
    s3.put_object{ Bucket = "site", Object = stale[i], Body = "old" }
  end
  for index = 0, 1 do
    local deleted = {}
    s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, delete = true, shard = { index = index, count = 2 },
             progress = false, on_action = function(action, path) if action == "delete" then deleted[#deleted + 1] = path end end }
    for _, path in ipairs(deleted) do expect(fnv1a32(path) % 2).to_equal(index) end
    local left = read_bucket("site")
    for _, path in ipairs(stale) do
      expect(left[path] == nil).to_equal(fnv1a32(path) % 2 <= index)  -- gone once its shard ran
    end
  end
  expect(read_bucket("site")).to_equal(TREE)
end)

test("check reports what is the same, what differs and what is on one side only, transferring nothing", function()
  s3.sync{ from = dir .. "/src", to = { Bucket = "site" }, progress = false }
  files.write(dir .. "/src/index.html", "<h1>HOME</h1>")
  files.write(dir .. "/src/only here", "1")
  s3.put_object{ Bucket = "site", Object = "only there", Body = "2" }
  mark()
  expect(s3.check{ from = dir .. "/src", to = { Bucket = "site" } })
    .to_equal{ same = 6, differ = { "index.html" }, only_in_from = { "only here" }, only_in_to = { "only there" }, failed = {} }
  expect(writes()).to_equal{}
end)

-- A copy of `t` and of every table in it (functions and other values as they are).
local function deep_copy(t)
  if type(t) ~= "table" then return t end
  local out = {}
  for k, v in pairs(t) do out[k] = deep_copy(v) end
  return out
end

test("the options given to storage.sync, storage.check and commands.sync are left as they were", function()
  s3.put_object{ Bucket = "site", Object = "stale.txt", Body = "old" }
  local calls = {
    { s3.sync, { from = dir .. "/src", to = { Bucket = "site", Prefix = "www" }, delete = true, delete_all = true,
                 exclude = { "*.tmp" }, filters = { { "include", "*" } }, shard = { index = 0, count = 1 },
                 metadata = { team = "web" }, progress = false, on_action = function() end } },
    { s3.sync, { from = { Bucket = "site", Prefix = "www" }, to = dir .. "/down", compare = "checksum", progress = false } },
    { s3.sync, { from = { Bucket = "site" }, to = { Bucket = "mirror" }, delete = true, dry_run = true, on_action = function() end } },
    { s3.check, { from = dir .. "/src", to = { Bucket = "site", Prefix = "www" }, include = { "*" } } },
    { cloud.commands.sync, { dir .. "/src", "s3://mirror/w", delete = true, exclude = { "*.tmp" }, quiet = true } },
  }
  for _, call in ipairs(calls) do
    local fn, options = call[1], call[2]
    local before = deep_copy(options)
    fn(options)
    expect(options).to_equal(before)
  end
end)

test("bad arguments are refused before anything is sent", function()
  expect(function() s3.sync{ from = dir, to = dir } end).to_fail("'from' and 'to' cannot both be local directories")
  expect(function() s3.sync{ from = dir, to = { Bucket = "site" }, compare = "md5" } end)
    .to_fail("field 'compare' must be \"size-mtime\", \"size\" or \"checksum\"")
  expect(function() s3.sync{ from = dir, to = { Bucket = "site" }, dlete = true } end)
    .to_fail("unknown field 'dlete', did you mean 'delete'?")
  -- check compares: sync's deletion and copy options are not its own
  expect(function() s3.check{ from = dir, to = { Bucket = "site" }, delete = true } end)
    .to_fail("unknown field 'delete'")
  expect(function() s3.check{ from = dir, to = { Bucket = "site" }, dry_run = true } end)
    .to_fail("unknown field 'dry_run'")
  expect(function() s3.sync{ from = dir, to = { Bucket = "site" }, exclude = { "[a" } } end).to_fail{ code = "InvalidGlob" }
  expect(function() s3.get_object{ Bucket = "site", Object = "x", durable = false } end)
    .to_fail{ field = "durable", problem = "only with file" }
end)

test("bucket to bucket: an object above the copy limit is copied in UploadPartCopy parts on the server", function()
  emu.configure{ max_copy_size = 1000, min_part_size = 100 }
  local big = ("0123456789"):rep(250)  -- 2500 bytes: above the lowered limit
  s3.put_object{ Bucket = "site", Object = "big.bin", Body = big }
  s3.put_object{ Bucket = "site", Object = "small.txt", Body = "small" }
  expect(function() s3.copy_object{ Bucket = "mirror", Object = "big.bin", CopySource = "site/big.bin" } end)
    .to_fail{ code = "InvalidRequest", message = "larger than the maximum allowable size for a copy source: 1000" }
  mark()
  local r = s3.sync{ from = { Bucket = "site" }, to = { Bucket = "mirror" }, copy_limit = 1000, part_size = 1000,
                     progress = false }
  expect(r.copied).to_equal(2)
  expect(since()).to_equal{ ListObjectsV2 = 2, CopyObject = 1, HeadObject = 1, CreateMultipartUpload = 1, UploadPartCopy = 3,
                            CompleteMultipartUpload = 1 }
  expect(s3.get_object{ Bucket = "mirror", Object = "big.bin" }.Body).to_equal(big)
  expect(s3.head_object{ Bucket = "mirror", Object = "big.bin" }.ETag).to_match('%-3"$')
  expect(s3.sync{ from = { Bucket = "site" }, to = { Bucket = "mirror" }, copy_limit = 1000, progress = false }.copied).to_equal(0)
  local upload = s3.create_multipart_upload{ Bucket = "mirror", Object = "x" }.UploadId
  local part = s3.upload_part_copy{ Bucket = "mirror", Object = "x", uploadId = upload,
                                    partNumber = 1, CopySource = "site/small.txt", CopySourceRange = "bytes=1-3" }
  expect(part.ETag).to_equal('"' .. cloud.md5("mal") .. '"')
  for range, code in pairs{ ["bytes=3-"] = "InvalidArgument", ["bytes=2-9"] = "InvalidRange", ["bytes=3-2"] = "InvalidRange" } do
    expect(function()
      s3.upload_part_copy{ Bucket = "mirror", Object = "x", uploadId = s3.list_multipart_uploads{ Bucket = "mirror" }.Upload[1].UploadId,
                           partNumber = 2, CopySource = "site/small.txt", CopySourceRange = range }
    end).to_fail{ code = code }
  end
  expect(cloud.describe("CopyObject").limits).to_equal{ maxSourceBytes = 5368709120 }
end)
