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

test("an operation read on its own (a call before anything asked for its whole API) is the operation of the whole read", function()
  -- With an endpoint set no emulator starts (it reads every API): the first call reads its
  -- operation's text alone. What a later whole read lists, and how both refuse bad
  -- arguments, must not depend on which came first.
  local env = { CLOUDLUA_ENDPOINT_STORAGE = "http://127.0.0.1:1", CLOUDLUA_ACCESS_KEY_ID = "a", CLOUDLUA_SECRET_ACCESS_KEY = "b" }
  local call = 'local _, e = pcall(cloud.storage.get_object, { Bucket = 1, Range = {} }) print(cloud.pretty(e.fields)) print("--")'
  local list = 'local n = {} for _, op in ipairs(cloud.operations()) do n[#n + 1] = op.api .. "." .. op.name end '
            .. 'print(table.concat(n, " ")) print("--")'
  local describe = 'print(cloud.pretty(cloud.describe("GetObject"))) print("--")'
  local function sections(out)
    local list_of = {}
    for section in out:gmatch("(.-)\n%-%-\n") do list_of[#list_of + 1] = section end
    return list_of
  end
  local out1, err1, code1 = t.cloudlua("-e " .. q(table.concat({ call, list, describe, call }, "\n")), { env = env })
  local out2, err2, code2 = t.cloudlua("-e " .. q(table.concat({ list, call, describe, call }, "\n")), { env = env })
  expect({ err1, code1, err2, code2 }).to_equal{ "", 0, "", 0 }
  local first, second = sections(out1), sections(out2)
  expect(#first).to_equal(4)
  expect(first[1]).to_contain("Bucket")
  expect(select(2, first[2]:gsub("storage%.GetObject ", ""))).to_equal(1)  -- listed once
  expect({ first[1], first[2], first[3], first[4] }).to_equal{ second[2], second[1], second[3], second[4] }
end)

test("every operation read on its own refuses arguments as the whole read's does", function()
  local env = { CLOUDLUA_ENDPOINT_STORAGE = "http://127.0.0.1:1", CLOUDLUA_ENDPOINT_CLUSTER = "http://127.0.0.1:1",
                CLOUDLUA_ENDPOINT_DEVOPS = "http://127.0.0.1:1", CLOUDLUA_ENDPOINT_CATALOG = "http://127.0.0.1:1",
                CLOUDLUA_ACCESS_KEY_ID = "a", CLOUDLUA_SECRET_ACCESS_KEY = "b" }
  -- Each operation called with arguments it refuses (nothing is sent), through the API
  -- tables, which name the operations without reading any file.
  local calls = [[
    local apis = {}
    for name, t in pairs(cloud) do
      if type(t) == "table" and name:sub(1, 1) ~= "_" and name ~= "emulator" then apis[#apis + 1] = name end
    end
    table.sort(apis)
    for _, api in ipairs(apis) do
      local fns = {}
      for fn, f in pairs(cloud[api]) do
        if type(f) == "function" and fn ~= "presign" and fn ~= "presign_post" then fns[#fns + 1] = fn end
      end
      table.sort(fns)
      for _, fn in ipairs(fns) do
        local _, e = pcall(cloud[api][fn], { Zz = 1 })
        print(api .. "." .. fn .. ": " .. tostring(e and e.message) .. " " .. cloud.pretty(e and e.fields or {}, { width = 1e9 }))
      end
    end]]
  local alone, err1 = t.cloudlua("-e " .. q(calls), { env = env })
  local whole, err2 = t.cloudlua("-e " .. q("cloud.operations()\n" .. calls), { env = env })
  expect({ err1, err2 }).to_equal{ "", "" }
  expect(select(2, alone:gsub("nothing was sent", ""))).to_equal(34)  -- every operation
  expect(alone).to_equal(whole)
end)
