-- `cloudlua test` as a user meets it, driven from outside: test files written to a
-- temporary folder, the binary run on them, its TAP output and exit status checked.
-- The binary under test runs in processes of its own; that a failing case really
-- fails the run is also checked by ctest itself (lua.harness_*, tests/CMakeLists.txt),
-- so a broken harness cannot vouch for itself. CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/test_runner_test.lua

local t = dofile("tests/lua/support/cli.lua")
local bin, sh_quote = t.bin, t.quote

-- A fresh folder holding `files` (name -> text); returns its path.
local function folder(files)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. sh_quote(dir .. "/sub")))
  for name, text in pairs(files) do
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  return dir
end

-- Runs `cloudlua test ARGS` in `dir` (with `env`, "NAME=value " words, before it);
-- returns stdout, stderr and the exit code.
local function cloudlua_test(dir, args, env)
  local err_file = os.tmpname()
  local p = assert(io.popen(("cd %s && %s%s test %s 2>%s"):format(sh_quote(dir), env or "", sh_quote(bin), args, err_file)))
  local out = p:read("a")
  local _, _, code = p:close()
  local f = assert(io.open(err_file))
  local err = f:read("a")
  f:close()
  os.remove(err_file)
  return out, err, code
end

local function last_line(text) return text:match("([^\n]*)\n?$") end

-- The folder the runs use: harness files passing, failing and skipping cases, a
-- sub-folder, files that are no *_test.lua, broken files.
local FILES = {
  ["a_test.lua"] = [[
local log = {}
setup(function() log[#log + 1] = "setup" end)
before_each(function() log[#log + 1] = "before" end)
after_each(function() log[#log + 1] = "after" end)
test("passes", function() expect(1 + 1).to_equal(2) end)
test("diffs tables", function()
  expect({ name = "snap-1", tags = { { key = "env", value = "qa" } } })
    .to_equal({ name = "snap-1", tags = { { key = "env", value = "prod" } }, status = "AVAILABLE" })
end)
test("plain assert", function() assert(false, "plain assert failed") end)
test("expected error", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "nope" }).to_fail{ kind = "api", code = "SnapshotNotFound", status = 404 }
end)
test("wrong expected error", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "nope" }).to_fail{ code = "Other" }
end)
test("skipped inside", function() skip("no real endpoint") end)
test.skip("skipped by declaration", function() error("must not run") end)
test("hooks ran in order", function()
  print("log:", table.concat(log, ","))
  expect(log).to_equal{ "setup", "before", "after", "before", "after", "before", "after", "before", "after",
                        "before", "after", "before", "after", "before" }
end)
test("changes the emulator", function()
  cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { name = "renamed-in-a" } }
end)
]],
  ["b_test.lua"] = [[
test("sees a fresh emulator", function()
  expect(cloud.cluster.update_snapshot{ SnapshotName = "snap-1" }.snapshot.name).to_equal("snap-1")
end)
test("virtual time: a long wait moves the emulator's clock and never sleeps", function()
  local emu, start = cloud.emulator, cloud.clock()
  emu.seed{ firewall_groups = { { firewallGroupName = "fw-v" } } }
  emu.configure{ firewall_settle = 1800 }
  cloud.devops.authorize_firewall_rules{ FirewallGroupName = "fw-v", rules = { { protocol = "ICMP", cidrIp = "10.0.0.1" } } }
  local tries = 0
  cloud.wait_until(function() tries = tries + 1 return tries == 4 end, { timeout = 3600, interval = 600 })
  expect(tries).to_equal(4)
  expect(emu.state().firewall_groups[1].state).to_equal("APPLIED")  -- 1800 s passed for the emulator
  expect(cloud.clock() - start >= 1800).to_equal(true)               -- and on cloud.clock
end)
]],
  ["sub/c_test.lua"] = [[test("found in a sub-folder", function() end)]],
  ["not_a_test_file.lua"] = [[error("only *_test.lua files are run from a folder")]],
  ["broken_setup.lua"] = [[
setup(function() error("no fixtures today") end)
test("first", function() end)
test("second", function() end)
]],
  ["syntax.lua"] = "test('x', function() end\n",
  ["plain_script.lua"] = "assert(cloud.emulator, 'a plain script runs too')\n",
  ["odd_names.lua"] = "test('case #1\\non two lines', function() end)\n",
}

-- A folder run with --endpoint: no embedded emulator (cloud.emulator is nil).
local PROBE = { ["probe_test.lua"] = [[
test("no emulator", function() expect(cloud.emulator).to_be_nil() end)
test("the endpoint configured is used", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "s" }).to_fail{ kind = "transport" }
end)
]] }

