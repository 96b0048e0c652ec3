-- The harness's matchers, each checked through the message a failure shows (the
-- outside view of the runner is tests/lua/test_runner_test.lua).

-- The message `fn` fails with, without the "file:line: " position.
local function failure_of(fn)
  local ok, err = pcall(fn)
  if ok then error("the matcher should have failed", 2) end
  return (tostring(err):gsub("^[^:\n]+:%d+: ", ""))
end

test("to_equal: equal tables pass, whatever the key order or integer/float form", function()
  expect({ a = 1, b = { 1, 2, { c = "x" } } }).to_equal{ b = { 1, 2, { c = "x" } }, a = 1.0 }
  expect(cloud.null).to_equal(cloud.null)
  expect(0 / 0).to_equal(0 / 0)
end)

test("to_equal: a diff of every differing path, sorted", function()
  local message = failure_of(function()
    expect({ name = "a", list = { 1, 2 }, deep = { x = { y = true } }, extra = 1 })
      .to_equal{ name = "b", list = { 1, 2, 3 }, deep = { x = { y = false } }, missing = cloud.null }
  end)
  expect(message).to_equal(table.concat({
    "values differ (5 differences):",
    "  deep.x.y: expected false, got true",
    "  extra: unexpected 1",
    "  list[3]: missing (expected 3)",
    "  missing: missing (expected cloud.null)",
    '  name: expected "b", got "a"' }, "\n"))
end)

test("to_equal: scalars, types and odd keys are named plainly", function()
  expect(failure_of(function() expect(1).to_equal("1") end)).to_equal('values differ (1 difference):\n  value: expected "1", got 1')
  expect(failure_of(function() expect({ ["a b"] = 1 }).to_equal{ ["a b"] = 2 } end)).to_contain('["a b"]: expected 2, got 1')
  expect(failure_of(function() expect(nil).to_equal{} end)).to_contain("value: expected {}, got nil")
end)

test("to_equal: long differences are cut at 20 lines; long strings shortened", function()
  local a, b = {}, {}
  for i = 1, 30 do a[i], b[i] = i, -i end
  expect(failure_of(function() expect(a).to_equal(b) end)).to_contain("  ... and 10 more")
  expect(failure_of(function() expect(("x"):rep(500)).to_equal("y") end)).to_contain("... (500 bytes)")
end)

test("to_equal copes with cycles", function()
  local a, b = {}, {}
  a.self, b.self = a, b
  expect(a).to_equal(b)
end)

test("the other matchers say what they expected", function()
  expect(failure_of(function() expect(1).to_be(2) end)).to_equal("expected 2, got 1")
  expect(failure_of(function() expect({}).to_be({}) end)).to_equal("expected {}, got {}")
  expect(failure_of(function() expect(1).to_not_equal(1) end)).to_equal("expected a value different from 1")
  expect(failure_of(function() expect(nil).to_be_truthy() end)).to_equal("expected a true value, got nil")
  expect(failure_of(function() expect(0).to_be_falsy() end)).to_equal("expected false or nil, got 0")
  expect(failure_of(function() expect(false).to_be_nil() end)).to_equal("expected nil, got false")
  expect(failure_of(function() expect(1.5).to_be_a("integer") end)).to_equal("expected a value of type integer, got 1.5 (float)")
  expect(failure_of(function() expect("abc").to_match("^b") end)).to_equal('expected a string matching "^b", got "abc"')
  expect(failure_of(function() expect({ 1, 2 }).to_contain(3) end)).to_equal("expected { 1, 2 } to contain 3")
  expect(failure_of(function() expect("abc").to_contain("%") end)).to_equal('expected "abc" to contain "%"')
  expect(failure_of(function() expect({ 1 }).to_have_length(2) end)).to_equal("expected length 2, got 1 of { 1 }")
  expect({ { a = 1 } }).to_contain{ a = 1 }
end)

test("to_fail and expect_error: kind, code, status, message, field, problem", function()
  local bad = { SnapshotName = "snap-1", snapshot = { name = "-x-" } }
  local err = expect(cloud.cluster.update_snapshot, bad)
    .to_fail{ kind = "validation", code = "ValidationError", field = "snapshot.name", problem = "lowercase letters" }
  expect(err.fields[1].path).to_equal("snapshot.name")
  expect(failure_of(function() expect(cloud.cluster.update_snapshot, bad).to_fail{ kind = "api", field = "snapshot.tags" } end))
    .to_contain('expected an error with kind "api", a problem at snapshot.tags; got:\n  validation error in UpdateSnapshot')
  expect(failure_of(function() expect(function() return 7 end).to_fail() end)).to_equal("expected the call to fail, but it returned 7")
  expect(failure_of(function() expect_error(function() error("boom", 0) end, "bang") end))
    .to_equal('expected an error with message containing "bang"; got:\n  boom')
  expect(expect_error(function() error({ code = "X" }) end, { code = "X" }).code).to_equal("X")
  expect(failure_of(function() expect(5).to_fail() end)).to_equal("expect(...).to_fail needs a function, got 5")
end)

test("an empty list of a result (marked, to be [] in JSON) equals an empty table, either side", function()
  local tags = cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { tags = {} } }.snapshot.tags
  expect(tags).to_equal({})
  expect({}).to_equal(tags)
  expect(tags).to_equal(cloud.cluster.update_snapshot{ SnapshotName = "snap-1" }.snapshot.tags)
end)
