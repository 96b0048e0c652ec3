-- The waiting engine: cloud.wait_until(fn, opts) and cloud.wait_for(name, args, opts)
-- share one loop (run below), one clock and one progress line.
--
-- cloud.wait_until calls fn until it returns a true value and returns everything fn
-- returned.
--   opts.timeout   seconds to wait at most (default 600)
--   opts.interval  seconds between tries (default 5)
--   opts.what      what is awaited, for the progress line and the time-out error
--   opts.real_time true: sleep for real even when the embedded emulator serves the session
--   opts.progress  false: no progress line; a function: called after each try that did
--                  not end the wait, with { what, attempt, max_attempts, elapsed, status }
-- fn may return false (or nil) and a short status ("PROCESSING"): the status shows in
-- the progress line and in the time-out error. Errors raised by fn are not caught.
--
-- cloud.wait_for runs a named waiter of the model (cloud.waiters()): it calls the
-- waiter's operation with `args` every `delay` seconds, at most `max_attempts` times,
-- and the first acceptor that holds decides: success returns the result and meta of
-- that call, failure raises an error of kind "waiter" naming the acceptor, retry (or
-- no acceptor holding) tries again. An API error no acceptor names is raised as it is.
--   opts.delay, opts.max_attempts  override the waiter's; opts.progress, opts.real_time
--   as for wait_until.
--
-- Decisions: time between tries is the loop's clock, which cloud.clock reads. When the
-- embedded emulator serves the session (or a serve whose virtual time the session
-- asked for) the pause is skipped and the emulator's clock follows (as
-- cloud.emulator.advance), so a wait for a ten-minute transition takes milliseconds
-- and tests never sleep; otherwise it waits as cloud.sleep does: a shared serve's
-- clock is never moved by a waiter that did not ask. Progress
-- is one line rewritten on stderr, and only when stderr is a terminal, so pipes, logs
-- and TAP output stay clean. Running out of time or tries raises an error object of
-- kind "timeout", code "WaitTimeout", made by cloud.error, the constructor of the
-- client's own errors.

local check = require("cloud.check")
local cloud_module = check.cloud

-- How a pause between tries passes on the loop's clock (cloud._sleep's pace): waited
-- for with real_time; else a waiter's, which C++ decides (skipped at once, the
-- emulator's clock following, when the embedded emulator serves the session or a
-- serve whose virtual time the session asked for; otherwise as cloud.sleep).
local function pace_of(o)
  return o.real_time and "real" or "waiter"
end

-- The progress reporter: the caller's function, or the line on a terminal (none when
-- progress is false or stderr is not a terminal); called with done = true at the end.
local function make_progress(o)
  if type(o.progress) == "function" then
    return function(info, done) if not done then o.progress(info) end end
  end
  if o.progress == false or not cloud_module().isatty(io.stderr) then return function() end end
  return function(info, done)
    if done then io.stderr:write("\r\27[K") return io.stderr:flush() end
    local limit = o.timeout and ("%d s of %d s, try %d"):format(math.floor(info.elapsed + 0.5), math.floor(o.timeout + 0.5), info.attempt)
                            or ("try %d of %d, %d s"):format(info.attempt, o.max_attempts, math.floor(info.elapsed + 0.5))
    local line = ("waiting for %s: %s%s"):format(o.what, limit, info.status and (" (" .. tostring(info.status) .. ")") or "")
    io.stderr:write("\r\27[K", cloud_module().printable(line))  -- the status is the server's text
    io.stderr:flush()
  end
end

-- A second or more is shown whole, as the progress line does: the tries' own calls add
-- fractions to the pauses (40.0005 s after four 10 s pauses skipped).
local function timeout_error(o, tries, elapsed, status)
  if elapsed >= 1 then elapsed = math.floor(elapsed + 0.5) end
  local spent = o.timeout and ("%g s (%d tr%s)"):format(o.timeout, tries, tries == 1 and "y" or "ies")
                          or ("%d tr%s (%g s)"):format(tries, tries == 1 and "y" or "ies", elapsed)
  local message = ("%s not reached after %s"):format(o.what, spent)
  if status then message = message .. "; last seen: " .. status end
  return cloud_module().error{ kind = "timeout", code = "WaitTimeout", message = message, operation = o.operation }
end

-- The one loop. try(attempt) returns true and the values to return, or false and a
-- status; o: interval, what, and timeout (seconds) or max_attempts (tries).
local function run(try, o)
  local cloud, pace, progress = cloud_module(), pace_of(o), make_progress(o)
  local start, tries, status = cloud.clock(), 0, nil
  while true do
    tries = tries + 1
    local results = table.pack(try(tries))
    if results[1] then
      progress(nil, true)
      return table.unpack(results, 2, results.n)
    end
    status = results[2] ~= nil and tostring(results[2]) or status
    local elapsed = cloud.clock() - start
    if (o.timeout and elapsed >= o.timeout) or (o.max_attempts and tries >= o.max_attempts) then
      progress(nil, true)
      error(timeout_error(o, tries, elapsed, status))
    end
    progress({ what = o.what, attempt = tries, max_attempts = o.max_attempts, elapsed = elapsed, status = status })
    cloud._sleep(o.timeout and math.min(o.interval, o.timeout - elapsed) or o.interval, pace)
  end