-- The runs, made by setup: { out =, err =, code = } each.
local runs = {}
local function cloudlua_run(dir, args)
  local out, err, code = cloudlua_test(dir, args)
  return { out = out, err = err, code = code }
end

local dir, probe

setup(function()
  dir, probe = folder(FILES), folder(PROBE)
  runs.folder = cloudlua_run(dir, ".")
  runs.named = cloudlua_run(dir, "broken_setup.lua syntax.lua plain_script.lua odd_names.lua")
  runs.filter = cloudlua_run(dir, "--filter 'fresh emulator' .")
  runs.filter_file = cloudlua_run(dir, "--filter b_test.lua .")
  runs.list = cloudlua_run(dir, "--list --filter skipped .")
  runs.filter_none = cloudlua_run(dir, "--filter no-such-case .")
  runs.missing = cloudlua_run(dir, "missing_test.lua")
  runs.no_path = cloudlua_run(dir .. "/sub/..", "")
  runs.endpoint = cloudlua_run(probe, "--endpoint cluster=http://127.0.0.1:9 --access-key K --secret-key S .")
end)

teardown(function()
  if dir then os.execute("rm -rf " .. sh_quote(dir) .. " " .. sh_quote(probe)) end
end)

-- Declares a case checking that run `name`'s output holds `part`.
local function shows(name, part, what)
  test(what, function() expect(runs[name].out).to_contain(part) end)
end

---------------------------------------------------------------- a folder: its *_test.lua files, sub-folders included, in order

test("a folder: exit status 1 when a case failed", function() expect(runs.folder.code).to_equal(1) end)
shows("folder", "# a_test.lua\nok 1 - passes\nnot ok 2 - diffs tables\n", "TAP lines in order")
shows("folder", "#   a_test.lua:7: values differ (2 differences):\n#     status: missing (expected \"AVAILABLE\")\n" ..
                "#     tags[1].value: expected \"prod\", got \"qa\"\n", "a readable diff of tables")
shows("folder", "not ok 3 - plain assert\n#   a_test.lua:10: plain assert failed\n", "a plain assert fails the case")
shows("folder", "ok 4 - expected error\n", "to_fail with kind, code and status")
shows("folder", "not ok 5 - wrong expected error\n#   a_test.lua:15: expected an error with code \"Other\"; got:\n" ..
                "#     api error in UpdateSnapshot (HTTP 404): SnapshotNotFound", "a wrong error is shown whole")
shows("folder", "ok 6 - skipped inside # SKIP no real endpoint\n", "skip() inside a case")
shows("folder", "ok 7 - skipped by declaration # SKIP test.skip\n", "test.skip")
shows("folder", "# log:\tsetup,before,after", "print writes diagnostics, not TAP lines")
shows("folder", "ok 8 - hooks ran in order\n", "setup once, before_each and after_each around every case")
shows("folder", "# b_test.lua\nok 10 - sees a fresh emulator\nok 11 - virtual time", "each file gets a fresh emulator")
shows("folder", "# sub/c_test.lua\nok 12 - found in a sub-folder\n", "sub-folders are searched")
test("other .lua files are not run from a folder", function()
  expect(runs.folder.out:find("only *_test.lua", 1, true)).to_be_nil()
end)
shows("folder", "1..12\n", "the plan")
test("the last line counts passed, failed and skipped cases", function()
  expect(last_line(runs.folder.out)).to_equal("7 passed, 3 failed, 2 skipped")
end)
test("nothing on stderr", function() expect(runs.folder.err).to_equal("") end)

