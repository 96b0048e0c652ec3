-- cloud.wait_until(fn, opts): the one waiting helper of scripts and tests. Calls fn
-- until it returns a true value and returns everything fn returned.
--
--   opts.timeout   seconds to wait at most (default 600)
--   opts.interval  seconds between tries (default 5)
--   opts.what      what is awaited, for the progress line and the time-out error
--   opts.real_time true: sleep for real even when the embedded emulator serves the session
--
-- fn may return false (or nil) and a short status ("PROCESSING"): the status shows in
-- the progress line and in the time-out error. Errors raised by fn are not caught.
--
-- Decisions: when the embedded emulator serves the session, time between tries is
-- the emulator's virtual time (cloud.emulator.advance), so a wait for a ten-minute
-- transition takes milliseconds and tests never sleep; otherwise it sleeps. Progress
-- is one line rewritten on stderr, and only when stderr is a terminal, so pipes, logs
-- and TAP output stay clean. A time-out raises an error object of kind "timeout",
-- code "WaitTimeout", made by cloud.error, the constructor of the client's own errors.

local function cloud_module() return package.loaded.cloud end

local function check_options(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("bad argument #2 to 'cloud.wait_until' (table expected, got " .. type(opts) .. ")", 3) end
  local timeout, interval = opts.timeout or 600, opts.interval or 5
  if type(timeout) ~= "number" or timeout < 0 then
    error("bad argument #2 to 'cloud.wait_until' (timeout must be a number of seconds >= 0)", 3)
  end
  if type(interval) ~= "number" or interval <= 0 then
    error("bad argument #2 to 'cloud.wait_until' (interval must be a number of seconds > 0)", 3)
  end
  return { timeout = timeout, interval = interval, what = opts.what and tostring(opts.what) or "condition",
           real_time = opts.real_time and true or false }
end

-- How time passes between tries: the emulator's virtual clock, or a real sleep.
local function make_clock(real_time)
  local cloud = cloud_module()
  local emulator = not real_time and cloud.emulator
  if emulator then
    local elapsed = 0
    return { elapsed = function() return elapsed end,
             pass = function(seconds) emulator.advance(seconds); elapsed = elapsed + seconds end }
  end
  local start = cloud.clock()
  return { elapsed = function() return cloud.clock() - start end, pass = cloud.sleep }
end

-- The progress line, on a terminal only; `done` clears it.
local function make_progress(what, timeout)
  if not cloud_module().isatty(io.stderr) then return function() end end
  return function(elapsed, tries, status, done)
    if done then io.stderr:write("\r\27[K") return io.stderr:flush() end
    io.stderr:write(("\r\27[Kwaiting for %s: %d s of %d s, try %d%s"):format(
      what, math.floor(elapsed + 0.5), math.floor(timeout + 0.5), tries, status and (" (" .. status .. ")") or ""))
    io.stderr:flush()
  end
end

local function timeout_error(o, tries, status)
  local message = ("%s not reached after %g s (%d tr%s)"):format(o.what, o.timeout, tries, tries == 1 and "y" or "ies")
  if status then message = message .. "; last seen: " .. status end
  return cloud_module().error{ kind = "timeout", code = "WaitTimeout", message = message }
end

return function(fn, opts)
  if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
    error("bad argument #1 to 'cloud.wait_until' (function expected, got " .. type(fn) .. ")", 2)
  end
  local o = check_options(opts)
  local clock, progress = make_clock(o.real_time), make_progress(o.what, o.timeout)
  local tries, status = 0, nil
  while true do
    tries = tries + 1
    local results = table.pack(fn(tries))
    if results[1] then
      progress(0, tries, nil, true)
      return table.unpack(results, 1, results.n)
    end
    status = results[2] ~= nil and tostring(results[2]) or status
    local elapsed = clock.elapsed()
    if elapsed >= o.timeout then
      progress(0, tries, nil, true)
      error(timeout_error(o, tries, status), 2)
    end
    progress(elapsed, tries, status)
    clock.pass(math.min(o.interval, o.timeout - elapsed))
  end
end
