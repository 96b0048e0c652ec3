-- cloud.pretty, the printer behind the REPL: sorting, nesting, compact arrays,
-- cycles, limits, cloud.null, error objects, colour only when asked. Each check
-- compares the exact text a person would read. Fails by raising an error.

local pretty = cloud.pretty

local function eq(actual, expected, what)
  if actual ~= expected then
    error(("%s:\nexpected:\n%s\ngot:\n%s"):format(what, tostring(expected), tostring(actual)), 2)
  end
end

-- scalars: strings quoted and escaped, numbers as Lua writes them, null
eq(pretty(42), "42", "integer")
eq(pretty(1.5), "1.5", "float")
eq(pretty(true), "true", "boolean")
eq(pretty(nil), "nil", "nil")
eq(pretty("a\"b\n\tc\\"), [["a\"b\n\tc\\"]], "string escapes")
eq(pretty("\0\1"), [["\000\001"]], "control characters as decimal escapes")
eq(pretty("héllo"), [["héllo"]], "UTF-8 kept")
eq(pretty(cloud.null), "null", "cloud.null")
eq(pretty({ a = cloud.null }), "{ a = null }", "cloud.null inside a table")

-- keys: the array part in order, then numbers, strings, booleans; odd keys bracketed
eq(pretty({ 10, 20, 30 }), "{ 10, 20, 30 }", "array on one line")
eq(pretty({}), "{}", "empty table")
eq(pretty({ b = 2, a = 1, [3] = "three", [1.5] = "x", [true] = "t", [false] = "f", "one" }),
  '{ "one", [1.5] = "x", [3] = "three", a = 1, b = 2, [false] = "f", [true] = "t" }',
  "array part, numbers, strings, booleans")
eq(pretty({ ["not an id"] = 1, ["end"] = 2, _ok = 3 }), '{ _ok = 3, ["end"] = 2, ["not an id"] = 1 }',
  "keys that are not identifiers are quoted")
eq(pretty({ [1] = "a", [2] = "b", [4] = "d" }), '{ "a", "b", [4] = "d" }', "a hole ends the array part")

-- the same table twice prints the same every time (sorting is total)
local t = { zeta = 1, alpha = 2, mid = { y = 1, x = 2 }, 5, 6 }
eq(pretty(t), pretty(t), "stable")
eq(pretty(t), "{ 5, 6, alpha = 2, mid = { x = 2, y = 1 }, zeta = 1 }", "nested, sorted at every level")

-- nesting: split into lines when the width is exceeded, indented two spaces a level
local result = {
  snapshot = { name = "snap-1", status = "AVAILABLE", tags = { { key = "env", value = "qa" } },
               description = "a description long enough to need its own line" },
}
eq(pretty(result), [[
{
  snapshot = {
    description = "a description long enough to need its own line",
    name = "snap-1",
    status = "AVAILABLE",
    tags = { { key = "env", value = "qa" } },
  },
}]], "nested result")
eq(pretty(result, { width = 200 }),
  '{ snapshot = { description = "a description long enough to need its own line", name = "snap-1", '
  .. 'status = "AVAILABLE", tags = { { key = "env", value = "qa" } } } }', "width option")

-- no line passes the width, the comma after a nested table included
local wide = { list = { ("x"):rep(30), ("y"):rep(31) }, other = 1 }
for width = 40, 100 do
  for line in pretty(wide, { width = width }):gmatch("[^\n]+") do
    assert(#line <= width, ("width %d: %q"):format(width, line))
  end
end

-- a long list of short values is packed into lines rather than one per line
local numbers = {}
for i = 1, 30 do numbers[i] = i * 100 end
eq(pretty(numbers), [[
{
  100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400,
  1500, 1600, 1700, 1800, 1900, 2000, 2100, 2200, 2300, 2400, 2500, 2600, 2700,
  2800, 2900, 3000,
}]], "packed list")
for line in pretty(numbers):gmatch("[^\n]+") do
  assert(#line <= 80, "packed lines stay within 80 columns: " .. line)
end

-- cycles are marked with the table's address; a table seen twice but not inside
-- itself is printed twice
local loop = { name = "loop" }
loop.self = loop
eq(pretty(loop), ('{ name = "loop", self = <cycle: table: %p> }'):format(loop), "cycle")
local a, b = { name = "a" }, { name = "b" }
a.child, b.parent = b, a
eq(pretty(a), ('{ child = { name = "b", parent = <cycle: table: %p> }, name = "a" }'):format(a), "indirect cycle")
local shared = { 1 }
eq(pretty({ x = shared, y = shared }), "{ x = { 1 }, y = { 1 } }", "shared, not a cycle")

-- limits: depth, items, string length, each ending in an ellipsis
local deep = { level = 1, next = { level = 2, next = { level = 3, next = { level = 4 } } } }
eq(pretty(deep, { max_depth = 2 }), "{ level = 1, next = { level = 2, next = {...} } }", "depth limit")
local many = {}
for i = 1, 8 do many[i] = i end
eq(pretty(many, { max_items = 5 }), "{ 1, 2, 3, 4, 5, ... (3 more) }", "item limit")
eq(pretty(("x"):rep(10), { max_string = 4 }), '"xxxx"... (10 bytes)', "string limit")
eq(pretty("ééé", { max_string = 3 }), '"é"... (6 bytes)', "a cut never splits a UTF-8 character")

-- values with __tostring print as their string: error objects and clients
local ok, err = pcall(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = { name = "-bad-" } })
assert(not ok)
eq(pretty(err), tostring(err), "error object shown through __tostring")
eq(pretty({ err = err }), "{\n  err = " .. tostring(err) .. ",\n}", "a multi-line error object inside a table")
assert(pretty(cloud.client{}):find("^cloud%.client %(profile"), "client through __tostring")
local broken = setmetatable({}, { __tostring = function() error("no words") end })
assert(pretty(broken):find("^<__tostring failed: .*no words>$"), "a failing __tostring is shown, not raised")

-- functions and other values by type and address
assert(pretty(print):find("^function: "), "function")
assert(pretty(coroutine.create(print)):find("^thread: "), "thread")

-- colour only when asked, as ANSI sequences around the value
eq(pretty({ "s", 1 }, { color = true }), '{ \27[32m"s"\27[0m, \27[33m1\27[0m }', "colour")
eq(pretty({ "s", 1 }), '{ "s", 1 }', "no colour by default")
eq(pretty({ a = cloud.null }, { color = true }), "{ a = \27[35mnull\27[0m }", "null in colour")
-- colour codes do not count towards the width
local coloured = pretty({ 1, 2, 3 }, { color = true, width = 15 })
assert(not coloured:find("\n"), "escape sequences take no columns")

-- options are checked
local bad_ok, bad_err = pcall(pretty, {}, { colour = true })
assert(not bad_ok and bad_err:find("unknown option 'colour'"), "unknown option: " .. tostring(bad_err))

-- the REPL's form of results: strings as they are, several values tab-separated, a
-- multi-line value puts each on its own line
eq(pretty.results(nil, "text", 1, { 2 }), "text\t1\t{ 2 }", "results on one line")
eq(pretty.results(nil), "", "no results")
eq(pretty.results(nil, nil, 2), "nil\t2", "nil among results")
eq(pretty.results({ width = 10 }, { 1, 2, 3, 4 }, "x"), "{\n  1,\n  2,\n  3,\n  4,\n}\nx", "multi-line results")

-- the module is also require-able
eq(require("cloud.pretty"), pretty, "require 'cloud.pretty'")
print("pretty_test: ok")
