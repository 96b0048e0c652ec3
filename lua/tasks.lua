-- Tasks: cloud.spawn, task:join and cloud.map, composed from the loop's primitives
-- in cloud._loop (lua/tasks.cpp), as wrk composes its C primitives in Lua.
--
--   local t = cloud.spawn(fn, ...)   run fn(...) as a task; returns at once
--   local a, b = t:join()            wait; fn's results, or raises fn's error
--   cloud.map(list, fn, { concurrency = 8, collect = false })
--   local changed = cloud.event()    changed:wait() parks until changed:signal()
--
-- A task is a coroutine listed in cloud._loop.tasks (the one table of tasks, which
-- the C side reads too): a call made inside it starts its transfer (or timer) on the
-- loop and yields (cloud._loop.PARKED, its id, the wait). The scheduler resumes tasks by
-- event, as OpenResty does: a turn of the loop hands back the ids of the waits that
-- ended, and each resumes its own task; a task that ends wakes the tasks and waits
-- joined on it. Nothing looks at every task on a turn, so a turn costs the same at 8
-- tasks and at 1,024.
-- Decisions: spawn runs the task at once until its first wait, as OpenResty's
-- ngx.thread.spawn does; the loop turns only while something waits (join, map, or a
-- call outside a task), never behind the script's back. The scheduler holds tasks
-- weakly: a task nobody references any more is abandoned, and the garbage collector
-- cancels its wait (releasing its transfer) once. A task that yields anything else is
-- resumed at the next turn: that is polling, which the library never does (a check in
-- the suite keeps bare yields out of lua/); to wait for another task's doing, wait on
-- an event (cloud.event), which a signal wakes through the same ready list as a
-- finished transfer.

local loop = package.loaded.cloud._loop
local PARKED, task_of = loop.PARKED, loop.tasks  -- task_of: a task's coroutine -> the task
local check = require("cloud.check")
local arg_error = check.arg_error  -- lauxlib's wording

local Task = { __name = "cloud.task" }
Task.__index = Task

local live = setmetatable({}, { __mode = "k" })     -- tasks not ended, weakly held
local waiting = setmetatable({}, { __mode = "v" })  -- a parked wait's id -> its task, weakly
local ready = {}                                    -- tasks to resume at the next turn, in order
local JOINING = {}                                  -- what a task yields while it joins others
local SIGNALLED = {}                                -- what a task yields while it waits on an event