---------------------------------------------------------------- files given by name run whatever their names

test("exit status 1 with broken files", function() expect(runs.named.code).to_equal(1) end)
shows("named", "not ok 1 - first\n#   setup failed\n#   broken_setup.lua:1: no fixtures today\nnot ok 2 - second\n",
      "a failed setup fails every case of the file")
shows("named", "not ok 3 - syntax.lua\n#   the file failed to load\n#   syntax.lua:", "a syntax error is a failure")
shows("named", "ok 4 - plain_script.lua (no test declared; the file ran)\n", "a plain script counts as one case")
shows("named", "ok 5 - case \\#1 on two lines\n", "a name stays one TAP line, '#' escaped")
test("the summary with broken files", function() expect(last_line(runs.named.out)).to_equal("2 passed, 3 failed") end)

---------------------------------------------------------------- --filter and --list

test("--filter: exit status 0 when every selected case passed", function() expect(runs.filter.code).to_equal(0) end)
shows("filter", "ok 1 - sees a fresh emulator\n1..1\n1 passed, 0 failed\n", "--filter: only the matching case runs")
test("--filter: a file name selects its cases", function()
  expect(last_line(runs.filter_file.out)).to_equal("2 passed, 0 failed")
end)
test("--list exits 0", function() expect(runs.list.code).to_equal(0) end)
test("--list prints the cases, runs nothing", function()
  expect(runs.list.out).to_equal("a_test.lua: skipped inside\na_test.lua: skipped by declaration\n")
end)
test("--filter matching nothing is a failure", function() expect(runs.filter_none.code).to_equal(1) end)
test("--filter matching nothing says why", function()
  expect(runs.filter_none.err).to_contain("no test case ran (check --filter)")
end)

---------------------------------------------------------------- usage errors: exit status 2 and a message

test("a missing path: exit status 2", function() expect(runs.missing.code).to_equal(2) end)
test("a missing path is named", function()
  expect(runs.missing.err).to_contain("no such file or folder: missing_test.lua")
end)
test("no path given: exit status 2", function() expect(runs.no_path.code).to_equal(2) end)

---------------------------------------------------------------- --endpoint: the configured endpoint, no embedded emulator

test("against a configured endpoint: cloud.emulator is nil and the endpoint is used", function()
  expect(last_line(runs.endpoint.out)).to_equal("2 passed, 0 failed")
end)
test("against a configured endpoint: exit status 0", function() expect(runs.endpoint.code).to_equal(0) end)

---------------------------------------------------------------- os.exit inside a test is that case's failure

test("os.exit(0) after a failed case: status 1, every case reported, the summary and the JUnit report", function()
  local report = os.tmpname()
  local out, _, code = cloudlua_test(".", "--junit " .. sh_quote(report) .. " tests/lua/support/exits_on_purpose.lua")
  local xml = t.read_file(report)
  os.remove(report)
  expect(code).to_equal(1)
  expect(out).to_contain("not ok 2 - ends the process\n#   tests/lua/support/exits_on_purpose.lua:5: os.exit(0) called inside a test")
  expect(out).to_contain("not ok 3 - hides the exit\n#   tests/lua/support/exits_on_purpose.lua:6: os.exit(0, true) called inside a test")
  expect(out).to_contain("ok 4 - runs after them\n")
  expect(last_line(out)).to_equal("1 passed, 3 failed")
  expect(xml).to_contain('tests="4" failures="1" errors="2"')
end)

---------------------------------------------------------------- --record and --replay: a recording per file, however it is named

local files = dofile("tests/lua/support/files.lua")

-- Two files of one name in two folders, each making calls of its own: each must be
-- recorded apart and replay.
local SAME_NAMES = {
  ["a/x_test.lua"] = [[test("a's bucket", function() cloud.storage.create_bucket{ Bucket = "from-a" } end)]],
  ["b/x_test.lua"] = [[
test("b's object", function() cloud.storage.put_object{ Bucket = "demo-bucket", Object = "from-b", Body = "b" } end)
]],
}

