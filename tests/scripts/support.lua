-- Shared by the tests of scripts/ (loaded with dofile; not a test file itself).
local support = {}

-- The scripts' argument parser (scripts/lib/args.lua) as the script at `path` loads it.
local function args_library(path)
  local saved = package.path
  package.path = (path:match("^(.*/)") or "") .. "?.lua;" .. package.path
  local lib = require("lib.args")
  package.path = saved
  return lib
end

-- A function that runs the script at `path` in this state with its arguments and
-- returns what it printed, one string per line; the script's error is re-raised. A
-- usage error, which ends a script run on its own with status 2, raises here instead
-- its text and "(exit 2)", so the test goes on.
function support.runner(path)
  local script = assert(loadfile(path))
  local args = args_library(path)
  return function(...)
    local printed, real_print, real_exit = {}, print, args.exit
    print = function(...) printed[#printed + 1] = table.concat({ ... }, "\t") end  -- luacheck: ignore 121
    args.exit = function(status, text) error(("%s(exit %d)"):format(text, status), 0) end
    local ok, err = pcall(script, ...)
    print, args.exit = real_print, real_exit  -- luacheck: ignore 121
    if not ok then error(err, 0) end
    return printed
  end
end

-- The first item of `list` whose `field` is `value`.
function support.find(list, field, value)
  for _, item in ipairs(list or {}) do
    if item[field] == value then return item end
  end
end

return support
