-- Tasks end to end against the embedded emulator: cloud.spawn, join and cloud.map,
-- calls and cloud.request and cloud.sleep parked on the one loop, cloud.wait_for
-- inside a task, retries inside a task, cancellation when map fails, abandoned tasks
-- collected. Slow answers come from cloud.emulator.fault{ delay = }; overlap is shown
-- by counting the calls under way at once (the order of "started" and "ended"
-- events), never by a time.
-- Run: cloudlua test tests/lua/tasks_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")
local cluster = cloud.cluster

-- The most calls under way at once in a list of "+" (started) and "-" (ended) events.
local function most_at_once(events)
  local now, most = 0, 0
  for _, e in ipairs(events) do
    now = now + (e == "+" and 1 or -1)
    most = math.max(most, now)
  end
  return most
end

-- Updates snap-1's description to `text` and returns the description answered.
local function describe(text)
  return cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = text } }.snapshot.description
end

test("eight delayed calls through cloud.map are all under way at once; results in list order", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 0.3, times = 8 }
  local events = {}
  local results = cloud.map({ "a", "b", "c", "d", "e", "f", "g", "h" }, function(item)
    events[#events + 1] = "+"
    local answered = describe(item)
    events[#events + 1] = "-"
    return answered
  end, { concurrency = 8 })
  expect(results).to_equal{ "a", "b", "c", "d", "e", "f", "g", "h" }
  expect(most_at_once(events)).to_equal(8)
end)

test("the same calls made one after another are never under way together", function()
  local events = {}
  for _, item in ipairs{ "a", "b", "c" } do
    events[#events + 1] = "+"
    describe(item)
    events[#events + 1] = "-"
  end
  expect(most_at_once(events)).to_equal(1)
end)

test("concurrency bounds how many items run at once", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 0.1, times = 6 }
  local events = {}
  cloud.map({ 1, 2, 3, 4, 5, 6 }, function(i)
    events[#events + 1] = "+"
    describe(tostring(i))
    events[#events + 1] = "-"
  end, { concurrency = 2 })
  expect(most_at_once(events)).to_equal(2)
end)

test("results come back in list order even when later items finish first", function()
  local finished = {}
  local results = cloud.map({ "slow", "quick" }, function(item)
    if item == "slow" then cloud.sleep(0.5) end
    local answered = describe(item)
    finished[#finished + 1] = item
    return answered
  end)
  expect(finished).to_equal{ "quick", "slow" }
  expect(results).to_equal{ "slow", "quick" }
end)

test("spawn returns at once; join returns the task's results", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 0.2, times = 1 }
  local t = cloud.spawn(function(a, b) return describe(a .. b), "second" end, "x", "y")
  expect(tostring(t)).to_equal("cloud.task (running)")
  local first, second = t:join()
  expect(first).to_equal("xy")
  expect(second).to_equal("second")
  expect(tostring(t)).to_equal("cloud.task (done)")
end)

test("join raises the task's error: a call's error object, or any error", function()
  local t = cloud.spawn(function() return cluster.update_snapshot{ SnapshotName = "nope", snapshot = {} } end)
  expect(t.join, t).to_fail{ kind = "api", code = "SnapshotNotFound", status = 404 }
  local plain = cloud.spawn(function() error("plain failure", 0) end)
  expect_error(function() plain:join() end, { message = "plain failure" })
end)

test("map raises the first failure and cancels the tasks still running", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 5, times = 3 }
  local after_call = 0
  local err = expect_error(function()
    cloud.map({ "fails", "slow1", "slow2", "slow3" }, function(item)
      if item == "fails" then
        cloud.sleep(0.05)
        error("item failed", 0)
      end
      describe(item)
      after_call = after_call + 1
    end, { concurrency = 4 })
  end)
  expect(err).to_equal("item failed")
  expect(cloud._loop.run_once(0)).to_equal(0)  -- no transfer or timer is left waiting
  expect(after_call).to_equal(0)
end)

test("collect = true returns one { ok, value } or { ok, error } per item", function()
  local results = cloud.map({ 1, 2, 3 }, function(i)
    if i == 2 then return cluster.update_snapshot{ SnapshotName = "missing", snapshot = {} } end
    return describe("item " .. i)
  end, { collect = true })
  expect(results[1]).to_equal{ ok = true, value = "item 1" }
  expect(results[3]).to_equal{ ok = true, value = "item 3" }
  expect(results[2].ok).to_equal(false)
  expect(results[2].error.code).to_equal("SnapshotNotFound")
end)

test("a call inside a task is retried: a 503 once, then the answer", function()
  emu.fault{ operation = "UpdateSnapshot", status = 503, code = "ServiceUnavailable", times = 1 }
  local quick = cloud.client{ retry_base_delay = 0.05 }  -- its back-off is a timer on the loop
  local t = cloud.spawn(function()
    local r, meta = quick.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "retried" } }
    return r.snapshot.description, meta.attempts
  end)
  local description, attempts = t:join()
  expect(description).to_equal("retried")
  expect(attempts).to_equal(2)
end)

test("cloud.request and cloud.sleep park a task too; sleeps end in the order they fall due", function()
  local order = {}
  local long = cloud.spawn(function() cloud.sleep(0.3); order[#order + 1] = "long" end)
  local short = cloud.spawn(function() cloud.sleep(0.05); order[#order + 1] = "short" end)
  local raw = cloud.spawn(function() return cloud.request{ api = "storage", method = "PUT", path = "/tasks-raw" }.status end)
  long:join()
  short:join()
  expect(order).to_equal{ "short", "long" }
  expect(raw:join()).to_equal(200)
end)

test("a task may join another task, and wait_until works inside a task", function()
  local outer = cloud.spawn(function()
    local inner = cloud.spawn(function() return describe("inner") end)
    local tries = cloud.wait_until(function(n) return n >= 3 and n end, { interval = 1 })
    return inner:join(), tries
  end)
  local inner, tries = outer:join()
  expect(inner).to_equal("inner")
  expect(tries).to_equal(3)
end)

test("cloud.wait_for inside a task parks its calls: another task's call goes on meanwhile", function()
  emu.seed{ snapshots = { { name = "snap-wait" } } }
  cloud.cluster.restore_cluster_from_snapshot{ SnapshotName = "snap-wait", cluster = { name = "waited" } }
  emu.fault{ operation = "GetCluster", delay = 0.3, times = 1 }  -- the waiter's first try answers late
  local events = {}
  local waiting = cloud.spawn(function()
    events[#events + 1] = "wait started"
    local r = cloud.wait_for("ClusterRunning", { ClusterName = "waited" }, { progress = false })
    events[#events + 1] = "wait ended"
    return r.cluster.status
  end)
  local other = cloud.spawn(function()
    events[#events + 1] = "call started"
    local answered = describe("meanwhile")
    events[#events + 1] = "call ended"
    return answered
  end)
  expect(waiting:join()).to_equal("RUNNING")
  expect(other:join()).to_equal("meanwhile")
  expect(events).to_equal{ "wait started", "call started", "call ended", "wait ended" }
  local failing = cloud.spawn(function() return cloud.wait_for("ClusterRunning", { ClusterName = "nope" }) end)
  expect(failing.join, failing).to_fail{ kind = "api", code = "Client.InvalidParameterNotFound.Cluster", status = 404 }
end)

test("an abandoned task is collected and its transfer released", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 5, times = 1 }
  do
    cloud.spawn(function() describe("abandoned") end)
  end
  expect(cloud._loop.run_once(0)).to_equal(1)  -- its transfer is under way
  collectgarbage()
  collectgarbage()
  expect(cloud._loop.run_once(0)).to_equal(0)
  expect(describe("after")).to_equal("after")  -- the loop carries on
end)

test("1,024 tasks at once: each result delivered once, in list order, nothing left behind", function()
  local items, calls = {}, {}
  for i = 1, 1024 do items[i] = i end
  local results = cloud.map(items, function(i)
    calls[i] = (calls[i] or 0) + 1
    local r = cloud.request{ api = "storage", path = "/" }
    return i .. ":" .. r.status
  end, { concurrency = 1024 })
  expect(#results).to_equal(1024)
  for i = 1, 1024 do
    expect(results[i]).to_equal(i .. ":200")
    expect(calls[i]).to_equal(1)
  end
  do  -- the same many tasks parked on timers at once, joined one by one: each ends once
    local ended, tasks = {}, {}
    for i = 1, 1024 do
      tasks[i] = cloud.spawn(function() cloud.sleep((i % 8) / 1000); ended[#ended + 1] = i; return i end)
    end
    for i = 1, 1024 do expect(tasks[i]:join()).to_equal(i) end
    expect(#ended).to_equal(1024)
  end
  collectgarbage()
  collectgarbage()
  expect(cloud._loop.run_once(0)).to_equal(0)  -- no transfer or timer is left waiting
  expect(next(cloud._loop.tasks)).to_equal(nil)  -- and no task is held
end)

test("two clients share one wait: a call blocking on one drives the other's transfers", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 2, times = 1 }
  local slow_client, quick_client = cloud.client{}, cloud.client{}
  local quick = cloud.spawn(function()
    return quick_client.request{ api = "storage", method = "PUT", path = "/two-clients" }.status
  end)
  -- The slow call, outside any task, turns the loop until it ends: the quick task's
  -- transfer, on the other client, is carried to its end meanwhile.
  slow_client.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "slow" } }
  local made = {}
  for _, b in ipairs(emu.state().buckets) do made[b.name] = true end
  expect(made["two-clients"]).to_equal(true)  -- its request was served meanwhile
  expect(tostring(quick)).to_equal("cloud.task (running)")  -- not resumed: nothing joined it yet
  expect(cloud._loop.run_once(0)).to_equal(0)  -- but its wait has ended already
  expect(quick:join()).to_equal(200)
end)

test("two clients' tasks: the one whose transfers end goes on while the other's is slow", function()
  emu.fault{ operation = "UpdateSnapshot", delay = 2, times = 1 }
  local slow_client, quick_client = cloud.client{}, cloud.client{}
  local events = {}
  local slow = cloud.spawn(function()
    slow_client.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "slow" } }
    events[#events + 1] = "slow ended"
  end)
  local quick = cloud.spawn(function()
    for i = 1, 5 do
      quick_client.request{ api = "storage", method = "PUT", path = "/two-clients-" .. i }
      events[#events + 1] = "quick " .. i
    end
  end)
  quick:join()
  slow:join()
  expect(events).to_equal{ "quick 1", "quick 2", "quick 3", "quick 4", "quick 5", "slow ended" }
end)

-- cloud.event: a task waits until signalled, resumed through the ready list only.
test("event: a task parked on an event is resumed only when signalled, never by a turn", function()
  local changed, resumed = cloud.event(), 0
  local waiter = cloud.spawn(function()
    changed:wait()
    resumed = resumed + 1
    return "woken"
  end)
  -- The scheduler turns many times meanwhile (a joined task's sleep): a polled waiter
  -- would run on each of them.
  cloud.spawn(function() for _ = 1, 10 do cloud.sleep(0.01) end end):join()
  expect(resumed).to_equal(0)
  expect(tostring(waiter)).to_equal("cloud.task (running)")
  expect(tostring(changed)).to_equal("cloud.event (1 waiting)")
  expect(changed:signal()).to_equal(1)  -- from outside any task
  expect(waiter:join()).to_equal("woken")
  expect(resumed).to_equal(1)
  expect(changed:signal()).to_equal(0)  -- nobody waits any more: the signal is lost
end)

test("event: every task waiting is woken by one signal, in the order they began to wait", function()
  local changed, order, tasks = cloud.event(), {}, {}
  for i = 1, 100 do
    tasks[i] = cloud.spawn(function() changed:wait(); order[#order + 1] = i end)
  end
  local signaller = cloud.spawn(function() cloud.sleep(0.01); return changed:signal() end)
  expect(signaller:join()).to_equal(100)  -- signalled from a task
  for i = 1, 100 do tasks[i]:join() end
  expect(#order).to_equal(100)
  for i = 1, 100 do expect(order[i]).to_equal(i) end
end)

test("event: a wait outside any task runs the tasks until one signals", function()
  local changed, state = cloud.event(), "waiting"
  cloud.spawn(function()
    cloud.sleep(0.01)
    state = "ready"
    changed:signal()
  end)
  while state ~= "ready" do changed:wait() end
  expect(state).to_equal("ready")
end)

test("event: a bounded queue of two between a producer and a consumer, nothing polled", function()
  local changed, queue, taken = cloud.event(), {}, {}
  local producer = cloud.spawn(function()
    for i = 1, 20 do
      while #queue >= 2 do changed:wait() end
      queue[#queue + 1] = i
      changed:signal()
    end
    queue.done = true
    changed:signal()
  end)
  local consumer = cloud.spawn(function()
    while true do
      while #queue == 0 and not queue.done do changed:wait() end
      if #queue == 0 then return end
      taken[#taken + 1] = table.remove(queue, 1)
      changed:signal()
      if #taken % 3 == 0 then cloud.sleep(0.001) end  -- a slow consumer now and then
    end
  end)
  producer:join()
  consumer:join()
  expect(#taken).to_equal(20)
  for i = 1, 20 do expect(taken[i]).to_equal(i) end
end)

test("event: a task cancelled while parked on an event is never resumed, and forgotten", function()
  local changed, resumed = cloud.event(), false
  local ok, err = pcall(cloud.map, { "wait", "fail" }, function(what)
    if what == "fail" then cloud.sleep(0.01); error("the other failed") end
    changed:wait()
    resumed = true
  end)
  expect(ok).to_equal(false)
  expect(tostring(err)).to_contain("the other failed")
  expect(changed:signal()).to_equal(0)  -- the cancelled waiter left the list
  cloud.sleep(0.01)
  expect(resumed).to_equal(false)
end)

test("event: bad arguments get lauxlib's wording", function()
  local changed = cloud.event()
  expect_error(function() changed.wait(nil) end, { message = "bad argument #1 to 'wait' (cloud.event expected, got nil)" })
  expect_error(function() changed.signal({}) end, { message = "bad argument #1 to 'signal' (cloud.event expected, got table)" })
end)

-- The library waits on events, never by polling: a bare coroutine.yield() in a task is
-- resumed at every turn of the scheduler, a core kept busy while it waits.
test("no bare coroutine.yield() in the library (lua/*.lua)", function()
  local found = {}
  for e in cloud.fs.walk("lua") do
    if e.type == "file" and e.path:match("%.lua$") then
      local f = assert(io.open("lua/" .. e.path, "rb"))
      local n = 0
      for line in f:lines() do
        n = n + 1
        if line:match("coroutine%.yield%(%s*%)") then found[#found + 1] = ("lua/%s:%d"):format(e.path, n) end
      end
      f:close()
    end
  end
  expect(found).to_equal{}
end)

test("bad arguments get lauxlib's wording", function()
  expect_error(function() cloud.spawn(42) end, { message = "bad argument #1 to 'cloud.spawn' (function expected, got number)" })
  expect_error(function() cloud.map(nil, print) end, { message = "bad argument #1 to 'cloud.map' (table expected, got nil)" })
  expect_error(function() cloud.map({}, print, { concurrency = 0 }) end,
    { message = "bad argument #3 to 'cloud.map' (field 'concurrency' must be an integer >= 1, got 0)" })
  expect_error(function() cloud.map({}, print, { concurency = 2 }) end,
    { message = "bad argument #3 to 'cloud.map' (unknown field 'concurency', did you mean 'concurrency'?)" })
end)
