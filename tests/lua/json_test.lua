-- cloud.json.encode / decode: round trips by the rules of every call's arguments and
-- results (an empty table is {}, a decoded [] stays [], cloud.null is null), values
-- JSON cannot say refused with where they sit, and texts that are not JSON refused
-- with the byte they stopped at.
-- Run: cloudlua test tests/lua/json_test.lua

local json = cloud.json

test("scalars, lists and objects go round", function()
  for _, v in ipairs{ 1, -2.5, "text", true, false } do
    expect(json.decode(json.encode(v))).to_equal(v)
  end
  expect(json.encode{ 1, 2, 3 }).to_equal("[1,2,3]")
  expect(json.encode{ b = 1, a = "x" }).to_equal('{"a":"x","b":1}')  -- keys sorted
  local t = json.decode('{"list":[1,{"k":[true,null]}],"s":"\\u00e9"}')
  expect(t.list[1]).to_equal(1)
  expect(t.list[2].k[1]).to_equal(true)
  expect(t.list[2].k[2]).to_be(cloud.null)
  expect(t.s).to_equal("\xc3\xa9")
  expect(json.encode(t)).to_equal('{"list":[1,{"k":[true,null]}],"s":"\xc3\xa9"}')
end)

test("empty tables: {} is an object, a decoded [] stays a list", function()
  expect(json.encode{}).to_equal("{}")
  expect(json.encode(json.decode("[]"))).to_equal("[]")
  expect(json.encode(json.decode("{}"))).to_equal("{}")
  expect(json.encode(json.decode('{"a":[],"b":{}}'))).to_equal('{"a":[],"b":{}}')
  expect(#json.decode("[]")).to_equal(0)
end)

test("cloud.null is null both ways", function()
  expect(json.encode(cloud.null)).to_equal("null")
  expect(json.decode("null")).to_be(cloud.null)
  expect(json.encode{ a = cloud.null }).to_equal('{"a":null}')
end)

test("nested documents go round", function()
  local deep = { level = 1 }
  local at = deep
  for i = 2, 50 do at.next = { level = i }; at = at.next end
  local back = json.decode(json.encode(deep))
  for _ = 2, 50 do back = back.next end
  expect(back.level).to_equal(50)
end)

test("what JSON cannot say is refused, naming where it sits", function()
  local err = expect(json.encode, { a = { b = print } }).to_fail{ kind = "validation", code = "InvalidArgument" }
  expect(tostring(err):find("a.b", 1, true) ~= nil).to_equal(true)
  err = expect(json.encode, { x = { 0 / 0 } }).to_fail{ kind = "validation", code = "InvalidArgument" }
  expect(tostring(err):find("x[1]", 1, true) ~= nil).to_equal(true)
  err = expect(json.encode, { list = { 1, 2, name = "n" } }).to_fail{ kind = "validation", code = "InvalidArgument" }
  expect(tostring(err):find("list", 1, true) ~= nil).to_equal(true)
  expect(json.encode, { s = "\xff" }).to_fail{ kind = "validation", code = "InvalidArgument" }
  local loop = {}
  loop.self = loop
  expect(json.encode, loop).to_fail{ kind = "validation", code = "InvalidArgument" }
  expect(json.encode).to_fail()  -- no value: lauxlib's bad argument
end)

test("a text that is not JSON names the byte it stopped at", function()
  local err = expect(json.decode, '{"a": x}').to_fail{ kind = "validation", code = "InvalidJSON" }
  expect(err.message:match("at byte (%d+):")).to_equal("7")
  err = expect(json.decode, "[1, 2").to_fail{ kind = "validation", code = "InvalidJSON" }
  expect(err.message:match("at byte (%d+):")).to_equal("6")
  expect(json.decode, "").to_fail{ code = "InvalidJSON" }
  expect(json.decode, "[1] [2]").to_fail{ code = "InvalidJSON" }
  expect(json.decode, ("["):rep(300) .. ("]"):rep(300)).to_fail{ kind = "validation", code = "DocumentTooDeep" }
  expect(json.decode, {}).to_fail()  -- not a string: lauxlib's bad argument
end)

-- Integers beyond a Lua integer (2^63 to 2^64-1, which JSON parsers read as unsigned)
-- become floats, as Lua's own tonumber makes them; those within stay integers.
test("integers from 2^63 up become floats as tonumber makes them, never other integers", function()
  local function decoded(text)
    local v = json.decode(text)
    return v, math.type(v)
  end
  for _, text in ipairs{ "9223372036854775807", "-9223372036854775808", "0", "-1" } do
    local v, kind = decoded(text)
    expect(kind).to_equal("integer")
    expect(v).to_equal(math.tointeger(tonumber(text)))
  end
  for _, text in ipairs{ "9223372036854775808", "18446744073709551615", "12345678901234567890",
                         "-9223372036854775809", "18446744073709551616" } do
    local v, kind = decoded(text)
    expect(kind).to_equal("float")
    expect(v).to_equal(tonumber(text))
  end
  expect(json.decode("18446744073709551615")).to_equal(1.8446744073709552e+19)
  expect(json.decode("9223372036854775808")).to_equal(2^63)
  expect(json.decode("12345678901234567890") > 0).to_equal(true)
  expect(math.type(json.decode('{"n":18446744073709551615}').n)).to_equal("float")
end)

-- A number beyond a double's range is malformed JSON like any other: InvalidJSON with
-- the byte it starts at, in cloudlua's words, never the parser library's.
test("a number out of a double's range is InvalidJSON naming its byte", function()
  local err = expect(json.decode, "1e999").to_fail{ kind = "validation", code = "InvalidJSON" }
  expect(err.message).to_equal("the text is not JSON: at byte 1: the number 1e999 is out of range"
                               .. " (a JSON number here is at most about 1.8e308 in size)")
  err = expect(json.decode, '{"a": [1, -1e999]}').to_fail{ kind = "validation", code = "InvalidJSON" }
  expect(err.message:match("at byte (%d+):")).to_equal("11")
  expect(err.message:find("json.exception", 1, true)).to_be_nil()
  err = expect(json.decode, "1" .. ("0"):rep(400)).to_fail{ kind = "validation", code = "InvalidJSON" }
  expect(err.message:find("the number 1000", 1, true) ~= nil).to_equal(true)
  expect(#err.message < 200).to_equal(true)  -- a long number is shown cut
end)
