-- storage.sync's memory does not grow with the number of paths: a tree of ENTRIES tiny
-- files (SYNC_MEMORY_ENTRIES, 20,000 by default; ctest's long entry sync_memory_100k
-- gives 100,000) in folders of 100, synced up, again with nothing changed, down as a dry
-- run and down for real, while the Lua heap that is live (counted after a full
-- collection, every SAMPLE actions) stays under a bound. The bound, 4 MiB above the heap
-- before the sync, is what a bounded window needs (the queue of planned actions, the
-- jobs in hand, a listing page, a folder's entries); the whole tables this replaced (the
-- local listing and the plan, about 0.5 KiB an entry) passed it at 20,000 entries.
-- Run: cloudlua test tests/lua/sync_memory_test.lua

local s3 = cloud.storage
local fs = cloud.fs
local files = dofile("tests/lua/support/files.lua")
local ENTRIES = tonumber(os.getenv("SYNC_MEMORY_ENTRIES") or "") or 20000
local SAMPLE = 500
local BOUND_KIB = 4 * 1024
local dir

-- Makes ENTRIES files of a few bytes under root, 100 a folder.
local function make_files(root)
  for n = 0, ENTRIES - 1 do
    if n % 100 == 0 then fs.mkdir(("%s/d%04d"):format(root, n // 100)) end
    local f = assert(io.open(("%s/d%04d/f%03d.txt"):format(root, n // 100, n % 100), "wb"))
    f:write(n)
    f:close()
  end
end

-- The live Lua heap in KiB, after a full collection.
local function live_kib()
  collectgarbage("collect")
  return collectgarbage("count")
end

-- Runs sync{...} with an on_action that samples the live heap every SAMPLE actions;
-- returns the summary and the peak growth over the heap before it, in KiB.
local function measured(args)
  local base, peak, actions = live_kib(), 0, 0
  args.progress = false
  args.on_action = function()
    actions = actions + 1
    if actions % SAMPLE == 0 then peak = math.max(peak, live_kib() - base) end
  end
  local summary = s3.sync(args)
  return summary, peak
end

before_each(function()
  if not cloud.emulator then skip("needs the embedded emulator") end
  cloud.emulator.reset()
  cloud.emulator.seed{ buckets = { "tree" } }
  -- In memory where the system has it: 4 x ENTRIES files made and removed on a loaded
  -- disk would take minutes, and the test is about the heap, not the disk.
  dir = io.popen("mktemp -d -p /dev/shm 2>/dev/null || mktemp -d"):read("l")
  make_files(dir .. "/src")
end)

after_each(function() if dir then files.remove_dir(dir) end end)

test(("a tree of %d files goes up, again, and down (dry run and real) in a bounded heap"):format(ENTRIES), function()
  local up, up_peak = measured{ from = dir .. "/src", to = { Bucket = "tree" } }
  expect(up.copied).to_equal(ENTRIES)
  local again, again_peak = measured{ from = dir .. "/src", to = { Bucket = "tree" } }
  expect(again.skipped).to_equal(ENTRIES)
  expect(again.copied).to_equal(0)
  local plan, plan_peak = measured{ from = { Bucket = "tree" }, to = dir .. "/down", dry_run = true }
  expect(plan.copied).to_equal(ENTRIES)
  local down, down_peak = measured{ from = { Bucket = "tree" }, to = dir .. "/down" }
  expect(down.copied).to_equal(ENTRIES)
  expect(files.read(dir .. "/down/d0000/f042.txt")).to_equal("42")
  print(("# live heap growth, KiB: up %.0f, again %.0f, dry run down %.0f, down %.0f"):format(
    up_peak, again_peak, plan_peak, down_peak))
  for _, peak in ipairs{ up_peak, again_peak, plan_peak, down_peak } do
    expect(peak < BOUND_KIB).to_be(true)
  end
end)
