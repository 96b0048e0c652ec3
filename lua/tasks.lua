-- Tasks: cloud.spawn, task:join and cloud.map, composed from the loop's primitives
-- in cloud._loop (lua/tasks.cpp), as wrk composes its C primitives in Lua.
--
--   local t = cloud.spawn(fn, ...)   run fn(...) as a task; returns at once
--   local a, b = t:join()            wait; fn's results, or raises fn's error
--   cloud.map(list, fn, { concurrency = 8, collect = false })
--
-- A task is a coroutine marked with cloud._loop.mark: a call made inside it starts
-- its transfer (or timer) on the loop and yields the wait (a cloud.parked userdata);
-- the scheduler below turns the loop and resumes each task whose wait has ended.
-- Decisions: spawn runs the task at once until its first wait, as OpenResty's
-- ngx.thread.spawn does; the loop turns only while something waits (join, map, or a
-- call outside a task), never behind the script's back. The scheduler holds tasks
-- weakly: a task nobody references any more is abandoned, and the garbage collector
-- cancels its wait (releasing its transfer) once. A task that yields anything else is
-- simply resumed at the next turn, so join can wait inside a task too.

local loop = package.loaded.cloud._loop

local Task = { __name = "cloud.task" }
Task.__index = Task

local live = setmetatable({}, { __mode = "k" })     -- tasks not ended, weakly held
local task_of = setmetatable({}, { __mode = "k" })  -- a task's coroutine -> the task

-- Resumes the task once with the given values; records how it parked or ended.
local function step(task, ...)
  local r = table.pack(coroutine.resume(task.co, ...))
  if coroutine.status(task.co) ~= "dead" then
    task.parked = loop.is_parked(r[2]) and r[2] or nil
    return
  end
  live[task], task.co, task.parked = nil, nil, nil
  if r[1] then task.results = table.pack(table.unpack(r, 2, r.n)) else task.failed, task.error = true, r[2] end
end

-- The tasks that may run now: their wait has ended, or they yielded bare.
local function runnable()
  local ready = {}
  for task in pairs(live) do
    if not task.parked or loop.ready(task.parked) then ready[#ready + 1] = task end
  end
  return ready
end

-- One turn: drives the loop (not when a wait has ended already), then resumes every
-- task that may run.
local function turn()
  local ended = false
  for task in pairs(live) do
    if task.parked and loop.ready(task.parked) then ended = true break end
  end
  if not ended then loop.run_once(0.1) end
  for _, task in ipairs(runnable()) do
    if live[task] then step(task) end
  end
end

-- Waits until every task of the list has ended or one has failed; returns that one.
local function wait_all(tasks)
  while true do
    local running = false
    for _, task in ipairs(tasks) do
      if task.failed then return task end
      running = running or live[task] ~= nil
    end
    if not running then return nil end
    if task_of[coroutine.running()] and coroutine.isyieldable() then
      coroutine.yield()  -- inside a task: the scheduler turns the loop
    else
      turn()
    end
  end
end

-- Stops a task that has not ended: its wait is cancelled, it is never resumed.
local function cancel(task)
  if not live[task] then return end
  if task.parked then loop.cancel(task.parked) end
  live[task], task.co, task.parked = nil, nil, nil
  task.failed, task.error = true, package.loaded.cloud.error{ kind = "transport", code = "Cancelled", message = "the task was cancelled" }
end

local function spawn(fn, ...)
  if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
    error("bad argument #1 to 'cloud.spawn' (function expected, got " .. type(fn) .. ")", 2)
  end
  local task = setmetatable({ co = coroutine.create(fn) }, Task)
  loop.mark(task.co)
  task_of[task.co] = task
  live[task] = true
  step(task, ...)
  return task
end

function Task:join()
  if getmetatable(self) ~= Task then
    error("bad argument #1 to 'join' (cloud.task expected, got " .. type(self) .. ")", 2)
  end
  wait_all({ self })
  if self.failed then error(self.error, 0) end
  return table.unpack(self.results, 1, self.results.n)
end

function Task:__tostring()
  return ("cloud.task (%s)"):format(live[self] and "running" or self.failed and "failed" or "done")
end

-- The options of cloud.map, checked: concurrency (default 8) and collect.
local function map_options(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("bad argument #3 to 'cloud.map' (table expected, got " .. type(opts) .. ")", 3) end
  local concurrency = opts.concurrency or 8
  if math.type(concurrency) ~= "integer" or concurrency < 1 then
    error("bad argument #3 to 'cloud.map' (concurrency must be an integer >= 1)", 3)
  end
  return concurrency, opts.collect and true or false
end

local function map(list, fn, opts)
  if type(list) ~= "table" then error("bad argument #1 to 'cloud.map' (table expected, got " .. type(list) .. ")", 2) end
  if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
    error("bad argument #2 to 'cloud.map' (function expected, got " .. type(fn) .. ")", 2)
  end
  local concurrency, collect = map_options(opts)
  local results, n, next_item = {}, #list, 1
  local function worker()  -- takes the next item until none is left
    while next_item <= n do
      local i = next_item
      next_item = i + 1
      if collect then
        local ok, value = pcall(fn, list[i])
        results[i] = ok and { ok = true, value = value } or { ok = false, error = value }
      else
        results[i] = fn(list[i])
      end
    end
  end
  local workers = {}
  for w = 1, math.min(concurrency, n) do workers[w] = spawn(worker) end
  local failed = wait_all(workers)
  if failed then
    for _, w in ipairs(workers) do cancel(w) end
    error(failed.error, 0)
  end
  return results
end

return { spawn = spawn, map = map }
