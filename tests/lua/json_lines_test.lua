-- `cloudlua test --output json` driven from outside: a file with a pass, a failure, a
-- skip, printed output (a secret among it) and a name holding an escape character;
-- every line of stdout must parse as JSON (python3's json.loads) and carry the fields
-- the manual lists, in the order the events happened, the same with -j 2.
-- CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/json_lines_test.lua

local t = dofile("tests/lua/support/cli.lua")

local FILES = {
  ["a_test.lua"] = [[
cloud.client{ credentials = { access_key_id = "AKIDJSON", secret_access_key = "json-secret-0123456789" } }
print("top level")
test("passes", function() print("in the case", 1) end)
test("fails", function() expect(1 + 1).to_equal(3) end)
test("skips", function() skip("no real endpoint") end)
test("prints a secret: json-secret-0123456789", function() print("the secret: json-secret-0123456789") end)
test("colour \27[31m red", function() end)
]],
}

-- Reads JSON lines on stdin; prints per line: the event's keys, sorted, then its
-- event, file, name, outcome and text or message's first line; "BAD n" for a line
-- that does not parse.
local SUMMARY = [[
import json, sys
for n, line in enumerate(sys.stdin.read().split("\n")[:-1], 1):
    try:
        o = json.loads(line)
    except ValueError:
        print("BAD", n)
        continue
    text = o.get("text", o.get("message", ""))
    print(",".join(sorted(o)), "|", o["event"], o.get("file", ""), o.get("name", ""), o.get("outcome", ""),
          text.split("\n")[0], sep=" ")
]]

local dir

setup(function() dir = dofile("tests/lua/support/files.lua").make_tree(FILES) end)

teardown(function()
  if dir then os.execute("rm -rf " .. t.quote(dir)) end
  t.cleanup()
end)

-- The summary of `out` (SUMMARY) by python3.
local function summary(out)
  local input = t.temp_file(out)
  local p = assert(io.popen("python3 -c " .. t.quote(SUMMARY) .. " <" .. t.quote(input) .. " 2>&1"))
  local text = p:read("a")
  p:close()
  return text
end

local EXPECTED = table.concat({
  "event,file | file a_test.lua   ",
  "event,file,text | output a_test.lua   top level",
  "event,file,name | start a_test.lua passes  ",
  "event,file,name,text | output a_test.lua passes  in the case\t1",
  "event,file,name,outcome,time | case a_test.lua passes passed ",
  "event,file,name | start a_test.lua fails  ",
  "event,file,message,name,outcome,time,traceback | case a_test.lua fails failure a_test.lua:4: values differ " ..
    "(1 difference):",
  "event,file,name | start a_test.lua skips  ",
  "event,file,message,name,outcome,time | case a_test.lua skips skipped no real endpoint",
  "event,file,name | start a_test.lua prints a secret: <redacted>  ",
  "event,file,name,text | output a_test.lua prints a secret: <redacted>  the secret: <redacted>",
  "event,file,name,outcome,time | case a_test.lua prints a secret: <redacted> passed ",
  "event,file,name | start a_test.lua colour \27[31m red  ",
  "event,file,name,outcome,time | case a_test.lua colour \27[31m red passed ",
  "event,file,time | file_end a_test.lua   ",
  "event,failed,passed,skipped,tests,time | run_end    ",
}, "\n") .. "\n"

for _, jobs in ipairs{ "", "-j 2 " } do
  test(jobs .. "every line is a JSON object with the event's fields, secrets redacted", function()
    local out, err, code = t.cloudlua("test --output json " .. jobs .. "a_test.lua", { cd = dir })
    expect(code).to_equal(1)
    expect(err).to_equal("")
    expect(summary(out)).to_equal(EXPECTED)
    expect(out:find("json-secret-0123456789", 1, true)).to_be_nil()
    expect(out:find("\27", 1, true)).to_be_nil()  -- escaped as \u001b: nothing reaches a terminal raw
    expect(out).to_match('"failed":1,"passed":3,"skipped":1,"tests":5,"time":[%d.e-]+}\n$')
  end)
end

test("--junit FILE beside --output json: the report in the file, JSON lines on stdout", function()
  local out, _, code = t.cloudlua("test --output json --junit r.xml a_test.lua", { cd = dir })
  expect(code).to_equal(1)
  expect(summary(out)).to_equal(EXPECTED)
  expect(t.read_file(dir .. "/r.xml")).to_contain('<testsuites name="cloudlua test" tests="5" failures="1"')
end)

test("--output junit: the JUnit XML on stdout, and nothing else", function()
  local out, _, code = t.cloudlua("test --output junit a_test.lua", { cd = dir })
  expect(code).to_equal(1)
  expect(out).to_match('^<%?xml version="1.0" encoding="UTF%-8"%?>\n<testsuites name="cloudlua test" tests="5" ' ..
                       'failures="1" errors="0" skipped="1"')
  expect(out).to_match("</testsuites>\n$")
end)

test("--output tap is the default", function()
  local tap = t.cloudlua("test --output tap a_test.lua", { cd = dir })
  local default = t.cloudlua("test a_test.lua", { cd = dir })
  expect((tap:gsub("%d+%.%d+", "T"))).to_equal((default:gsub("%d+%.%d+", "T")))
  expect(tap).to_match("3 passed, 1 failed, 1 skipped\n$")
end)

test("an unknown --output is a usage error", function()
  local _, err, code = t.cloudlua("test --output yaml a_test.lua", { cd = dir })
  expect(code).to_equal(1)
  expect(err).to_contain("--output")
end)
