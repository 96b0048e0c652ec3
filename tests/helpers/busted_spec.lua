-- busted's spec language under `cloudlua test`: the kinds of example busted's own
-- documentation gives (describe, nested describe, before_each and after_each, setup
-- and teardown, pending, finally, insulate and expose, tags, luassert's assertions,
-- spies, stubs, mocks and matchers), written here as a busted user writes them and run
-- unchanged. Every case passes; the pending ones are reported skipped.
-- Run: cloudlua test tests/helpers/busted_spec.lua

describe("busted's spec language", function()
  describe("should be awesome", function()
    it("should be easy to use", function()
      assert.truthy("Yup.")
    end)

    it("should have lots of features", function()
      -- deep check comparisons
      assert.are.same({ table = "great" }, { table = "great" })
      -- or check by reference
      assert.are_not.equal({ table = "great" }, { table = "great" })
      assert.is_true(1 == 1)
      assert.falsy(nil)
      assert.has_error(function() error("Wat") end, "Wat")
    end)

    it("should provide some shortcuts to common functions", function()
      assert.are.unique({ { thing = 1 }, { thing = 2 }, { thing = 3 } })
    end)

    it("should have mocks and spies for functional tests", function()
      local thing = { greet = function(greeting) return greeting end }
      spy.on(thing, "greet")
      thing.greet("Hi!")
      assert.spy(thing.greet).was.called()
      assert.spy(thing.greet).was.called_with("Hi!")
    end)
  end)
end)

