-- Argument checks of the Lua-written API (require "cloud.check"), one wording for all,
-- lauxlib's: "bad argument #1 to 'cloud.storage.sync' (unknown field 'dleete', did you
-- mean 'delete'?)". check.arguments is the one checker: it reads a function's
-- declaration (lua/reference.lua) and checks a call against it.
--
-- `level` is what the caller would give error(): 2 blames the caller's caller. Each
-- function here adds its own frames, so a caller passes the level as seen from itself.
local M = {}

-- The `cloud` table (package.loaded.cloud: the modules are loaded after it exists).
function M.cloud() return package.loaded.cloud end

-- The one wording: "bad argument #n to 'fname' (message)".
function M.wording(n, fname, message) return ("bad argument #%d to '%s' (%s)"):format(n, fname, message) end

-- Raises "bad argument #n to 'fname' (message)" at `level` (default 2) as seen from
-- the caller.
function M.arg_error(n, fname, message, level)
  error(M.wording(n, fname, message), (level or 2) + 1)
end

-- "unknown field 'name'", naming the nearest of `known` when one is near enough: the
-- one wording, composed in C++ (core/base/suggest, cloud._unknown_field); nil when
-- `name` is one of them.
function M.unknown_field(name, known)
  for _, k in ipairs(known) do if k == name then return nil end end
  return M.cloud()._unknown_field(name, known)
end

-- "no waiter named 'typed'", naming the nearest of `known` when one is near, else
-- "; hint": the one wording of a name that names nothing (core/base/suggest).
function M.unknown_name(kind, typed, known, hint)
  return M.cloud()._unknown_name(kind, typed, known, hint)
end

---------------------------------------------------------------- the declarations' checker

local declarations, classes  -- name -> entry and class of lua/reference.lua, made at the first use

-- The entry of lua/reference.lua declaring `name`, and the classes by name.
function M.declaration(name)
  if not declarations then
    local reference = require("cloud.reference")
    declarations, classes = {}, {}
    for _, e in ipairs(reference) do declarations[e.name] = e end
    for _, c in ipairs(reference.classes) do classes[c.name] = c end
  end
  return declarations[name], classes
end

