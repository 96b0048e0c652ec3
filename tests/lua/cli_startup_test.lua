-- Start-up as lua.c's pmain does it: everything a run does with its Lua state —
-- the libraries and the cloud module, `arg`, CLOUDLUA_INIT, -e and -l, the script,
-- the REPL — runs inside one protected call, so an error outside the chunks' own
-- calls is reported like any other ("cloudlua: <message>", a traceback, exit
-- status 1), never an unprotected-error panic and an abort.
-- Run: CLOUDLUA_TEST_BIN=build/cloudlua cloudlua test tests/lua/cli_startup_test.lua
local t = dofile("tests/lua/support/cli.lua")
local q = t.quote

teardown(t.cleanup)

local FREEZE = "setmetatable(_G, { __newindex = function(_, k) error('globals are frozen: ' .. k, 2) end })"

test("-l into a global that _G refuses: reported with a traceback, exit status 1", function()
  local out, err, code = t.cloudlua("-e " .. q(FREEZE) .. " -l s=string -e " .. q("print('never')"))
  expect(code).to_equal(1)
  expect(out).to_equal("")
  expect(err).to_match("^cloudlua: globals are frozen: s\nstack traceback:\n")
  expect(err:find("PANIC", 1, true)).to_be_nil()
end)

test("-l after CLOUDLUA_INIT froze _G: reported too, not a panic", function()
  local _, err, code = t.cloudlua("-l s=string", { env = { CLOUDLUA_INIT = FREEZE } })
  expect(code).to_equal(1)
  expect(err).to_contain("cloudlua: globals are frozen: s")
end)

test("a configuration that cannot work still stops before any Lua runs", function()
  local out, err, code = t.cloudlua("-e " .. q("print('ran')"), { env = { CLOUDLUA_DIALECT = "v4" } })
  expect({ out, code }).to_equal{ "", 1 }
  expect(err).to_equal("cloudlua: config error: InvalidSetting: CLOUDLUA_DIALECT: dialect must be ext or aws (got 'v4')\n")
end)

test("-v alone prints the version and opens no session", function()
  local out, err, code = t.cloudlua("-v", { env = { CLOUDLUA_DIALECT = "v4" } })
  expect({ err, code }).to_equal{ "", 0 }
  expect(out).to_match("^cloudlua %S+ %(Lua 5%.4")
end)

test("the Lua-written parts of cloud are compiled on first use, and their errors still name the script's line", function()
  local script = table.concat({
    'assert(package.loaded["cloud.wait"] == nil and package.loaded["cloud.tasks"] == nil)',
    'assert(package.loaded["cloud.transfer"] == nil)',
    'print(pcall(function() cloud.map(1, print) end))',
    'assert(package.loaded["cloud.tasks"] and not package.loaded["cloud.wait"])',
    'print(pcall(function() cloud.wait_until(1) end))',
    'print(pcall(function() cloud.storage.upload_file(1) end))',
    'print(cloud.spawn(function() return 7 end):join())',
  }, "\n")
  local out, err, code = t.cloudlua(q(t.temp_file(script .. "\n")))
  expect(err).to_equal("")
  expect(code).to_equal(0)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  expect(lines[1]).to_match(":3: bad argument #1 to 'cloud.map' %(table expected, got number%)")
  expect(lines[2]).to_match(":5: bad argument #1 to 'cloud.wait_until' %(function expected, got number%)")
  expect(lines[3]).to_match(":6: bad argument #1 to 'cloud.storage.upload_file' %(table expected, got number%)")
  expect(lines[4]).to_equal("7")
end)

test("cloud.pretty is compiled when first read, and is then require's module", function()
  local script = table.concat({
    'print(package.loaded["cloud.pretty"] == nil, rawget(cloud, "pretty") == nil)',
    'print(cloud.pretty{ 1 }, cloud.pretty == require "cloud.pretty", rawget(cloud, "pretty") == cloud.pretty)',
    'print(cloud.no_such_field)',
  }, "\n")
  local out, err, code = t.cloudlua("-e " .. q(script))
  expect({ out, err, code }).to_equal{ "true\ttrue\n{ 1 }\ttrue\ttrue\nnil\n", "", 0 }
end)