test("--record: two files of one name in two folders are recorded apart and both replay", function()
  local tree = files.make_tree(SAME_NAMES)
  local out, err, code = cloudlua_test(tree, "--record tapes a b")
  expect({ code = code, err = err, last = last_line(out) }).to_equal{ code = 0, err = "", last = "2 passed, 0 failed" }
  expect(files.read(tree .. "/tapes/a/x_test/storage.jsonl")).to_contain('"path":"/from-a"')
  expect(files.read(tree .. "/tapes/b/x_test/storage.jsonl")).to_contain('"path":"/demo-bucket/from-b"')
  for _, jobs in ipairs{ "", "-j 2 " } do
    out, err, code = cloudlua_test(tree, jobs .. "--replay tapes a b")
    expect({ code = code, err = err, last = last_line(out) }).to_equal{ code = 0, err = "", last = "2 passed, 0 failed" }
    expect(out:find("not replayed", 1, true)).to_be_nil()
  end
  files.remove_dir(tree)
end)

test("--record: a single file's recording is DIR/<its name>, as it always was", function()
  local tree = files.make_tree(SAME_NAMES)
  local _, _, code = cloudlua_test(tree, "--record tapes a/x_test.lua")
  expect(code).to_equal(0)
  expect(files.entries(tree .. "/tapes")).to_equal{ "x_test" }
  local out
  out, _, code = cloudlua_test(tree, "--replay tapes a/x_test.lua")
  expect({ code = code, last = last_line(out) }).to_equal{ code = 0, last = "1 passed, 0 failed" }
  files.remove_dir(tree)
end)

test("--record: two files that would share a recording are refused before anything runs", function()
  local tree = files.make_tree{ ["a/x_test.lua"] = SAME_NAMES["a/x_test.lua"], ["a/x_test.txt"] = SAME_NAMES["b/x_test.lua"] }
  local out, err, code = cloudlua_test(tree, "--record tapes a/x_test.lua a/x_test.txt")
  expect({ code = code, out = out }).to_equal{ code = 2, out = "" }
  expect(err).to_equal("cloudlua test: --record: a/x_test.lua and a/x_test.txt would both be recorded into tapes/x_test; " ..
                       "run them apart, or rename one\n")
  expect(files.entries(tree)).to_equal{ "a" }  -- nothing recorded, no folder made
  out, err, code = cloudlua_test(tree, "--record tapes a a/x_test.lua")
  expect({ code = code, out = out }).to_equal{ code = 2, out = "" }
  expect(err).to_contain("a/x_test.lua is given twice")
  files.remove_dir(tree)
end)

---------------------------------------------------------------- what a test file writes to its standard output

-- Lines that would pass for TAP lines, and a secret this process knows (a client's
-- secret key), written every way a file can reach its standard output.
local WRITES = {
  ["writes_test.lua"] = [[
test("writes to its standard output", function()
  io.write("ok 99 - forged by io.write\n")
  io.stdout:write("ok 99 - forged by io.stdout\n")
  io.output():write("ok 99 - forged by io.output\n")
  cloud.client{ credentials = { access_key_id = "AKIDWRITES", secret_access_key = "writes-secret-0123456789" } }
  io.write("the secret: writes-secret-0123456789\n")
  io.stdout:flush()
  os.execute("echo ok 98 - forged by a shell; printf 'not ok 97 - forged\\n' >&1")
  print("printed")
end)
test("passes", function() end)
]],
}

