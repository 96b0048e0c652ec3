-- `cloudlua test` as a user meets it, driven from outside: test files written to a
-- temporary folder, the binary run on them, its TAP output and exit status checked.
-- A plain script (not a harness file) so that a broken harness cannot vouch for itself.
-- CLOUDLUA_TEST_BIN names the binary.

local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")
local bin, eq, has, sh_quote = t.bin, t.eq, t.has, t.quote

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

-- Runs `cloudlua test ARGS` in `dir`; returns stdout, stderr and the exit code.
local function cloudlua_test(dir, args)
  local err_file = os.tmpname()
  local p = assert(io.popen(("cd %s && %s test %s 2>%s"):format(sh_quote(dir), sh_quote(bin), args, err_file)))
  local out = p:read("a")
  local _, _, code = p:close()
  local f = assert(io.open(err_file))
  local err = f:read("a")
  f:close()
  os.remove(err_file)
  return out, err, code
end

local function last_line(text) return text:match("([^\n]*)\n?$") end

local dir = folder{
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
test("virtual time: a long wait takes no real time", function()
  local start = cloud.clock()
  local tries = 0
  cloud.wait_until(function() tries = tries + 1 return tries == 4 end, { timeout = 3600, interval = 600 })
  expect(tries).to_equal(4)
  expect(cloud.clock() - start < 5).to_be_truthy()
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

-- a folder: its *_test.lua files, sub-folders included, in order; TAP and the summary
local out, err, code = cloudlua_test(dir, ".")
eq(code, 1, "exit status when a case failed")
has(out, "# a_test.lua\nok 1 - passes\nnot ok 2 - diffs tables\n", "TAP lines in order")
has(out, "#   a_test.lua:7: values differ (2 differences):\n#     status: missing (expected \"AVAILABLE\")\n" ..
         "#     tags[1].value: expected \"prod\", got \"qa\"\n", "a readable diff of tables")
has(out, "not ok 3 - plain assert\n#   a_test.lua:10: plain assert failed\n", "a plain assert fails the case")
has(out, "ok 4 - expected error\n", "to_fail with kind, code and status")
has(out, "not ok 5 - wrong expected error\n#   a_test.lua:15: expected an error with code \"Other\"; got:\n" ..
         "#     api error in UpdateSnapshot (HTTP 404): SnapshotNotFound", "a wrong error is shown whole")
has(out, "ok 6 - skipped inside # SKIP no real endpoint\n", "skip() inside a case")
has(out, "ok 7 - skipped by declaration # SKIP test.skip\n", "test.skip")
has(out, "# log:\tsetup,before,after", "print writes diagnostics, not TAP lines")
has(out, "ok 8 - hooks ran in order\n", "setup once, before_each and after_each around every case")
has(out, "# b_test.lua\nok 10 - sees a fresh emulator\nok 11 - virtual time", "each file gets a fresh emulator")
has(out, "# sub/c_test.lua\nok 12 - found in a sub-folder\n", "sub-folders are searched")
assert(not out:find("only *_test.lua", 1, true), "other .lua files are not run from a folder")
has(out, "1..12\n", "the plan")
eq(last_line(out), "7 passed, 3 failed, 2 skipped", "the last line")
eq(err, "", "nothing on stderr")

-- a file given by name runs whatever its name; load and setup failures are failures
out, _, code = cloudlua_test(dir, "broken_setup.lua syntax.lua plain_script.lua odd_names.lua")
eq(code, 1, "exit status with broken files")
has(out, "not ok 1 - first\n#   setup failed\n#   broken_setup.lua:1: no fixtures today\nnot ok 2 - second\n",
    "a failed setup fails every case of the file")
has(out, "not ok 3 - syntax.lua\n#   the file failed to load\n#   syntax.lua:", "a syntax error is a failure")
has(out, "ok 4 - plain_script.lua (no test declared; the file ran)\n", "a plain script counts as one case")
has(out, "ok 5 - case \\#1 on two lines\n", "a name stays one TAP line, '#' escaped")
eq(last_line(out), "2 passed, 3 failed", "summary with broken files")

-- --filter and --list
out, _, code = cloudlua_test(dir, "--filter 'fresh emulator' .")
eq(code, 0, "exit status when every selected case passed")
has(out, "ok 1 - sees a fresh emulator\n1..1\n1 passed, 0 failed\n", "only the matching case runs")
out, _, code = cloudlua_test(dir, "--filter b_test.lua .")
eq(last_line(out), "2 passed, 0 failed", "a file name selects its cases")
out, _, code = cloudlua_test(dir, "--list --filter skipped .")
eq(code, 0, "--list exits 0")
eq(out, "a_test.lua: skipped inside\na_test.lua: skipped by declaration\n", "--list prints the cases, runs nothing")
out, err, code = cloudlua_test(dir, "--filter no-such-case .")
eq(code, 1, "nothing matched is a failure")
has(err, "no test case ran (check --filter)", "and says why")

-- usage errors: exit status 2 and a message
_, err, code = cloudlua_test(dir, "missing_test.lua")
eq(code, 2, "a missing path")
has(err, "no such file or folder: missing_test.lua", "names the path")
_, err, code = cloudlua_test(dir .. "/sub/..", "")
eq(code, 2, "no path given")

-- --endpoint: the configured endpoint, no embedded emulator (cloud.emulator is nil)
local probe = folder{ ["probe_test.lua"] = [[
test("no emulator", function() expect(cloud.emulator).to_be_nil() end)
test("the endpoint configured is used", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "s" }).to_fail{ kind = "transport" }
end)
]] }
out, _, code = cloudlua_test(probe, "--endpoint cluster=http://127.0.0.1:9 --access-key K --secret-key S .")
eq(last_line(out), "2 passed, 0 failed", "against a configured endpoint")
eq(code, 0, "exit status against a configured endpoint")

os.execute("rm -rf " .. sh_quote(dir) .. " " .. sh_quote(probe))
print("test_runner_test: ok")
