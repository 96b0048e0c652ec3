-- The lua-compatible command line: -e and -l in the order given, -l g=MOD, -E,
-- CLOUDLUA_INIT (code and @file), `-` with arguments, `--`, -i after a script,
-- failures with a traceback and status 1, and --output json for -e chunks and
-- scripts (cloud.null as null).
-- Run: cloudlua test tests/lua/cli_options_test.lua
local t = dofile("tests/lua/support/cli.lua")
local q = t.quote

-- A folder holding greet.lua, a module that prints `order` when loaded (made by
-- setup, removed by teardown), and the LUA_PATH that finds it.
local module_dir, lua_path

setup(function()
  module_dir = os.tmpname()
  lua_path = { LUA_PATH = module_dir .. "/?.lua" }
  os.remove(module_dir)
  assert(os.execute("mkdir " .. q(module_dir)))
  local f = assert(io.open(module_dir .. "/greet.lua", "w"))
  f:write("print('loading greet', order)\nreturn { hello = function() return 'hello' end }\n")
  f:close()
end)

teardown(function()
  if module_dir then
    os.remove(module_dir .. "/greet.lua")
    os.remove(module_dir)
  end
  t.cleanup()
end)

---------------------------------------------------------------- -e, -l, -E

test("-e and -l run in command-line order, as lua runs them; -l g=MOD", function()
  local out, err, code = t.cloudlua("-e 'order = 1' -l greet -e 'print(greet.hello())' -l g=greet -e 'print(g == greet)'",
    { env = lua_path })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_equal("loading greet\t1\nhello\ntrue\n")
end)

test("-E ignores LUA_PATH", function()
  local _, err, code = t.cloudlua("-E -l greet", { env = lua_path })
  expect(code).to_equal(1)
  expect(err).to_contain("module 'greet' not found")
end)

---------------------------------------------------------------- CLOUDLUA_INIT: code, or @file; before -e; -E skips it

test("CLOUDLUA_INIT code runs before -e", function()
  expect((t.cloudlua("-e 'print(greeting)'", { env = { CLOUDLUA_INIT = "greeting = 'from init'" } })))
    .to_equal("from init\n")
end)

test("CLOUDLUA_INIT=@file runs that file first", function()
  local init_file = t.temp_file("greeting = 'from a file'; print(#arg)\n")
  expect((t.cloudlua("-e 'print(greeting)' x", { env = { CLOUDLUA_INIT = "@" .. init_file } })))
    .to_equal("0\nfrom a file\n")
end)

test("-E skips CLOUDLUA_INIT", function()
  expect((t.cloudlua("-E -e 'print(greeting)'", { env = { CLOUDLUA_INIT = "greeting = 1" } }))).to_equal("nil\n")
end)

test("a failing CLOUDLUA_INIT stops everything, named in the error", function()
  local out, err, code = t.cloudlua("-e 'print(1)'", { env = { CLOUDLUA_INIT = "error('bad init')" } })
  expect(code).to_equal(1)
  expect(out).to_equal("")  -- nothing ran after it
  expect(err).to_contain("cloudlua: CLOUDLUA_INIT:1: bad init")
end)

---------------------------------------------------------------- -, --, -i

test("- reads the script from stdin, with arguments", function()
  local out = t.cloudlua("- a b", { input = "local n = select('#', ...)\nprint(arg[0], n, ...)\n" })
  expect(out).to_equal("-\t2\ta\tb\n")
end)

test("-- ends the options: then the script and its own options", function()
  local script = t.temp_file("print(arg[0] ~= nil, ...)\n")
  expect((t.cloudlua("-e 'x = 1' -- " .. q(script) .. " -e y"))).to_equal("true\t-e\ty\n")
end)

test("-i runs the REPL after the script, reading stdin", function()
  local out, _, code = t.cloudlua("-i " .. q(t.temp_file("answer = 42\n")), { input = "print(answer)\n" })
  expect(code).to_equal(0)
  expect(out).to_contain("42\n")
end)

---------------------------------------------------------------- failures

test("a failing -e chunk: message and traceback on stderr, status 1, later steps not run", function()
  local out, err, code = t.cloudlua("-e 'local function f() error(\"deep\") end f()' -e 'print(\"not reached\")'")
  expect(code).to_equal(1)
  expect(out).to_equal("")
  expect(err).to_contain("cloudlua: (command line):1: deep\nstack traceback:\n")
  expect(err).to_contain("in local 'f'")  -- the traceback names the function
end)

test("a syntax error in a script: status 1 and the message", function()
  local _, err, code = t.cloudlua(q(t.temp_file("x = = 1")))
  expect(code).to_equal(1)
  expect(err).to_contain("unexpected symbol near '='")
end)

---------------------------------------------------------------- --output json

-- What -e chunks return, one JSON document per line.
local function json_lines()
  local out, err, code = t.cloudlua(
    [[--output json -e 'return {name = "snap-1", tags = {}, size = 3, ok = true, gone = cloud.null}, nil, 1.5' ]]
    .. [[-e 'x = 1' -e 'return "two"']])
  return { out:match("^(.-)\n(.-)\n(.-)\n(.-)\n$") }, out, err, code
end

test("--output json: four JSON lines for the values returned", function()
  local _, out, err, code = json_lines()
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_match("^.-\n.-\n.-\n.-\n$")
end)

test("--output json: a table as an object, {} for an empty table, cloud.null as null", function()
  local first = json_lines()[1]
  for _, part in ipairs { '"name":"snap-1"', '"tags":{}', '"size":3', '"ok":true', '"gone":null' } do
    expect(first).to_contain(part)
  end
end)

test("--output json: nil is null, numbers as numbers, a later chunk's string", function()
  local lines = json_lines()
  expect(lines[2]).to_equal("null")
  expect(lines[3]).to_equal("1.5")
  expect(lines[4]).to_equal('"two"')
end)

test("--output json-meta: a script's result and meta", function()
  local script = t.temp_file("return cloud.cluster.update_snapshot{SnapshotName = ..., snapshot = { description = 'json' }}\n")
  local out = t.cloudlua("--output json-meta " .. q(script) .. " snap-2")
  local result, meta = out:match("^(.-)\n(.-)\n$")
  expect(result).to_contain('"description":"json"')
  expect(result).to_contain('"name":"snap-2"')
  expect(meta).to_contain('"status":200')
end)

test("--output json: a value without a JSON form fails, naming the field", function()
  local _, err, code = t.cloudlua("--output json -e 'return {f = print}'")
  expect(code).to_equal(1)
  expect(err).to_equal('{"kind":"lua","message":"--output json: returned value 1 at f has no JSON form (cannot send a function)"}\n')
end)

test("without --output json, returned values are not printed (as lua)", function()
  expect((t.cloudlua("-e 'return 1'"))).to_equal("")
end)

test("an unknown output format is refused, naming it", function()
  local _, err, code = t.cloudlua("--output yaml -e 1")
  expect(code).to_not_equal(0)
  expect(err).to_contain("yaml")
end)

for _, args in ipairs { "config --bogus", "test --bogus tests/helpers" } do
  test("a sub-command refuses an option it does not know: " .. args, function()
    local out, err, code = t.cloudlua(args)
    expect(code).to_not_equal(0)
    expect(err).to_contain("--bogus")
    expect(out:find("ok ", 1, true)).to_be_nil()  -- nothing ran
  end)
end
