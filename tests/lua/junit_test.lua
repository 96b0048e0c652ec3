-- `cloudlua test --junit FILE` driven from outside: a folder of test files with a
-- pass, a failure, a skip, an error, a broken setup and names no XML can carry as
-- they are; the report is checked by tests/lua/support/check_junit.py against the
-- rules reporters rely on (well-formed, <testsuites> and <testsuite> counts and times,
-- testcase classname, name and time) and what it holds is compared line by line.
-- CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/junit_test.lua

local t = dofile("tests/lua/support/cli.lua")

local FILES = {
  ["a_test.lua"] = [[
test("passes", function() expect(1 + 1).to_equal(2) end)
test("fails a check", function() expect({ status = "RUNNING" }).to_equal({ status = "STOPPED" }) end)
test("skips", function() skip("no real endpoint") end)
test("errors outside a check", function() local snapshot = nil; return snapshot.name end)
test("a wrong error is a failed check", function()
  expect(cloud.cluster.update_snapshot, { SnapshotName = "none" }).to_fail{ code = "Other" }
end)
test("control \1 characters & <markup>", function() error("bytes \0\2 and \255 in a message") end)
]],
  ["sub/b_test.lua"] = [[
setup(function() error("no fixtures today") end)
test("first", function() end)
]],
}

local dir, run, report, checked

-- Writes FILES into a fresh folder and runs them with --junit; checks the report.
setup(function()
  dir = dofile("tests/lua/support/files.lua").make_tree(FILES)
  local out, err, code = t.cloudlua("test --junit report.xml .", { cd = dir })
  run = { out = out, err = err, code = code }
  report = t.read_file(dir .. "/report.xml")
  local p = assert(io.popen("python3 tests/lua/support/check_junit.py " .. t.quote(dir .. "/report.xml") .. " 2>&1"))
  checked = { out = p:read("a") }
  checked.ok = p:close()
end)

teardown(function()
  if dir then os.execute("rm -rf " .. t.quote(dir)) end
  t.cleanup()
end)

test("the report keeps the rules reporters rely on", function()
  expect(checked.ok).to_be_truthy()
end)

test("one testsuite per file, one testcase per case, each with its outcome and message", function()
  expect(checked.out).to_equal(table.concat({
    "suite a_test.lua tests=6 failures=2 errors=2 skipped=1",
    "case a_test | passes | passed | ",
    "case a_test | fails a check | failure | a_test.lua:2: values differ (1 difference):",
    "case a_test | skips | skipped | no real endpoint",
    "case a_test | errors outside a check | error | a_test.lua:4: attempt to index a nil value (local 'snapshot')",
    "case a_test | a wrong error is a failed check | failure | a_test.lua:6: expected an error with code \"Other\"; got:",
    "case a_test | control \\x01 characters & <markup> | error | a_test.lua:8: bytes \\x00\\x02 and \\xFF in a message",
    "suite sub/b_test.lua tests=1 failures=0 errors=1 skipped=0",
    "case sub.b_test | first | error | setup failed",
    "total tests=7 failures=2 errors=3 skipped=1",
  }, "\n") .. "\n")
end)

test("a failure holds the whole message and the traceback, harness frames left out", function()
  expect(report).to_contain('type="expectation">a_test.lua:2: values differ (1 difference):\n' ..
                            '  status: expected "STOPPED", got "RUNNING"\n\nstack traceback:\n' ..
                            '\ta_test.lua:2: in function &lt;a_test.lua:2&gt;</failure>')
  expect(report:find("testing.lua", 1, true)).to_be_nil()
end)

test("every testcase has a time in seconds", function()
  local n = 0
  for time in report:gmatch('<testcase classname="[^"]*" name="[^"]*" time="([^"]*)"') do
    expect(time).to_match("^%d+%.%d%d%d$")
    n = n + 1
  end
  expect(n).to_equal(7)
end)

test("the report is written to the file only: TAP stays on stdout, as without --junit", function()
  expect(run.out:find("<testsuite", 1, true)).to_be_nil()
  expect(run.out).to_contain("# a_test.lua\nok 1 - passes\nnot ok 2 - fails a check\n")
  expect(run.out).to_match("1 passed, 5 failed, 1 skipped\n$")
  expect(run.err).to_equal("")
end)

test("the exit status is that of the run", function() expect(run.code).to_equal(1) end)

test("a report that cannot be written is an error of the command (status 2)", function()
  local _, err, code = t.cloudlua("test --junit /nonexistent/dir/report.xml a_test.lua", { cd = dir })
  expect(code).to_equal(2)
  expect(err).to_contain("cannot write the JUnit report /nonexistent/dir/report.xml")
end)

---------------------------------------------------------------- <system-out>: what a case printed, in its testcase

local PRINTS = {
  ["p_test.lua"] = [[
print("top level")
test("prints", function() print("from the case", 1) print("a second line") end)
test("prints and fails", function() print("before failing") expect(1).to_equal(2) end)
test("quiet", function() end)
]],
  ["q_test.lua"] = [[test("prints too", function() print("from q") end)]],
}

test("what a case prints is in its <system-out>, the same with -j 2; what the file prints outside a case in the suite's", function()
  local printing = dofile("tests/lua/support/files.lua").make_tree(PRINTS)
  for _, args in ipairs{ "--junit r.xml .", "-j 2 --junit r.xml ." } do
    local out, _, code = t.cloudlua("test " .. args, { cd = printing })
    expect(code).to_equal(1)
    expect(out).to_contain("# top level\n# from the case\t1\n# a second line\n# p_test.lua\nok 1 - prints\n")
    local xml = t.read_file(printing .. "/r.xml")
    expect(xml).to_contain('name="prints" time="')
    expect(xml).to_contain('file="p_test.lua">\n      <system-out>from the case\t1\na second line\n</system-out>\n    </testcase>')
    expect(xml).to_contain('</failure>\n      <system-out>before failing\n</system-out>\n    </testcase>')
    expect(xml).to_contain('<testcase classname="p_test" name="quiet" time="0.000" file="p_test.lua" />')
    expect(xml).to_contain('    <system-out>top level\n</system-out>\n  </testsuite>')
    expect(xml).to_contain('file="q_test.lua">\n      <system-out>from q\n</system-out>')
  end
  os.execute("rm -rf " .. t.quote(printing))
end)
