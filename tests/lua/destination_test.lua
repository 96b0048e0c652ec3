-- What a download may write in its destination, against the embedded emulator: part
-- files with names of their own (an object named like another's part file, a user's
-- file of that name, a name of NAME_MAX bytes, two downloads of one target at once,
-- what a killed run left), and links in the destination never followed (sync down into
-- a linked folder, delete with follow_links, get_object and download_file beneath a
-- folder, cloud.fs's writes beneath one).
-- Run: cloudlua test tests/lua/destination_test.lua

local s3 = cloud.storage
local emu = cloud.emulator
local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
local cli = dofile("tests/lua/support/cli.lua")
local MiB = 1024 * 1024
local dir

-- The names in folder `path` (hidden ones too), sorted.
local function names(path)
  local out = {}
  for _, e in ipairs(fs.list(path)) do out[#out + 1] = e.path end
  table.sort(out)
  return out
end

before_each(function()
  if not emu then skip("needs the embedded emulator") end
  emu.reset()
  s3.create_bucket{ Bucket = "bkt" }
  dir = files.make_dir()
end)

after_each(function()
  if dir then files.remove_dir(dir) end
end)

---------------------------------------------------------------- part files

test("objects X and X.cloudlua-part synced down at once each get their own bytes", function()
  local big = ("x"):rep(3 * MiB)
  s3.put_object{ Bucket = "bkt", Object = "X", Body = big }
  s3.put_object{ Bucket = "bkt", Object = "X.cloudlua-part", Body = "other object!" }
  emu.fault{ operation = "GetObject", delay = 0.5 }  -- X's answer comes after the other's
  local r = s3.sync{ from = { Bucket = "bkt" }, to = dir .. "/down", concurrency = 4, progress = false }
  expect(r.copied).to_equal(2)
  expect(files.read(dir .. "/down/X") == big).to_equal(true)
  expect(files.read(dir .. "/down/X.cloudlua-part")).to_equal("other object!")
  expect(names(dir .. "/down")).to_equal{ "X", "X.cloudlua-part" }
end)

test("a user's own NAME.cloudlua-part survives a download of NAME", function()
  s3.put_object{ Bucket = "bkt", Object = "NAME", Body = "object" }
  files.write(dir .. "/NAME.cloudlua-part", "mine")
  s3.sync{ from = { Bucket = "bkt" }, to = dir, progress = false }
  s3.get_object{ Bucket = "bkt", Object = "NAME", file = dir .. "/NAME" }
  s3.download_file{ Bucket = "bkt", Object = "NAME", file = dir .. "/NAME", progress = false }
  expect(files.read(dir .. "/NAME")).to_equal("object")
  expect(files.read(dir .. "/NAME.cloudlua-part")).to_equal("mine")
  expect(names(dir)).to_equal{ "NAME", "NAME.cloudlua-part" }
end)

test("a name of 255 bytes downloads, alone and in a sync", function()
  local long = ("n"):rep(255)
  s3.put_object{ Bucket = "bkt", Object = long, Body = "long" }
  s3.get_object{ Bucket = "bkt", Object = long, file = dir .. "/" .. long }
  expect(files.read(dir .. "/" .. long)).to_equal("long")
  local r = s3.sync{ from = { Bucket = "bkt" }, to = dir .. "/down", progress = false }
  expect(r.copied).to_equal(1)
  expect(files.read(dir .. "/down/" .. long)).to_equal("long")
end)

test("two downloads of one target never share a part file; each commits whole", function()
  local one, two = fs.part(dir .. "/t"), fs.part(dir .. "/t")
  expect(one:path() ~= two:path()).to_equal(true)
  expect(#one:path() - #dir - 1 < 30).to_equal(true)  -- the name does not grow with the target's
  files.write(one:path(), "one")
  files.write(two:path(), "two")
  one:commit(dir .. "/t")
  expect(files.read(dir .. "/t")).to_equal("one")
  two:commit(dir .. "/t")
  expect(files.read(dir .. "/t")).to_equal("two")
  expect(names(dir)).to_equal{ "t" }
  s3.put_object{ Bucket = "bkt", Object = "a", Body = ("a"):rep(100000) }
  s3.put_object{ Bucket = "bkt", Object = "b", Body = ("b"):rep(100000) }
  emu.fault{ operation = "GetObject", delay = 0.3 }
  cloud.map({ "a", "b" }, function(key) s3.get_object{ Bucket = "bkt", Object = key, file = dir .. "/t" } end)
  local got = files.read(dir .. "/t")
  expect(got == ("a"):rep(100000) or got == ("b"):rep(100000)).to_equal(true)
  expect(names(dir)).to_equal{ "t" }
end)

test("a part file left by a killed run is told from a user's file by its mark and its lock", function()
  local live = fs.part(dir .. "/t")
  expect(fs.part_state(live:path())).to_equal("live")
  local name = live:path():match("[^/]+$")
  expect(name:match("^%.cloudlua%-%w+%.part$") ~= nil).to_equal(true)
  -- a user's file of that very form of name, without the mark: never ours
  files.write(dir .. "/.cloudlua-abcdefghij.part", "mine")
  expect(fs.part_state(dir .. "/.cloudlua-abcdefghij.part")).to_be_nil()
  expect(fs.part_state(dir .. "/.cloudlua-abcdefghij.part", { remove_stale = true })).to_be_nil()
  -- a killed run: the mark stays, the lock goes with the process
  local left, _, code = cli.cloudlua("-e " .. cli.quote(("io.write(cloud.fs.part(%q):path()) io.stdout:flush() os.exit(9, false)")
    :format(dir .. "/t")))
  expect(code).to_equal(9)  -- exits without closing anything: as kill -9 would, it leaves its part file
  expect(left:match("/%.cloudlua%-%w+%.part$") ~= nil).to_equal(true)
  expect(fs.part_state(left)).to_equal("stale")
  s3.put_object{ Bucket = "bkt", Object = "t", Body = "t" }
  s3.sync{ from = { Bucket = "bkt" }, to = dir, progress = false }  -- lists it, removes it, copies nothing of it
  expect(fs.stat(left)).to_be_nil()
  expect(files.read(dir .. "/.cloudlua-abcdefghij.part")).to_equal("mine")
  expect(fs.part_state(live:path())).to_equal("live")
  live:discard()
end)

---------------------------------------------------------------- links

test("sync down writes nothing through a linked folder of the destination: that file fails", function()
  fs.mkdir(dir .. "/dest")
  fs.mkdir(dir .. "/elsewhere")
  assert(os.execute(("ln -s '%s/elsewhere' '%s/dest/sub'"):format(dir, dir)))
  s3.put_object{ Bucket = "bkt", Object = "sub/f.txt", Body = "f" }
  s3.put_object{ Bucket = "bkt", Object = "sub/deeper/g.txt", Body = ("g"):rep(6 * MiB) }
  s3.put_object{ Bucket = "bkt", Object = "top.txt", Body = "top" }
  local r = s3.sync{ from = { Bucket = "bkt" }, to = dir .. "/dest", collect = true, progress = false, part_size = 5 * MiB }
  expect(r.copied).to_equal(1)
  expect(r.failed).to_equal(2)
  for _, failure in ipairs(r.errors) do
    expect(failure.error.kind).to_equal("io")
    expect(failure.error.code).to_equal("LinkInDestination")
    expect(failure.error.message).to_contain("is a symbolic link")
  end
  expect(names(dir .. "/elsewhere")).to_equal{}
  expect(files.read(dir .. "/dest/top.txt")).to_equal("top")
  -- get_object and download_file beneath the destination: the same refusal
  expect(s3.get_object, { Bucket = "bkt", Object = "top.txt", file = dir .. "/dest/sub/top.txt", beneath = dir .. "/dest" })
    .to_fail{ kind = "io", code = "LinkInDestination" }
  expect(s3.download_file, { Bucket = "bkt", Object = "top.txt", file = dir .. "/dest/sub/top.txt",
                             beneath = dir .. "/dest", progress = false }).to_fail{ kind = "io", code = "LinkInDestination" }
  expect(names(dir .. "/elsewhere")).to_equal{}
end)

test("with follow_links and delete, nothing outside the destination is deleted", function()
  fs.mkdir(dir .. "/dest")
  fs.mkdir(dir .. "/elsewhere")
  files.write(dir .. "/elsewhere/victim.txt", "keep me")
  files.write(dir .. "/dest/stale.txt", "stale")
  assert(os.execute(("ln -s '%s/elsewhere' '%s/dest/sub'"):format(dir, dir)))
  s3.put_object{ Bucket = "bkt", Object = "a.txt", Body = "a" }
  local r = s3.sync{ from = { Bucket = "bkt" }, to = dir .. "/dest", delete = true, follow_links = true,
                     collect = true, progress = false }
  expect(r.copied).to_equal(1)
  expect(r.deleted).to_equal(1)
  expect(files.read(dir .. "/elsewhere/victim.txt")).to_equal("keep me")
  expect(fs.stat(dir .. "/dest/sub", { follow_links = false }).type).to_equal("link")
end)

test("cloud.fs's writes beneath a folder never cross a link", function()
  fs.mkdir(dir .. "/dest")
  fs.mkdir(dir .. "/elsewhere")
  files.write(dir .. "/elsewhere/victim.txt", "keep me")
  assert(os.execute(("ln -s '%s/elsewhere' '%s/dest/sub'"):format(dir, dir)))
  local root = dir .. "/dest"
  expect(fs.remove, dir .. "/dest/sub/victim.txt", { beneath = root }).to_fail{ kind = "io", code = "LinkInDestination" }
  expect(fs.mkdir, dir .. "/dest/sub/new", { beneath = root }).to_fail{ kind = "io", code = "LinkInDestination" }
  expect(fs.part, dir .. "/dest/sub/x", { beneath = root }).to_fail{ kind = "io", code = "LinkInDestination" }
  expect(fs.mkdir(dir .. "/dest/a/b", { beneath = root })).to_equal(true)
  expect(fs.mkdir(dir .. "/dest/a/b", { beneath = root })).to_equal(false)
  expect(files.read(dir .. "/elsewhere/victim.txt")).to_equal("keep me")
  expect(names(dir .. "/elsewhere")).to_equal{ "victim.txt" }
  expect(fs.remove(dir .. "/dest/sub", { beneath = root })).to_equal(true)  -- the link itself goes
  expect(files.read(dir .. "/elsewhere/victim.txt")).to_equal("keep me")
end)
