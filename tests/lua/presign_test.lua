-- cloud.storage.presign against the embedded emulator: the URL alone, fetched by curl
-- (no keys, no cloudlua), gets and stores an object in both dialects; a changed URL is
-- refused; the arguments are checked as the operation's are, with lauxlib's wording.
-- Run: cloudlua test tests/lua/presign_test.lua

local BUCKET, KEY = "presign-bucket", "dir/a b+c.txt"
local aws = cloud.client{ dialect = "aws" }

-- What curl answers for `url`, given `options` ("-T file": a PUT of its bytes; "-I": a
-- HEAD): the body and status.
local function curl(url, options)
  local out = os.tmpname()
  local pipe = assert(io.popen("curl -s -o '" .. out .. "' -w '%{http_code}' " .. (options or "") .. " '" .. url .. "'"))
  local status = tonumber(pipe:read("a"))
  pipe:close()
  local f = assert(io.open(out, "rb"))
  local body = f:read("a")
  f:close()
  os.remove(out)
  return body, status
end

setup(function()
  cloud.storage.create_bucket{ Bucket = BUCKET }
  cloud.storage.put_object{ Bucket = BUCKET, Object = KEY, Body = "hello\0world" }
end)

test("a presigned GET fetches the object with the URL alone, in both dialects", function()
  for _, c in ipairs{ cloud, aws } do
    local url = c.storage.presign{ Bucket = BUCKET, Object = KEY }
    expect(url).to_contain(c == aws and "X-Amz-Expires=900" or "X-Ext-Expires=900")
    local body, status = curl(url)
    expect(status).to_equal(200)
    expect(body).to_equal("hello\0world")
  end
end)

test("a presigned PUT stores what curl -T sends; HEAD sees it", function()
  local file = os.tmpname()
  local f = assert(io.open(file, "wb"))
  f:write("stored by curl\n")
  f:close()
  local _, status = curl(aws.storage.presign{ Bucket = BUCKET, Object = "put.txt", method = "PUT", expires = 60 }, "-T " .. file)
  os.remove(file)
  expect(status).to_equal(200)
  expect(cloud.storage.get_object{ Bucket = BUCKET, Object = "put.txt" }.Body).to_equal("stored by curl\n")
  local _, head = curl(cloud.storage.presign{ Bucket = BUCKET, Object = "put.txt", method = "HEAD" }, "-I")
  expect(head).to_equal(200)
end)

test("a changed path or lifetime is refused with SignatureDoesNotMatch", function()
  local url = cloud.storage.presign{ Bucket = BUCKET, Object = KEY, expires = 60 }
  for _, changed in ipairs{ (url:gsub("a%%20b", "a%%20c")), (url:gsub("Expires=60", "Expires=61")) } do
    local body, status = curl(changed)
    expect(status).to_equal(403)
    expect(body).to_contain("<Code>SignatureDoesNotMatch</Code>")
  end
end)

test("arguments: the method list, the lifetime, the model's checks, only what a URL carries", function()
  expect_error(function() cloud.storage.presign{ Bucket = BUCKET, Object = KEY, method = "DELETE" } end,
               "bad argument #1 to 'cloud.storage.presign' (field 'method' must be GET, PUT or HEAD, got 'DELETE')")
  expect_error(function() cloud.storage.presign{ Bucket = BUCKET, Object = KEY, expires = 1.5 } end,
               "bad argument #1 to 'cloud.storage.presign' (field 'expires' must be an integer, got number)")
  expect_error(function() cloud.storage.presign() end,
               "bad argument #1 to 'cloud.storage.presign' (table expected, got no value)")
  expect(cloud.storage.presign, { Bucket = BUCKET, Object = KEY, expires = 604801 })
    .to_fail{ kind = "validation", code = "InvalidExpires" }
  expect(cloud.storage.presign, { Bucket = BUCKET }).to_fail{ kind = "validation", field = "Object" }
  expect(cloud.storage.presign, { Bucket = BUCKET, Object = KEY, Range = "bytes=0-1" })
    .to_fail{ kind = "validation", code = "NotInUrl" }
  expect(rawget(cloud.devops, "presign")).to_equal(nil)  -- only the storage API's objects have URLs
end)

test("a presigned GET with ResponseContentType and ResponseContentDisposition answers those headers", function()
  local url = cloud.storage.presign{ Bucket = BUCKET, Object = KEY, ResponseContentType = "text/x-shown",
                                     ResponseContentDisposition = 'attachment; filename="a b.txt"' }
  expect(url).to_contain("response-content-type=text%2Fx-shown")
  local headers = os.tmpname()
  local body = curl(url, "-D " .. headers)
  local f = assert(io.open(headers, "rb"))
  local head = f:read("a")
  f:close()
  os.remove(headers)
  expect(body).to_equal("hello\0world")
  expect(head:lower()).to_contain("content-type: text/x-shown")
  expect(head).to_contain('filename="a b.txt"')
  local got = cloud.storage.get_object{ Bucket = BUCKET, Object = KEY, ResponseContentType = "text/csv" }
  expect(got.ContentType).to_equal("text/csv")
  expect(cloud.storage.head_object{ Bucket = BUCKET, Object = KEY }.ContentType).to_equal("binary/octet-stream")
end)

test("get_object and head_object with PartNumber: part 1 of a one-piece object is all of it", function()
  local got = cloud.storage.get_object{ Bucket = BUCKET, Object = KEY, PartNumber = 1 }
  expect(got.Body).to_equal("hello\0world")
  expect(got.ContentRange).to_equal("bytes 0-10/11")
  expect(cloud.storage.head_object{ Bucket = BUCKET, Object = KEY, PartNumber = 1 }.ContentLength).to_equal(11)
  expect(cloud.storage.get_object, { Bucket = BUCKET, Object = KEY, PartNumber = 2 })
    .to_fail{ code = "InvalidPartNumber" }
end)
