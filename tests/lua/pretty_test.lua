-- cloud.pretty, the printer behind the REPL: sorting, nesting, compact arrays,
-- cycles, limits, cloud.null, error objects, colour only when asked. Each case
-- compares the exact text a person would read.
-- Run: cloudlua test tests/lua/pretty_test.lua

local pretty = cloud.pretty

---------------------------------------------------------------- scalars: strings quoted and escaped, numbers as Lua writes them, null

test("an integer", function() expect(pretty(42)).to_equal("42") end)
test("a float", function() expect(pretty(1.5)).to_equal("1.5") end)
test("a boolean", function() expect(pretty(true)).to_equal("true") end)
test("nil", function() expect(pretty(nil)).to_equal("nil") end)
test("string escapes", function() expect(pretty("a\"b\n\tc\\")).to_equal([["a\"b\n\tc\\"]]) end)
test("control characters as decimal escapes", function() expect(pretty("\0\1")).to_equal([["\000\001"]]) end)
test("UTF-8 kept", function() expect(pretty("héllo")).to_equal([["héllo"]]) end)
test("cloud.null", function() expect(pretty(cloud.null)).to_equal("null") end)
test("cloud.null inside a table", function() expect(pretty({ a = cloud.null })).to_equal("{ a = null }") end)

---------------------------------------------------------------- keys: the array part in order, then numbers, strings, booleans

test("an array on one line", function() expect(pretty({ 10, 20, 30 })).to_equal("{ 10, 20, 30 }") end)
test("an empty table", function() expect(pretty({})).to_equal("{}") end)

test("the array part, then numbers, strings, booleans", function()
  expect(pretty({ b = 2, a = 1, [3] = "three", [1.5] = "x", [true] = "t", [false] = "f", "one" }))
    .to_equal('{ "one", [1.5] = "x", [3] = "three", a = 1, b = 2, [false] = "f", [true] = "t" }')
end)

test("keys that are not identifiers are quoted", function()
  expect(pretty({ ["not an id"] = 1, ["end"] = 2, _ok = 3 })).to_equal('{ _ok = 3, ["end"] = 2, ["not an id"] = 1 }')
end)

test("a hole ends the array part", function()
  expect(pretty({ [1] = "a", [2] = "b", [4] = "d" })).to_equal('{ "a", "b", [4] = "d" }')
end)

-- The same table twice prints the same every time (sorting is total).
local t = { zeta = 1, alpha = 2, mid = { y = 1, x = 2 }, 5, 6 }
test("stable", function() expect(pretty(t)).to_equal(pretty(t)) end)
test("nested, sorted at every level", function()
  expect(pretty(t)).to_equal("{ 5, 6, alpha = 2, mid = { x = 2, y = 1 }, zeta = 1 }")
end)

---------------------------------------------------------------- nesting: lines split at the width, indented two spaces a level

local result = {
  snapshot = { name = "snap-1", status = "AVAILABLE", tags = { { key = "env", value = "qa" } },
               description = "a description long enough to need its own line" },
}

test("a nested result", function()
  expect(pretty(result)).to_equal([[
{
  snapshot = {
    description = "a description long enough to need its own line",
    name = "snap-1",
    status = "AVAILABLE",
    tags = { { key = "env", value = "qa" } },
  },
}]])
end)

test("the width option", function()
  expect(pretty(result, { width = 200 })).to_equal(
    '{ snapshot = { description = "a description long enough to need its own line", name = "snap-1", '
    .. 'status = "AVAILABLE", tags = { { key = "env", value = "qa" } } } }')
end)

