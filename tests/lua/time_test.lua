-- cloud.time: the Lua side of the one reader and writer of dates (core/base/dates), as
-- storage.sync reads a listing's LastModified and a header's Last-Modified with it.

test("each form the APIs send is read as seconds since 1970", function()
  expect(cloud.time.parse("2026-11-28T07:04:18.000Z")).to_equal(1795849458)
  expect(cloud.time.parse("Sat, 28 Nov 2026 07:04:18 GMT")).to_equal(1795849458)
  expect(cloud.time.parse("20261128T070418Z")).to_equal(1795849458)
  expect(cloud.time.parse("2026-11-28T09:04:18+02:00")).to_equal(1795849458)
  expect(math.type(cloud.time.parse("1970-01-01T00:00:00Z"))).to_equal("integer")
end)

test("format writes each form and parse reads it back", function()
  for _, t in ipairs({ 0, 951782400, 1795849458, 253402300799 }) do
    for _, form in ipairs({ "iso", "http", "sigv4" }) do
      expect(cloud.time.parse(cloud.time.format(t, form))).to_equal(t)
    end
  end
  expect(cloud.time.format(1795849458.9)).to_equal("2026-11-28T07:04:18Z")
  expect(cloud.time.format(os.time())).to_equal(os.date("!%Y-%m-%dT%H:%M:%SZ"))
end)

test("a text that is no date is nil and an error saying why", function()
  local t, err = cloud.time.parse("Sat, 29 Feb 2025 07:04:18 GMT")
  expect(t).to_equal(nil)
  expect(err.kind).to_equal("validation")
  expect(err.code).to_equal("InvalidDate")
  expect(err.message).to_contain("day 29 is not in the month (28 days)")
  local _, long = cloud.time.parse(("9"):rep(100000))
  expect(long.message).to_contain("a date of 100000 characters")
end)

test("a listing's LastModified is the mtime sync gives a downloaded file", function()
  cloud.storage.create_bucket{ Bucket = "times" }
  cloud.storage.put_object{ Bucket = "times", Object = "a.txt", Body = "a" }
  local dir = dofile("tests/lua/support/files.lua").make_dir() .. "/down"
  cloud.storage.sync{ from = "s3://times", to = dir, progress = false }
  local listed = cloud.storage.list_objects_v2{ Bucket = "times" }.Contents[1].LastModified
  expect(cloud.fs.stat(dir .. "/a.txt").mtime // 1).to_equal(cloud.time.parse(listed))
  cloud.fs.remove(dir:match("(.*)/down$"), { recursive = true })
end)
