-- What sync and the transfers keep of a file, against the embedded emulator: the type
-- of each file's name from the system's table (none for an unknown extension), the
-- content_type, cache_control and metadata options, upload_file's headers through
-- PutObject and CreateMultipartUpload, the file's mtime in the metadata `mtime`
-- (rclone's form) compared when the listing says the source is newer (a file with a
-- future mtime is not sent again), a download's mtime restored from it, and bucket to
-- bucket copies (CopyObject and UploadPartCopy) keeping types and metadata.
-- Run: cloudlua test tests/lua/sync_metadata_test.lua

local s3 = cloud.storage
local emu = cloud.emulator
local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
local MiB = 1024 * 1024
local dir

-- A website folder: name -> content.
local SITE = {
  ["index.html"] = "<h1>home</h1>", ["style.css"] = "h1{}", ["app.js"] = "x=1", ["logo.svg"] = "<svg/>",
  ["data.json"] = "{}", ["module.wasm"] = "\0asm", ["notes.no-such-extension"] = "?",
}
local TYPES = {
  ["index.html"] = "text/html", ["style.css"] = "text/css", ["app.js"] = "text/javascript",
  ["logo.svg"] = "image/svg+xml", ["data.json"] = "application/json", ["module.wasm"] = "application/wasm",
  ["notes.no-such-extension"] = "binary/octet-stream",  -- none sent: the server's default
}

local requests = dofile("tests/lua/support/requests.lua")
local mark, since = requests.mark, requests.since

-- The ContentType of each object under bucket/prefix: relative path -> type.
local function types_of(bucket, prefix)
  local out = {}
  for name in pairs(SITE) do
    out[name] = s3.head_object{ Bucket = bucket, Object = (prefix or "") .. name }.ContentType
  end
  return out
end

before_each(function()
  if not emu then skip("needs the embedded emulator") end
  emu.reset()
  s3.create_bucket{ Bucket = "site" }
  s3.create_bucket{ Bucket = "mirror" }
  dir = files.make_dir()
  fs.mkdir(dir .. "/www")
  for name, content in pairs(SITE) do files.write(dir .. "/www/" .. name, content) end
end)

after_each(function()
  if dir then files.remove_dir(dir) end
  if emu then emu.configure{ max_copy_size = 5368709120, min_part_size = 5 * MiB } end
end)

test("a website folder synced gets each file's type from its name; an unknown extension none", function()
  s3.sync{ from = dir .. "/www", to = "s3://site/www", progress = false }
  expect(types_of("site", "www/")).to_equal(TYPES)
  expect(fs.media_type("a/b.HTML")).to_equal("text/html")
  expect(fs.media_type("README")).to_equal(nil)
end)

test("put_object{ file = } and upload_file type the object from the file's name unless told", function()
  s3.put_object{ Bucket = "site", Object = "p", file = dir .. "/www/style.css" }
  expect(s3.head_object{ Bucket = "site", Object = "p" }.ContentType).to_equal("text/css")
  s3.put_object{ Bucket = "site", Object = "q", file = dir .. "/www/style.css", ContentType = "text/plain" }
  expect(s3.head_object{ Bucket = "site", Object = "q" }.ContentType).to_equal("text/plain")
  s3.put_object{ Bucket = "site", Object = "r", Body = "x" }  -- no file: nothing guessed
  expect(s3.head_object{ Bucket = "site", Object = "r" }.ContentType).to_equal("binary/octet-stream")
  s3.upload_file{ Bucket = "site", Object = "u", file = dir .. "/www/app.js", CacheControl = "max-age=60",
                  Metadata = { owner = "web" } }
  local h = s3.head_object{ Bucket = "site", Object = "u" }
  expect(h.ContentType).to_equal("text/javascript")
  expect(h.CacheControl).to_equal("max-age=60")
  expect(h.Metadata.owner).to_equal("web")
  expect(math.floor(tonumber(h.Metadata.mtime))).to_equal(math.floor(fs.stat(dir .. "/www/app.js").mtime))
end)

test("upload_file in parts sends its headers with CreateMultipartUpload", function()
  local big = dir .. "/big.svg"
  files.write(big, ("<svg/>"):rep(MiB))  -- 6 MiB: two parts of 5 MiB
  fs.set_mtime(big, 1700000000)
  s3.upload_file{ Bucket = "site", Object = "big.svg", file = big, part_size = 5 * MiB, progress = false,
                  ContentDisposition = "inline", Metadata = { k = "v" } }
  local h = s3.head_object{ Bucket = "site", Object = "big.svg" }
  expect(h.ETag).to_match('%-%d+"$')
  expect(h.ContentType).to_equal("image/svg+xml")
  expect(h.ContentDisposition).to_equal("inline")
  expect(h.Metadata).to_equal{ k = "v", mtime = "1700000000" }
end)