test("no line passes the width, the comma after a nested table included", function()
  local wide = { list = { ("x"):rep(30), ("y"):rep(31) }, other = 1 }
  for width = 40, 100 do
    for line in pretty(wide, { width = width }):gmatch("[^\n]+") do
      assert(#line <= width, ("width %d: %q"):format(width, line))
    end
  end
end)

-- A long list of short values is packed into lines rather than one per line.
local numbers = {}
for i = 1, 30 do numbers[i] = i * 100 end

test("a packed list", function()
  expect(pretty(numbers)).to_equal([[
{
  100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400,
  1500, 1600, 1700, 1800, 1900, 2000, 2100, 2200, 2300, 2400, 2500, 2600, 2700,
  2800, 2900, 3000,
}]])
end)

test("packed lines stay within 80 columns", function()
  for line in pretty(numbers):gmatch("[^\n]+") do
    assert(#line <= 80, "a packed line longer than 80 columns: " .. line)
  end
end)

---------------------------------------------------------------- cycles: marked with the table's address

test("a cycle", function()
  local loop = { name = "loop" }
  loop.self = loop
  expect(pretty(loop)).to_equal(('{ name = "loop", self = <cycle: table: %p> }'):format(loop))
end)

test("an indirect cycle", function()
  local a, b = { name = "a" }, { name = "b" }
  a.child, b.parent = b, a
  expect(pretty(a)).to_equal(('{ child = { name = "b", parent = <cycle: table: %p> }, name = "a" }'):format(a))
end)

test("a table seen twice but not inside itself is printed twice", function()
  local shared = { 1 }
  expect(pretty({ x = shared, y = shared })).to_equal("{ x = { 1 }, y = { 1 } }")
end)

---------------------------------------------------------------- limits: depth, items, string length, each ending in an ellipsis

test("the depth limit", function()
  local deep = { level = 1, next = { level = 2, next = { level = 3, next = { level = 4 } } } }
  expect(pretty(deep, { max_depth = 2 })).to_equal("{ level = 1, next = { level = 2, next = {...} } }")
end)

test("the item limit", function()
  local many = {}
  for i = 1, 8 do many[i] = i end
  expect(pretty(many, { max_items = 5 })).to_equal("{ 1, 2, 3, 4, 5, ... (3 more) }")
end)

test("the string limit", function()
  expect(pretty(("x"):rep(10), { max_string = 4 })).to_equal('"xxxx"... (10 bytes)')
end)

test("a cut never splits a UTF-8 character", function()
  expect(pretty("ééé", { max_string = 3 })).to_equal('"é"... (6 bytes)')
end)

---------------------------------------------------------------- values with __tostring print as their string

local function an_error_object()
  return expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", snapshot = { name = "-bad-" } }).to_fail()
end

test("an error object shown through __tostring", function()
  local err = an_error_object()
  expect(pretty(err)).to_equal(tostring(err))
end)

test("a multi-line error object inside a table", function()
  local err = an_error_object()
  expect(pretty({ err = err })).to_equal("{\n  err = " .. tostring(err) .. ",\n}")
end)

test("a client through __tostring", function()
  expect(pretty(cloud.client{})).to_match("^cloud%.client %(profile")
end)

test("a failing __tostring is shown, not raised", function()
  local broken = setmetatable({}, { __tostring = function() error("no words") end })
  expect(pretty(broken)).to_match("^<__tostring failed: .*no words>$")
end)

---------------------------------------------------------------- functions and other values by type and address

test("a function", function() expect(pretty(print)).to_match("^function: ") end)
test("a thread", function() expect(pretty(coroutine.create(print))).to_match("^thread: ") end)

---------------------------------------------------------------- colour only when asked, as ANSI sequences around the value

test("colour", function()
  expect(pretty({ "s", 1 }, { color = true })).to_equal('{ \27[32m"s"\27[0m, \27[33m1\27[0m }')
end)
test("no colour by default", function() expect(pretty({ "s", 1 })).to_equal('{ "s", 1 }') end)
test("null in colour", function()
  expect(pretty({ a = cloud.null }, { color = true })).to_equal("{ a = \27[35mnull\27[0m }")
end)
test("escape sequences take no columns", function()
  expect(pretty({ 1, 2, 3 }, { color = true, width = 15 }):find("\n")).to_be_nil()
end)

test("an unknown option is refused", function()
  expect(pretty, {}, { colour = true }).to_fail("bad argument #2 to 'cloud.pretty' (unknown field 'colour', did you mean 'color'?)")
end)

---------------------------------------------------------------- the REPL's form of results

-- Strings as they are, several values tab-separated, a multi-line value puts each
-- on its own line.
test("results on one line", function() expect(pretty.results(nil, "text", 1, { 2 })).to_equal("text\t1\t{ 2 }") end)
test("no results", function() expect(pretty.results(nil)).to_equal("") end)
test("nil among results", function() expect(pretty.results(nil, nil, 2)).to_equal("nil\t2") end)
test("multi-line results", function()
  expect(pretty.results({ width = 10 }, { 1, 2, 3, 4 }, "x")).to_equal("{\n  1,\n  2,\n  3,\n  4,\n}\nx")
end)

test("the module is also require-able", function() expect(require("cloud.pretty")).to_be(pretty) end)
