-- Scripted sessions: stdin that is not a terminal, with no script named, runs
-- statement by statement without prompts or banners; expression values are printed;
-- the first error stops it with status 1 and stdin's line number, unless
-- --keep-going; --output json prints the values as JSON.
local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")

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

local out, err, code = t.cloudlua("", { input = session })
t.eq(code, 1, "the first error ends the session with status 1")
t.eq(out, "42\n3\tthree\n", "statements in order, values printed, no prompt or banner")
t.has(err, "cloudlua: stdin:9: stop here\nstack traceback:", "the error with stdin's line number")
t.has(out, "after the error", "nothing runs after the error", true)

out, err, code = t.cloudlua("--keep-going", { input = session })
t.eq(code, 1, "--keep-going still ends with status 1")
t.eq(out, "42\n3\tthree\nafter the error\ncloud.null\n", "--keep-going carries on")
t.has(err, "stdin:9: stop here", "the error is still shown")

out, err, code = t.cloudlua("", { input = "a = 1\nprint(a)\n" })
t.eq(code, 0, "a clean session exits 0 (" .. err .. ")")
t.eq(out, "1\n", "clean session output")
t.eq(err, "cloudlua: no account configured; using the embedded emulator\n", "nothing on stderr but where calls go")

-- a syntax error in the middle: earlier statements ran, later ones do not
out, err, code = t.cloudlua("", { input = "print('one')\nx = = 2\nprint('three')\n" })
t.eq(code, 1, "syntax error status")
t.eq(out, "one\n", "ran up to the syntax error")
t.has(err, "stdin:2: unexpected symbol near '='", "syntax error at stdin's line")

-- input that ends inside a statement
out, err, code = t.cloudlua("", { input = "print('ok')\nfor i = 1, 2 do\n" })
t.eq(code, 1, "unfinished statement status")
t.eq(out, "ok\n", "unfinished statement output")
t.has(err, "'end' expected", "unfinished statement message")

-- calls to the platform, values as JSON
out, err, code = t.cloudlua("--output json", { input = table.concat({
  "r = cloud.cluster.update_snapshot{SnapshotName = 'snap-1', snapshot = { description = 'piped' }}",
  "r.snapshot.description",
  "r.snapshot.tags, cloud.null",
}, "\n") })
t.eq(code, 0, "json session status (" .. err .. ")")
t.eq(out, '"piped"\n{}\nnull\n', "expression values as JSON lines")

t.cleanup()
print("cli_session_test: ok")
