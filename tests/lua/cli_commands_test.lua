-- The sub-commands as a user types them (cloudlua sync|check|cp|ls|rm|cat|mb|rb): each
-- one's exit statuses, 0 done, 1 something failed or differs, 2 a usage error (the
-- reason and the usage on stderr), and its --output json lines; an error reaching the
-- top prints its description and request id without cloudlua's own Lua frames (all
-- of them with --debug); a script named like a sub-command still runs as ./NAME.
-- Each command is a process with its own embedded emulator (demo-bucket, empty);
-- CLOUDLUA_INIT puts what a command needs there first.
-- Run: cloudlua test tests/lua/cli_commands_test.lua
local t = dofile("tests/lua/support/cli.lua")
local files = dofile("tests/lua/support/files.lua")

local dir
before_each(function() dir = files.make_dir() end)
after_each(function() files.remove_dir(dir) end)
teardown(t.cleanup)

-- CLOUDLUA_INIT that puts objects (key = body) into demo-bucket.
local function with_objects(objects)
  local lines = {}
  for key, body in pairs(objects) do
    lines[#lines + 1] = ("cloud.storage.put_object{ Bucket = 'demo-bucket', Object = %q, Body = %q }"):format(key, body)
  end
  return { env = { CLOUDLUA_INIT = table.concat(lines, "\n") } }
end

-- Runs `args` expecting exit status `code`; returns stdout and stderr.
local function run(code, args, opts)
  local out, err, got = t.cloudlua(args, opts)
  if got ~= code then error(("exit %s, not %d, for %s\nstdout: %s\nstderr: %s"):format(got, code, args, out, err), 2) end
  return out, err
end

-- A usage error: status 2, nothing on stdout, "cloudlua NAME: reason", the usage line.
local function usage_error(args, reason)
  local out, err = run(2, args)
  expect(out).to_equal("")
  expect(err:match("^[^\n]*")).to_contain(reason)
  expect(err).to_match("\nusage: cloudlua %a+ ")
  expect(err).to_contain("--help' for every option.\n")
end

-- Every line of `out` is a JSON object; returns them.
local function json_lines(out)
  local lines = {}
  for line in out:gmatch("[^\n]+") do
    expect(line).to_match("^{.*}$")
    lines[#lines + 1] = line
  end
  return lines
end

local function write(path, text) files.write(dir .. "/" .. path, text) end

---------------------------------------------------------------- each command

test("sync: 0 when all went, 1 when a file failed, 2 on a usage error; --output json lines", function()
  write("a.txt", "aaa")
  local out = run(0, "sync " .. t.quote(dir) .. " s3://demo-bucket/www")
  expect(out).to_match("%-> s3://demo%-bucket/www: 1 copied %(3 B%)")
  local lines = json_lines(run(0, "sync " .. t.quote(dir) .. " s3://demo-bucket/www --output json"))
  expect(lines[1]).to_equal('{"action":"copy","path":"a.txt","size":3}')
  expect(lines[2]).to_match('^{"summary":true,"copied":1,')
  write("caf\xe9", "latin-1")
  local _, err = run(1, "sync " .. t.quote(dir) .. " s3://demo-bucket/www")
  expect(err).to_contain("failed: caf\\233: the name is not UTF-8")
  usage_error("sync " .. t.quote(dir) .. " " .. t.quote(dir), "cannot both be local directories")
  usage_error("sync " .. t.quote(dir) .. " s3://demo-bucket --delte", "unknown option '--delte'; did you mean '--delete'?")
  usage_error("sync " .. t.quote(dir), "missing DST")
  usage_error("sync " .. t.quote(dir) .. " s3://", "names no bucket")
end)

test("check: 0 the same, 1 when they differ, 2 on a usage error; --output json", function()
  run(0, "check " .. t.quote(dir) .. " s3://demo-bucket")
  write("a.txt", "aaa")
  local out = run(1, "check " .. t.quote(dir) .. " s3://demo-bucket")
  expect(out).to_contain("only in " .. dir .. ": a.txt\n")
  out = run(1, "check " .. t.quote(dir) .. " s3://demo-bucket --output json")
  expect(json_lines(out)).to_equal{ '{"same":0,"differ":[],"only_in_from":["a.txt"],"only_in_to":[]}' }
  run(0, "check " .. t.quote(dir) .. " s3://demo-bucket/x", with_objects{ ["x/a.txt"] = "aaa" })
  usage_error("check " .. t.quote(dir) .. " s3://demo-bucket --checksum", "unknown option '--checksum'")
end)

test("check takes sync's --include/--exclude, compares two local folders, and names Check in its errors", function()
  cloud.fs.mkdir(dir .. "/site")
  cloud.fs.mkdir(dir .. "/copy")
  write("site/a.txt", "aaa")
  write("site/b.tmp", "tmp")
  local script = t.temp_file(([[
cloud.commands.sync{ %q, "s3://demo-bucket/w", exclude = { "*.tmp" }, quiet = true }
print(cloud.commands.check{ %q, "s3://demo-bucket/w", exclude = { "*.tmp" }, quiet = true }.status)
print(cloud.commands.check{ %q, "s3://demo-bucket/w", quiet = true }.status)
]]):format(dir .. "/site", dir .. "/site", dir .. "/site"))
  expect(run(0, t.quote(script))).to_equal("0\n1\n")
  write("copy/a.txt", "aaa")
  run(0, "check " .. t.quote(dir .. "/site") .. " " .. t.quote(dir .. "/copy") .. " --exclude '*.tmp'")
  write("copy/a.txt", "aab")
  local out = run(1, "check " .. t.quote(dir .. "/site") .. " " .. t.quote(dir .. "/copy"))
  expect(out).to_contain("differ: a.txt\n")
  expect(out).to_contain("only in " .. dir .. "/site: b.tmp\n")
  local _, err = run(2, "check " .. t.quote(dir .. "/missing") .. " s3://demo-bucket")
  expect(err).to_contain("validation error in Check: NoSuchSource")
end)

test("cp: 0 copied, 1 when a copy failed, 2 on a usage error; --output json", function()
  write("a.txt", "aaa")
  local out = run(0, "cp " .. t.quote(dir .. "/a.txt") .. " s3://demo-bucket/in/")
  expect(out).to_equal("upload: " .. dir .. "/a.txt to s3://demo-bucket/in/a.txt\n")
  out = run(0, "cp " .. t.quote(dir .. "/a.txt") .. " s3://demo-bucket/k --output json")
  expect(json_lines(out)).to_equal{ ('{"action":"upload","from":"%s/a.txt","to":"s3://demo-bucket/k","size":3}'):format(dir),
                                    '{"summary":true,"copied":1,"failed":0,"bytes":3,"dry_run":false}' }
  local _, err = run(1, "cp s3://demo-bucket/missing " .. t.quote(dir .. "/m"))
  expect(err).to_contain("failed: s3://demo-bucket/missing: ")
  expect(err).to_contain("NoSuchKey")
  usage_error("cp " .. t.quote(dir .. "/a.txt") .. " " .. t.quote(dir .. "/b.txt"), "are both local paths")
  usage_error("cp s3://demo-bucket/p/ " .. t.quote(dir), "is a prefix, not an object: give --recursive")
  usage_error("cp - -", "cannot both be -")
  usage_error("cp " .. t.quote(dir) .. " s3://demo-bucket/", "is a folder: give --recursive")
end)

test("cp: a wildcard source, --recursive down, and - streams stdin and stdout", function()
  local objects = with_objects{ ["logs/2024-01/a.gz"] = "a", ["logs/2024-02/b.gz"] = "bb", ["logs/2024-02/c.txt"] = "c",
                                ["logs/2023-12/d.gz"] = "d", ["logs/2024-02/"] = "" }  -- a folder marker: left out
  local out = run(0, "cp 's3://demo-bucket/logs/2024-*/*.gz' " .. t.quote(dir .. "/") .. " --quiet", objects)
  expect(out).to_equal("")
  expect(files.read(dir .. "/2024-01/a.gz")).to_equal("a")
  expect(files.read(dir .. "/2024-02/b.gz")).to_equal("bb")
  expect(cloud.fs.stat(dir .. "/2024-02/c.txt")).to_be_nil()
  run(0, "cp --recursive s3://demo-bucket/logs " .. t.quote(dir .. "/all") .. " --exclude '*.gz'", objects)
  expect(cloud.fs.list(dir .. "/all", { recursive = true })[2].path).to_equal("2024-02/c.txt")
  -- stdin to an object and the object back to stdout, in one process (a script)
  local script = t.temp_file([[
cloud.commands.cp{ "-", "s3://demo-bucket/from-stdin" }
cloud.commands.cp{ "s3://demo-bucket/from-stdin", "-" }
]])
  local data = ("0123456789abcdef"):rep(400000)  -- 6.1 MiB: two parts of 5 MiB
  out = run(0, t.quote(script), { input = data })
  expect(#out).to_equal(#data)
  expect(out == data).to_be(true)
end)

test("cp down never writes outside DST: a key with '..' fails alone, a link inside DST is not followed", function()
  local objects = with_objects{ ["a/../../X"] = "evil", ["a/ok.txt"] = "ok", ["a/link/y"] = "through" }
  cloud.fs.mkdir(dir .. "/d/e")
  cloud.fs.mkdir(dir .. "/elsewhere")
  local _, err = run(1, "cp --recursive s3://demo-bucket/a out", { cd = dir .. "/d/e", env = objects.env })
  expect(err).to_contain("failed: s3://demo-bucket/a/../../X: a key with an empty, '.' or '..' folder")
  expect(cloud.fs.stat(dir .. "/d/X")).to_be_nil()
  expect(files.read(dir .. "/d/e/out/ok.txt")).to_equal("ok")
  run(1, "cp 's3://demo-bucket/a/**' wild/", { cd = dir .. "/d/e", env = objects.env })
  expect(cloud.fs.stat(dir .. "/d/X")).to_be_nil()
  expect(files.read(dir .. "/d/e/wild/ok.txt")).to_equal("ok")
  -- a folder of DST that is a link to elsewhere: nothing written through it
  cloud.fs.mkdir(dir .. "/linked")
  assert(os.execute("ln -s " .. t.quote(dir .. "/elsewhere") .. " " .. t.quote(dir .. "/linked/link")))
  _, err = run(1, "cp --recursive s3://demo-bucket/a " .. t.quote(dir .. "/linked"), objects)
  expect(err).to_contain("failed: s3://demo-bucket/a/link/y: ")
  expect(cloud.fs.stat(dir .. "/elsewhere/y")).to_be_nil()
  expect(files.read(dir .. "/linked/ok.txt")).to_equal("ok")
end)

test("cp: a source naming an object is that object, '\\' escapes a wildcard, no match is status 1", function()
  local objects = with_objects{ ["data[1].csv"] = "one", ["data1.csv"] = "plain", ["data[1]b.csv"] = "b" }
  local opts = { cd = dir, env = objects.env }
  run(0, "cp 's3://demo-bucket/data[1].csv' out.csv", opts)
  expect(files.read(dir .. "/out.csv")).to_equal("one")  -- DST is the file, not a folder
  run(0, "cp 's3://demo-bucket/data\\[1\\].csv' escaped.csv", opts)
  expect(files.read(dir .. "/escaped.csv")).to_equal("one")
  run(0, "cp 's3://demo-bucket/data\\[1\\]*.csv' some/", opts)  -- lists prefix data[1], matches two
  expect(files.read(dir .. "/some/data[1].csv")).to_equal("one")
  expect(files.read(dir .. "/some/data[1]b.csv")).to_equal("b")
  expect(cloud.fs.stat(dir .. "/some/data1.csv")).to_be_nil()
  local _, err = run(1, "cp 's3://demo-bucket/nothing*' none/", opts)
  expect(err).to_contain("failed: s3://demo-bucket/nothing*: no objects matched")
end)

test("cp: a bad location is a usage error (status 2) before any copy", function()
  write("a.txt", "aaa")
  usage_error("cp s3://GRM/x " .. t.quote(dir .. "/x"), "'s3://GRM/x' is not a location an object can have: its bucket")
  usage_error("cp " .. t.quote(dir .. "/a.txt") .. " s3://demo-bucket/caf\xe9", "its key: is not valid UTF-8")
  usage_error("cp " .. t.quote(dir .. "/a.txt") .. " s3://demo-bucket/" .. ("k"):rep(1025), "its key: at most 1024 bytes")
end)

test("cp between buckets above the copy limit goes in parts (UploadPartCopy)", function()
  local script = t.temp_file([[
local big = ("x"):rep(6 * 1024 * 1024)
cloud.storage.put_object{ Bucket = "demo-bucket", Object = "big", Body = big }
local r = cloud.commands.cp{ "s3://demo-bucket/big", "s3://demo-bucket/copy", copy_limit = 5 * 1024 * 1024,
                             part_size = "5M", quiet = true }
local asked = cloud.emulator.requests()
local got = cloud.storage.get_object{ Bucket = "demo-bucket", Object = "copy" }.Body
print(r.status, asked.UploadPartCopy, asked.CopyObject, got == big)
]])
  expect(run(0, t.quote(script))).to_equal("0\t2\tnil\ttrue\n")
end)

test("sync down: a key ending with '/' that holds bytes is that key's failure; an empty marker is left out", function()
  local objects = with_objects{ ["d/"] = "bytes", ["e/"] = "", ["f.txt"] = "f" }
  local _, err = run(1, "sync s3://demo-bucket " .. t.quote(dir .. "/down"), objects)
  expect(err).to_contain("failed: d/: a key with an empty, '.' or '..' folder")
  expect(err:find("e/", 1, true)).to_be_nil()
  expect(files.read(dir .. "/down/f.txt")).to_equal("f")
end)

test("ls: 0 listed, 1 when the bucket is missing, 2 on a usage error; --output json", function()
  expect(run(0, "ls")).to_match("^%d+%-%d+%-%d+ %d+:%d+:%d+ demo%-bucket\n$")
  local objects = with_objects{ ["a/b.txt"] = "bb", ["top.txt"] = "t" }
  local out = run(0, "ls s3://demo-bucket", objects)
  expect(out).to_match("^%s+PRE a/\n%d+%-%d+%-%d+ %d+:%d+:%d+%s+1 top.txt\n$")
  out = run(0, "ls s3://demo-bucket --recursive --output json", objects)
  local lines = json_lines(out)
  expect(lines[1]).to_match('^{"key":"a/b.txt","size":2,"last_modified":"[^"]+","etag":"')
  out = run(0, "ls s3://demo-bucket --output json", objects)
  expect(json_lines(out)[1]).to_equal('{"prefix":"a/"}')
  expect(run(0, "ls --output json")).to_match('^{"bucket":"demo%-bucket","created":"')
  run(1, "ls s3://missing")
  usage_error("ls demo-bucket", "is not a location")
  usage_error("ls s3://demo-bucket --recursiv", "did you mean '--recursive'?")
end)

test("rm: 0 removed, 1 when the bucket is missing, 2 on a usage error; --output json", function()
  local objects = with_objects{ ["p/a"] = "a", ["p/b.tmp"] = "b", ["q"] = "q" }
  expect(run(0, "rm s3://demo-bucket/q", objects)).to_equal("delete: s3://demo-bucket/q\n")
  local out = run(0, "rm --recursive s3://demo-bucket/p --exclude '*.tmp' --output json", objects)
  expect(json_lines(out)).to_equal{ '{"action":"delete","key":"p/a"}',
                                    '{"summary":true,"deleted":1,"failed":0,"dry_run":false}' }
  out = run(0, "rm --recursive --dry-run s3://demo-bucket/p", objects)
  expect(out).to_equal("(dry run) delete: s3://demo-bucket/p/a\n(dry run) delete: s3://demo-bucket/p/b.tmp\n")
  run(1, "rm --recursive s3://missing/p")
  usage_error("rm s3://demo-bucket/p/", "give --recursive")
  usage_error("rm " .. t.quote(dir), "never removes local files")
end)

test("cat: 0 written, 1 when the object is missing, 2 on a usage error", function()
  expect(run(0, "cat s3://demo-bucket/k", with_objects{ k = "hello\n" })).to_equal("hello\n")
  expect(run(0, "cat s3://demo-bucket/empty", with_objects{ empty = "" })).to_equal("")
  local _, err = run(1, "cat s3://demo-bucket/none")
  expect(err).to_contain("NoSuchKey")
  usage_error("cat s3://demo-bucket", "is not an object")
  usage_error("cat s3://demo-bucket/k --output json", "unknown option '--output'")
end)

test("mb and rb: 0 done, 1 refused by the platform, 2 on a usage error; --output json", function()
  expect(run(0, "mb s3://fresh")).to_equal("make_bucket: fresh\n")
  expect(json_lines(run(0, "mb s3://fresh --output json"))).to_equal{ '{"action":"make_bucket","bucket":"fresh"}' }
  run(1, "mb s3://demo-bucket")
  usage_error("mb s3://demo-bucket/prefix", "mb takes s3://BUCKET")
  expect(run(0, "rb s3://demo-bucket")).to_equal("remove_bucket: demo-bucket\n")
  local objects = with_objects{ a = "a", ["b/c"] = "c" }
  run(1, "rb s3://demo-bucket", objects)
  local out = run(0, "rb s3://demo-bucket --force --output json", objects)
  expect(json_lines(out)).to_equal{ '{"action":"delete","key":"a"}', '{"action":"delete","key":"b/c"}',
                                    '{"action":"remove_bucket","bucket":"demo-bucket"}' }
  usage_error("rb demo-bucket", "rb takes s3://BUCKET")
end)

test("--help of each sub-command: its usage and options, status 0", function()
  for _, name in ipairs{ "sync", "check", "cp", "ls", "rm", "cat", "mb", "rb" } do
    local out, err = run(0, name .. " --help")
    expect(err).to_equal("")
    expect(out).to_match("^usage: cloudlua " .. name .. " ")
    expect(out).to_contain("Exit status: 0 done; 1 something failed")
  end
  expect(run(0, "--help")).to_contain("  cp                    Copy files and objects")
end)

test("--limit-rate is accepted and a small transfer completes under it", function()
  write("a.txt", ("x"):rep(100000))
  run(0, "cp " .. t.quote(dir .. "/a.txt") .. " s3://demo-bucket/k --limit-rate 50M")
  usage_error("cp " .. t.quote(dir .. "/a.txt") .. " s3://demo-bucket/k --limit-rate fast", "--limit-rate fast: a size")
end)

test("configuration flags may come after the sub-command's name", function()
  local _, err = run(1, "ls s3://demo-bucket --endpoint storage=http://127.0.0.1:1 --access-key a --secret-key b")
  expect(err).to_contain("127.0.0.1:1")
end)

---------------------------------------------------------------- errors at the top

test("an error at the top: its description and request id, no [cloudlua] frame unless --debug", function()
  local _, err = run(1, "ls s3://missing")
  expect(err).to_match("^cloudlua: api error in ListObjectsV2 %(HTTP 404%): NoSuchBucket: [^\n]*\n  request id: [^\n]+\n$")
  local script = t.temp_file("local function go()\n  cloud.commands.sync{ '.', 's3://missing/x' }\nend\ngo()\n")
  _, err = run(1, t.quote(script))
  expect(err).to_contain("NoSuchBucket")
  expect(err).to_contain(script .. ":2: in ")  -- the user's own frames show where it failed
  expect(err).to_contain(script .. ":4: in main chunk")
  expect(err:find("[cloudlua]", 1, true)).to_be_nil()
  _, err = run(1, "-e " .. t.quote("cloud.storage.sync{ from = '.', to = { Bucket = 'missing' } }"))
  expect(err:find("[cloudlua]", 1, true)).to_be_nil()
  _, err = run(1, "--debug ls s3://missing")
  expect(err).to_contain("[cloudlua]")
end)

test("a script named like a sub-command runs as ./NAME or after --", function()
  files.write(dir .. "/ls", "print('the script')")
  expect(run(0, "./ls", { cd = dir })).to_equal("the script\n")
  expect(run(0, "-- ls", { cd = dir })).to_equal("the script\n")
end)
