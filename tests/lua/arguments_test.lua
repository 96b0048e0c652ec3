-- The Lua edge follows lauxlib: a bad argument is "bad argument #N to 'NAME' (...)",
-- NAME the function's full name (as a traceback names it) however it was called, and
-- every error object, the Lua-written helpers' included, comes from one constructor,
-- cloud.error.
-- Run: cloudlua test tests/lua/arguments_test.lua

-- Calls fn(...) from Lua code (not straight from pcall, where lauxlib has no name
-- at all) and returns the message.
local function message_of(fn, ...)
  local args = table.pack(...)
  local ok, err = pcall(function() fn(table.unpack(args, 1, args.n)) end)
  expect(ok).to_equal(false)
  return tostring(err)
end

local cases = {
  { "cloud.sign", "bad argument #1 to 'cloud.sign' (table expected, got nil)", function() cloud.sign(nil) end },
  { "cloud.sign, through a local copy", "bad argument #1 to 'cloud.sign' (field 'url' is required)",
    function() local s = cloud.sign; s{} end },
  { "cloud.sign's fields", "bad argument #1 to 'cloud.sign' (field 'service' must be a string, got table)",
    function() cloud.sign{ url = "http://127.0.0.1/", service = {} } end },
  { "cloud.sign's dialect", "bad argument #1 to 'cloud.sign' (field 'dialect' must be \"ext\" or \"aws\", got 'v4')",
    function() cloud.sign{ url = "http://127.0.0.1/", service = "s3", dialect = "v4" } end },
  { "cloud.request", "bad argument #1 to 'cloud.request' (table expected, got number)", function() cloud.request(5) end },
  { "cloud.request's headers", "bad argument #1 to 'cloud.request' (field 'headers' must be a table, got string)",
    function() cloud.request{ headers = "x" } end },
  { "cloud.call", "bad argument #1 to 'cloud.call' (string expected, got no value)", function() cloud.call() end },
  { "an operation", "bad argument #1 to 'cloud.cluster.update_snapshot' (table expected, got string)",
    function() cloud.cluster.update_snapshot("snap-1") end },
  { "cloud.client", "bad argument #1 to 'cloud.client' (table expected, got boolean)", function() cloud.client(true) end },
  { "cloud.sleep", "bad argument #1 to 'cloud.sleep' (number expected, got string)", function() cloud.sleep("soon") end },
  { "cloud.isatty", "bad argument #1 to 'cloud.isatty' (FILE* expected, got string)", function() cloud.isatty("stderr") end },
  { "cloud.time.parse", "bad argument #1 to 'cloud.time.parse' (string expected, got number)",
    function() cloud.time.parse(1795849458) end },
  { "cloud.time.format", "bad argument #1 to 'cloud.time.format' (number expected, got string)",
    function() cloud.time.format("now") end },
  { "cloud.time.format's form", "bad argument #2 to 'cloud.time.format' ('rfc1123' is not a date form: iso, http or sigv4 expected)",
    function() cloud.time.format(0, "rfc1123") end },
  { "cloud.time.format's seconds", "bad argument #1 to 'cloud.time.format' (a finite number of seconds expected)",
    function() cloud.time.format(0 / 0) end },
  { "cloud.wait_until", "bad argument #1 to 'cloud.wait_until' (function expected, got number)",
    function() cloud.wait_until(42) end },
  { "cloud.error", "bad argument #1 to 'cloud.error' (table expected, got string)", function() cloud.error("oops") end },
  { "cloud.emulator.advance", "bad argument #1 to 'cloud.emulator.advance' (seconds must not be negative)",
    function() cloud.emulator.advance(-1) end },
  { "cloud.emulator.fault", "bad argument #1 to 'cloud.emulator.fault' (times must be at least 1)",
    function() cloud.emulator.fault{ times = 0 } end },
  -- the C++ functions' option tables, checked by their declarations (lua/reference.lua)
  { "cloud.fs.list's options", "bad argument #2 to 'cloud.fs.list' (unknown field 'recurse', did you mean 'recursive'?)",
    function() cloud.fs.list(".", { recurse = true }) end },
  { "cloud.fs.walk's options", "bad argument #2 to 'cloud.fs.walk' (unknown field 'recursiv', did you mean 'recursive'?)",
    function() cloud.fs.walk(".", { recursiv = false }) end },
  { "cloud.sign's options", "bad argument #1 to 'cloud.sign' (unknown field 'regin', did you mean 'region'?)",
    function() cloud.sign{ url = "http://x/", service = "s", regin = "r" } end },
  { "cloud.request's options", "bad argument #1 to 'cloud.request' (unknown field 'methd', did you mean 'method'?)",
    function() cloud.request{ api = "storage", methd = "GET" } end },
}

for _, c in ipairs(cases) do
  test("a bad argument names the function in full: " .. c[1], function()
    expect(message_of(c[3])).to_contain(c[2])
  end)
end

---------------------------------------------------------------- cloud.error

local function no_endpoint_error()
  local ok, err = pcall(cloud.client{ endpoints = { devops = "" } }.devops.restore_instance, {})
  expect(ok).to_equal(false)
  return err
end

test("cloud.error makes the error objects the client raises: same fields, same metatable", function()
  local mine = cloud.error{ kind = "config", code = "NoEndpoint", message = "no endpoint for devops" }
  local theirs = no_endpoint_error()
  expect(getmetatable(mine)).to_be(getmetatable(theirs))
  local function keys(t)
    local out = {}
    for k in pairs(t) do out[#out + 1] = k end
    table.sort(out)
    return out
  end
  expect(keys(mine)).to_equal(keys(theirs))
  expect(mine.status).to_equal(0)
  expect(mine.attempts).to_equal(0)
  expect(mine.fields).to_equal({})
  expect(tostring(mine)).to_equal("config error: NoEndpoint: no endpoint for devops")
end)

test("cloud.error keeps what it is given, and tostring shows it as the client's errors", function()
  local e = cloud.error{ kind = "validation", code = "ValidationError", message = "1 problem", operation = "UpdateSnapshot",
                         fields = { { path = "snapshot.name", problem = "too long" } } }
  expect(e.fields).to_equal{ { path = "snapshot.name", problem = "too long" } }
  expect(tostring(e)).to_equal("validation error in UpdateSnapshot: ValidationError: 1 problem\n  snapshot.name: too long")
  local ok, raised = pcall(error, e)
  expect(ok).to_equal(false)
  expect(raised).to_be(e)
end)

test("cloud.error refuses what no error object holds", function()
  expect(message_of(cloud.error, { kind = "oops", code = "X" }))
    .to_contain("bad argument #1 to 'cloud.error' (field 'kind' must be validation, api, transport, timeout, config, "
      .. "waiter or io, got 'oops')")
  expect(message_of(cloud.error, { kind = "api" })).to_contain("(field 'code' is required)")
  expect(message_of(cloud.error, { kind = "api", code = "X", status = "404" })).to_contain("(field 'status' must be an integer)")
end)

test("cloud.wait_until's time-out is made by cloud.error", function()
  local ok, err = pcall(cloud.wait_until, function() return false, "PENDING" end, { timeout = 1, interval = 1, what = "x" })
  expect(ok).to_equal(false)
  expect(getmetatable(err)).to_be(getmetatable(cloud.error{ kind = "timeout", code = "C" }))
  local want = cloud.error{ kind = "timeout", code = "WaitTimeout", message = "x not reached after 1 s (2 tries); last seen: PENDING" }
  for k, v in pairs(want) do expect(err[k]).to_equal(v) end
  for k in pairs(err) do expect(want[k]).to_be_truthy() end
end)
