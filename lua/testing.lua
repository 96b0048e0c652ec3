-- cloud.testing: the harness behind `cloudlua test`. The C++ runner gives every test
-- file a fresh state (and a fresh embedded emulator) and calls run_file, which loads
-- the file with the harness's globals installed, runs its cases in order and emits
-- their events (repl/test_events.h): the file, a case's start, what it printed, the
-- case's end with its outcome. The runner's consumers of those events write the TAP
-- ("ok N - name", or "not ok N - name" followed by the reason as "# " lines) and the
-- JUnit report.
--
-- In a test file:
--   test(name, fn)            a case; a raised error (plain assert and error too) fails it
--   test.skip(name, fn)       a case reported as skipped, not run
--   skip(reason)              inside a case: stop here and report it skipped
--   expect(v).to_equal(w)     deep comparison; a failure lists each differing path
--   expect(fn, ...).to_fail{kind=, code=, status=, message=, field=}   fn(...) must raise
--   expect_error(fn, match)   the same for a closure; returns the error
--   expect(v).to_match_snapshot(name)   v as stored beside the file (__snapshots__/)
--   setup(fn), teardown(fn)   once before the file's first case and after its last
--   before_each(fn), after_each(fn)   around every case (after_each runs even on failure)
-- and busted's spec language beside it (a file may mix both): describe (context),
-- it (spec), pending, finally, insulate, expose, lazy_ and strict_ setup and teardown,
-- tags in names (#slow), and luassert's assert, spy, stub, mock and match
-- (lua/assertions.lua). `test` is busted's alias of `it`, so a file's cases and hooks
-- sit in one tree of blocks: the file, then its describes. A case's name is its
-- describes' names and its own, joined by spaces ("outer inner it"), as busted's.
--
-- Decisions: files are the unit of isolation (each has its own state and emulator);
-- a describe's body runs when its block runs, as busted runs it; globals are the
-- file's (busted scopes a global set in a block to that block: use locals); a file
-- that declares no case but runs without error counts as one passing case, so plain
-- scripts can be run by the same command; print() inside a test file
-- writes "# " lines so that nothing it prints can pass for a TAP line (what it writes
-- to its standard output otherwise the runner makes "# " lines: repl/test_runner.cpp).

local M = {}
local arg_error = require("cloud.check").arg_error  -- lauxlib's wording

-- Where the events of the file being run go (run_file's opts.emit), and where a line
-- of --list goes (opts.write_line: the run's standard output, redacted and printable;
-- the file's own io.stdout is not it).
local emit, write

-- The values and checks of a test file: expect, expect_error, render, differences
-- (lua/expect.lua).
local expect = require("cloud.expect")
M.render, M.equal, M.differences = expect.render, expect.equal, expect.differences
M.expect, M.expect_error = expect.expect, expect.expect_error

---------------------------------------------------------------- declaring cases

local SKIP = {}  -- the marker skip() (and pending() inside a case) raises
local EXIT = {}  -- the marker the harness's os.exit raises

-- What os.exit is inside a test file: it ends nothing, it raises an error that fails
-- the case (or the hook, or the file's loading) that called it, and it is noted, so
-- that a case which catches that error fails all the same. A test run is judged by its
-- cases, and a case may not end it with a status of its own choosing.
local exit_called

local function test_exit(...)
  local args = table.pack(...)
  for i = 1, args.n do args[i] = tostring(args[i]) end
  local where = ""
  for level = 2, 60 do  -- the innermost Lua caller (pcall(os.exit) has a C one first)
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.currentline > 0 then where = info.short_src .. ":" .. info.currentline .. ": " break end
  end
  exit_called = ("%sos.exit(%s) called inside a test: a test cannot end the run; use expect, error or skip")
                :format(where, table.concat(args, ", ", 1, args.n))
  error(setmetatable({ message = exit_called }, EXIT), 2)
end

-- The hooks a block keeps, by kind (setup and teardown are busted's strict ones).
local HOOKS = { "setup", "teardown", "lazy_setup", "lazy_teardown", "before_each", "after_each" }

-- A block: the file itself, or a describe (insulate and expose are describes that
-- save or pass on the globals). Its children, cases ({ kind = "case" }) and blocks,
-- in the order declared, and its hooks by kind. A describe's body runs when the block
-- runs, as busted runs it, and declares its children then.
local function new_block(kind, name, fn, parent)
  local block = { kind = kind, name = name, fn = fn, parent = parent, children = {}, hooks = {} }
  for _, h in ipairs(HOOKS) do block.hooks[h] = {} end
  return block
end

-- The block whose body is running (it takes what is declared; nil while a case or a
-- hook runs, where busted refuses declarations), and the case running ({ finally = }).
local declaring, running

local function refuse(what)
  error(("'%s' not supported inside current context block"):format(what), 3)
end

-- The function that declares a child of kind `kind` as `what` (its name in errors),
-- in busted's forms: what(name, fn), what(fn) (named `what`), what "name" (fn).
local function declarer(what, kind, skipped)
  local function declare(name, fn)
    if type(name) == "function" and fn == nil then name, fn = what, name end
    if type(name) ~= "string" then arg_error(1, what, "a name expected") end
    if fn == nil and not skipped then return function(f) return declare(name, f) end end
    if not declaring then refuse(what) end
    if type(fn) ~= "function" and not skipped then arg_error(2, what, "function expected") end
    local child = kind == "case" and { kind = "case", name = name, fn = fn, skipped = skipped, parent = declaring }
                  or new_block(kind, name, fn, declaring)
    table.insert(declaring.children, child)
  end
  return declare
end

-- The function that adds a hook of kind `kind` to the declaring block: what(fn) or
-- what(name, fn), as busted takes it.
local function hook_adder(what, kind)
  return function(name, fn)
    fn = fn or name
    if not declaring then refuse(what) end
    if type(fn) ~= "function" then arg_error(1, what, "function expected") end
    table.insert(declaring.hooks[kind], fn)
  end
end

-- pending(name [, fn]): a case reported skipped ("pending"), never run; inside a case
-- or a hook, pending(reason) stops it there, reported skipped, as skip does.
local function pending(name, fn)
  if not declaring then error(setmetatable({ reason = name or "pending" }, SKIP), 2) end
  declarer("pending", "case", "pending")(name, fn)
end

-- finally(fn) inside a case: fn runs after the case, whether it passed or failed.
local function finally(fn)
  if not running then refuse("finally") end
  if type(fn) ~= "function" then arg_error(1, "finally", "function expected") end
  table.insert(running.finally, fn)
end

local function install_globals()
  local case = declarer("test", "case", false)
  _G.test = setmetatable({ skip = declarer("test", "case", "test.skip") }, { __call = function(_, ...) return case(...) end })
  _G.it, _G.spec = declarer("it", "case", false), declarer("spec", "case", false)
  _G.describe, _G.context = declarer("describe", "describe"), declarer("context", "describe")
  _G.insulate, _G.expose = declarer("insulate", "insulate"), declarer("expose", "expose")
  _G.pending, _G.finally = pending, finally
  _G.skip = function(reason) error(setmetatable({ reason = reason }, SKIP), 2) end
  _G.expect, _G.expect_error = M.expect, M.expect_error
  os.exit = test_exit  -- luacheck: ignore 122 (replaced on purpose: see test_exit)
  for _, kind in ipairs(HOOKS) do _G[kind] = hook_adder(kind, kind) end
  _G.strict_setup, _G.strict_teardown = hook_adder("strict_setup", "setup"), hook_adder("strict_teardown", "teardown")
  require("cloud.assertions").install(_G, {
    failed = expect.note_failure,
    differences = function(actual, expected)
      return expect.difference_message(expect.differences(actual, expected))
    end,
  })
  _G.print = function(...)  -- an output event: "# " lines in TAP, never a TAP line
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    emit{ event = "output", text = table.concat(parts, "\t") }
  end
end

---------------------------------------------------------------- insulate and expose

-- busted's insulation: the globals and package.loaded saved as a block starts and
-- set back as it ends (insulate); expose passes what its block set on to the blocks
-- after it, through the enclosing insulate. Files never share globals: each runs in a
-- state of its own.
local function save_globals()
  local g, loaded = {}, {}
  for k in next, _G do g[k] = rawget(_G, k) end
  for k, v in pairs(package.loaded) do loaded[k] = v end
  return { meta = debug.getmetatable(_G), g = g, loaded = loaded }
end

local function restore_globals(saved)
  debug.setmetatable(_G, saved.meta)
  for k in next, _G do rawset(_G, k, saved.g[k]) end
  for k, v in next, saved.g do if rawget(_G, k) == nil then rawset(_G, k, v) end end
  for k in pairs(package.loaded) do package.loaded[k] = saved.loaded[k] end
  for k, v in pairs(saved.loaded) do package.loaded[k] = v end
end

local saved_states = {}  -- per running block: its saved globals, or false

local function enter(block)
  saved_states[#saved_states + 1] = block.kind == "insulate" and save_globals()
end

local function leave(block)
  local saved = table.remove(saved_states)
  if block.kind == "expose" and saved_states[#saved_states] then saved_states[#saved_states] = save_globals() end
  if saved then restore_globals(saved) end
end

---------------------------------------------------------------- running cases

-- The file being run and run_file's options.
local file_path, options

-- The innermost place in the test file on the stack, "file:line", or nil.
local function location_in(path)
  for level = 3, 60 do
    local info = debug.getinfo(level, "Sl")
    if not info then return nil end
    if info.source == "@" .. path and info.currentline > 0 then return info.short_src .. ":" .. info.currentline end
  end
end

-- Whether a traceback's line is the harness's own (the error's raising, the
-- matchers, luassert's frames), left out of what a person reads.
local function harness_frame(line)
  for _, own in ipairs({ "[cloudlua] testing.lua", "[cloudlua] expect.lua", "[cloudlua] assertions.lua",
                         "[C]: in function 'error'", "/luassert/" }) do
    if line:find(own, 1, true) then return true end
  end
  return false
end

-- The stack where an error was raised ("stack traceback:" and a line per frame), the
-- harness's own frames left out.
local function traceback_of()
  local text = debug.traceback("", 3):gsub("^\n", ""):gsub("\n%s*%[C%]: in function 'xpcall'.*$", "")
  local lines = {}
  for line in text:gmatch("[^\n]+") do
    if not harness_frame(line) then lines[#lines + 1] = line end
  end
  return table.concat(lines, "\n")
end

-- Runs fn under xpcall; on failure returns a record { message=, where=, skipped=,
-- expectation= (a failed check, not another error), traceback= }.
local function protected(path, fn, ...)
  local failure
  expect.reset_failure()
  exit_called = nil
  local ok = xpcall(fn, function(e)
    if getmetatable(e) == SKIP then failure = { skipped = true, message = e.reason } return end
    if getmetatable(e) == EXIT then e = e.message end
    local expectation = type(e) == "string" and expect.failed_expectation() ~= nil
                        and e:sub(-#expect.failed_expectation()) == expect.failed_expectation()
    failure = { message = expect.error_text(e), where = location_in(path), expectation = expectation,
                traceback = traceback_of() }
  end, ...)
  if ok and exit_called then failure = { message = exit_called, where = location_in(path) } end
  return ok and nil or failure
end

local function run_hooks(hooks)
  for _, h in ipairs(hooks) do
    local failure = protected(file_path, h)
    if failure then return failure end
  end
end

-- The reason of a failure as a person reads it: the context, where, the message.
local function reason(failure, context)
  local message = failure.message or "(no message)"
  local lines = {}
  if context then lines[#lines + 1] = context end
  if failure.where and not message:find(failure.where, 1, true) then lines[#lines + 1] = "at " .. failure.where end
  lines[#lines + 1] = message
  return table.concat(lines, "\n")
end

-- The names of a node's describes, outer first, then its own, joined by spaces as
-- busted names a case ("outer inner it"); the file's name is not among them.
local function full_name(node)
  local names, block = { node.name }, node.parent
  while block and block.kind ~= "file" do
    table.insert(names, 1, block.name)
    block = block.parent
  end
  return table.concat(names, " ")
end

-- A case's or a block's end: its outcome ("passed", "skipped", "failure" (a check
-- failed) or "error" (anything else raised)), why, where the error was raised, its
-- time, and the names of the describes it is in (JUnit's classname adds them).
local function report(node, failure, context, time)
  local outcome = not failure and "passed" or failure.skipped and "skipped"
                  or failure.expectation and "failure" or "error"
  local message = failure and (failure.skipped and tostring(failure.message or "") or reason(failure, context))
  local parent = node.parent
  emit{ event = "case", name = node.label or full_name(node), outcome = outcome, message = message,
        traceback = failure and failure.traceback, time = time or 0,
        describe = parent and parent.kind ~= "file" and full_name(parent) or nil }
end

-- The tags in a name: each word after a '#' ("#slow").
local function tags_of(name)
  local tags = {}
  for tag in name:gmatch("#([%w_%-]+)") do tags[tag] = true end
  return tags
end

local function has_any(tags, list)
  for _, tag in ipairs(list or {}) do if tags[tag] then return true end end
  return false
end

-- Whether a case runs: its "file: name" contains --filter as plain text (or, failing
-- that, matches it as a Lua pattern), it has one of --tags (when given) and none of
-- --exclude-tags.
local function selected(case)
  local name = full_name(case)
  local full, filter = file_path .. ": " .. name, options.filter
  local ok_pattern, found = pcall(string.find, full, filter or "")
  if filter and not (full:find(filter, 1, true) or (ok_pattern and found)) then return false end
  local tags = tags_of(name)
  if options.tags and #options.tags > 0 and not has_any(tags, options.tags) then return false end
  return not has_any(tags, options.exclude_tags)
end

-- The blocks from the file down to `block`.
local function chain_of(block)
  local chain = {}
  while block do table.insert(chain, 1, block) block = block.parent end
  return chain
end

-- The lazy_setup hooks of every block above a case that have not run yet, outer
-- first, each block's once; the first failure (kept: the block's later cases fail too).
local function lazy_setups(block)
  for _, b in ipairs(chain_of(block)) do
    if b.lazy == nil then b.lazy = run_hooks(b.hooks.lazy_setup) or true end
    if b.lazy ~= true then return b.lazy end
  end
end

-- One case: the before_each hooks from the file's down to its block's (stopping at a
-- failure), the case, its finally functions, then the after_each hooks of the blocks
-- whose before_each ran, inner first. The first failure counts.
local case_active = false  -- from a case's first before_each to its end

local function run_case(case)
  local chain, failure, reached = chain_of(case.parent), nil, 0
  case_active = true
  for i, block in ipairs(chain) do
    reached, failure = i, run_hooks(block.hooks.before_each)
    if failure then break end
  end
  running = { finally = {} }
  if not failure then failure = protected(file_path, case.fn) end
  for _, fn in ipairs(running.finally) do
    local after = protected(file_path, fn)
    if after and (not failure or failure.skipped) then failure = after end
  end
  running = nil
  for i = reached, 1, -1 do
    local after = run_hooks(chain[i].hooks.after_each)
    if after and (not failure or failure.skipped) then failure = after end
  end
  local stubbed = package.loaded["cloud.stubber"]  -- cloud.stub's answers, checked case by case
  local unmet = stubbed and protected(file_path, stubbed.end_case)
  if unmet and (not failure or failure.skipped) then failure = unmet end
  case_active = false
  return failure
end

-- Whether a case (its hooks included) is running: cloud.stub puts away at its end a
-- stubber made in it.
function M.in_case() return case_active end

-- A selected case: listed (--list), reported skipped, failed with a setup's failure
-- (`failed`), or run.
local function run_selected(case, failed)
  if options.list then return write(file_path .. ": " .. full_name(case)) end
  if case.skipped then return report(case, { skipped = true, message = case.skipped }) end
  local setup_failure = failed or lazy_setups(case.parent)
  if setup_failure then return report(case, setup_failure, "setup failed") end
  emit{ event = "start", name = full_name(case) }
  local start = options.clock()
  local failure = run_case(case)
  report(case, failure, nil, options.clock() - start)
end

-- Whether a block has anything to run: a selected case or a block of its own. A
-- block with nothing runs no hook (a file whose cases --filter left out sets up nothing).
local function has_work(block)
  for _, child in ipairs(block.children) do
    if child.kind ~= "case" or selected(child) then return true end
  end
  return false
end

-- The block's teardowns: lazy_teardown when a case of it ran, then teardown; a
-- failure is one more failed case, "<block>: teardown".
local function tear_down(block)
  local failure = block.lazy ~= nil and run_hooks(block.hooks.lazy_teardown) or nil
  failure = run_hooks(block.hooks.teardown) or failure
  local label = (block.kind == "file" and block.name or full_name(block)) .. ": teardown"
  if failure then report({ label = label }, failure, "teardown failed") end
end

-- Runs a block: a describe's body (declaring its children), then its setup, each
-- child in order, its teardowns. `failed`: a setup above failed, and each case below
-- is reported with that failure (bodies still run, to find the cases; no hook does).
-- Under --list, bodies run and cases are listed; no hook or case runs.
local run_block

local function run_child(child, failed)
  if child.kind == "case" then
    if selected(child) then run_selected(child, failed) end
    return
  end
  enter(child)
  run_block(child, failed)
  leave(child)
end

function run_block(block, failed)
  if block.fn then
    declaring = block
    local failure = protected(file_path, block.fn)
    declaring = nil
    if failure then
      return options.list or report({ label = full_name(block), parent = block.parent }, failure, block.kind .. " failed")
    end
  end
  local active = not options.list and not failed and has_work(block)
  if active then failed = run_hooks(block.hooks.setup) end
  for _, child in ipairs(block.children) do run_child(child, failed) end
  if active then tear_down(block) end
end

-- Loads the file, declaring its top-level cases and blocks; a failure to load is
-- reported as one case. Returns the file's block, or nil.
local function load_file(path)
  local root = new_block("file", path)
  install_globals()
  local chunk, message = loadfile(path)
  local failure = { message = message }
  declaring = root
  if chunk then failure = protected(path, chunk) end
  declaring = nil
  if failure then
    report({ label = path }, failure, "the file failed to load")
    return nil
  end
  if #root.children == 0 then
    table.insert(root.children, { kind = "case", name = path .. " (no test declared; the file ran)", fn = function() end,
                                  parent = root })
  end
  return root
end

-- run_file(path, { filter=, tags=, exclude_tags=, list=, update_snapshots=, make_directory=, emit=,
-- write_line=, clock= }): runs the file's cases, each event passed to emit(event) (a
-- table: event=, and file=, name=, describe=, outcome=, message=, traceback=, text=,
-- time= as repl/test_events.h has them); with `list`, writes the selected cases'
-- names instead. A case's time is on opts.clock, real time (cloud.clock counts the
-- virtual time a test skips).
function M.run_file(path, opts)
  emit, write = opts.emit, opts.write_line
  file_path, options = path, opts
  local folder = path:match("^(.*)/[^/]*$")
  expect.snapshots.dir = (folder and folder .. "/" or "") .. "__snapshots__/" .. path:match("([^/]*)$"):gsub("%.lua$", "")
  expect.snapshots.update, expect.snapshots.make_directory = opts.update_snapshots, opts.make_directory
  emit{ event = "file", file = path }
  local root = load_file(path)
  if root then run_block(root, nil) end
end

return M