-- The alternatives of a LuaLS type split at its top-level "|" ("boolean|fun(a: integer)"),
-- and whether it may be left out: a "?" at its end, unless it ends a function's results
-- ("fun(): T?").
local function split_type(text)
  local words, depth, from = {}, 0, 1
  for i = 1, #text do
    local c = text:sub(i, i)
    if c == "(" or c == "<" or c == "{" then depth = depth + 1
    elseif c == ")" or c == ">" or c == "}" then depth = depth - 1
    elseif c == "|" and depth == 0 then words[#words + 1], from = text:sub(from, i - 1), i + 1 end
  end
  words[#words + 1] = text:sub(from)
  local last = words[#words]
  local optional = last:sub(-1) == "?" and not (last:find("^fun%(") and last:find("%):"))
  if optional then words[#words] = last:sub(1, -2) end
  return { words = words, optional = optional }
end

local split = {}  -- type text -> split_type's answer: the declarations hold few texts, each split once

-- split_type's words (a list the caller must not change) and whether the type is optional.
function M.type_words(text)
  local s = split[text]
  if not s then s = split_type(text); split[text] = s end
  return s.words, s.optional
end

local function callable(v) return type(v) == "function" or (getmetatable(v) or {}).__call ~= nil end

local matches_type

-- A predicate telling whether a value is of the type word `word` ("integer",
-- "string[]", "cloud.fs.Entry"...), made once per word.
local function word_predicate(word)
  local base = word:gsub("^%((.*)%)$", "%1")
  if base ~= word then return function(value) return matches_type(value, base) end end
  if word == "nil" then return function(value) return value == nil end end
  if word:find('^".*"$') then
    local literal = word:sub(2, -2)
    return function(value) return value == literal end
  end
  if word == "integer" then return function(value) return math.type(value) == "integer" end end
  if word == "function" or word:find("^fun%(") then return callable end
  if word == "file*" then return function(value) return io.type(value) ~= nil end end
  if word:find("%[%]$") then
    local element = word:sub(1, -3)
    return function(value)
      if type(value) ~= "table" then return false end
      for _, v in ipairs(value) do if not matches_type(v, element) then return false end end
      return true
    end
  end
  local k, v = word:match("^table<%s*(.-)%s*,%s*(.-)%s*>$")
  if k then
    return function(value)
      if type(value) ~= "table" then return false end
      for key, x in pairs(value) do if not (matches_type(key, k) and matches_type(x, v)) then return false end end
      return true
    end
  end
  local class = select(2, M.declaration(""))[word]
  if class and class.alias then return function(value) return matches_type(value, class.alias) end end
  if class then
    return function(value)
      if type(value) ~= "table" then return false end
      for _, f in ipairs(class.fields) do if M.field_problem(value[f.name], f) then return false end end
      return true
    end
  end
  if word:find("^cloud%.") or word == "table" then return function(value) return type(value) == "table" end end
  if word:find("^%u$") then return function() return true end end  -- a type parameter (T): anything
  return function(value) return type(value) == word end
end

local predicates = {}  -- type word -> its predicate

-- Whether `value` is of the LuaLS type `text`.
function matches_type(value, text)
  local words, optional = M.type_words(text)
  if value == nil and optional then return true end
  for _, word in ipairs(words) do
    local is = predicates[word]
    if not is then is = word_predicate(word); predicates[word] = is end
    if is(value) then return true end
  end
  return false
end

local NOUNS = { string = "a string", integer = "an integer", number = "a number", boolean = "a boolean",
                ["function"] = "a function", ["file*"] = "a file", table = "a table" }

-- What a value of `decl`'s type is, for a message: "an integer >= 1", "a number of
-- seconds > 0", "a boolean or a function", '"size-mtime", "size" or "checksum"'.
function M.what(decl)
  if decl.what then return decl.what end
  local nouns, seen = {}, {}
  for _, word in ipairs((M.type_words(decl.type))) do
    local noun = NOUNS[word] or word:find("^fun%(") and "a function" or word:find('^"') and word
                 or word:find("%[%]$") and "a list" or "a table"
    if not seen[noun] then nouns[#nouns + 1], seen[noun] = noun, true end
  end
  local text = #nouns == 1 and nouns[1] or table.concat(nouns, ", ", 1, #nouns - 1) .. " or " .. nouns[#nouns]
  if decl.unit then text = text .. " of " .. decl.unit end
  if decl.min then text = text .. " >= " .. decl.min end
  if decl.above then text = text .. " > " .. decl.above end
  return text
end

-- What was given, for a message: the value when it is of a type `decl` allows but not
-- one of its values ('DELETE', 0), else its type (number).
local function got(value, decl)
  local basic = type(value) == "string" and '"' or type(value) == "number" and "number" or nil
  if basic and decl.type:find(basic, 1, true) then
    return type(value) == "string" and ("'" .. value .. "'") or tostring(value)
  end
  return type(value)
end

-- What is wrong with `value` as the field or parameter `decl` ("an integer >= 1, got
-- 0"), or nil.
function M.field_problem(value, decl)
  if not matches_type(value, decl.type) then return M.what(decl) .. ", got " .. got(value, decl) end
  if type(value) == "number" and ((decl.min and value < decl.min) or (decl.above and value <= decl.above)) then
    return M.what(decl) .. ", got " .. tostring(value)
  end
end

-- The kinds of names a parameter may be (`names` of a declaration): the names, and
-- what lists them.
local NAMES = {
  waiter = { hint = "cloud.waiters() lists them", list = function(cloud)
    local out = {}
    for _, w in ipairs(cloud.waiters()) do out[#out + 1] = w.name end
    return out
  end },
  operation = { hint = "cloud.operations() lists them", list = function(cloud)
    local out = {}
    for _, op in ipairs(cloud.operations()) do out[#out + 1], out[#out + 2] = op.name, op.fn end
    return out
  end },
}

-- The problem of a name of kind `kind` that is none of them, or nil.
local function name_problem(value, kind)
  local names = NAMES[kind]
  local list = names.list(M.cloud())
  for _, name in ipairs(list) do if name == value then return nil end end
  return M.unknown_name(kind, value, list, names.hint)
end

-- The option table `value` of parameter `decl` checked: its problem, or nil and a copy
-- with the declared defaults filled in.
local known_of = setmetatable({}, { __mode = "k" })  -- fields' declaration -> their names, as a list and a set

-- The names of the fields `fields` declares: { list = {...}, set = { [name] = true } }, made once.
local function known_fields(fields)
  local known = known_of[fields]
  if not known then
    known = { list = {}, set = {} }
    for i, f in ipairs(fields) do known.list[i], known.set[f.name] = f.name, true end
    known_of[fields] = known
  end
  return known
end

local function options_problem(value, decl)
  if value == nil then value = {} end
  local known = known_fields(decl.fields)
  for key in pairs(value) do
    if not known.set[key] then
      local string_key = type(key) == "string"
      local unknown = M.unknown_field(string_key and key or tostring(key), string_key and known.list or {})
      if unknown then return unknown end
    end
  end
  local out = {}
  for key, v in pairs(value) do out[key] = v end
  for _, f in ipairs(decl.fields) do
    if value[f.name] == nil and not matches_type(nil, f.type) then return ("field '%s' is required"):format(f.name) end
    local problem = M.field_problem(value[f.name], f)
    if problem then return ("field '%s' must be %s"):format(f.name, problem) end
    problem = value[f.name] ~= nil and f.names and name_problem(value[f.name], f.names)
    if problem then return ("field '%s': %s"):format(f.name, problem) end
    if out[f.name] == nil then out[f.name] = f.default end
  end
  return nil, out
end

-- lauxlib's "string expected, got number" for `value` as parameter `decl`: the Lua
-- types its type allows ("got no value" when `given` is false).
local function expected(value, decl, given)
  local names, seen = {}, {}
  for _, w in ipairs((M.type_words(decl.type))) do
    local name = (w:find("^fun%(") or w == "function") and "function" or w:find("^\"") and "string"
                 or (decl.fields or w:find("%[%]$") or w:find("^table") or w:find("^cloud%.")) and "table"
                 or w == "integer" and "number" or w
    if not seen[name] then names[#names + 1], seen[name] = name, true end
  end
  return table.concat(names, " or ") .. " expected, got " .. (given and type(value) or "no value")
end

-- The problem of argument `value` as parameter `decl` (`given`: whether the call gave
-- it), or nil and the value to use.
local function argument_problem(value, decl, given)
  if value == nil and not matches_type(nil, decl.type) then return expected(value, decl, given) end
  if decl.fields and (value == nil or type(value) == "table") then return options_problem(value, decl) end
  if value ~= nil and not matches_type(value, decl.type) then return expected(value, decl, true) end
  if value ~= nil and decl.names then
    local problem = name_problem(value, decl.names)
    if problem then return problem end
  end
  local problem = type(value) == "number" and M.field_problem(value, decl)
  if problem then return decl.name .. " must be " .. problem end
  return nil, value
end

-- The one checker: the arguments `...` of the function declared as `name` in
-- lua/reference.lua, checked against its params (types, bounds, names with "did you
-- mean", option tables' fields: unknown ones named with the nearest known one).
-- Raises lauxlib's "bad argument #n to 'fname' (...)" (fname: `name` unless given, as a
-- client's own "wait_for") at `level` as seen from the caller; returns the arguments,
-- each option table a copy with the declared defaults filled in.
function M.arguments(name, fname, level, ...)
  local decl = assert(M.declaration(name), name)
  local args = table.pack(...)
  for i, param in ipairs(decl.params) do
    if param.name == "..." then break end
    local problem, value = argument_problem(args[i], param, i <= args.n)
    if problem then M.arg_error(i, fname or name, problem, (level or 2) + 1) end
    args[i] = value
  end
  return table.unpack(args, 1, math.max(args.n, #decl.params))
end

-- Option values, as the command lines type them (or a script gives them): each returns
-- the value, or nil and what is allowed.

-- Bytes: an integer from 1, or "8M", "16MiB", "5242880" (K, M and G binary units).
function M.size(text)
  if math.type(text) == "integer" and text >= 1 then return text end
  local number, unit = tostring(text):upper():match("^(%d+)([KMG]?)I?B?$")
  local size = number and math.tointeger(tonumber(number) * ({ [""] = 1, K = 1024, M = 1024 ^ 2, G = 1024 ^ 3 })[unit])
  if not size or size < 1 then return nil, "a size such as 8M or 5242880 expected" end
  return size
end

-- A whole number from 1 on.
function M.count(text)
  local n = math.tointeger(tonumber(text))
  if n and n >= 1 then return n end
  return nil, "a whole number from 1 on expected"
end

return M