for _, jobs in ipairs{ "", "-j 1 ", "-j 2 " } do
  test(("%sa file's io.write, io.stdout and fd 1 are '#' lines, redacted; the plan counts its cases"):format(jobs), function()
    local tree = files.make_tree(WRITES)
    local out, err, code = cloudlua_test(tree, jobs .. "writes_test.lua")
    files.remove_dir(tree)
    expect({ code = code, err = err }).to_equal{ code = 0, err = "" }
    for line in out:gmatch("[^\n]+") do
      expect(line:match("^n?o?t? ?ok 9%d")).to_be_nil()
    end
    expect(out).to_contain("# ok 99 - forged by io.write\n# ok 99 - forged by io.stdout\n# ok 99 - forged by io.output\n" ..
                           "# the secret: <redacted>\n# ok 98 - forged by a shell\n# not ok 97 - forged\n# printed\n")
    expect(out:find("writes-secret-0123456789", 1, true)).to_be_nil()
    expect(out).to_match("\nok 1 %- writes to its standard output\nok 2 %- passes\n1%.%.2\n2 passed, 0 failed\n$")
  end)
end

---------------------------------------------------------------- busted's spec language: describe, it, luassert

-- A folder with a busted spec (found as *_spec.lua), failing on purpose in each way a
-- spec fails, and a test/expect file beside it.
local SPECS = {
  ["s_spec.lua"] = [[
describe("outer", function()
  before_each(function() print("outer before") end)
  describe("inner #slow", function()
    it("same", function() assert.are.same({ status = "STOPPED", n = 1 }, { status = "RUNNING", n = 1 }) end)
    it("passes", function() assert.is_true(true) end)
  end)
  it("an error", function() local x = nil; return x.y end)
  pending("later")
  describe("broken", function() error("no body today") end)
  describe("setup fails", function()
    setup(function() error("no fixtures") end)
    it("first", function() end)
    describe("deeper", function() it("second", function() end) end)
  end)
end)
]],
  ["t_test.lua"] = [[test("old style", function() expect(1).to_equal(1) end)]],
}

test("a spec: nested names, luassert's failures with the differences, setup and body failures", function()
  local tree = files.make_tree(SPECS)
  for _, jobs in ipairs{ "", "-j 2 " } do
    local out, err, code = cloudlua_test(tree, jobs .. "--junit report.xml .")
    expect({ code = code, err = err }).to_equal{ code = 1, err = "" }
    expect(out).to_contain("# outer before\n# s_spec.lua\nnot ok 1 - outer inner \\#slow same\n" ..
                           "#   s_spec.lua:4: values differ (1 difference):\n" ..
                           "#     status: expected \"STOPPED\", got \"RUNNING\"\n#   Expected objects to be the same.\n")
    expect(out).to_contain("ok 2 - outer inner \\#slow passes\n")
    expect(out).to_contain("not ok 3 - outer an error\n#   s_spec.lua:7: attempt to index a nil value (local 'x')\n")
    expect(out).to_contain("ok 4 - outer later # SKIP pending\n")
    expect(out).to_contain("not ok 5 - outer broken\n#   describe failed\n#   s_spec.lua:9: no body today\n")
    expect(out).to_contain("not ok 6 - outer setup fails first\n#   setup failed\n#   s_spec.lua:11: no fixtures\n" ..
                           "not ok 7 - outer setup fails deeper second\n#   setup failed\n")
    expect(out).to_contain("# t_test.lua\nok 8 - old style\n1..8\n2 passed, 5 failed, 1 skipped\n")
    local xml = files.read(tree .. "/report.xml")
    expect(xml).to_contain('<testcase classname="s_spec.outer inner #slow" name="outer inner #slow same"')
    expect(xml).to_contain('<failure message="s_spec.lua:4: values differ (1 difference):" type="expectation">')
    expect(xml).to_contain('<testcase classname="s_spec.outer" name="outer an error"')
    expect(xml).to_contain('tests="8" failures="1" errors="4" skipped="1"')
  end
  files.remove_dir(tree)
end)

test("a spec: --tags and --exclude-tags select by the tags in a case's names, --list shows nested names", function()
  local tree = files.make_tree(SPECS)
  local out, _, code = cloudlua_test(tree, "--tags slow s_spec.lua")
  expect({ code = code, last = last_line(out) }).to_equal{ code = 1, last = "1 passed, 2 failed" }  -- the broken body too
  out = cloudlua_test(tree, "--exclude-tags=slow,other --list s_spec.lua")
  expect(out).to_equal("s_spec.lua: outer an error\ns_spec.lua: outer later\ns_spec.lua: outer setup fails first\n" ..
                       "s_spec.lua: outer setup fails deeper second\n")
  files.remove_dir(tree)
end)

