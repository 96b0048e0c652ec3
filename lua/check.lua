-- Argument checks of the Lua-written API (require "cloud.check"), one wording for all,
-- lauxlib's: "bad argument #1 to 'cloud.storage.sync' (unknown field 'dleete', did you
-- mean 'delete'?)".
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

-- Raises unless `value` is of type `want` ("table expected, got nil").
function M.type(value, want, n, fname, level)
  if type(value) ~= want then M.arg_error(n, fname, want .. " expected, got " .. type(value), (level or 2) + 1) end
  return value
end

-- Raises for the first key of `args` not in `known` (a list of names), naming the
-- nearest known name when one is near enough (cloud.nearest).
function M.fields(args, known, n, fname, level)
  for key in pairs(args) do
    local unknown = M.unknown_field(type(key) == "string" and key or tostring(key), type(key) == "string" and known or {})
    if unknown then M.arg_error(n, fname, unknown, (level or 2) + 1) end
  end
  return args
end

-- Raises unless `args` is a table whose keys are all in `known`: an options table.
function M.options(args, known, n, fname, level)
  level = (level or 2) + 1
  M.type(args, "table", n, fname, level)
  return M.fields(args, known, n, fname, level)
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
