-- cloud.expect: the values and checks of a test file (require "cloud.expect"), what
-- lua/testing.lua gives it as expect, expect_error and the failure messages: values
-- rendered as a person reads them, the differences of two values path by path, the
-- matchers (expect(v).to_equal(w)...), the errors expected (to_fail, expect_error), the
-- golden values stored beside the file (to_match_snapshot). A failed check raises its
-- message, noted (failed_expectation) so that the harness reports a failure, not an
-- error; cloud.stub's messages use the same differences.
local M = {}
local arg_error = require("cloud.check").arg_error  -- lauxlib's wording

---------------------------------------------------------------- rendering values

local render

local function is_identifier(s) return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil end

-- Keys in a stable order: integers first, ascending, then strings, then the rest.
local function sorted_keys(...)
  local seen, keys = {}, {}
  for i = 1, select("#", ...) do
    for k in pairs((select(i, ...))) do
      if not seen[k] then seen[k] = true; keys[#keys + 1] = k end
    end
  end
  local rank = { number = 1, string = 2 }
  table.sort(keys, function(a, b)
    local ra, rb = rank[type(a)] or 3, rank[type(b)] or 3
    if ra ~= rb then return ra < rb end
    if ra == 3 then return tostring(a) < tostring(b) end
    return a < b
  end)
  return keys
end

local function render_table(t, depth)
  if depth > 2 then return "{...}" end
  local parts, n = {}, #t
  for i = 1, n do parts[#parts + 1] = render(t[i], depth + 1) end
  for _, k in ipairs(sorted_keys(t)) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      local key = is_identifier(k) and k or ("[" .. render(k, depth + 1) .. "]")
      parts[#parts + 1] = key .. " = " .. render(t[k], depth + 1)
    end
  end
  local text = "{ " .. table.concat(parts, ", ") .. " }"
  if #parts == 0 then text = "{}" end
  return #text > 120 and text:sub(1, 116) .. " ..." or text
end

-- A value as a person reads it in a failure message: strings quoted and cut,
-- tables on one line, cloud.null by name, error objects through their __tostring.
function render(v, depth)
  depth = depth or 0
  local cloud = package.loaded.cloud
  if cloud and v == cloud.null then return "cloud.null" end
  if type(v) == "string" then
    local q = ("%q"):format(#v > 200 and v:sub(1, 200) or v):gsub("\\\n", "\\n")
    return #v > 200 and q .. "... (" .. #v .. " bytes)" or q
  end
  if type(v) == "table" then
    local mt = getmetatable(v)
    if mt and mt.__tostring then return tostring(v) end
    return render_table(v, depth)
  end
  return tostring(v)
end
M.render = render

---------------------------------------------------------------- comparing values

local function key_path(path, k)
  if math.type(k) == "integer" then return path .. "[" .. k .. "]" end
  if is_identifier(k) then return path == "" and k or path .. "." .. k end
  return path .. "[" .. render(k) .. "]"
end

local function same_scalar(a, b) return a == b or (a ~= a and b ~= b) end  -- NaN equals NaN here

-- Appends "path: ..." lines for every place where actual differs from expected.
-- A table with a metatable of its own (an error object, a class) is compared as a
-- value; an empty metatable only marks a table (an empty list of a result).
local function compared_whole(t)
  local mt = getmetatable(t)
  return mt ~= nil and (type(mt) ~= "table" or next(mt) ~= nil)
end

local function diff(actual, expected, path, out, seen)
  if type(actual) ~= "table" or type(expected) ~= "table" or compared_whole(expected) then
    if not same_scalar(actual, expected) then
      out[#out + 1] = ("%s: expected %s, got %s"):format(path == "" and "value" or path, render(expected), render(actual))
    end
    return
  end
  if seen[actual] == expected then return end  -- cycles: this pair is being compared already
  seen[actual] = expected
  for _, k in ipairs(sorted_keys(actual, expected)) do
    local a, e, p = actual[k], expected[k], key_path(path, k)
    if a == nil then out[#out + 1] = ("%s: missing (expected %s)"):format(p, render(e))
    elseif e == nil then out[#out + 1] = ("%s: unexpected %s"):format(p, render(a))
    else diff(a, e, p, out, seen) end
  end
end

local function differences(actual, expected)
  local out = {}
  diff(actual, expected, "", out, {})
  return out
end

function M.equal(a, b) return #differences(a, b) == 0 end
M.differences = differences  -- "path: expected X, got Y" lines (cloud.stub's too)

local function difference_message(lines)
  local shown = {}
  for i = 1, math.min(#lines, 20) do shown[i] = "  " .. lines[i] end
  if #lines > 20 then shown[#shown + 1] = ("  ... and %d more"):format(#lines - 20) end
  return ("values differ (%d difference%s):\n%s"):format(#lines, #lines == 1 and "" or "s", table.concat(shown, "\n"))
end

---------------------------------------------------------------- errors expected

-- The message of the last expectation that failed: a case whose error ends with it
-- failed a check (a JUnit <failure>); any other error is an <error>.
local failed_expectation

-- The message of the check that failed last (nil: none since reset_failure), noted by
-- note_failure: luassert's failures are noted too (lua/assertions.lua).
function M.failed_expectation() return failed_expectation end
function M.note_failure(message) failed_expectation = message end
function M.reset_failure() failed_expectation = nil end

-- Raises `message` at `level` (as error does), noted as a failed expectation.
local function fail_expectation(message, level)
  failed_expectation = message
  error(message, level + 1)
end


local function error_text(err)
  if type(err) == "string" then return err end
  return render(err)
end

-- The ways `err` does not match `match` (a table of fields, or a plain substring).
local function mismatches(err, match)
  local out = {}
  if match == nil then return out end
  if type(match) == "string" then
    if not error_text(err):find(match, 1, true) then out[#out + 1] = "message containing " .. render(match) end
    return out
  end
  local e = type(err) == "table" and err or { message = tostring(err) }
  for _, k in ipairs{ "kind", "code", "status", "operation" } do
    if match[k] ~= nil and e[k] ~= match[k] then out[#out + 1] = k .. " " .. render(match[k]) end
  end
  if match.message and not tostring(e.message or ""):find(match.message, 1, true) then
    out[#out + 1] = "message containing " .. render(match.message)
  end
  local function has_field(want_path, want_problem)
    for _, f in ipairs(type(e.fields) == "table" and e.fields or {}) do
      if (not want_path or f.path == want_path) and (not want_problem or tostring(f.problem):find(want_problem, 1, true)) then
        return true
      end
    end
  end
  if (match.field or match.problem) and not has_field(match.field, match.problem) then
    out[#out + 1] = ("a problem%s%s"):format(match.field and " at " .. match.field or "",
                                            match.problem and " saying " .. render(match.problem) or "")
  end
  return out
end

-- Calls fn(...) and returns its error, raising a test failure when it does not fail
-- or fails otherwise than `match` says.
local function expect_failure(level, match, fn, ...)
  local results = table.pack(pcall(fn, ...))
  if results[1] then
    fail_expectation(("expected the call to fail%s, but it returned %s"):format(
      match and " with " .. render(match) or "", results.n > 1 and render(results[2]) or "nothing"), level + 1)
  end
  local err = results[2]
  local wrong = mismatches(err, match)
  if #wrong > 0 then
    fail_expectation(("expected an error with %s; got:\n  %s"):format(table.concat(wrong, ", "),
                     (error_text(err):gsub("\n", "\n  "))), level + 1)
  end
  return err
end

---------------------------------------------------------------- snapshots

-- Where snapshots go and whether they are written: set by run_file for its file.
local snapshots = { dir = nil, update = false, make_directory = nil }
M.snapshots = snapshots

-- How a value is stored: Lua a person can read and diff (the pretty printer's layout,
-- nothing cut), `return`ed, cloud.null as null.
local function snapshot_text(value)
  local text = "return " .. package.loaded.cloud.pretty(value, { width = 100, max_depth = math.huge,
                                                                 max_items = math.huge, max_string = math.huge }) .. "\n"
  return text
end

local function load_snapshot(text, name)
  local chunk = load(text, "=" .. name, "t", { null = package.loaded.cloud.null })
  local ok, value = pcall(chunk or error)
  return ok and chunk and value, ok
end

local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Writes `text` to the snapshot file `path` (its folder made first).
local function write_snapshot(path, text)
  snapshots.make_directory(path:match("^(.*)/[^/]*$"))
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- expect(v).to_match_snapshot(name): v as stored in __snapshots__/<file>/<name>.lua
-- beside the test file; --update-snapshots writes it. Returns nil or a failure message.
local function snapshot_mismatch(value, name)
  if type(name) ~= "string" or not name:match("^[%w_.%-]+$") or name:match("^%.") then
    return "to_match_snapshot needs a name of letters, digits, '_', '.' and '-', got " .. render(name)
  end
  local path = snapshots.dir .. "/" .. name .. ".lua"
  local text = snapshot_text(value)
  if not select(2, load_snapshot(text, name)) then
    return "to_match_snapshot: " .. render(value) .. " has no stored form (a function, userdata or a cycle)"
  end
  local stored = read_all(path)
  if snapshots.update then
    if stored ~= text then write_snapshot(path, text) end
    return nil
  end
  if not stored then return ("no snapshot %s yet: run with --update-snapshots to write it"):format(path) end
  if stored == text then return nil end
  local expected = load_snapshot(stored, path)
  local lines = differences(value, expected)
  if #lines == 0 then lines = { "the stored text differs (numbers printed otherwise?): " .. path } end
  return ("snapshot %s: "):format(path) .. difference_message(lines)
end

function M.expect_error(fn, match)
  if type(fn) ~= "function" then arg_error(1, "expect_error", "function expected") end
  local err = expect_failure(2, match, fn)
  return err  -- not a tail call: the failure's level must find the caller
end

---------------------------------------------------------------- expect

-- expect(actual, ...): the matchers, each failing with a message that shows both sides.
function M.expect(actual, ...)
  local extra = table.pack(...)
  local function fail(message) fail_expectation(message, 3) end
  local m = {}
  function m.to_equal(expected)
    local lines = differences(actual, expected)
    if #lines > 0 then fail(difference_message(lines)) end
  end
  function m.to_not_equal(other)
    if #differences(actual, other) == 0 then fail("expected a value different from " .. render(other)) end
  end
  function m.to_be(expected)
    if not rawequal(actual, expected) then fail(("expected %s, got %s"):format(render(expected), render(actual))) end
  end
  function m.to_be_truthy() if not actual then fail("expected a true value, got " .. render(actual)) end end
  function m.to_be_falsy() if actual then fail("expected false or nil, got " .. render(actual)) end end
  function m.to_be_nil() if actual ~= nil then fail("expected nil, got " .. render(actual)) end end
  function m.to_be_a(type_name)
    local t = math.type(actual) or type(actual)
    if t ~= type_name and type(actual) ~= type_name then
      fail(("expected a value of type %s, got %s (%s)"):format(type_name, render(actual), t))
    end
  end
  function m.to_match(pattern)
    if type(actual) ~= "string" or not actual:find(pattern) then
      fail(("expected a string matching %s, got %s"):format(render(pattern), render(actual)))
    end
  end
  function m.to_contain(item)
    if type(actual) == "string" and type(item) == "string" then
      if not actual:find(item, 1, true) then fail(("expected %s to contain %s"):format(render(actual), render(item))) end
      return
    end
    if type(actual) == "table" then
      for _, v in pairs(actual) do if M.equal(v, item) then return end end
    end
    fail(("expected %s to contain %s"):format(render(actual), render(item)))
  end
  function m.to_have_length(n)
    local len = (type(actual) == "string" or type(actual) == "table") and #actual or nil
    if len ~= n then fail(("expected length %d, got %s of %s"):format(n, tostring(len), render(actual))) end
  end
  function m.to_match_snapshot(name)
    local mismatch = snapshot_mismatch(actual, name)
    if mismatch then fail(mismatch) end
  end
  function m.to_fail(match)
    if type(actual) ~= "function" and not (getmetatable(actual) or {}).__call then
      fail("expect(...).to_fail needs a function, got " .. render(actual))
    end
    local err = expect_failure(2, match, actual, table.unpack(extra, 1, extra.n))
    return err  -- not a tail call: the failure's level must find the caller
  end
  return m
end

M.difference_message = difference_message
M.error_text = error_text  -- an error as a message shows it (render for a table)

return M
