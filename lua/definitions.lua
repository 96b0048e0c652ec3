-- cloud.definitions: the LuaLS definition file (---@meta) of what cloudlua puts in a
-- script's globals, made from the model and the reference, never written by hand:
-- every operation's arguments and result as classes (cloud.<Operation>.Args and
-- .Result, a nested table a class of its own named by its path) with each field's
-- type, allowed values (as literal types), whether it is required and the model's
-- documentation; each API's functions (cloud.storage.put_object...) and those of any
-- client; cloud.*'s own functions from their declarations in lua/reference.lua (each
-- parameter's and result's type, option tables and results as classes; an old name
-- kept for one release marked @deprecated); the globals of
-- `cloudlua test` files. `cloudlua --lua-definitions` prints it; the build writes it
-- to share/cloudlua/types/cloud.lua (docs/lua-api.md).
-- Decisions: the model is read through cloud.operations and cloud.describe (the
-- parameter list help() shows), so the definitions say what help() says.

local cloud = package.loaded.cloud
local reference = require("cloud.reference")
local check = require("cloud.check")  -- check.type_words: a declared type's alternatives

local out = {}
local function line(text) out[#out + 1] = text end

-- Text on one line, for a comment.
local function flat(text) return (tostring(text or ""):gsub("%s*\n%s*", " ")) end

-- A literal type for an allowed value: "private", 3, true.
local function literal(v)
  if type(v) == "string" then return '"' .. v:gsub('[\\"]', "\\%0") .. '"' end
  return tostring(v)
end

-- The LuaLS type of a field from describe's words ("list of tables", "integer",
-- "time (ISO 8601 string)"...); `class` is the class of a table (or list element).
local function field_type(words, class, allowed)
  if words:find("^table of strings by name") then return "table<string, string>" end  -- a map (Metadata)
  local lists = 0
  while words:find("^list of ") do words, lists = words:sub(9), lists + 1 end
  local base = words:find("^table") and class or words:find("^integer") and "integer"
               or words:find("^boolean") and "boolean" or words:find("^number") and "number" or "string"
  if allowed and #allowed > 0 then
    local values = {}
    for i, v in ipairs(allowed) do values[i] = literal(v) end
    base = table.concat(values, "|")
    if lists > 0 then base = "(" .. base .. ")" end
  end
  return base .. ("[]"):rep(lists)
end

-- A field's name as LuaLS reads it: a name, or ["x-y"].
local function field_name(name)
  return name:match("^[%a_][%w_]*$") and name or '["' .. name .. '"]'
end