test("a spec without luassert on package.path says what to install; a test/expect file needs none", function()
  local tree = files.make_tree(SPECS)
  local out = cloudlua_test(tree, "--filter passes s_spec.lua t_test.lua", "LUA_PATH='./?.lua' ")
  expect(out).to_contain("not ok 1 - outer inner \\#slow passes\n#   at s_spec.lua:5\n#   busted's assertions, spies, stubs and " ..
                         "mocks need luassert (Debian: apt-get install lua-luassert): module 'luassert' not found:\n")
  out = cloudlua_test(tree, "t_test.lua", "LUA_PATH='./?.lua' ")
  expect(last_line(out)).to_equal("1 passed, 0 failed")
  files.remove_dir(tree)
end)

---------------------------------------------------------------- cloud.stub: what fails a case

local STUBS = { ["stub_spec.lua"] = [[
describe("cloud.stub", function()
  it("a result of the wrong shape", function()
    cloud.stub().storage.list_objects_v2:returns{ Contents = { { Key = 1 } } }
  end)
  it("an expectation unmet, the error caught", function()
    cloud.stub().storage.get_object:returns{ Body = "x" }:expects{ Bucket = "b", Object = "k" }
    pcall(cloud.storage.get_object, { Bucket = "c", Object = "k" })
  end)
  it("nothing queued", function()
    cloud.stub()
    cloud.call("GetObject", { Bucket = "c", Object = "k" })
  end)
  it("an answer left", function() cloud.stub().storage.get_object:returns{ Body = "x" } end)
  it("sends again", function() cloud.storage.create_bucket{ Bucket = "real" } end)
end)
]] }

test("cloud.stub: a bad result, an unmet expectation (even caught), a call with nothing queued, an answer left", function()
  local tree = files.make_tree(STUBS)
  local out, err, code = cloudlua_test(tree, "stub_spec.lua")
  files.remove_dir(tree)
  expect({ code = code, err = err }).to_equal{ code = 1, err = "" }
  expect(out).to_contain("not ok 1 - cloud.stub a result of the wrong shape\n#   at stub_spec.lua:3\n" ..
                         "#   validation error in ListObjectsV2: InvalidStubbedResult: the result queued for ListObjectsV2 " ..
                         "does not fit its output shape\n#     Contents[1].Key: string expected, got integer\n")
  expect(out).to_contain("not ok 2 - cloud.stub an expectation unmet, the error caught\n#   config error in GetObject: " ..
                         "UnexpectedArguments: GetObject called with other arguments than :expects gave\n" ..
                         "#     Bucket: expected \"b\", got \"c\"\n")
  expect(out).to_contain("not ok 3 - cloud.stub nothing queued\n#   at stub_spec.lua:11\n#   config error in GetObject: " ..
                         "NoStubbedAnswer: no answer queued for GetObject (cloud.stub): queue one with :returns or :fails\n")
  expect(out).to_contain("not ok 4 - cloud.stub an answer left\n#   config error in GetObject: StubbedAnswersLeft: " ..
                         "1 answer queued and not taken: GetObject (returns)\n")
  expect(out).to_contain("ok 5 - cloud.stub sends again\n1..5\n1 passed, 4 failed\n")
end)

---------------------------------------------------------------- --shard I/N, --timings, --merge-junit

local SHARDED = {
  ["a_test.lua"] = [[test("a", function() end)]],
  ["b_spec.lua"] = [[describe("b", function() it("fails", function() assert.are.equal(1, 2) end) end)]],
  ["c_test.lua"] = [[test("c", function() skip("later") end)]],
  ["d/d_test.lua"] = [[test("d1", function() end) test("d2", function() error("d2 broke") end)]],
  ["e_test.lua"] = [[test("e", function() end)]],
}

