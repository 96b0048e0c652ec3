-- The LuaLS definitions (`cloudlua --lua-definitions`, lua/definitions.lua) checked
-- against the model they are made from: valid Lua, a ---@meta file; every operation
-- of cloud.operations() with its Args and Result classes and its function on its API;
-- required fields without '?', allowed values as literal types, nested tables as
-- classes, the model's documentation; cloud.*'s functions with their option classes;
-- the test harness's globals; and the file the build writes (share/cloudlua/types)
-- the same text. CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/definitions_test.lua

local t = dofile("tests/lua/support/cli.lua")

local text, err, code

setup(function()
  text, err, code = t.cloudlua("--lua-definitions")
end)

local function has_line(line)
  expect(("\n" .. text .. "\n"):find("\n" .. line .. "\n", 1, true) ~= nil and line or text:sub(1, 300)).to_equal(line)
end

test("printed on stdout, status 0, nothing on stderr", function()
  expect(code).to_equal(0)
  expect(err).to_equal("")
  expect(text).to_match("^%-%-%-@meta cloud\n")
end)

test("the text is Lua (a definition file is loaded by the language server as Lua)", function()
  expect(load(text, "=definitions", "t", {})).to_be_a("function")
end)

test("every operation: its Args and Result classes and its function on its API", function()
  for _, op in ipairs(cloud.operations()) do
    has_line("---@class cloud." .. op.name .. ".Args")
    has_line("---@class cloud." .. op.name .. ".Result")
    has_line(("---@param args cloud.%s.Args"):format(op.name))
    has_line(("function %s.%s(args) end"):format(op.api, op.fn))
  end
end)

test("fields: required without '?', allowed values as literal types, the model's documentation", function()
  has_line("---@field Bucket string Bucket name. (3 to 63 characters; lowercase letters, digits, '.' and '-', "
    .. "beginning and ending with a letter or digit, no '.' after a '.' or a '-')")
  expect(text).to_contain('---@field ACL? "private"|"public-read"|"public-read-write"|')
  expect(text).to_contain("A canned ACL, given instead of the grants (Grant* headers, or Owner and AccessControlList).")
end)

test("nested tables and lists of tables are classes of their own, named by their path", function()
  has_line("---@field Contents? cloud.ListObjectsV2.Result.Contents[] The objects of this page.")
  has_line("---@class cloud.ListObjectsV2.Result.Contents")
  has_line("---@field Size? integer Size in bytes.")
  has_line("---@class cloud.ListObjectsV2.Result.Contents.Owner")
end)

test("each API is a class, a client has them all, cloud is a client", function()
  for _, api in ipairs{ "catalog", "cluster", "devops", "storage" } do
    has_line("---@class cloud.api." .. api)
    has_line(("---@field %s cloud.api.%s"):format(api, api))
  end
  has_line("---@class cloud: cloud.Client")
end)

test("cloud's own functions, their option tables as classes", function()
  has_line("---@class cloud.wait_until.Options")
  has_line("---@field real_time? boolean waits in real time, not the emulator's virtual time (default false)")
  has_line("---@field timeout? number seconds in all (default 600)")
  has_line("function cloud.wait_until(fn, options) end")
  has_line("---@param options? cloud.client.Options the settings that differ from the configuration's")
  has_line("function cloud.client(options) end")
  -- cloud.client{}'s fields: core's table of settings, each kind a type
  has_line("---@field max_attempts? integer requests per call, retries included")
  has_line('---@field dialect? "ext"|"aws" the signing dialect')
  has_line("function cloud.emulator.configure(options) end")
  -- configure's fields: the platform's settings, the list the control plane checks names against
  expect(text).to_contain("---@field firewall_settle? number seconds a firewall group stays PROCESSING")
  has_line("function cloud.storage.upload_file(options) end")
end)

