-- cloud.assertions: busted's assertions in a `cloudlua test` file, from the real
-- library: luassert (Debian's lua-luassert, pure Lua for 5.1 to 5.4, found on
-- package.path as `require "luassert"` finds it). The globals `assert`, `spy`, `stub`,
-- `mock` and `match` are the library's, loaded at their first use, so that a file
-- written with test/expect pays nothing for them and runs where luassert is missing.
--
-- Decisions:
--   * `assert(v, message)` called plainly stays Lua's own assert (a file's plain
--     assert is an error, as it always was); `assert.<anything>` is luassert's.
--   * A failed luassert assertion is a failed check (a JUnit <failure>), as under
--     busted: the `error` luassert's assertions raise with is replaced, for their
--     functions only, by one that notes the failure (busted's bindfenv, done the Lua
--     5.4 way with debug.upvaluejoin).
--   * assert.are.same on two tables also lists every differing path, as expect's
--     to_equal does, before luassert's own text (the two values laid out).

local M = {}

-- luassert's modules, once loaded (kept here: an insulate block that loaded them
-- takes them out of package.loaded again as it ends).
local lib

-- Gives function `fn` an environment of its own in which `error` is `replacement`
-- (its other globals are still _G's): its _ENV upvalue is joined to a fresh one.
local function bind_error(fn, replacement)
  local env = setmetatable({ error = replacement }, { __index = _G })
  for i = 1, math.huge do
    local name = debug.getupvalue(fn, i)
    if name == nil then return end
    if name == "_ENV" then
      debug.upvaluejoin(fn, i, function() return env end, 1)
      return
    end
  end
end

-- Wraps luassert's `same` so that a failure on two tables starts with the list of
-- differing paths (`differences(actual, expected)` gives it), the message the
-- caller gave (if any) before it.
local function explain_same(differences)
  local same = require("luassert.namespaces").assertion.same
  local callback = same.callback
  same.callback = function(state, arguments, level)
    local expected, actual = arguments[1], arguments[2]
    local ok, retargs = callback(state, arguments, (level or 1) + 1)
    if not ok and state.mod and type(expected) == "table" and type(actual) == "table" then
      local given = rawget(state, "failure_message")
      local text = differences(actual, expected)
      state.failure_message = given ~= nil and tostring(given) .. "\n" .. text or text
    end
    return ok, retargs
  end
end

-- luassert's modules by global name (assert, spy, stub, mock, match), loaded once per
-- state and adapted (see above); raises, saying what to install, when the library is
-- not on package.path.
local function load(hooks)
  if lib then return lib end
  local ok, loaded = pcall(require, "luassert")
  if not ok then
    error("busted's assertions, spies, stubs and mocks need luassert (Debian: apt-get install lua-luassert): "
          .. tostring(loaded):match("^[^\n]*"), 0)
  end
  local function fail(message, level)
    hooks.failed(message)
    error(message, (level and level > 0) and level + 1 or level)
  end
  bind_error(getmetatable(loaded).__call, fail)
  bind_error(getmetatable(loaded.is_true).__call, fail)
  explain_same(hooks.differences)
  lib = { assert = loaded }
  for _, name in ipairs{ "spy", "stub", "mock", "match" } do lib[name] = require("luassert." .. name) end
  return lib
end

-- Lua's own assert, raised from here at the caller's level (a C function called
-- from a metamethod would name this file as the place).
local function plain_assert(_, value, message, ...)
  if not value then error(message == nil and "assertion failed!" or message, 2) end
  return value, message, ...
end

-- A stand-in for global `name`: indexing or calling it loads luassert and forwards to
-- its module `module`; `call`, when given, answers calls instead.
local function lazy(hooks, module, call)
  local function real() return load(hooks)[module] end
  return setmetatable({}, {
    __index = function(_, key) return real()[key] end,
    __call = call or function(_, ...) return real()(...) end,
    __name = module,
  })
end

-- install(globals, hooks): sets assert, spy, stub, mock and match in `globals`.
-- hooks.failed(message) notes a failed check; hooks.differences(actual, expected)
-- is the text listing how two tables differ.
function M.install(globals, hooks)
  globals.assert = lazy(hooks, "assert", plain_assert)
  for _, name in ipairs{ "spy", "stub", "mock", "match" } do globals[name] = lazy(hooks, name) end
end

return M
