-- The path forms real S3 clients send, as raw requests over HTTP: a '/' after the
-- bucket (s3cmd's `PUT /bucket/`), the vendor SDK's x-id query parameter, HEAD on a
-- bucket; each reaches the operation it means.
-- Run: cloudlua test tests/regression/s3_path_forms_test.lua

local emu = assert(cloud.emulator, "needs the embedded emulator")

before_each(function()
  emu.reset()
end)

local function raw(method, path, query, body, headers)
  return cloud.request{ api = "storage", method = method, path = path, query = query, body = body, headers = headers }
end

test("PUT /bucket/ creates the bucket; GET, HEAD and DELETE /bucket/ are the bucket's", function()
  expect(raw("PUT", "/slashed/").status).to_equal(200)
  expect(cloud.storage.head_bucket{ Bucket = "slashed" }.BucketRegion).to_equal("jp-east-1")
  local head = raw("HEAD", "/slashed/")
  expect({ head.status, head.body }).to_equal{ 200, "" }
  expect(raw("GET", "/slashed/", { ["list-type"] = "2" }).body).to_contain("<KeyCount>0</KeyCount>")
  expect(raw("GET", "/slashed/").body).to_contain("<ListBucketResult")
  expect(raw("DELETE", "/slashed/").status).to_equal(204)
  expect(raw("HEAD", "/slashed").status).to_equal(404)
end)

test("x-id=<Operation> in the query changes nothing", function()
  cloud.storage.create_bucket{ Bucket = "ids" }
  expect(raw("PUT", "/ids/k.txt", { ["x-id"] = "PutObject" }, "hello").status).to_equal(200)
  expect(raw("GET", "/ids/k.txt", { ["x-id"] = "GetObject" }).body).to_equal("hello")
  expect(raw("GET", "/ids", { ["list-type"] = "2", ["x-id"] = "ListObjectsV2" }).body).to_contain("<Key>k.txt</Key>")
  expect(raw("DELETE", "/ids/k.txt", { ["x-id"] = "DeleteObject" }).status).to_equal(204)
  expect(raw("GET", "/ids/k.txt").status).to_equal(404)
end)

test("PUT with a copy-source header is CopyObject, without it PutObject", function()
  cloud.storage.create_bucket{ Bucket = "cpy" }
  cloud.storage.put_object{ Bucket = "cpy", Object = "a", Body = "bytes" }
  local copy = raw("PUT", "/cpy/b", nil, "", { ["x-ext-copy-source"] = "cpy/a" })
  expect(copy.body).to_contain("<CopyObjectResult")
  expect(raw("GET", "/cpy/b").body).to_equal("bytes")
  expect(raw("PUT", "/cpy/b", nil, "new").body).to_equal("")
  expect(raw("GET", "/cpy/b").body).to_equal("new")
end)

test("an unknown form is UnknownOperation, naming method and path", function()
  local r = raw("POST", "/cp")
  expect(r.status).to_equal(404)
  expect(r.body).to_contain("<Code>UnknownOperation</Code>")
end)
