-- help() and cloud.describe, both read off the operation model: every operation is
-- listed, an operation is reached by its function, its name or its snake name, the
-- limits help states are the ones validation enforces, and unknown names are
-- refused with a message. help() writes with io.write, so io.output() captures its
-- text.
-- Run: cloudlua test tests/lua/help_test.lua

-- What help(...) writes; or false and the error message when it raises.
local function help_text(...)
  local name = os.tmpname()
  io.output(name)
  local ok, err = pcall(help, ...)
  io.output():close()
  io.output(io.stdout)
  local f = assert(io.open(name))
  local text = f:read("a")
  f:close()
  os.remove(name)
  if not ok then return false, err end
  return text
end

---------------------------------------------------------------- help()

-- Every API and every operation, by its Lua name and its own name (a long pair
-- wraps onto the next line).
for _, op in ipairs(cloud.operations()) do
  test("the overview lists " .. op.name, function()
    expect(help_text()).to_match(("\n  cloud%%.%s%%.%s%%s+%%(%s%%)\n"):format(op.api, op.fn, op.name))
  end)
end

test("one operation, reached by name, snake name or another client's function, says the same", function()
  local by_function = help_text(cloud.devops.restore_instance)
  expect(help_text("RestoreInstance")).to_equal(by_function)
  expect(help_text("restore_instance")).to_equal(by_function)
  expect(help_text(cloud.client{}.devops.restore_instance)).to_equal(by_function)
end)

test("an operation's help: title, method and path, idempotence", function()
  local text = help_text(cloud.devops.restore_instance)
  expect(text).to_contain("cloud.devops.restore_instance{...}  (RestoreInstance, devops API)")
  expect(text).to_contain("POST /v1/instances:restore")
  expect(text).to_contain("Not idempotent")
end)

test("an operation's help: defaults, allowed values, limits, nested fields indented", function()
  local text = help_text(cloud.devops.restore_instance)
  expect(text).to_contain('instanceType: string, default "e-large"')
  expect(text).to_contain("one of c-large, c-large8, e-large,")
  expect(text).to_contain("backupId: string, required, exactly 32 characters, lowercase letters and")
  expect(text).to_contain("    bucketUseObjects: table")
end)

test("an operation's help: the query key that selects it", function()
  expect(help_text("CreateMultipartUpload")).to_contain("POST /{Bucket}/{Object+}?uploads")
end)

test("an operation's help: path parameters and conditions", function()
  local text = help_text("AuthorizeFirewallRules")
  expect(text).to_contain("FirewallGroupName: string, required, in the path")
  expect(text).to_contain("port: integer, required when protocol is TCP, left out when protocol is ICMP")
end)

test("an API, by table or by name; help(cloud) is help()", function()
  expect(help_text("devops")).to_equal(help_text(cloud.devops))
  expect(help_text(cloud)).to_equal(help_text())
end)

test("an API's help lists its operations", function()
  local devops = help_text(cloud.devops)
  for _, op in ipairs(cloud.operations()) do
    if op.api == "devops" then expect(devops).to_contain("cloud.devops." .. op.fn) end
  end
end)

test("a mistyped name is refused with the nearest name", function()
  for typed, near in pairs{ RestoreInstanse = "RestoreInstance", UpdateSnapshots = "UpdateSnapshot",
                            update_snapshots = "update_snapshot", wait_untl = "wait_until" } do
    local ok, err = help_text(typed)
    expect(ok).to_equal(false)
    expect(err).to_equal("bad argument #1 to 'cloud.help' (no operation, API or function named '" .. typed ..
                         "'; did you mean '" .. near .. "'?)")
  end
end)

test("a mistyped waiter name gets the nearest one, as help knows waiters", function()
  local ok, err = help_text("ClusterRuning")
  expect(ok).to_equal(false)
  expect(err).to_contain("(no operation, API or function named 'ClusterRuning'; did you mean 'ClusterRunning'?)")
end)

