-- `cloudlua sync` and `cloudlua check` (lua/commands.lua, which scripts/sync.lua and
-- scripts/check.lua run): in this state against the embedded emulator, from their
-- command line's words (up and down with s3:// and cloud:// locations, --delete with
-- --exclude, --dry-run, --exclude and --include in the order typed, --output json
-- lines, a usage error), and the scripts as separate processes for their exit status
-- (0, 1 when something failed or differs) and what they print.

local emu = cloud.emulator
local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
-- A function that runs the command `name` on its words in this state and returns what
-- it printed, one string per line; a usage error raises its message, a status of 1
-- raises "(exit 1)".
local function runner(name)
  return function(...)
    local printed, real_print = {}, print
    print = function(...) printed[#printed + 1] = table.concat({ ... }, "\t") end  -- luacheck: ignore 121
    local ok, r = pcall(cloud.commands.run, name, ...)
    print = real_print  -- luacheck: ignore 121
    if not ok then error(type(r) == "table" and r.message or r, 0) end
    if r.status ~= 0 then error(("(exit %d)"):format(r.status), 0) end
    return printed
  end
end
local sync, check = runner("sync"), runner("check")
local bin = os.getenv("CLOUDLUA_TEST_BIN")
local dir

local function write_tree(root, tree)
  for path, content in pairs(tree) do
    fs.mkdir((root .. "/" .. path):match("^(.*)/"))
    files.write(root .. "/" .. path, content)
  end
end

local function keys(bucket)
  local out = {}
  for _, o in ipairs(cloud.storage.list_objects_v2{ Bucket = bucket }.Contents or {}) do out[#out + 1] = o.Key end
  return out
end

before_each(function()
  if not emu then skip("needs the embedded emulator") end
  emu.reset()
  emu.seed{ buckets = { "site" } }
  dir = files.make_dir()
  write_tree(dir .. "/build", { ["index.html"] = "<h1>hi</h1>", ["img/logo.png"] = "png", ["tmp/x.tmp"] = "scratch",
                                ["notes/a b.txt"] = "note" })
end)

after_each(function() if dir then files.remove_dir(dir) end end)

test("up to s3://, down from cloud://, a second run copies nothing", function()
  local out = sync(dir .. "/build", "s3://site/www")
  expect(out).to_have_length(1)
  expect(out[1]).to_match("^" .. dir:gsub("%p", "%%%0")
    .. "/build %-> s3://site/www: 4 copied %(25 B%), 0 the same, 0 deleted, 0 failed in [%d.]+ s$")
  expect(keys("site")).to_equal{ "www/img/logo.png", "www/index.html", "www/notes/a b.txt", "www/tmp/x.tmp" }
  out = sync("cloud://site/www", dir .. "/copy")
  expect(out[1]).to_contain(": 4 copied (25 B)")
  expect(files.read(dir .. "/copy/notes/a b.txt")).to_equal("note")
  expect(sync(dir .. "/build", "s3://site/www")[1]).to_contain(": 0 copied (0 B), 4 the same, 0 deleted, 0 failed")
  expect(check(dir .. "/build", "s3://site/www")).to_equal{ "4 the same, 0 differ, 0 only in " .. dir .. "/build, 0 only in s3://site/www" }
end)

test("--delete with --exclude, --dry-run, and filters in the order typed", function()
  sync(dir .. "/build", "s3://site")
  os.remove(dir .. "/build/index.html")
  os.remove(dir .. "/build/tmp/x.tmp")
  local plan = sync(dir .. "/build", "s3://site", "--delete", "--exclude", "*.tmp", "--dry-run")
  expect(plan).to_equal{ "(dry run) delete index.html",
                         "(dry run) " .. dir .. "/build -> s3://site: would copy 0 (0 B), delete 1; 2 the same" }
  expect(keys("site")).to_contain("index.html")
  sync(dir .. "/build", "s3://site", "--delete", "--exclude", "*.tmp")
  expect(keys("site")).to_equal{ "img/logo.png", "notes/a b.txt", "tmp/x.tmp" }
  emu.reset()
  emu.seed{ buckets = { "site" } }
  sync(dir .. "/build", "s3://site", "--exclude", "*", "--include", "*.png")
  expect(keys("site")).to_equal{ "img/logo.png" }
  sync(dir .. "/build", "s3://site", "--include", "*.txt", "--exclude", "*")
  expect(keys("site")).to_equal{ "img/logo.png" }
end)

test("--output json: a line per action, --verbose adds the skips, then the summary record", function()
  local out = sync(dir .. "/build", "s3://site", "--output", "json", "--exclude", "/tmp/", "--concurrency", "1")
  expect(out).to_equal{
    '{"action":"copy","path":"img/logo.png","size":3}',
    '{"action":"copy","path":"index.html","size":11}',
    '{"action":"copy","path":"notes/a b.txt","size":4}',
    out[4],
  }
  expect(out[4]).to_match('^{"summary":true,"copied":3,"skipped":0,"deleted":0,"failed":0,"bytes":18,"dry_run":false,"seconds":[%d.]+}$')
  -- one worker, so the lines come in the paths' order (several report as each ends)
  out = sync(dir .. "/build", "s3://site", "--output", "json", "--verbose", "--exclude", "/tmp/", "--concurrency", "1")
  expect(out[1]).to_equal('{"action":"skip","path":"img/logo.png","size":3}')
  expect(#out).to_equal(4)
  expect(check(dir .. "/build", "s3://site", "--output", "json", "--exclude", "/tmp/"))
    .to_equal{ '{"same":3,"differ":[],"only_in_from":[],"only_in_to":[]}' }
  expect(check, dir .. "/build", "s3://site").to_fail("(exit 1)")
end)

test("usage errors name the option and the value", function()
  expect(sync, dir, "s3://site", "--shard", "3/3").to_fail("--shard 3/3: I/N with 0 <= I < N expected (shard I of N)")
  expect(sync, dir, "s3://site", "--delte").to_fail("unknown option '--delte'; did you mean '--delete'?")
  expect(sync, dir, "s3://").to_fail("bad argument #1 to 'cloud.storage.sync' (field 'to': 's3://' names no bucket")
  expect(sync, dir).to_fail("missing DST")
end)

-- Runs the built binary on `args` (its own embedded emulator); output and exit code.
local function run(args)
  local p = assert(io.popen("CLOUDLUA_QUIET_EMULATOR=1 '" .. bin .. "' " .. args .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

test("as a process: exit status 0 when all went, 1 when a file failed or check found a difference", function()
  if not bin then skip("CLOUDLUA_TEST_BIN not set (ctest sets it)") end
  local src = "'" .. dir .. "/build'"
  local out, code = run("scripts/sync.lua " .. src .. " s3://demo-bucket/www")
  expect(code).to_equal(0)
  expect(out).to_contain("-> s3://demo-bucket/www: 4 copied (25 B)")
  files.write(dir .. "/build/caf\xe9", "latin-1")
  out, code = run("scripts/sync.lua " .. src .. " s3://demo-bucket/www")
  expect(code).to_equal(1)
  expect(out).to_contain("failed: caf\\233: the name is not UTF-8, which an object key must be\n")  -- printable
  expect(out).to_contain(": 4 copied (25 B), 0 the same, 0 deleted, 1 failed")
  out, code = run("scripts/check.lua " .. src .. " s3://demo-bucket")
  expect(code).to_equal(1)
  expect(out).to_contain("only in " .. dir .. "/build: index.html\n")
end)
