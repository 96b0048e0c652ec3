-- How the scripts in scripts/ wait for a resource to settle.
--
-- wait(name, args, timeout): through the model's named waiter `name` (cloud.wait_for),
-- so the wait reads the platform with its read operations and works the same against
-- the embedded emulator (virtual time), `cloudlua serve` and a real endpoint. A script's
-- --timeout SECONDS becomes the waiter's number of tries (one every `delay` seconds);
-- --poll SECONDS replaces the waiter's delay (a `cloudlua serve --settle 500ms` settles
-- long before a real platform's first delay is over).
local M = {}

-- The tries that fit in `timeout` seconds with `delay` seconds between them.
local function attempts(timeout, delay)
  return math.max(1, math.floor(timeout / delay) + 1)
end

-- The --poll option every waiting script takes.
M.poll_option = { "poll", value = "SECONDS", check = "interval",
                  doc = "Read the resource every SECONDS while waiting (default: the waiter's delay)" }

function M.wait(name, args, timeout, poll)
  local opts = { delay = poll and tonumber(poll) }
  for _, w in ipairs(cloud.waiters()) do
    if w.name == name and timeout then opts.max_attempts = attempts(tonumber(timeout), opts.delay or w.delay) end
  end
  return cloud.wait_for(name, args, opts)
end

return M