test("a name nothing is near is refused, pointing at help()", function()
  local ok, err = help_text("zzzzzz")
  expect(ok).to_equal(false)
  expect(err).to_contain("(no operation, API or function named 'zzzzzz'; help() lists them)")
end)

test("a part of a name lists every name that contains it", function()
  expect(help_text("restore_")).to_equal("No operation, API or function named 'restore_'; these names contain it:\n" ..
    "  cloud.cluster.restore_cluster_from_snapshot (RestoreClusterFromSnapshot)\n" ..
    "  cloud.devops.restore_instance (RestoreInstance)\n")
  expect(help_text("devop")).to_contain("\n  cloud.devops (the devops API)\n")
  expect(help_text("SNAPSHOT")).to_contain("  cloud.cluster.update_snapshot (UpdateSnapshot)\n")
end)

test("a function that help knows nothing of is refused", function()
  local ok, err = help_text(print)
  expect(ok).to_equal(false)
  expect(err).to_contain("an operation, an API, a function of cloud or a name expected, got function")
end)

---------------------------------------------------------------- the other functions of cloud: lua/reference.lua

local reference = require "cloud.reference"

-- The value a dotted name reaches from the globals, or nil. Indexed, not raw: the
-- `cloud` table loads cloud.pretty when it is first read.
local function resolve(name)
  local v = _G
  for part in name:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

test("help on a function of cloud, by value, full name or last part, from the one documentation data", function()
  for _, name in ipairs{ "cloud.wait_until", "cloud.emulator", "cloud.pretty", "cloud.emulator.fault", "cloud.pretty.print" } do
    local text = help_text(resolve(name))
    expect(text).to_match("^" .. name:gsub("%.", "%%.") .. "[ ({\n]")
    expect(help_text(name)).to_equal(text)
    expect(help_text(name:match("[^.]+$"))).to_equal(text)
  end
  expect(help_text(cloud.wait_until)).to_contain("WaitTimeout")
  expect(help_text(cloud.wait_until)).to_contain("More in docs/testing.md.")
end)

