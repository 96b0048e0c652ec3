-- cloud.fs: a tree listed (and walked, in the same order, a folder's contents after a
-- sibling that sorts below '/') in byte order of its relative paths, with names that hold
-- spaces, a newline, bytes that are not UTF-8 and a 900-byte path; recursive or not;
-- links listed as links, or followed, and a link loop that ends; stat, mkdir with
-- parents, remove (recursive or not), set_mtime with fractions, sync, create (never
-- through a link); and io errors
-- that name the path and the system's reason.
-- Run: cloudlua test tests/lua/fs_test.lua

local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
local dir

before_each(function() dir = files.make_dir() end)
after_each(function() if dir then files.remove_dir(dir) end end)

-- The paths of a listing, in its order.
local function paths(list)
  local out = {}
  for i, e in ipairs(list) do out[i] = e.path end
  return out
end

-- A name 900 bytes long from the tree's root: eight directories of 99 bytes and a file.
local function long_path()
  local parts = {}
  for i = 1, 8 do parts[i] = ("%d"):format(i):rep(99) end
  local d = table.concat(parts, "/")
  return d, d .. "/" .. ("f"):rep(899 - #d)
end

test("a tree is listed in the byte order of its relative paths, every name as its bytes", function()
  fs.mkdir(dir .. "/a/b")
  fs.mkdir(dir .. "/empty")
  files.write(dir .. "/a.txt", "1")
  files.write(dir .. "/a/b/c.txt", "22")
  files.write(dir .. "/a0", "")
  files.write(dir .. "/with space ", "333")
  files.write(dir .. "/new\nline", "4")
  files.write(dir .. "/caf\xe9", "latin-1")
  files.write(dir .. "/100%+#.txt", "x")
  local list = fs.list(dir, { recursive = true })
  expect(paths(list)).to_equal{ "100%+#.txt", "a", "a.txt", "a/b", "a/b/c.txt", "a0", "caf\xe9", "empty",
                                "new\nline", "with space " }
  expect(list[5]).to_equal{ path = "a/b/c.txt", size = 2, mtime = list[5].mtime, type = "file" }
  expect(list[2].type).to_equal("dir")
  expect(list[8].type).to_equal("dir")
  expect(math.type(list[5].mtime)).to_equal("float")
  expect(paths(fs.list(dir))).to_equal{ "100%+#.txt", "a", "a.txt", "a0", "caf\xe9", "empty", "new\nline", "with space " }
end)

test("walk gives list's entries in list's order, a folder's contents after a sibling that sorts below '/'", function()
  -- "a-c" and "a.b" sort between the folder "a" and what is under it ("a/..."): '-'
  -- and '.' are below '/'; "a0" after it ('0' is above '/').
  fs.mkdir(dir .. "/a/b")
  fs.mkdir(dir .. "/a-c")
  for _, name in ipairs{ "a/b/x", "a/z", "a-c/y", "a.b", "a0", "a/b-", "a/b.c", "a-" } do files.write(dir .. "/" .. name, name) end
  local walked = {}
  for e in fs.walk(dir) do walked[#walked + 1] = e end
  local expected = { "a", "a-", "a-c", "a-c/y", "a.b", "a/b", "a/b-", "a/b.c", "a/b/x", "a/z", "a0" }
  expect(paths(walked)).to_equal(expected)
  local sorted = paths(walked)
  table.sort(sorted)  -- Lua's string order is the bytes' (strcoll in the C locale)
  expect(sorted).to_equal(expected)
  expect(walked).to_equal(fs.list(dir, { recursive = true }))
  local top = {}
  for e in fs.walk(dir, { recursive = false }) do top[#top + 1] = e.path end
  expect(top).to_equal{ "a", "a-", "a-c", "a.b", "a0" }
  expect(function() fs.walk(dir .. "/none") end).to_fail{ kind = "io", code = "ENOENT", operation = "cloud.fs.walk" }
end)

test("a 900-byte relative path is listed, stat'ed and removed", function()
  local d, name = long_path()
  expect(#name).to_equal(900)
  fs.mkdir(dir .. "/" .. d)
  files.write(dir .. "/" .. name, "deep")
  local list = fs.list(dir, { recursive = true })
  expect(list[#list].path).to_equal(name)
  expect(list[#list].size).to_equal(4)
  expect(fs.stat(dir .. "/" .. name).size).to_equal(4)
  expect(fs.remove(dir .. "/" .. ("1"):rep(99), { recursive = true })).to_be(true)
  expect(fs.list(dir)).to_equal{}
end)

test("links are listed as links unless followed; a link loop is listed once and ends the walk", function()
  fs.mkdir(dir .. "/d/e")
  files.write(dir .. "/d/e/f", "abc")
  assert(os.execute(("ln -s e '%s/d/to_e' && ln -s .. '%s/d/e/up' && ln -s f '%s/d/e/g'"):format(dir, dir, dir)))
  expect(paths(fs.list(dir, { recursive = true }))).to_equal{ "d", "d/e", "d/e/f", "d/e/g", "d/e/up", "d/to_e" }
  expect(fs.list(dir .. "/d/e")[2]).to_equal{ path = "g", size = 1, mtime = fs.list(dir .. "/d/e")[2].mtime, type = "link" }
  local followed = fs.list(dir, { recursive = true, follow_links = true })
  expect(paths(followed)).to_equal{ "d", "d/e", "d/e/f", "d/e/g", "d/e/up", "d/to_e", "d/to_e/f", "d/to_e/g",
                                    "d/to_e/up" }
  local by_path = {}
  for _, e in ipairs(followed) do by_path[e.path] = e end
  expect(by_path["d/e/g"].type).to_equal("file")
  expect(by_path["d/e/g"].size).to_equal(3)
  expect(by_path["d/e/up"].type).to_equal("link")  -- its target is an ancestor: not entered
  expect(by_path["d/to_e"].type).to_equal("dir")
end)

test("stat gives a file's fields and nil when nothing is there; mkdir makes parents; remove says what it did", function()
  files.write(dir .. "/f", "12345")
  local st = fs.stat(dir .. "/f")
  expect(st.size).to_equal(5)
  expect(st.type).to_equal("file")
  expect(st.path).to_equal(dir .. "/f")
  expect(fs.stat(dir .. "/missing")).to_be_nil()
  expect(fs.stat(dir .. "/f/under")).to_be_nil()
  expect(fs.mkdir(dir .. "/x/y/z")).to_be(true)
  expect(fs.mkdir(dir .. "/x/y/z")).to_be(false)
  expect(fs.stat(dir .. "/x/y").type).to_equal("dir")
  expect(fs.remove(dir .. "/f")).to_be(true)
  expect(fs.remove(dir .. "/f")).to_be(false)
  expect(function() fs.remove(dir .. "/x") end).to_fail{ kind = "io", code = "ENOTEMPTY", message = dir .. "/x" }
  expect(fs.remove(dir .. "/x", { recursive = true })).to_be(true)
  expect(fs.stat(dir .. "/x")).to_be_nil()
end)

test("set_mtime sets the time to the fraction of a second; sync makes the file system durable", function()
  files.write(dir .. "/f", "1")
  fs.set_mtime(dir .. "/f", 1700000000.25)
  expect(fs.stat(dir .. "/f").mtime).to_equal(1700000000.25)
  expect(fs.list(dir)[1].mtime).to_equal(1700000000.25)
  fs.sync(dir)           -- the file system (syncfs)
  fs.sync(dir .. "/f")   -- one file (fsync)
  expect(function() fs.sync(dir .. "/none") end).to_fail{ kind = "io", code = "ENOENT", operation = "cloud.fs.sync" }
  expect(function() fs.set_mtime(dir .. "/none", 1) end).to_fail{ kind = "io", code = "ENOENT" }
end)

test("failures are io errors naming the path and the system's reason; bad arguments in lauxlib's words", function()
  local err = expect(function() fs.list(dir .. "/none") end).to_fail{ kind = "io", code = "ENOENT", operation = "cloud.fs.list" }
  expect(err.message).to_equal("cannot list '" .. dir .. "/none': No such file or directory")
  expect(tostring(err)).to_equal("io error in cloud.fs.list: ENOENT: cannot list '" .. dir .. "/none': No such file or directory")
  files.write(dir .. "/file", "")
  expect(function() fs.list(dir .. "/file") end).to_fail{ kind = "io", code = "ENOTDIR" }
  fs.mkdir(dir .. "/closed/inner")
  assert(os.execute("chmod 000 '" .. dir .. "/closed'"))
  local ok, e = pcall(fs.list, dir, { recursive = true })
  assert(os.execute("chmod 700 '" .. dir .. "/closed'"))
  if not ok then  -- root reads every directory: then the listing succeeds
    expect(e.kind).to_equal("io")
    expect(e.code).to_equal("EACCES")
    expect(e.message).to_contain(dir .. "/closed")
  end
  expect(function() fs.list() end).to_fail("bad argument #1 to 'cloud.fs.list' (string expected, got no value)")
  expect(function() fs.list(dir, { recursive = 1 }) end)
    .to_fail("bad argument #2 to 'cloud.fs.list' (field 'recursive' must be a boolean, got number)")
  expect(function() fs.set_mtime(dir .. "/file", -1) end).to_fail("bad argument #2 to 'cloud.fs.set_mtime'")
end)

test("create makes a new empty file, and refuses a file or a link already at the name, leaving its target alone", function()
  fs.create(dir .. "/part")
  expect(fs.stat(dir .. "/part").size).to_equal(0)
  expect(function() fs.create(dir .. "/part") end).to_fail{ kind = "io", code = "EEXIST", operation = "cloud.fs.create" }
  files.write(dir .. "/target", "keep")
  assert(os.execute("ln -s '" .. dir .. "/target' '" .. dir .. "/planted'"))
  expect(function() fs.create(dir .. "/planted") end).to_fail{ kind = "io", code = "EEXIST" }
  expect(files.read(dir .. "/target")).to_equal("keep")
  expect(function() fs.create(dir .. "/no/such/part") end).to_fail{ kind = "io", code = "ENOENT" }
end)

test("glob matches relative paths: * within a folder, ** across, rooted with /, bad globs refused", function()
  local g = fs.glob("*.tmp")
  expect(g("a.tmp")).to_be(true)
  expect(g("x/y/a.tmp")).to_be(true)
  expect(g("a.tmpx")).to_be(false)
  expect(fs.glob("/a/**/c")("a/b/d/c")).to_be(true)
  expect(fs.glob("/a/*")("a/b/c")).to_be(false)
  expect(fs.glob("caf?")("caf\xe9")).to_be(true)
  expect(tostring(g)).to_match("^cloud%.glob %(")
  expect(function() fs.glob("[a") end).to_fail{ kind = "config", code = "InvalidGlob", message = "bad glob '[a'" }
end)
