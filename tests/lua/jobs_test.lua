-- `cloudlua test -j N`: files run in N processes at once. Driven from outside: a
-- folder whose files pass, fail, skip and print, the first the slowest, run with -j 3
-- and -j 1; the output must be the same bytes (the files' order, the case numbers, the
-- tally), the exit status and the JUnit report too. Then Ctrl-C (SIGINT to the
-- runner) while two files wait: every process ends. CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/jobs_test.lua

local t = dofile("tests/lua/support/cli.lua")

local FILES = {
  -- The slowest first: it ends after the others, whose output must wait for it.
  ["a_test.lua"] = [[
test("slow", function()
  for _ = 1, 20 do cloud.storage.list_buckets{} end
  cloud.sleep(0.5, { real_time = true })  -- real time: virtual time would skip it
end)
test("prints", function() print("from a") end)
]],
  ["b_test.lua"] = [[
test("passes", function() expect(cloud.emulator.state().buckets[1].name).to_equal("demo-bucket") end)
test("fails", function() expect(1).to_equal(2) end)
]],
  ["c_test.lua"] = [[
cloud.storage.create_bucket{ Bucket = "only-in-c" }  -- each file has an emulator of its own
test("skips", function() skip("not here") end)
test("sees its own bucket", function() expect(#cloud.storage.list_buckets{}.Buckets).to_equal(2) end)
]],
  ["d_test.lua"] = [[test("errors", function() error("d broke") end)]],
  ["sub/e_test.lua"] = [[test("passes too", function() end)]],
}

local dir
local runs = {}

local function run(args)
  local out, err, code = t.cloudlua("test " .. args, { cd = dir })
  return { out = out, err = err, code = code }
end

-- The JUnit report's suites and cases as check_junit.py prints them (no times).
local function junit_summary(file)
  local p = assert(io.popen("python3 tests/lua/support/check_junit.py " .. t.quote(dir .. "/" .. file) .. " 2>&1"))
  local out = p:read("a")
  p:close()
  return out
end

setup(function()
  dir = dofile("tests/lua/support/files.lua").make_tree(FILES)
  runs.serial = run("--junit serial.xml .")
  runs.parallel = run("-j 3 --junit parallel.xml .")
  runs.passing = run("-j 2 --filter pass .")
end)

teardown(function()
  if dir then os.execute("rm -rf " .. t.quote(dir)) end
  t.cleanup()
end)

test("-j 3 prints what -j 1 prints, byte for byte: files in order, cases numbered on", function()
  expect(runs.parallel.out).to_equal(runs.serial.out)
  expect(runs.parallel.out).to_contain("# a_test.lua\nok 1 - slow\n# from a\nok 2 - prints\n# b_test.lua\nok 3 - passes\n")
  expect(runs.parallel.out).to_contain("# sub/e_test.lua\nok 8 - passes too\n1..8\n")
end)

test("-j 3: the tally", function()
  expect(runs.parallel.out).to_match("\n5 passed, 2 failed, 1 skipped\n$")
  expect(runs.parallel.err).to_equal("")
end)

test("-j 3: exit status 1 when a case failed, 0 when all passed", function()
  expect(runs.parallel.code).to_equal(1)
  expect(runs.passing.code).to_equal(0)
  expect(runs.passing.out).to_match("\n2 passed, 0 failed\n$")
end)

test("-j 3: the JUnit report holds the same suites and cases", function()
  local parallel = junit_summary("parallel.xml")
  expect(parallel).to_equal(junit_summary("serial.xml"))
  expect(parallel).to_contain("total tests=8 failures=1 errors=1 skipped=1\n")
end)

test("-j takes a number from 1", function()
  local r = run("-j 0 .")
  expect(r.code).to_equal(1)
  expect(r.err).to_contain("-j")
end)

-- Two files that note their pid and wait; the runner gets SIGINT once both wait.
local WAITS = [[
local f = assert(io.open(os.getenv("MARKS") .. "/" .. tostring(io.open("/proc/self/stat"):read("n")), "w"))
f:close()
test("waits", function() cloud.sleep(300, { real_time = true }) end)
]]

for _, signal in ipairs{ { "INT", 130 }, { "TERM", 143 }, { "HUP", 129 } } do
  local name, status = signal[1], signal[2]
  test(("SIG%s stops every file's process and the runner (status %d), with the summary"):format(name, status), function()
    local marks = dir .. "/marks-" .. name
    assert(os.execute("mkdir -p " .. t.quote(dir .. "/waits") .. " " .. t.quote(marks)))
    for _, file in ipairs{ "one_test.lua", "two_test.lua" } do
      local f = assert(io.open(dir .. "/waits/" .. file, "w"))
      f:write(WAITS)
      f:close()
    end
    -- Started in the background, the signal once both children have written their pid;
    -- then the runner's status, and each child's pid once it is gone (at most 60 s each).
    local script = [[
cd "$1" && MARKS="$2" CLOUDLUA_CONFIG_FILE=/dev/null "$3" test -j 2 waits >"$2.out" 2>"$2.err" &
runner=$!
for i in $(seq 600); do [ "$(ls "$2" | wc -l)" -ge 2 ] && break; sleep 0.1; done
kill -$4 $runner
wait $runner
echo "status $?"
for pid in $(ls "$2"); do
  for i in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && echo "left running" || echo "ended"
done
]]
    local p = assert(io.popen(("sh -c %s sh %s %s %s %s"):format(t.quote(script), t.quote(dir), t.quote(marks),
                                                                  t.quote(t.bin), name)))
    local out = p:read("a")
    p:close()
    expect(out).to_equal(("status %d\nended\nended\n"):format(status))
    expect(t.read_file(marks .. ".err")).to_contain("cloudlua test: interrupted (SIG" .. name .. ")")
    expect(t.read_file(marks .. ".out")).to_contain("not ok 1 - waits/one_test.lua\n#   stopped: the runner got SIG" .. name)
    expect(t.read_file(marks .. ".out")).to_match("\n0 passed, 2 failed\n$")
  end)
end

---------------------------------------------------------------- a file whose process dies, exits or hangs

-- Writes `files` (name -> text) under dir/<sub>; returns that folder's path.
local function subfolder(sub, files)
  local path = dir .. "/" .. sub
  assert(os.execute("mkdir -p " .. t.quote(path)))
  for name, text in pairs(files) do
    local f = assert(io.open(path .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  return path
end

test("-j 2: a file whose process is killed is a failed file; every other file's results, the summary and the report stay", function()
  subfolder("crash", {
    ["a_test.lua"] = [[test("passes", function() end)]],
    -- os.execute's shell is a child of the file's process: $PPID is that process.
    ["b_test.lua"] = [[
test("passes first", function() end)
test("kills its own process", function() os.execute("kill -KILL $PPID; sleep 5") end)
]],
    ["c_test.lua"] = [[test("passes too", function() end) test("fails", function() expect(1).to_equal(2) end)]],
  })
  local r = run("-j 2 --junit crash.xml crash")
  expect(r.code).to_equal(1)
  expect(r.out).to_contain("# crash/b_test.lua\nok 2 - passes first\nnot ok 3 - crash/b_test.lua\n" ..
                           "#   its process was killed by signal 9 (Killed)\n# crash/c_test.lua\nok 4 - passes too\n")
  expect(r.out).to_match("\n1%.%.5\n3 passed, 2 failed\n$")
  local report = junit_summary("crash.xml")
  expect(report).to_contain("suite crash/a_test.lua tests=1 failures=0 errors=0 skipped=0\n")
  expect(report).to_contain("case crash.b_test | crash/b_test.lua | error | its process was killed by signal 9 (Killed)\n")
  expect(report).to_contain("suite crash/c_test.lua tests=2 failures=1 errors=0 skipped=0\n")
end)

test("-j 1: each file in a process of its own too: one that kills its process fails, the run reports", function()
  subfolder("crash_one", {
    ["a_test.lua"] = [[test("passes", function() end)]],
    ["b_test.lua"] = [[
test("calls os.exit(3)", function() os.exit(3) end)
test("kills its own process", function() os.execute("kill -KILL $PPID; sleep 5") end)
]],
  })
  local r = run("-j 1 --junit crash_one.xml crash_one")
  expect(r.code).to_equal(1)
  expect(r.out).to_contain("# crash_one/a_test.lua\nok 1 - passes\n# crash_one/b_test.lua\nnot ok 2 - calls os.exit(3)\n")
  expect(r.out).to_contain("not ok 3 - crash_one/b_test.lua\n#   its process was killed by signal 9 (Killed)\n")
  expect(r.out).to_match("\n1%.%.3\n1 passed, 2 failed\n$")
  local report = junit_summary("crash_one.xml")
  expect(report).to_contain("case crash_one.b_test | crash_one/b_test.lua | error | its process was killed by signal 9 (Killed)\n")
  expect(report).to_contain("total tests=3 failures=0 errors=2 skipped=0\n")
end)

local SPIN = [[
local f = assert(io.open(os.getenv("MARKS") .. "/" .. tostring(io.open("/proc/self/stat"):read("n")), "w"))
f:close()
test("spins", function() while true do end end)
]]

test("--timeout: a file still running after it is killed and failed, with -j and without", function()
  subfolder("hangs", { ["a_test.lua"] = SPIN, ["b_test.lua"] = [[test("passes", function() end)]] })
  local marks = dir .. "/hang-marks"
  assert(os.execute("mkdir -p " .. t.quote(marks)))
  for _, args in ipairs{ "-j 2 --timeout 2 --junit hangs.xml hangs", "--timeout 2 hangs/a_test.lua" } do
    local out, err, code = t.cloudlua("test " .. args, { cd = dir, env = { MARKS = marks } })
    expect(code).to_equal(1)
    expect(out).to_contain("not ok 1 - hangs/a_test.lua\n#   timed out: still running after 2 s (--timeout), its process was killed\n")
    expect(err).to_equal("")
  end
  expect(junit_summary("hangs.xml")).to_contain("total tests=2 failures=0 errors=1 skipped=0\n")
end)

test("kill -9 of the runner: no worker is left running, no temporary file left behind", function()
  subfolder("spins_worker", { ["one_test.lua"] = SPIN, ["two_test.lua"] = SPIN })
  local marks, tmp = dir .. "/spin-marks", dir .. "/tmp"
  assert(os.execute("mkdir -p " .. t.quote(marks) .. " " .. t.quote(tmp)))
  -- The runner's command line holds the folder's name, which the script's own text does
  -- not: pgrep finds the runner and its workers by it, and nothing else.
  local script = [[
marker="spins_""worker"
cd "$1" && TMPDIR="$3" MARKS="$2" CLOUDLUA_CONFIG_FILE=/dev/null "$4" test -j 2 "$1/$marker" >/dev/null 2>&1 &
runner=$!
for i in $(seq 600); do [ "$(ls "$2" | wc -l)" -ge 2 ] && break; sleep 0.1; done
kill -KILL $runner
wait $runner 2>/dev/null
for i in $(seq 50); do pgrep -f "$marker" >/dev/null || break; sleep 0.1; done
left=$(pgrep -f "$marker")
[ -n "$left" ] && { echo "left running"; kill -KILL $left; } || echo "none running"
echo "$(ls -A "$3" | wc -l) temporary files"
]]
  local p = assert(io.popen(("sh -c %s sh %s %s %s %s"):format(t.quote(script), t.quote(dir), t.quote(marks),
                                                                t.quote(tmp), t.quote(t.bin))))
  local out = p:read("a")
  p:close()
  expect(out).to_equal("none running\n0 temporary files\n")
end)

-- The file appends a line of its own to its events (the one file its process holds
-- open, deleted, that is neither its stdout nor its stderr): the runner reads it as a
-- text from outside, checks it and fails the file, keeping the events before it.
local FORGES = [=[
test("passes", function() end)
test("forges an event", function()
  os.execute([[
t1=$(readlink /proc/$PPID/fd/1); t2=$(readlink /proc/$PPID/fd/2)
for f in /proc/$PPID/fd/*; do
  l=$(readlink "$f")
  case "$l" in *"(deleted)"*) [ "$l" != "$t1" ] && [ "$l" != "$t2" ] && printf 'case name=x outcome=passed%%0A\n' >>"$f";; esac
done]])
end)
]=]

test("-j 2: an event line that does not read is the file's failure, not a case", function()
  subfolder("forges", { ["a_test.lua"] = FORGES, ["b_test.lua"] = [[test("passes", function() end)]] })
  local r = run("-j 2 forges")
  expect(r.code).to_equal(1)
  expect(r.out).to_contain("# forges/a_test.lua\nok 1 - passes\nnot ok 2 - forges/a_test.lua\n" ..
                           "#   its event 5 is malformed: a case with no known outcome\n# forges/b_test.lua\nok 3 - passes\n")
  expect(r.out).to_match("\n2 passed, 1 failed\n$")
end)

-- Both processes of -j 2 can end before the runner looks: it must start the next file
-- then, not wait for an end that will not come (it once waited out its whole time limit).
test("-j 2: quick files, each started as soon as a process is free", function()
  local files = {}
  for i = 1, 12 do files[("q%02d_test.lua"):format(i)] = ([[test("quick %d", function() end)]]):format(i) end
  subfolder("quick", files)
  local r = run("-j 2 --timeout 60 quick")
  expect(r.code).to_equal(0)
  expect(r.out).to_match("\n1%.%.12\n12 passed, 0 failed\n$")
end)