test("every documented name reaches a value, and every function of cloud is documented", function()
  local documented = {}
  for _, entry in ipairs(reference) do
    expect(resolve(entry.name)).to_not_equal(nil)
    expect(entry.usage).to_be_a("string")
    expect(entry.summary).to_be_a("string")
    documented[entry.name] = true
  end
  local apis, operations = {}, {}
  for _, op in ipairs(cloud.operations()) do apis[op.api], operations["cloud." .. op.api .. "." .. op.fn] = true, true end
  local prefixes = { "cloud", "cloud.emulator", "cloud.pretty", "cloud.fs", "cloud.json" }
  for api in pairs(apis) do prefixes[#prefixes + 1] = "cloud." .. api end  -- what an API has besides operations
  for _, prefix in ipairs(prefixes) do
    for key, value in pairs(resolve(prefix)) do
      local name = prefix .. "." .. key
      if not apis[key] and not operations[name] and not key:match("^_") and type(value) ~= "string" and key ~= "format"
         and key ~= "results" then
        expect(documented[name] and name).to_equal(name)
      end
    end
  end
end)

test("help on a function shows its declaration: each argument's type, default and doc, its results", function()
  local text = help_text("wait_until")
  expect(text).to_contain("\nArguments:\n  fn (fun(attempt: integer): T?, string?): called until it returns a true value")
  expect(text).to_contain("\n  options (table?): how long and how often\n    timeout (number?, default 600): seconds in all\n")
  expect(text).to_contain("\nReturns:\n  value (T): what fn returned\n")
  expect(help_text("cloud.fs.walk")).to_contain("entries (fun(): cloud.fs.Entry?): an iterator of the entries")
end)

test("an old name kept for one release: help says which name it stands for", function()
  expect(help_text("cloud.emulator.snapshot")).to_equal(
    "cloud.emulator.snapshot(name)\n  Old name of cloud.emulator.checkpoint, kept for one release.\n\nMore in docs/emulator.md.\n")
  expect(help_text("snapshots")).to_contain("Old name of cloud.emulator.checkpoints, kept for one release.")
  expect(help_text("checkpoint")).to_match("^cloud%.emulator%.checkpoint%(name%)\n")
  expect(help_text(cloud.emulator)).to_contain("snapshot(name) and snapshots()\nare the old names")
end)

-- Whether `usage` names `name` as a whole word ("..." as it is).
local function names(usage, name)
  if name == "..." then return usage:find("...", 1, true) ~= nil end
  return usage:find("%f[%w_]" .. name:gsub("%p", "%%%0") .. "%f[^%w_]") ~= nil
end

test("every entry's usage names each declared parameter (an option table's fields) and result", function()
  for _, entry in ipairs(reference) do
    for _, d in ipairs(entry.params or {}) do
      local shown = d.fields or { d }
      for _, f in ipairs(shown) do expect(names(entry.usage, f.name) and f.name).to_equal(f.name) end
    end
    if not entry.usage:find("^for ") then  -- an iterator's written line names what the loop gets
      for _, d in ipairs(entry.returns or {}) do expect(names(entry.usage, d.name) and d.name).to_equal(d.name) end
    end
  end
end)

test("a usage line is derived from the declaration: optional parameters in brackets, option tables' fields, results", function()
  expect(help_text("wait_for")).to_match(
    "^cloud%.wait_for%(name %[, args %[, { delay, max_attempts, real_time, progress }%]%]%) %-> result, meta\n")
  expect(help_text("md5_file")).to_match("^cloud%.md5_file%(path %[, offset %[, length%]%]%) %-> hex%?, message%?\n")
  expect(help_text("cloud.emulator.fault")).to_match("^cloud%.emulator%.fault{ operation, times, status, ")
  expect(help_text("cloud.spawn")).to_match("^cloud%.spawn%(fn, %.%.%.%) %-> task\n")
  expect(help_text("cloud.emulator.reset")).to_match("^cloud%.emulator%.reset%(%)\n")
  expect(help_text("cloud.json")).to_match("^cloud%.json\n")
  expect(help_text("cloud.fs.walk")).to_match("^for e in cloud%.fs%.walk%(dir %[, { recursive, follow_links }%]%) do")
end)

test("the overview lists every documented function with its summary", function()
  local text = help_text()
  for _, entry in ipairs(reference) do expect(text).to_contain("  " .. entry.usage .. "\n      " .. entry.summary .. "\n") end
end)

---------------------------------------------------------------- a mistyped operation

test("a name that is no operation of an API is an error naming the nearest one", function()
  expect_error(function() return cloud.cluster.update_snapshots{} end,
    "no operation 'update_snapshots' in cloud.cluster; did you mean 'update_snapshot'?")
  local ok, err = pcall(function() return cloud.devops.zzz end)
  expect(ok).to_equal(false)
  expect(err).to_match("^[^:]+:%d+: no operation 'zzz' in cloud.devops; help\"devops\" lists them$")
  expect(rawget(cloud.cluster, "update_snapshots")).to_be_nil()
  expect(cloud.client{}.cluster.update_snapshot).to_be_a("function")
  expect_error(function() return cloud.client{}.storage.put_objct end, "did you mean 'put_object'?")
  expect_error(function() return help(cloud.cluster.update_snapshots) end,
    "no operation 'update_snapshots' in cloud.cluster; did you mean 'update_snapshot'?")
  expect(cloud._suggested("x", "wat_for", { "wait_for" })).to_equal("x; did you mean 'wait_for'?")
end)

---------------------------------------------------------------- cloud.nearest: the rule of every suggestion

test("cloud.nearest: the nearest name within two edits, or nil", function()
  expect(cloud.nearest("--nowait", { "--no-wait", "--timeout" })).to_equal("--no-wait")
  expect(cloud.nearest("e-larg", { "e-small", "e-large" })).to_equal("e-large")
  expect(cloud.nearest("CONFIG", { "config" })).to_equal("config")
  expect(cloud.nearest("nmae", { "description", "name" })).to_equal("name")   -- a swap is one edit
  expect(cloud.nearest("big", { "100", "200" })).to_be_nil()
  expect(cloud.nearest("x", { "y" })).to_be_nil()   -- one letter is no hint
  expect(cloud.nearest, 1, {}).to_fail("bad argument #1 to 'cloud.nearest' (string expected, got number)")
end)

---------------------------------------------------------------- cloud.describe: the same facts as data

test("describe: name, function name, method and path", function()
  local d = cloud.describe(cloud.devops.authorize_firewall_rules)
  expect(d.name).to_equal("AuthorizeFirewallRules")
  expect(d.fn).to_equal("authorize_firewall_rules")
  expect(d.method .. " " .. d.path).to_equal("POST /v1/firewallGroups/{FirewallGroupName}/rules")
end)

test("describe: parameters typed as the model has them", function()
  local fields = {}
  for _, f in ipairs(cloud.describe(cloud.devops.authorize_firewall_rules).parameters) do fields[f.path] = f end
  expect(fields.FirewallGroupName.location).to_equal("path")
  expect(fields.FirewallGroupName.required).to_equal(true)
  expect(fields["rules[].port"].type).to_equal("integer")           -- a list element's field path
  expect(fields["rules[].port"].allowed[1]).to_equal(22)            -- allowed values keep their type
  expect(fields["rules[].port"].rules[1]).to_equal("required when protocol is TCP")
end)

test("describe: a typed default; idempotence", function()
  expect(cloud.describe("RestoreInstance").parameters[3].default).to_equal("e-large")
  expect(cloud.describe("UpdateSnapshot").idempotent).to_equal(true)
end)

test("describe refuses an unknown operation", function()
  expect(cloud.describe, "Nope").to_fail()
end)

---------------------------------------------------------------- what help says is what validation enforces

-- Every "at most N characters" on a field outside lists is refused at N + 1
-- characters, with that field's path.

-- {} with `value` at the dotted `path` ("snapshot.name").
local function table_with(path, value)
  local root = {}
  local node, last = root, nil
  for part in path:gmatch("[^.]+") do
    if last then node[last] = {}; node = node[last] end
    last = part
  end
  node[last] = value
  return root
end

local function length_limit(field)
  for _, rule in ipairs(field.rules) do
    local max = rule:match("^at most (%d+) characters$")
    if max then return tonumber(max) end
  end
end

local checked = 0
for _, op in ipairs(cloud.operations()) do
  for _, f in ipairs(cloud.describe(op.name).parameters) do
    local max = not f.path:find("[]", 1, true) and length_limit(f)
    if max then
      checked = checked + 1
      test(("%s %s: validation agrees with help (at most %d)"):format(op.name, f.path, max), function()
        local err = expect(cloud.call, op.name, table_with(f.path, ("a"):rep(max + 1))).to_fail()
        local found = false
        for _, problem in ipairs(err.fields) do
          found = found or (problem.path == f.path and problem.problem:find("at most " .. max .. " characters", 1, true))
        end
        expect(found).to_be_truthy()
      end)
    end
  end
end

test("several length limits are cross-checked", function()
  expect(checked >= 5).to_be_truthy()
end)

test("no help text carries an internal reference (an issue number)", function()
  local names = {}
  for _, w in ipairs(cloud.waiters()) do names[#names + 1] = w.name end
  for _, op in ipairs(cloud.operations()) do names[#names + 1] = op.name end
  for _, entry in ipairs(reference) do names[#names + 1] = entry.name end
  for _, name in ipairs(names) do
    local text = help_text(name)
    local line = text:match("[^\n]*[Ii]ssue%s*#?%d+[^\n]*")
    expect(line and name .. ": " .. line or false).to_equal(false)
  end
end)
