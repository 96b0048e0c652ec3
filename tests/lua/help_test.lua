-- help() and cloud.describe, both read off the operation model: every operation is
-- listed, an operation is reached by its function, its name or its snake name, the
-- limits help states are the ones validation enforces, and unknown names are
-- refused with a message. help() writes with io.write, so io.output() captures its
-- text. Fails by raising an error.

local function eq(actual, expected, what)
  if actual ~= expected then
    error(("%s: expected %s, got %s"):format(what, tostring(expected), tostring(actual)), 2)
  end
end

local function has(text, fragment, what)
  if not text:find(fragment, 1, true) then error(("%s: %q not in:\n%s"):format(what, fragment, text), 2) end
end

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

-- help(): every API and every operation, by its Lua name and its own name (a long
-- pair wraps onto the next line)
local overview = help_text()
for _, op in ipairs(cloud.operations()) do
  assert(overview:find(("\n  cloud%%.%s%%.%s%%s+%%(%s%%)\n"):format(op.api, op.fn, op.name)),
    "overview lists " .. op.name .. ":\n" .. overview)
end

-- one operation, reached three ways, says the same
local by_function = help_text(cloud.devops.restore_instance)
eq(help_text("RestoreInstance"), by_function, "by name")
eq(help_text("restore_instance"), by_function, "by snake name")
eq(help_text(cloud.client{}.devops.restore_instance), by_function, "through another client")
has(by_function, "cloud.devops.restore_instance{...}  (RestoreInstance, devops API)", "title")
has(by_function, "POST /v1/instances:restore", "method and path")
has(by_function, "Not idempotent", "idempotence")
has(by_function, 'instanceType: string, default "e-large"', "default")
has(by_function, "one of c-large, c-large8, e-large,", "allowed values")
has(by_function, "backupId: string, required, exactly 32 characters, lowercase letters and", "limits")
has(by_function, "    bucketUseObjects: table", "nested fields indented under their parent")
has(help_text("CreateMultipartUpload"), "POST /{Bucket}/{Object+}?uploads", "the query key that selects the operation")
has(help_text("AuthorizeFirewallRules"), "FirewallGroupName: string, required, in the path", "path parameter")
has(help_text("AuthorizeFirewallRules"), "port: integer, required when protocol is TCP, left out when protocol is ICMP",
  "conditions")

-- an API, by table or by name
local devops = help_text(cloud.devops)
eq(help_text("devops"), devops, "API by name")
eq(help_text(cloud), overview, "help(cloud) is help()")
for _, op in ipairs(cloud.operations()) do
  if op.api == "devops" then has(devops, "cloud.devops." .. op.fn, "API help lists " .. op.name) end
end

-- unknown things are refused with a hint
local ok, err = help_text("RestoreInstanse")
eq(ok, false, "unknown name fails")
assert(err:find("^bad argument #1 to '[%w.]*help' %(no operation or API named 'RestoreInstanse'; help%(%) lists them%)$"),
  "unknown name message: " .. err)
ok, err = help_text(print)
eq(ok, false, "a function that is no operation fails")
has(err, "an operation, an API or a name expected, got function", "wrong kind of value")

-- cloud.describe: the same facts as data, values typed as the model has them
local d = cloud.describe(cloud.devops.authorize_firewall_rules)
eq(d.name, "AuthorizeFirewallRules", "name")
eq(d.fn, "authorize_firewall_rules", "fn")
eq(d.method .. " " .. d.path, "POST /v1/firewallGroups/{FirewallGroupName}/rules", "method and path")
local fields = {}
for _, f in ipairs(d.parameters) do fields[f.path] = f end
eq(fields.FirewallGroupName.location, "path", "location")
eq(fields.FirewallGroupName.required, true, "required")
eq(fields["rules[].port"].type, "integer", "list element field path")
eq(fields["rules[].port"].allowed[1], 22, "allowed values keep their type")
eq(fields["rules[].port"].rules[1], "required when protocol is TCP", "condition")
eq(cloud.describe("RestoreInstance").parameters[3].default, "e-large", "typed default")
eq(cloud.describe("UpdateSnapshot").idempotent, true, "idempotent")
assert(not pcall(cloud.describe, "Nope"), "describe refuses an unknown operation")

-- what help says is what validation enforces: every "at most N characters" on a
-- field outside lists is refused at N + 1 characters, with that field's path

-- {} with `value` at the dotted `path` ("snapshot.name")
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
      local called, err = pcall(cloud.call, op.name, table_with(f.path, ("a"):rep(max + 1)))
      eq(called, false, op.name .. " " .. f.path .. " over its limit")
      local found = false
      for _, problem in ipairs(err.fields) do
        found = found or (problem.path == f.path and problem.problem:find("at most " .. max .. " characters", 1, true))
      end
      assert(found, ("%s: validation agrees with help on %s (at most %d)"):format(op.name, f.path, max))
      checked = checked + 1
    end
  end
end
assert(checked >= 5, "several length limits cross-checked, got " .. checked)
print("help_test: ok (" .. checked .. " limits cross-checked)")