-- Queues a task to be resumed at the next turn, once.
local function wake(task)
  if task.queued or not live[task] then return end
  task.queued = true
  ready[#ready + 1] = task
end

-- Ends a task (done, failed or cancelled): counts down what waits for it and wakes
-- the tasks that wait on those counts.
local function finish(task)
  live[task], task.co, task.parked = nil, nil, nil
  local watchers = task.watchers
  task.watchers = nil
  for _, w in ipairs(watchers or {}) do
    w.left = w.left - 1
    if task.failed and not w.failed then w.failed = task end
    if w.task and w.task.joining == w then wake(w.task) end
  end
end

-- Resumes the task once with the given values; records how it parked or ended.
local function step(task, ...)
  task.queued = nil
  local r = table.pack(coroutine.resume(task.co, ...))
  if coroutine.status(task.co) ~= "dead" then
    task.parked = nil
    if r[2] == PARKED then
      task.parked = r[4]
      waiting[r[3]] = task
    elseif r[2] ~= JOINING and r[2] ~= SIGNALLED then
      wake(task)  -- a bare yield: resumed at the next turn
    end
    return
  end
  if r[1] then task.results = table.pack(table.unpack(r, 2, r.n)) else task.failed, task.error = true, r[2] end
  finish(task)
end

-- One turn: drives the loop (without waiting when a task is ready already; else for
-- at most the loop's poll interval, core's one constant), then resumes the tasks whose
-- waits ended and those woken meanwhile, in that order.
local function turn()
  loop.run_once(#ready > 0 and 0 or nil)
  for _, id in ipairs(loop.take_ended()) do
    local task = waiting[id]
    waiting[id] = nil
    if task then wake(task) end
  end
  local now = ready
  ready = {}
  for _, task in ipairs(now) do
    if live[task] then step(task) end
  end
end

-- Waits until every task of the list has ended or one has failed; returns that one.
-- The tasks count down a watcher as they end; inside a task, the watcher wakes it.
local function wait_all(tasks)
  local w = { left = 0 }
  for _, task in ipairs(tasks) do
    if task.failed then return task end
    if live[task] then
      w.left = w.left + 1
      task.watchers = task.watchers or {}
      task.watchers[#task.watchers + 1] = w
    end
  end
  local me = task_of[coroutine.running()]
  w.task = me and coroutine.isyieldable() and me or nil
  while w.left > 0 and not w.failed do
    if w.task then
      w.task.joining = w
      coroutine.yield(JOINING)
      w.task.joining = nil
    else
      turn()
    end
  end
  return w.failed
end

-- Stops a task that has not ended: its wait is cancelled, it is never resumed.
local function cancel(task)
  if not live[task] then return end
  if task.parked then loop.cancel(task.parked) end
  if task.event then task.event:forget(task) end
  task.failed, task.error = true, package.loaded.cloud.error{ kind = "transport", code = "Cancelled", message = "the task was cancelled" }
  finish(task)
end

---------------------------------------------------------------- events

-- cloud.event(): a condition that tasks wait on until another task (or code outside
-- any task) signals it. wait() parks the calling task: nothing runs it again until a
-- signal() made after the wait began, which queues exactly the tasks waiting then on
-- the scheduler's ready list (the path a finished transfer takes); nothing is polled.
-- A signal no one waits for is lost, so a waiter re-checks its condition in a loop:
--   while queue_full() do changed:wait() end
-- Outside a task, wait() turns the loop (running the tasks) until signalled.
local Event = { __name = "cloud.event" }
Event.__index = Event

local function check_event(self, fname)
  if getmetatable(self) ~= Event then
    arg_error(1, fname, "cloud.event expected, got " .. type(self), 3)
  end
end

local function event()
  return setmetatable({ waiters = {} }, Event)
end

-- Parks the caller until the next signal.
function Event:wait()
  check_event(self, "wait")
  local me = task_of[coroutine.running()]
  if me and coroutine.isyieldable() then
    self.waiters[#self.waiters + 1] = me
    me.event = self
    coroutine.yield(SIGNALLED)
    me.event = nil
    return
  end
  local outside = {}  -- a waiter that is not a task: its flag, set by the signal
  self.waiters[#self.waiters + 1] = outside
  while not outside.signalled do turn() end
end

-- Wakes every task waiting now; returns how many waiters there were.
function Event:signal()
  check_event(self, "signal")
  local waiters = self.waiters
  if #waiters == 0 then return 0 end
  self.waiters = {}
  for _, w in ipairs(waiters) do
    if getmetatable(w) == Task then wake(w) else w.signalled = true end
  end
  return #waiters
end

-- Drops a cancelled task from the waiters.
function Event:forget(task)
  for i, w in ipairs(self.waiters) do
    if w == task then return table.remove(self.waiters, i) end
  end
end

function Event:__tostring()
  return ("cloud.event (%d waiting)"):format(#self.waiters)
end

---------------------------------------------------------------- tasks

local function spawn(fn, ...)
  check.arguments("cloud.spawn", nil, 2, fn)
  local task = setmetatable({ co = coroutine.create(fn) }, Task)
  task_of[task.co] = task
  live[task] = true
  step(task, ...)
  return task
end

function Task:join()
  if getmetatable(self) ~= Task then
    arg_error(1, "join", "cloud.task expected, got " .. type(self))
  end
  wait_all({ self })
  if self.failed then error(self.error, 0) end
  return table.unpack(self.results, 1, self.results.n)
end

function Task:__tostring()
  return ("cloud.task (%s)"):format(live[self] and "running" or self.failed and "failed" or "done")
end

-- cloud.map(list, fn [, options]): its arguments checked against its declaration
-- (lua/reference.lua), which gives the defaults (concurrency 8).
local function map(list, fn, opts)
  list, fn, opts = check.arguments("cloud.map", nil, 2, list, fn, opts)
  local concurrency, collect = opts.concurrency, opts.collect
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

return { spawn = spawn, map = map, event = event }