-- The ---@param and ---@return lines of each function of cloud (outside cloud.commands,
-- the sub-commands), by its name.
local function signatures()
  local out, pending = {}, {}
  for l in text:gmatch("[^\n]+") do
    if l:find("^%-%-%-@param ") or l:find("^%-%-%-@return ") then pending[#pending + 1] = l
    elseif l:find("^function cloud%.") then
      local name = l:match("^function ([%w_.]+)%(")
      if not name:find("^cloud%.commands") then out[name] = pending end
      pending = {}
    elseif not l:find("^%-%-%-") then pending = {} end
  end
  return out
end

test("no function of cloud takes or returns any: every type is declared", function()
  local found = 0
  for name, lines in pairs(signatures()) do
    found = found + 1
    for _, l in ipairs(lines) do
      expect(l:match("^%-%-%-@%a+ [%w_.?]+ (%S+)") == "any" and name .. ": " .. l or name).to_equal(name)
      expect(l:match("^%-%-%-@return (%S+)") == "any" and name .. ": " .. l or name).to_equal(name)
    end
  end
  expect(found > 60).to_be_truthy()
  for class, fields in text:gmatch("%-%-%-@class (cloud%.[%w_.]+%.Options)\n(.-)\n\n") do
    for field in fields:gmatch("[^\n]+") do  -- "---@field name? TYPE doc": the type, not the doc's words
      local t = field:match("^%-%-%-@field %S+ (%S+)")
      if not class:find("^cloud%.commands") then expect(t == "any" and class .. ": " .. field or "").to_equal("") end
    end
  end
  -- The sub-commands' options and results: no "any" anywhere in their classes.
  for class, fields in text:gmatch("%-%-%-@class (cloud%.commands%.[%w_]+%.%a+)\n(.-)\n\n") do
    expect(fields:find("%f[%w_]any%f[^%w_]") and class .. ": " .. fields or class).to_equal(class)
  end
end)

test("cloud.client{} returns a cloud.Client; cloud.fs.walk is a function returning an iterator of typed entries", function()
  local s = signatures()
  expect(s["cloud.client"]).to_contain("---@return cloud.Client client a client with the same API as cloud")
  expect(s["cloud.fs.walk"]).to_contain("---@return fun(): cloud.fs.Entry? entries an iterator of the entries, in list's order")
  has_line("function cloud.fs.walk(dir, options) end")
  has_line("---@class cloud.fs.Entry")
  has_line('---@field type "file"|"dir"|"link"|"other" what it is')
  expect(s["cloud.pages"]).to_contain("---@return (fun(): table?, cloud.Meta?) pages an iterator of each page's result and meta")
  expect(s["cloud.storage.sync"]).to_contain("---@return cloud.storage.SyncSummary summary what was copied, skipped, deleted, failed")
  expect(s["cloud.map"]).to_contain("---@param fn fun(item: T): R called with each item, as a task")
  has_line("---@alias cloud.JSON string|number|boolean|table|nil")
end)

test("a table a function returns is no option table", function()
  has_line("function cloud.emulator.checkpoints() end")
  for _, name in ipairs{ "checkpoints", "requests", "endpoints" } do
    expect(text:find("cloud.emulator." .. name .. ".Options", 1, true)).to_be_nil()
  end
end)

test("an old name kept for one release is marked deprecated, naming the new one", function()
  has_line("function cloud.emulator.checkpoint(name) end")
  has_line("---Old name of cloud.emulator.checkpoint, kept for one release.\n"
           .. "---`cloud.emulator.snapshot(name)` (docs/emulator.md)\n---@deprecated")
  local deprecated = {}
  for name in text:gmatch("\n%-%-%-@deprecated\n[^f]*function ([%w_.]+)%(") do deprecated[#deprecated + 1] = name end
  expect(deprecated).to_equal{ "cloud.emulator.snapshot", "cloud.emulator.snapshots" }
end)

test("the globals of test files", function()
  has_line("function test(name, fn) end")
  has_line("---@field to_match_snapshot fun(name: string)")
end)

test("the build writes the same text to share/cloudlua/types/cloud.lua", function()
  local built = t.bin:match("^(.*)/[^/]*$") .. "/share/cloudlua/types/cloud.lua"
  expect(t.read_file(built)).to_equal(text)
end)
