-- The two checks the end-to-end Lua suites share (loaded with dofile; a suite fails
-- by raising an error).
local check = {}

-- Raises "<what>: expected X, got Y" (quoted, so binary bytes show) unless equal.
function check.eq(actual, expected, what)
  if actual ~= expected then
    error(("%s: expected %q, got %q"):format(what, tostring(expected), tostring(actual)), 2)
  end
end

-- Calls fn(args), which must fail with an error object; returns the object.
function check.failure(fn, args)
  local ok, err = pcall(fn, args)
  assert(not ok, "call should have failed")
  assert(type(err) == "table", "error is an object, got " .. tostring(err))
  return err
end

return check
