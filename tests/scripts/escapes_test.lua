-- Every line scripts/sync.lua, scripts/check.lua, storage.sync, storage.check and the
-- transfers' progress print goes through cloud.printable: with file names and keys
-- holding terminal escapes (ESC, BEL, CR) and a name that is not UTF-8, each output
-- path (dry-run lines, failed: lines, check's differ and only-in lines, summaries,
-- errors, --output json, progress lines) is run as a process, and no raw ESC, BEL or
-- CR reaches its stdout or stderr. Also the exit statuses: 2 for a missing source and
-- a usage error, 1 for a failure or a difference.

local files = dofile("tests/lua/support/files.lua")
local bin = os.getenv("CLOUDLUA_TEST_BIN")
local dir

local HOSTILE = "evil\27]0;pwned\7\r\27[2Jname"  -- a local name; no key holds ESC or BEL: a failure naming it
local KEY = "evil\rname"                           -- a key may hold CR (it rewrites the line on a terminal)
local NOT_UTF8 = "bad\27[31m\255"                -- not UTF-8 either: a failure naming it

-- A Lua string literal of `s`.
local function literal(s) return ("%q"):format(s):gsub("\\\n", "\\n") end

-- Runs, as its own process against its own emulator, the Lua `code` after a prelude
-- that puts `objects` (key -> body) in demo-bucket; its output (stdout and stderr)
-- and exit status.
local function run(code, objects)
  local prelude = { "local s3 = cloud.storage" }
  for key, body in pairs(objects or {}) do
    prelude[#prelude + 1] = ("s3.put_object{ Bucket = 'demo-bucket', Object = %s, Body = %s }"):format(literal(key), literal(body))
  end
  local driver = dir .. "/driver.lua"
  files.write(driver, table.concat(prelude, "\n") .. "\n" .. code .. "\n")
  local p = assert(io.popen("CLOUDLUA_QUIET_EMULATOR=1 '" .. bin .. "' '" .. driver .. "' 2>&1"))
  local out = p:read("a")
  local _, _, status = p:close()
  return out, status
end

-- Code that runs the script at `path` with `args` as its command line.
local function script(path, ...)
  local args = {}
  for i, a in ipairs{ ... } do args[i] = literal(a) end
  return ("assert(loadfile(%q))(%s)"):format(path, table.concat(args, ", "))
end

-- Fails when `out` holds a raw ESC, BEL or CR.
local function clean(out, what)
  for _, c in ipairs{ "\27", "\7", "\r" } do
    if out:find(c, 1, true) then
      error(("%s printed a raw byte %d: %q"):format(what, c:byte(), out), 2)
    end
  end
  return out
end

local src

before_each(function()
  if not bin then skip("CLOUDLUA_TEST_BIN not set (ctest sets it)") end
  dir = files.make_dir()
  src = dir .. "/" .. HOSTILE
  cloud.fs.mkdir(src)
  files.write(src .. "/" .. HOSTILE .. ".txt", "hostile")
  files.write(src .. "/" .. KEY .. ".txt", "mine")
  files.write(src .. "/same.txt", "same")
  files.write(src .. "/" .. NOT_UTF8, "not utf-8")
end)

after_each(function() if dir then files.remove_dir(dir) end end)

local REMOTE = { ["p/" .. KEY .. "-only-there"] = "x", ["p/same.txt"] = "same",
                 ["p/" .. KEY .. ".txt"] = "other bytes" }

test("sync.lua: dry-run lines, deletions, failed: lines, the summary, --progress and --output json", function()
  local out, status = run(script("scripts/sync.lua", src, "s3://demo-bucket/p", "--delete", "--dry-run", "--checksum"), REMOTE)
  clean(out, "sync --dry-run")
  expect(status).to_equal(0)
  expect(out).to_contain("(dry run) delete evil")
  expect(out).to_contain("(dry run) copy evil")
  out, status = run(script("scripts/sync.lua", src, "s3://demo-bucket/p", "--delete", "--progress"), REMOTE)
  clean(out, "sync --progress")
  expect(status).to_equal(1)
  expect(out).to_contain("failed: bad")
  out = run(script("scripts/sync.lua", src, "s3://demo-bucket/p", "--output", "json", "--verbose"), REMOTE)
  clean(out, "sync --output json")
end)

test("sync.lua and check.lua: a missing source and a usage error exit 2, their messages printable; check compares folders", function()
  local out, status = run(script("scripts/sync.lua", src .. "/no such " .. HOSTILE, "s3://demo-bucket/p", "--delete"), REMOTE)
  clean(out, "sync, missing source")
  expect(status).to_equal(2)
  expect(out).to_contain("NoSuchSource")
  out, status = run(script("scripts/check.lua", src .. "/no such " .. HOSTILE, "s3://demo-bucket/p"))
  clean(out, "check, missing source")
  expect(status).to_equal(2)
  out, status = run(script("scripts/sync.lua", src, dir))  -- two local folders: a usage error of sync
  expect(out).to_contain("cannot both be local directories")
  expect(status).to_equal(2)
  out, status = run(script("scripts/check.lua", src, dir))  -- which check compares, as rclone check
  clean(out, "check, two local folders")
  expect(status).to_equal(1)
  out, status = run(script("scripts/check.lua", src, "s3:/" .. HOSTILE))
  clean(out, "check, a typo in the location")
  expect(status).to_equal(2)
  out, status = run(script("scripts/sync.lua", src, "s3://demo-bucket/p", "--max-delete", "x"))
  expect(out).to_contain("--max-delete x: a count >= 0 expected")
  expect(status).to_equal(2)
  out, status = run(script("scripts/check.lua", src, "s3://demo-bucket/p", "--size-olny"))
  expect(out).to_contain("unknown option '--size-olny'")
  expect(status).to_equal(2)
end)

test("sync.lua refuses an empty source under --delete unless --delete-all, and --max-delete stops", function()
  cloud.fs.mkdir(dir .. "/empty")
  local out, status = run(script("scripts/sync.lua", dir .. "/empty", "s3://demo-bucket/p", "--delete"), REMOTE)
  expect(status).to_equal(2)
  expect(out).to_contain("--delete-all")
  out, status = run(script("scripts/sync.lua", dir .. "/empty", "s3://demo-bucket/p", "--delete", "--delete-all"), REMOTE)
  expect(status).to_equal(0)
  expect(out).to_contain("3 deleted")
  out, status = run(script("scripts/sync.lua", dir .. "/empty", "s3://demo-bucket/p", "--delete", "--delete-all",
    "--max-delete", "1"), REMOTE)
  clean(out, "sync --max-delete")
  expect(status).to_equal(1)
  expect(out).to_contain("1 deleted, 2 not deleted")
  expect(out).to_contain("2 deletions not made: more than max_delete = 1")
end)

test("check.lua: differ and only-in lines and the summary", function()
  local out, status = run(script("scripts/check.lua", src, "s3://demo-bucket/p"), REMOTE)
  clean(out, "check")
  expect(status).to_equal(1)
  expect(out).to_contain("differ: evil")
  expect(out).to_contain("only in ")
  out = run(script("scripts/check.lua", src, "s3://demo-bucket/p", "--output", "json"), REMOTE)
  clean(out, "check --output json")
end)

test("the functions: sync's dry run, its progress and its error, the transfers' progress lines", function()
  local code = ([[
local src = %s
pcall(cloud.storage.sync, { from = src, to = "s3://demo-bucket/p", dry_run = true, delete = true })
pcall(cloud.storage.sync, { from = src, to = "s3://demo-bucket/q", progress = true })
local ok, err = pcall(cloud.storage.sync, { from = src, to = "s3://demo-bucket/r" })
print(ok, err)
cloud.storage.upload_file{ Bucket = "demo-bucket", Object = %s, file = src .. "/same.txt", progress = true }
cloud.storage.download_file{ Bucket = "demo-bucket", Object = %s, file = src .. "/down", progress = true }
cloud.storage.upload_file{ Bucket = "demo-bucket", Object = %s, file = src .. "/same.txt", progress = true, part_size = 5 * 1024 * 1024 }
cloud.storage.sync{ from = src, to = "s3://demo-bucket/r" }]]):format(literal(src), literal(KEY), literal(KEY), literal(KEY))
  local out, status = run(code, REMOTE)
  clean(out, "the functions")
  expect(status).to_equal(1)
  expect(out).to_contain("SyncFailed")
end)