describe("before_each and after_each, nested", function()
  local log = {}
  setup(function() log[#log + 1] = "setup" end)
  before_each(function() log[#log + 1] = "outer before" end)
  after_each(function() log[#log + 1] = "outer after" end)

  describe("an inner block", function()
    before_each(function() log[#log + 1] = "inner before" end)
    after_each(function() log[#log + 1] = "inner after" end)

    it("runs the outer hook first", function()
      assert.are.same({ "setup", "outer before", "inner before" }, log)
    end)
  end)

  it("sees the inner after_each run inner first", function()
    assert.are.same({ "setup", "outer before", "inner before", "inner after", "outer after", "outer before" }, log)
  end)
end)

describe("lazy_setup and strict_setup", function()
  local order = {}
  lazy_setup(function() order[#order + 1] = "lazy" end)
  strict_setup(function() order[#order + 1] = "strict" end)
  lazy_teardown(function() order[#order + 1] = "lazy teardown" end)

  it("runs the strict setup as the block starts and the lazy one before its first case", function()
    assert.are.same({ "strict", "lazy" }, order)
  end)

  it("runs the lazy setup once", function()
    assert.are.same({ "strict", "lazy" }, order)
  end)
end)

describe("pending", function()
  pending("I should finish this test later")

  it("can stop a case that is not ready", function()
    pending("the endpoint is not there yet")
    error("never reached")
  end)
end)

describe("finally", function()
  local closed = false
  it("runs after the case", function()
    local handle = { close = function() closed = true end }
    finally(function() handle:close() end)
    assert.is_false(closed)
  end)

  it("ran", function() assert.is_true(closed) end)
end)

describe("luassert's assertions", function()
  it("compares and checks types", function()
    assert.are.equal(1, 1)
    assert.are.equals("a", "a")
    assert.is_not.equal(1, 2)
    assert.same({ 1, { 2 } }, { 1, { 2 } })
    assert.is_nil(nil)
    assert.is_not_nil(0)
    assert.is_number(1)
    assert.is_string("s")
    assert.is_table({})
    assert.is_function(print)
    assert.is_boolean(false)
    assert.is.truthy(0)
    assert.is_not.truthy(false)
    assert.is.falsy(false)
    assert.is_false(false)
  end)

  it("matches, near and unique", function()
    assert.matches("^snap%-%d$", "snap-1")
    assert.does_not.match("^x", "snap-1")
    assert.is.near(1.0, 1.05, 0.1)
    assert.is_not.near(1.0, 2.0, 0.1)
    assert.is_not.unique({ 1, 1 })
  end)

  it("errors", function()
    assert.has_error(function() error("boom", 0) end, "boom")
    assert.has_no.errors(function() end)
    assert.error_matches(function() error("bucket missing", 0) end, "missing")
    assert.has_error(function() error({ code = "NoSuchKey" }) end, { code = "NoSuchKey" })
  end)

  it("negates with no", function()
    assert.no.errors(function() end)
    assert.is.Not.True(false)
  end)

  it("takes a message of its own", function()
    local ok, err = pcall(assert.are.equal, 1, 2, "the counts differ")
    assert.is_false(ok)
    assert.matches("the counts differ", err)
  end)
end)

describe("spies", function()
  it("wraps a function with spy.new", function()
    local s = spy.new(function(a) return a * 2 end)
    assert.are.equal(4, s(2))
    assert.spy(s).was.called(1)
    assert.spy(s).was.called_with(2)
    assert.spy(s).was_not.called_with(3)
    assert.spy(s).returned_with(4)
  end)

  it("watches a method with spy.on and is reverted", function()
    local t = { greet = function(_, name) return "hello " .. name end }
    local original = t.greet
    local s = spy.on(t, "greet")
    assert.are.equal("hello you", t:greet("you"))
    assert.spy(s).was.called_with(t, "you")
    assert.spy(t.greet).was.called_with(match.is_ref(t), match.is_string())
    s:revert()
    assert.are.equal(original, t.greet)
  end)

  it("counts with called and clear", function()
    local s = spy.new(function() end)
    s() s()
    assert.spy(s).was.called(2)
    assert.spy(s).was_called_at_least(1)
    s:clear()
    assert.spy(s).was_not.called()
  end)
end)

describe("stubs", function()
  local store = { fetch = function(key) error("a network call for " .. key) end }

  it("replaces a function and returns what it is told", function()
    local s = stub(store, "fetch").returns("cached")
    assert.are.equal("cached", store.fetch("k"))
    assert.stub(store.fetch).was.called_with("k")
    s:revert()
    assert.has_error(function() store.fetch("k") end)
  end)

  it("answers by its arguments with on_call_with", function()
    local s = stub(store, "fetch")
    s.on_call_with("a").returns(1)
    s.on_call_with(match.is_string()).returns(2)
    assert.are.equal(1, store.fetch("a"))
    assert.are.equal(2, store.fetch("b"))
    s:revert()
  end)

  it("invokes a function of its own", function()
    local s = stub.new(store, "fetch").invokes(function(key) return key:upper() end)
    assert.are.equal("K", store.fetch("k"))
    s:revert()
  end)
end)

describe("mocks", function()
  it("spies on every function of a table", function()
    local t = { greet = function(n) return "hi " .. n end, nested = { bye = function() return "bye" end } }
    local m = mock(t)
    assert.are.equal("hi x", m.greet("x"))
    m.nested.bye()
    assert.spy(m.greet).was.called_with("x")
    assert.spy(m.nested.bye).was.called()
    mock.revert(m)
  end)

  it("stubs every function of a table", function()
    local t = { launch = function() error("must not run") end }
    local m = mock(t, true)
    m.launch()
    assert.stub(m.launch).was.called()
    mock.revert(m)
  end)
end)

describe("matchers", function()
  it("match arguments of a call", function()
    local s = spy.new(function() end)
    s("bucket", { Key = "a.txt" }, 3)
    assert.spy(s).was.called_with(match._, match.is_table(), match.is_number())
    assert.spy(s).was.called_with("bucket", match.same({ Key = "a.txt" }), match.is_not_nil())
    assert.spy(s).was.called_with(match.matches("^buck"), match.is_truthy(), match.is_not.is_string())
  end)
end)

describe("tags #tagged", function()
  it("carries its block's tag, and one of its own #fast", function()
    assert.is_true(true)
  end)
end)

insulate("an insulated block", function()
  _G.insulated_value = "set inside"
  it("sees its own global", function() assert.are.equal("set inside", _G.insulated_value) end)
end)

describe("after insulate", function()
  it("does not see the insulated global", function() assert.is_nil(rawget(_G, "insulated_value")) end)
end)

insulate("an insulated block with an exposed one", function()
  expose("an exposed block", function()
    _G.exposed_value = "shared"
  end)
  it("sees the exposed global", function() assert.are.equal("shared", _G.exposed_value) end)
end)

describe("after expose", function()
  it("still sees the exposed global", function() assert.are.equal("shared", rawget(_G, "exposed_value")) end)
end)

describe("the platform in a spec", function()
  before_each(function() cloud.storage.create_bucket{ Bucket = "spec-bucket" } end)
  after_each(function() cloud.storage.delete_bucket{ Bucket = "spec-bucket" } end)

  it("uses cloud and expect beside assert", function()
    cloud.storage.put_object{ Bucket = "spec-bucket", Object = "a.txt", Body = "abc" }
    assert.are.equal("abc", cloud.storage.get_object{ Bucket = "spec-bucket", Object = "a.txt" }.Body)
    expect(cloud.storage.get_object, { Bucket = "spec-bucket", Object = "none" }).to_fail{ code = "NoSuchKey" }
    cloud.storage.delete_object{ Bucket = "spec-bucket", Object = "a.txt" }
  end)
end)

test("a test beside the describes, in the same file", function()
  expect(1 + 1).to_equal(2)
end)