-- The classes of one side of an operation (describe's parameters or result): `name`
-- for the top level, name.<path> for each nested table ("[]" left out of the path).
local function classes(name, fields)
  local order, members = { name }, { [name] = {} }
  local function class_of(path) return path == "" and name or name .. "." .. path:gsub("%[%]", "") end
  for _, f in ipairs(fields) do
    local parent, leaf = f.path:match("^(.*)%.([^.]+)$")
    if not parent then parent, leaf = "", f.path end
    local class = class_of(parent)
    if not members[class] then order[#order + 1], members[class] = class, {} end
    local doc = flat(f.doc) .. (#(f.rules or {}) > 0 and " (" .. flat(table.concat(f.rules, "; ")) .. ")" or "")
    table.insert(members[class], ("---@field %s%s %s %s"):format(field_name(leaf), f.required and "" or "?",
                                                                field_type(f.type, class_of(f.path), f.allowed), doc))
  end
  for _, class in ipairs(order) do
    line("---@class " .. class)
    for _, text in ipairs(members[class]) do line(text) end
    line("")
  end
end

-- Every operation: its classes, then its function on its API's table.
local function operations(apis)
  for _, op in ipairs(cloud.operations()) do
    local d = cloud.describe(op.name)
    classes("cloud." .. d.name .. ".Args", d.parameters)
    classes("cloud." .. d.name .. ".Result", d.result)
    apis[d.api] = apis[d.api] or {}
    table.insert(apis[d.api], d)
  end
end

local function api_functions(apis)
  local names = {}
  for api in pairs(apis) do names[#names + 1] = api end
  table.sort(names)
  for _, api in ipairs(names) do
    line(("---The %s API: one function per operation."):format(api))
    line(("---@class cloud.api.%s"):format(api))
    line(("local %s = {}"):format(api))
    line("")
    for _, d in ipairs(apis[api]) do
      line("---" .. flat(d.doc))
      line(("---(%s %s, operation %s; help\"%s\")"):format(d.method, api, d.name, d.name))
      line(("---@param args cloud.%s.Args"):format(d.name))
      line(("---@return cloud.%s.Result result"):format(d.name))
      line("---@return cloud.Meta meta")
      line(("function %s.%s(args) end"):format(api, d.fn))
      line("")
    end
  end
  line("---A client: the APIs, with its own settings (cloud.client{...}); cloud is one too.")
  line("---@class cloud.Client")
  for _, api in ipairs(names) do line(("---@field %s cloud.api.%s"):format(api, api)) end
  line("")
  return names
end

-- A type as one LuaLS type: a function's several results ("fun(): table?, cloud.Meta?")
-- in parentheses, so that a @return or @param line does not read them as its own.
local function grouped(type_text)
  local depth = 0
  for i = 1, #type_text do
    local c = type_text:sub(i, i)
    if c == "(" or c == "<" or c == "{" then depth = depth + 1
    elseif c == ")" or c == ">" or c == "}" then depth = depth - 1
    elseif c == "," and depth == 0 then return "(" .. type_text .. ")" end
  end
  return type_text
end

-- A declared type and name as LuaLS writes them: the name with "?" when the value may
-- be left out ("offset?", "integer"), the type without it.
local function optional_name(name, type_text)
  local words, optional = check.type_words(type_text)
  return name .. (optional and "?" or ""), grouped(table.concat(words, "|"))
end

-- A declaration's doc with its default: "seconds in all (default 600)".
local function doc_of(decl)
  return flat(decl.doc) .. (decl.default ~= nil and (" (default " .. literal(decl.default) .. ")") or "")
end

-- The class of an option table: its fields, each optional unless declared required.
local function fields_class(class, doc, fields)
  line("---" .. flat(doc))
  line("---@class " .. class)
  for _, f in ipairs(fields) do
    local name, type_text = optional_name(f.name, f.type)
    line(("---@field %s %s %s"):format(field_name(name:gsub("%?$", "")) .. (name:find("%?$") and "?" or ""),
                                       type_text, doc_of(f)))
  end
  line("")
end

-- The classes and aliases the declarations name (the reference's `classes`).
local function declared_classes()
  for _, c in ipairs(reference.classes) do
    if c.alias then
      line("---" .. flat(c.doc))
      line(("---@alias %s %s"):format(c.name, c.alias))
      line("")
    else
      fields_class(c.name, c.doc, c.fields)
    end
  end
end

-- The type of a declared parameter: its option class, or its type without "?".
local function param_type(e, param)
  local name, type_text = optional_name(param.name, param.type)
  return name, param.fields and e.name .. ".Options" or type_text
end

-- A declared function: its option tables' classes, then its doc, @generic, @param and
-- @return lines and the function, all from its declaration (e.params, e.returns). A
-- function that is also a table (cloud.pretty, with cloud.pretty.print) is a class
-- whose call is its @overload.
local function declared_function(e, is_table)
  local names = {}
  for i, param in ipairs(e.params or {}) do
    if param.fields then fields_class(e.name .. ".Options", param.doc, param.fields) end
    names[i] = param.name
  end
  line("---" .. flat(e.summary))
  line("---`" .. e.usage .. "`" .. (e.see and " (" .. e.see .. ")" or ""))
  if e.alias_of then line("---@deprecated") end  -- an old name, kept for one release
  if is_table then
    local params, results = {}, {}
    for i, param in ipairs(e.params or {}) do params[i] = ("%s: %s"):format(param_type(e, param)) end
    for i, r in ipairs(e.returns or {}) do results[i] = grouped(r.type) end
    line("---@class " .. e.name)
    line(("---@overload fun(%s)%s"):format(table.concat(params, ", "),
                                         #results > 0 and ": " .. table.concat(results, ", ") or ""))
    return line(("%s = {}"):format(e.name))
  end
  if e.generic then line("---@generic " .. e.generic) end
  for _, param in ipairs(e.params or {}) do
    local name, type_text = param_type(e, param)
    line(("---@param %s %s %s"):format(name, type_text, doc_of(param)))
  end
  for _, r in ipairs(e.returns or {}) do line(("---@return %s %s %s"):format(grouped(r.type), r.name, flat(r.doc))) end
  line(("function %s(%s) end"):format(e.name, table.concat(names, ", ")))
end

-- cloud.*'s own functions and values, from their declarations (lua/reference.lua).
local function functions(apis)
  local tables, parents = { cloud = true }, {}
  for _, api in ipairs(apis) do tables["cloud." .. api] = true end
  for _, e in ipairs(reference) do parents[e.name:match("^(.*)%.[^.]+$") or ""] = true end
  declared_classes()
  for _, e in ipairs(reference) do
    local name = e.name
    if name:find("^cloud%.") and not e.typed_elsewhere then  -- cloud.commands.*: command_docs types them
      local parent = name:match("^(.*)%.[^.]+$")
      if not tables[parent] then
        line(("%s = {}"):format(parent))
        tables[parent] = true
      end
      if e.value or tables[name] then
        line("---" .. flat(e.summary))
        line("---`" .. e.usage .. "`" .. (e.see and " (" .. e.see .. ")" or ""))
        if not tables[name] then line(("%s = {}"):format(name)) end
        tables[name] = true
      elseif e.params or e.returns then
        declared_function(e, parents[name])
        tables[name] = parents[name]
      end
      line("")
    end
  end
end

local PREAMBLE = [[
---@meta cloud
-- The globals cloudlua gives a script, for the Lua language server (LuaLS): generated
-- by `cloudlua --lua-definitions` from the built-in model; do not edit. docs/lua-api.md
-- says how to use it in VS Code and Neovim.

---What a call returns beside its result.
---@class cloud.Meta
---@field status integer the HTTP status
---@field request_id string the platform's request id
---@field attempts integer how many times the request was sent
---@field elapsed number seconds the call took
---@field headers table<string, string> the answer's headers, names in lower case

---An error raised by a call (kind: "api", "validation", "transport", "timeout", "config").
---@class cloud.Error
---@field kind string
---@field code string
---@field message string
---@field status? integer
---@field operation? string
---@field request_id? string
---@field fields? { path: string, problem: string }[]

---@class cloud: cloud.Client
cloud = {}
]]

local HARNESS = [[
-- The globals of a `cloudlua test` file (docs/testing.md).

---A case: any error raised fails it.
---@param name string
---@param fn fun()
function test(name, fn) end

---Stops the case here, reported skipped.
---@param reason? string
function skip(reason) end

---@class cloud.Expectation
---@field to_equal fun(expected: cloud.Value)
---@field to_not_equal fun(other: cloud.Value)
---@field to_be fun(expected: cloud.Value)
---@field to_be_truthy fun()
---@field to_be_falsy fun()
---@field to_be_nil fun()
---@field to_be_a fun(type_name: string)
---@field to_match fun(pattern: string)
---@field to_contain fun(item: cloud.Value)
---@field to_have_length fun(n: integer)
---@field to_fail fun(match?: table|string): cloud.Error
---@field to_match_snapshot fun(name: string)

---@param actual cloud.Value
---@param ... cloud.Value the arguments of actual when it is a function (to_fail)
---@return cloud.Expectation
function expect(actual, ...) end

---@param fn fun()
---@param match? table|string
---@return cloud.Error
function expect_error(fn, match) end

---@param fn fun()
function setup(fn) end
---@param fn fun()
function teardown(fn) end
---@param fn fun()
function before_each(fn) end
---@param fn fun()
function after_each(fn) end

-- busted's spec language (docs/testing.md); assert, spy, stub, mock and match are
-- luassert's (install LuaLS's luassert and busted definitions for their fields).
---@param name string
---@param fn fun()
function describe(name, fn) end
---@param name string
---@param fn fun()
function it(name, fn) end
---@param name string
---@param fn? fun()
function pending(name, fn) end
---@param fn fun()
function finally(fn) end
---@param name string
---@param fn fun()
function insulate(name, fn) end
---@param name string
---@param fn fun()
function expose(name, fn) end
context, spec = describe, it
lazy_setup, lazy_teardown, strict_setup, strict_teardown = setup, teardown, setup, teardown

---Help on an operation, an API, a function of cloud, or a part of a name.
---@param x? string|function|table
function help(x) end
]]

-- The whole file, as text.
return function()
  out = {}
  line(PREAMBLE)
  local apis = {}
  operations(apis)
  local names = api_functions(apis)
  for _, api in ipairs(names) do line(("cloud.%s = %s"):format(api, api)) end
  line("")
  functions(names)
  line(require("cloud.command_docs").definitions())
  line(HARNESS)
  return table.concat(out, "\n")
end
