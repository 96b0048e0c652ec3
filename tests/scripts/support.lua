-- Shared by the tests of scripts/ (loaded with dofile; not a test file itself).
local support = {}

-- A function that runs the script at `path` in this state with its arguments and
-- returns what it printed, one string per line; the script's error is re-raised.
function support.runner(path)
  local script = assert(loadfile(path))
  return function(...)
    local printed, real_print = {}, print
    print = function(...) printed[#printed + 1] = table.concat({ ... }, "\t") end
    local ok, err = pcall(script, ...)
    print = real_print
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
