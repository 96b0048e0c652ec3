-- Output for machines: --output json prints a call's result as one document (its meta
-- only with json-meta), an empty list of a result as [], an error as one JSON document
-- on stderr with the usual exit status; a piped scripted session shows tables as the
-- REPL does, not as "table: 0x...".
-- Run: cloudlua test tests/lua/cli_json_test.lua
local t = dofile("tests/lua/support/cli.lua")

teardown(t.cleanup)

local UPDATE = [[return cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { tags = {} } }]]

test("a call's result is one JSON document; its meta is left out", function()
  local out, err, code = t.cloudlua("--output json -e " .. t.quote(UPDATE))
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(select(2, out:gsub("\n", ""))).to_equal(1)
  expect(out).to_match('^{"snapshot":{.*"name":"snap%-1"')
end)

test("--output json-meta keeps the meta, as a second document", function()
  local out, _, code = t.cloudlua("--output json-meta -e " .. t.quote(UPDATE))
  expect(code).to_equal(0)
  local first, second = out:match("^([^\n]*)\n([^\n]*)\n$")
  expect(first).to_match('^{"snapshot":')
  expect(second).to_match('"status":200')
  expect(second).to_match('"request_id":"emu%-')
end)

test("an empty list of a result is [], an empty object stays {}", function()
  local out = t.cloudlua("--output json -e " .. t.quote(UPDATE .. ".snapshot.tags, {}"))
  expect(out).to_equal("[]\n{}\n")
end)

test("an error is one JSON document on stderr, with the exit status of text output", function()
  local out, err, code = t.cloudlua("--output json -e " ..
    t.quote([[return cloud.cluster.update_snapshot{ SnapshotName = "snap-9" }]]))
  expect(out).to_equal("")
  expect(code).to_equal(1)
  expect(err).to_match('^{[^\n]*}\n$')
  for _, part in ipairs{ '"kind":"api"', '"code":"SnapshotNotFound"', '"status":404', '"request_id":"emu-',
                         '"fields":[]', '"message":"' } do
    expect(err).to_contain(part)
  end
  err, code = select(2, t.cloudlua("--output json -e " ..
    t.quote([[return cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { nmae = "x" } }]])))
  expect(code).to_equal(1)
  expect(err).to_contain('"fields":[{"path":"snapshot.nmae","problem":"unknown field, did you mean \'name\'?"}]')
  expect(err).to_contain('"kind":"validation"')
end)

test("a Lua error is one JSON document too, without the traceback", function()
  local out, err, code = t.cloudlua("--output json -e 'error(\"boom\")'")
  expect(out).to_equal("")
  expect(code).to_equal(1)
  expect(err).to_equal('{"kind":"lua","message":"(command line):1: boom"}\n')
end)

test("a piped scripted session shows tables as the REPL does", function()
  local out, err, code = t.cloudlua("", { input = 'x = { a = 1, list = { 1, 2 } }\nx\n"text", 2\n' })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_equal('{ a = 1, list = { 1, 2 } }\ntext\t2\n')
end)