end

-- cloud.wait_until(fn [, options]): its arguments checked against its declaration
-- (lua/reference.lua), which gives the defaults.
local function wait_until(fn, opts)
  fn, opts = check.arguments("cloud.wait_until", nil, 2, fn, opts)
  local o = { timeout = opts.timeout, interval = opts.interval, what = opts.what,
              real_time = opts.real_time, progress = opts.progress }
  return run(function(try)
    local results = table.pack(fn(try))
    if results[1] then return true, table.unpack(results, 1, results.n) end
    return false, results[2]
  end, o)
end

-- ------------------------------------------------------------------ named waiters

-- The values at "a.b[].c" in v ("[]" after a list: each of its items), and whether
-- the path went through a list.
local function values_at(v, path)
  local current, each_seen = { v }, false
  for part in path:gmatch("[^.]+") do
    local name, each = part:match("^(.-)(%[?%]?)$")
    each = each == "[]"
    each_seen = each_seen or each
    local nxt = {}
    for _, x in ipairs(current) do
      local y = type(x) == "table" and x[name] or nil
      if each and type(y) == "table" then
        for _, item in ipairs(y) do nxt[#nxt + 1] = item end
      elseif y ~= nil and not each then
        nxt[#nxt + 1] = y
      end
    end
    current = nxt
  end
  return current, each_seen
end

local function deep_equal(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not deep_equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- Whether an output acceptor holds for `result` (comparators: docs/model.md, Waiters).
local comparators = {
  equals = function(values, expected) return values[1] ~= nil and deep_equal(values[1], expected) end,
  allEqual = function(values, expected)
    for _, v in ipairs(values) do if not deep_equal(v, expected) then return false end end
    return #values > 0
  end,
  anyEqual = function(values, expected)
    for _, v in ipairs(values) do if deep_equal(v, expected) then return true end end
    return false
  end,
  prefix = function(values, expected)
    return type(values[1]) == "string" and values[1]:sub(1, #expected) == expected
  end,
  empty = function(values, _, each)
    if each then return #values == 0 end
    return values[1] == nil or (type(values[1]) == "table" and next(values[1]) == nil)
  end,
}

local function holds(acceptor, result)
  local values, each = values_at(result, acceptor.path)
  return comparators[acceptor.comparator](values, acceptor.expected, each)
end

-- What the result shows now, for the progress line and errors: the first string or
-- number an acceptor's path leads to ("PROVISIONING", "AUTHORIZED,AUTHORIZING").
local function status_of(waiter, result)
  for _, a in ipairs(waiter.acceptors) do
    if a.path then
      local values, shown = values_at(result, a.path), {}
      for _, v in ipairs(values) do
        if type(v) == "string" or type(v) == "number" then shown[#shown + 1] = tostring(v) end
      end
      if #shown > 0 then return table.concat(shown, ",") end
    end
  end
end

local function acceptor_text(i, a)
  local what = a.error and ("the call fails with " .. a.error)
                       or (a.path .. " " .. a.comparator .. (a.expected ~= nil and (" " .. cloud_module().pretty(a.expected)) or ""))
  return ("acceptor %d (%s when %s)"):format(i, a.state, what)
end

local function waiter_error(waiter, i, a, seen)
  return cloud_module().error{ kind = "waiter", code = "WaiterFailed", operation = waiter.operation,
    message = ("%s failed: %s holds%s"):format(waiter.name, acceptor_text(i, a), seen and ("; last seen: " .. seen) or "") }
end

-- One try of a waiter: true, result, meta when it succeeded; false, status to retry.
local function try_waiter(client, waiter, args)
  local ok, result, meta = pcall(client.call, waiter.operation, args)
  local code = not ok and type(result) == "table" and result.code or nil
  for i, a in ipairs(waiter.acceptors) do
    local match
    if a.error then match = code == a.error else match = ok and holds(a, result) end
    if match then
      if a.state == "success" then return true, ok and result or nil, ok and meta or result end
      if a.state == "failure" then error(waiter_error(waiter, i, a, ok and status_of(waiter, result) or code)) end
      return false, ok and status_of(waiter, result) or code
    end
  end
  if not ok then error(result, 0) end
  return false, status_of(waiter, result)
end

local function find_waiter(client, name)
  for _, w in ipairs(client.waiters()) do if w.name == name then return w end end
end

-- `client`: a cloud.client{} table, whose calls the waiter makes (its own
-- `wait_for`); nil for cloud.wait_for, the default client's.
local function wait_for(name, args, opts, client)
  name, args, opts = check.arguments("cloud.wait_for", client and "wait_for", 2, name, args, opts)
  client = client or cloud_module()
  local waiter = find_waiter(client, name)
  local o = { interval = opts.delay or waiter.delay, max_attempts = opts.max_attempts or waiter.max_attempts, what = name,
              operation = waiter.operation, real_time = opts.real_time, progress = opts.progress }
  return run(function() return try_waiter(client, waiter, args or {}) end, o)
end

return { wait_until = wait_until, wait_for = wait_for }
