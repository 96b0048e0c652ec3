-- Scripted sessions: stdin that is not a terminal, with no script named, runs
-- statement by statement without prompts or banners; expression values are printed;
-- the first error stops it with status 1 and stdin's line number, unless
-- --keep-going; --output json prints the values as JSON.
-- Run: cloudlua test tests/lua/cli_session_test.lua
local t = dofile("tests/lua/support/cli.lua")

teardown(t.cleanup)

local session = table.concat({
  "#!/usr/bin/env cloudlua",
  "x = 40",
  "",
  "x + 2",
  "t = {",
  "  1, 2,",
  "  3 }",
  "#t, 'three'",
  "error('stop here')",
  "print('after the error')",
  "cloud.null",
}, "\n") .. "\n"

test("the first error ends the session with status 1 and stdin's line number", function()
  local out, err, code = t.cloudlua("", { input = session })
  expect(code).to_equal(1)
  expect(out).to_equal("42\n3\tthree\n")  -- statements in order, values printed, no prompt or banner
  expect(err).to_contain("cloudlua: stdin:9: stop here\nstack traceback:")
  expect(out:find("after the error", 1, true)).to_be_nil()  -- nothing runs after the error
end)

test("--keep-going carries on, still showing the error and ending with status 1", function()
  local out, err, code = t.cloudlua("--keep-going", { input = session })
  expect(code).to_equal(1)
  expect(out).to_equal("42\n3\tthree\nafter the error\nnull\n")  -- values shown as the REPL shows them
  expect(err).to_contain("stdin:9: stop here")
end)

test("a clean session exits 0 with nothing on stderr", function()
  local out, err, code = t.cloudlua("", { input = "a = 1\nprint(a)\n" })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_equal("1\n")
end)

test("a syntax error in the middle: earlier statements ran, later ones do not", function()
  local out, err, code = t.cloudlua("", { input = "print('one')\nx = = 2\nprint('three')\n" })
  expect(code).to_equal(1)
  expect(out).to_equal("one\n")
  expect(err).to_contain("stdin:2: unexpected symbol near '='")
end)

test("input that ends inside a statement", function()
  local out, err, code = t.cloudlua("", { input = "print('ok')\nfor i = 1, 2 do\n" })
  expect(code).to_equal(1)
  expect(out).to_equal("ok\n")
  expect(err).to_contain("'end' expected")
end)

test("calls to the platform, values as JSON lines", function()
  local out, err, code = t.cloudlua("--output json", { input = table.concat({
    "r = cloud.cluster.update_snapshot{SnapshotName = 'snap-1', snapshot = { description = 'piped' }}",
    "r.snapshot.description",
    "r.snapshot.tags, cloud.null",
  }, "\n") })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_equal('"piped"\n[]\nnull\n')  -- an empty list of a result is []
end)