-- The files a run's TAP names ("# FILE" lines), sorted.
local function files_run(out)
  local names = {}
  for name in out:gmatch("# ([%w_/]+%.lua)\n") do names[#names + 1] = name end
  table.sort(names)
  return names
end

test("--shard 1/3, 2/3, 3/3 run every file exactly once; their merged JUnit has a single run's counts", function()
  local tree = files.make_tree(SHARDED)
  local whole = cloudlua_test(tree, "--junit all.xml .")
  local all = files.read(tree .. "/all.xml"):match('<testsuites [^>]*>')
  expect(#files_run(whole)).to_equal(5)
  for _, extra in ipairs{ "", "--timings all.xml ", "-j 2 --timings all.xml " } do
    local seen = {}
    for i = 1, 3 do
      local out, err = cloudlua_test(tree, ("%s--shard %d/3 --junit s%d.xml ."):format(extra, i, i))
      expect(err).to_equal("")
      for _, name in ipairs(files_run(out)) do seen[#seen + 1] = name end
    end
    table.sort(seen)
    expect(seen).to_equal(files_run(whole))
    local _, err, code = cloudlua_test(tree, "--merge-junit merged.xml s1.xml s2.xml s3.xml")
    expect({ code = code, err = err }).to_equal{ code = 0, err = "" }
    local merged = files.read(tree .. "/merged.xml"):match('<testsuites [^>]*>')
    expect((merged:gsub(' time="[^"]*"', ""))).to_equal((all:gsub(' time="[^"]*"', "")))
    expect(merged).to_contain('tests="6" failures="1" errors="1" skipped="1"')
  end
  files.remove_dir(tree)
end)

test("--shard: a bad I/N is refused (status 2); a shard with no file runs nothing and passes", function()
  local tree = files.make_tree(SHARDED)
  local out, err, code = cloudlua_test(tree, "--shard 4/3 .")
  expect({ out = out, err = err, code = code }).to_equal{
    out = "", code = 2, err = "cloudlua test: --shard 4/3: give I/N, the I-th of N parts (1 <= I <= N)\n" }
  out, err, code = cloudlua_test(tree, "--shard 7/7 .")
  expect({ out = out, err = err, code = code }).to_equal{
    out = "1..0\n0 passed, 0 failed\n", code = 0, err = "cloudlua test: shard 7/7 has no file (5 files in all)\n" }
  out, err, code = cloudlua_test(tree, "--merge-junit m.xml a_test.lua")
  expect({ out = out, code = code }).to_equal{ out = "", code = 2 }
  expect(err).to_contain("cloudlua test: --merge-junit: a_test.lua: not a JUnit report")
  files.remove_dir(tree)
end)

---------------------------------------------------------------- --coverage: the lines the tests ran

-- A script with a function no test calls (lines 9 and 10 never run; line 1 a comment,
-- 3, 7 and 12 blank: none of them can run), and two test files that load it.
local COVERED = {
  ["calc.lua"] = [[
-- A fixture for --coverage: add runs, never_called never does.
local calc = {}

function calc.add(a, b)
  return a + b
end

function calc.never_called(x)
  local y = x * 2
  return y
end

return calc
]],
  ["calc_test.lua"] = [[
local calc = dofile("calc.lua")
test("adds", function() expect(calc.add(1, 2)).to_equal(3) end)
]],
  ["again_test.lua"] = [[
local calc = dofile("calc.lua")
test("adds again", function() expect(calc.add(2, 2)).to_equal(4) end)
]],
}

-- What check_coverage.py reads in the reports of the folder `dir`, and its exit code.
local function coverage_read(dir)
  local p = assert(io.popen("python3 tests/lua/support/check_coverage.py " .. sh_quote(dir) .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

test("--coverage: lines run and never run, in lcov and Cobertura, the same in the process and under -j 2", function()
  local tree = files.make_tree(COVERED)
  local reports = {}
  for _, jobs in ipairs{ "", "-j 2 " } do
    local out, err, code = cloudlua_test(tree, jobs .. "--coverage made/cov .")
    expect({ code = code, last = last_line(out) }).to_equal{ code = 0, last = "2 passed, 0 failed" }
    expect(err).to_equal("coverage: 77.8% of 9 lines in 1 file (made/cov/lcov.info, made/cov/cobertura.xml)\n")
    local read, status = coverage_read(tree .. "/made/cov")
    expect(status).to_equal(0)
    expect(read).to_equal("calc.lua 9 7\ncalc.lua:2 2\ncalc.lua:4 2\ncalc.lua:5 2\ncalc.lua:6 2\ncalc.lua:8 2\n" ..
                          "calc.lua:9 0\ncalc.lua:10 0\ncalc.lua:11 2\ncalc.lua:13 2\n")
    expect(files.read(tree .. "/made/cov/lcov.info")).to_contain("SF:calc.lua\nDA:2,2\n")
    reports[#reports + 1] = files.read(tree .. "/made/cov/lcov.info")
    files.remove_dir(tree .. "/made")
  end
  expect(reports[2]).to_equal(reports[1])
  files.remove_dir(tree)
end)

test("--coverage: a DIR that is a file is refused before anything runs; a DIR's name is escaped", function()
  local tree = files.make_tree(COVERED)
  files.write(tree .. "/cov", "not a folder")
  local out, err, code = cloudlua_test(tree, "--coverage cov .")
  expect({ out = out, err = err, code = code }).to_equal{ out = "", code = 2,
    err = "cloudlua test: --coverage: cov is a file, not a folder: give a folder for lcov.info and cobertura.xml\n" }
  expect(files.read(tree .. "/cov")).to_equal("not a folder")
  out, err, code = cloudlua_test(tree, "--coverage " .. sh_quote("odd\27[31m") .. " calc_test.lua")
  expect({ code = code, last = last_line(out) }).to_equal{ code = 0, last = "1 passed, 0 failed" }
  expect(err:find("\27", 1, true)).to_be_nil()
  expect(err).to_match("^coverage: 77%.8%% of 9 lines in 1 file %(odd.-%[31m/lcov%.info, ")
  files.remove_dir(tree)
end)

test("--coverage over the tests of scripts/: the reports read in Python and lcov, the scripts counted", function()
  local dir = files.make_dir()
  local out, err, code = cloudlua_test(".", "-j 2 --coverage " .. sh_quote(dir) .. " tests/scripts")
  expect(code).to_equal(0)
  expect(last_line(out)).to_match("^%d+ passed, 0 failed$")
  local total, lines = ("\n" .. err):match("\ncoverage: ([%d.]+)%% of ([%d,]+) lines in %d+ files %(")
  expect(total).to_be_truthy()
  local read, status = coverage_read(dir)
  expect(status).to_equal(0)
  for _, script in ipairs{ "scripts/restore_cluster.lua", "scripts/open_firewall.lua", "scripts/lib/args.lua" } do
    expect(read).to_contain("\n" .. script .. " ")
  end
  expect(read:find("_test.lua", 1, true)).to_be_nil()
  expect(read:find("[cloudlua]", 1, true)).to_be_nil()
  -- lcov reads the tracefile where it is installed; ./setup.sh test installs it and
  -- sets CLOUDLUA_REQUIRE_INTEROP, so there a missing lcov fails rather than skips.
  local have_lcov = os.execute("command -v lcov >/dev/null")
  if not have_lcov and os.getenv("CLOUDLUA_REQUIRE_INTEROP") == "1" then
    error("lcov is not installed (./setup.sh test installs it)")
  end
  if have_lcov then
    local p = assert(io.popen("lcov --summary " .. sh_quote(dir .. "/lcov.info") .. " 2>&1"))
    local summary = p:read("a")
    p:close()
    expect(summary).to_contain(("lines......: %s%% ("):format(total))
    expect(summary).to_contain((" of %s lines)"):format((lines:gsub(",", ""))))
  end
  files.remove_dir(dir)
end)