test("sync's content_type, cache_control and metadata apply to every object uploaded or copied", function()
  s3.sync{ from = dir .. "/www", to = "s3://site", progress = false, cache_control = "no-cache",
           metadata = { release = "7" } }
  for name in pairs(SITE) do
    local h = s3.head_object{ Bucket = "site", Object = name }
    expect(h.ContentType).to_equal(TYPES[name])
    expect(h.CacheControl).to_equal("no-cache")
    expect(h.Metadata.release).to_equal("7")
    expect(math.floor(tonumber(h.Metadata.mtime))).to_equal(math.floor(fs.stat(dir .. "/www/" .. name).mtime))
  end
  s3.sync{ from = "s3://site", to = "s3://mirror", progress = false, content_type = "text/plain",
           metadata = { stage = "copy" } }
  local h = s3.head_object{ Bucket = "mirror", Object = "index.html" }
  expect(h.ContentType).to_equal("text/plain")
  expect(h.CacheControl).to_equal("no-cache")  -- the source's, kept
  expect(h.Metadata.release).to_equal("7")
  expect(h.Metadata.stage).to_equal("copy")
  expect(h.Metadata.mtime).to_not_equal(nil)
  expect(function() s3.sync{ from = dir .. "/www", to = "s3://site", metadata = { k = 1 } } end)
    .to_fail("field 'metadata' must be a table of strings")
  expect(function() s3.sync{ from = dir .. "/www", to = "s3://site", cache_control = true } end)
    .to_fail("field 'cache_control' must be a string")
end)

test("a file with a future mtime is not sent again on the next sync", function()
  local future = os.time() + 86400 * 30
  fs.set_mtime(dir .. "/www/index.html", future)
  s3.sync{ from = dir .. "/www", to = "s3://site", progress = false }
  expect(s3.head_object{ Bucket = "site", Object = "index.html" }.Metadata.mtime).to_equal(("%d"):format(future))
  mark()
  local again = s3.sync{ from = dir .. "/www", to = "s3://site", progress = false }
  expect(again.copied).to_equal(0)
  expect(since().PutObject).to_equal(nil)
  expect(since().HeadObject).to_equal(1)  -- asked only for the one the listing says is newer
  fs.set_mtime(dir .. "/www/index.html", future + 5)  -- changed since: sent
  expect(s3.sync{ from = dir .. "/www", to = "s3://site", progress = false }.copied).to_equal(1)
end)

test("an object whose metadata mtime another tool wrote compares by it; a download restores it", function()
  local file = dir .. "/www/index.html"
  local later = os.time() + 3600
  fs.set_mtime(file, later)  -- newer than the object put below
  s3.put_object{ Bucket = "site", Object = "index.html", Body = SITE["index.html"],
                 Metadata = { Mtime = ("%d.5"):format(later) } }  -- rclone's X-Amz-Meta-Mtime
  local r = s3.sync{ from = dir .. "/www", to = "s3://site", progress = false }
  expect(r.copied).to_equal(6)  -- all but index.html
  expect(r.skipped).to_equal(1)
  fs.mkdir(dir .. "/down")
  s3.sync{ from = "s3://site", to = dir .. "/down", progress = false }
  for name in pairs(SITE) do
    expect(math.floor(fs.stat(dir .. "/down/" .. name).mtime)).to_equal(math.floor(fs.stat(dir .. "/www/" .. name).mtime))
  end
  mark()
  expect(s3.sync{ from = "s3://site", to = dir .. "/down", progress = false }.copied).to_equal(0)
  expect(since().GetObject).to_equal(nil)
  -- download_file (a large object's path) restores it too
  s3.download_file{ Bucket = "site", Object = "style.css", file = dir .. "/one.css" }
  expect(math.floor(fs.stat(dir .. "/one.css").mtime)).to_equal(math.floor(fs.stat(dir .. "/www/style.css").mtime))
  s3.put_object{ Bucket = "site", Object = "plain", Body = "x" }  -- no mtime: LastModified
  s3.download_file{ Bucket = "site", Object = "plain", file = dir .. "/plain" }
  local modified = require("cloud.transfer_parts").epoch_of(s3.head_object{ Bucket = "site", Object = "plain" }.LastModified)
  expect(math.floor(fs.stat(dir .. "/plain").mtime)).to_equal(modified)
end)

test("bucket to bucket keeps ContentType and Metadata, through CopyObject and UploadPartCopy", function()
  emu.configure{ max_copy_size = 1000, min_part_size = 100 }
  s3.put_object{ Bucket = "site", Object = "big.json", Body = ("{}"):rep(1000), ContentType = "application/json",
                 CacheControl = "max-age=5", Metadata = { a = "1" } }
  s3.put_object{ Bucket = "site", Object = "small.css", Body = "h1{}", ContentType = "text/css", Metadata = { b = "2" } }
  s3.sync{ from = "s3://site", to = "s3://mirror", copy_limit = 1000, part_size = 1000, progress = false }
  local big, small = s3.head_object{ Bucket = "mirror", Object = "big.json" }, s3.head_object{ Bucket = "mirror", Object = "small.css" }
  expect(big.ETag).to_match('%-2"$')
  expect{ big.ContentType, big.CacheControl, big.Metadata }.to_equal{ "application/json", "max-age=5", { a = "1" } }
  expect{ small.ContentType, small.Metadata }.to_equal{ "text/css", { b = "2" } }
end)
