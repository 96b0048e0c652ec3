-- The REPL with stdin not a terminal (`cloudlua -i < file`): no banner and no
-- prompts, expression values shown as on a terminal but never in colour, multi-line
-- chunks continued, errors on stderr without ending the session, no history written.
-- CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/repl_pipe_test.lua

local t = dofile("tests/lua/support/cli.lua")

local history  -- where history would be written; it must stay absent
local out, err, code  -- what the first session gave, run by setup

setup(function()
  history = os.tmpname()
  os.remove(history)
  out, err, code = t.cloudlua("-i", { env = { NO_COLOR = "", CLOUDLUA_HISTORY = history }, input = [[
1 + 1
"text", 2
{ b = 2, a = { 1, 2 }, [10] = cloud.null }
cloud.cluster.update_snapshot{
  SnapshotName = "snap-1",
  snapshot = { description = "piped" },
}.snapshot.description
x = 5
x
error("oops")
_PROMPT = "custom> "
local t = {} t.self = t return t == t.self
print("end")
]] })
end)

teardown(function()
  if history then os.remove(history) end
  t.cleanup()
end)

test("exit status 0 at the end of input", function()
  expect(code).to_equal(0)
end)

test("stdout: values only, no banner, no prompts, no colour", function()
  expect(out).to_equal(table.concat({
    "2",
    "text\t2",
    "{ [10] = null, a = { 1, 2 }, b = 2 }",
    "piped",
    "5",
    "true",
    "end",
  }, "\n") .. "\n")
end)

test("an error goes to stderr and the session carries on", function()
  expect(err).to_match("^cloudlua: stdin:1: oops\nstack traceback:\n")
end)

test("no history written when stdin is not a terminal", function()
  expect(io.open(history)).to_be_nil()
end)

test("an unfinished chunk at the end of input is reported, as a syntax error", function()
  local out2, err2, code2 = t.cloudlua("-i", { input = "x = {\n  1,\n" })
  expect(code2).to_equal(0)
  expect(out2).to_equal("")
  expect(err2).to_match("^cloudlua: stdin:2: .*near <eof>\n")
end)

test("help() prints from the model in a piped session as well", function()
  expect((t.cloudlua("-i", { input = 'help"UpdateSnapshot"\n' })))
    .to_match("^cloud%.cluster%.update_snapshot{%.%.%.}  %(UpdateSnapshot, cluster API%)\n")
end)
