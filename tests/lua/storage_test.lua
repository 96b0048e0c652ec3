-- The storage API end to end through Lua: bucket, multipart upload (create, three
-- parts, complete), download of the whole object and of a range, single-request
-- objects with awkward keys, and the error paths a script meets (InvalidPart,
-- NoSuchUpload, NoSuchKey, NoSuchBucket...). Everything goes over HTTP to the
-- embedded emulator, signed S3-style.
-- Run: cloudlua test tests/lua/storage_test.lua

local s3 = cloud.storage
local emu = cloud.emulator  -- the embedded emulator's controls, when it serves this session
local once = cloud.client{ max_attempts = 1 }  -- InvalidPart is retried by default: see it at once
local BUCKET = "test-bucket"
local KEY = "uploads/2024 Q1/a+b%20c/日本語.bin"  -- a key that needs encoding

-- Parts: with the emulator's minimum part size lowered, small parts whose MD5s are
-- known; otherwise 5 MiB parts and a small last one.
local binary = {}
for i = 0, 255 do binary[#binary + 1] = string.char(i) end
binary = table.concat(binary):rep(4)  -- every byte value, NUL included
local parts, expected_etags, expected_etag
if emu then
  parts = { "hello", binary, "!" }
  expected_etags = { '"5d41402abc4b2a76b9719d911017c592"', '"b2ea9f7fcea831a4a63b213f41a8855b"',
                     '"9033e0e305f247c0c3c80d0c7848c8b3"' }
  expected_etag = '"4a5f03187c03a8ed6ddd01f9296d1665-3"'
else
  local mib5 = 5 * 1024 * 1024
  parts = { "hello" .. ("h"):rep(mib5), binary:rep(mib5 // #binary), "!" }
end
local whole = table.concat(parts)

-- What setup did, step by step: the bucket's creation (its meta), the upload, each
-- part's answer, the parts the emulator held before the completion, the completion,
-- and the uploads left after it.
local created_meta, up, held_parts, done, done_meta, uploads_after
local uploaded = {}  -- { etag =, status = } for each part

setup(function()
  if emu then emu.configure{ min_part_size = 5 } end
  created_meta = select(2, s3.create_bucket{ Bucket = BUCKET })
  up = s3.create_multipart_upload{ Bucket = BUCKET, Object = KEY }
  local listed = {}
  for n, bytes in ipairs(parts) do
    local r, m = s3.upload_part{ Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, partNumber = n, body = bytes }
    uploaded[n] = { etag = r.ETag, status = m.status }
    listed[n] = { PartNumber = n, ETag = r.ETag }
  end
  if emu then held_parts = #emu.state().uploads[1].parts end
  done, done_meta = s3.complete_multipart_upload{ Bucket = BUCKET, Object = KEY, uploadId = up.UploadId, Part = listed }
  if emu then uploads_after = #emu.state().uploads end
end)

---------------------------------------------------------------- the bucket and the multipart upload

test("a bucket is created; creating it again is refused", function()
  expect(created_meta.status).to_equal(200)
  expect(s3.create_bucket, { Bucket = BUCKET }).to_fail{ code = "BucketAlreadyOwnedByYou", status = 409 }
end)

test("CreateMultipartUpload answers the bucket, the key and a hex upload id", function()
  expect(up.Bucket).to_equal(BUCKET)
  expect(up.Key).to_equal(KEY)
  expect(up.UploadId).to_match("^%x+$")
end)

for n = 1, #parts do
  test(("part %d: status 200, its quoted MD5 as ETag"):format(n), function()
    expect(uploaded[n].status).to_equal(200)
    expect(uploaded[n].etag).to_match('^"' .. ("%x"):rep(32) .. '"$')
    if expected_etags then expect(uploaded[n].etag).to_equal(expected_etags[n]) end
  end)
end

test("the emulator holds the three parts before the completion", function()
  if not emu then skip("needs the embedded emulator's state") end
  expect(held_parts).to_equal(3)
end)

test("CompleteMultipartUpload: status 200, the multipart ETag, bucket and key", function()
  expect(done_meta.status).to_equal(200)
  expect(done.ETag).to_match('^"' .. ("%x"):rep(32) .. '%-3"$')
  if expected_etag then expect(done.ETag).to_equal(expected_etag) end
  expect(done.Bucket).to_equal(BUCKET)
  expect(done.Key).to_equal(KEY)
end)

test("CompleteMultipartUpload: the Location encodes the key once; the headers are read", function()
  local storage_url = emu and emu.endpoints().storage or done.Location:match("^https?://[^/]+")
  expect(done.Location).to_equal(storage_url .. "/test-bucket/uploads/2024%20Q1/a%2Bb%2520c/%E6%97%A5%E6%9C%AC%E8%AA%9E.bin")
  expect(done.ServerSideEncryption).to_equal("AES256")
  expect(done.VersionId).to_be_truthy()
  expect(done.VersionId).to_not_equal("")
end)

test("the completed upload is gone", function()
  if not emu then skip("needs the embedded emulator's state") end
  expect(uploads_after).to_equal(0)
end)

---------------------------------------------------------------- downloads

test("the object is the parts joined, byte for byte", function()
  local got, got_meta = s3.get_object{ Bucket = BUCKET, Object = KEY }
  expect(got_meta.status).to_equal(200)
  expect(#got.Body).to_equal(#whole)
  expect(got.Body == whole).to_be_truthy()  -- not to_equal: a diff of megabytes helps nobody
  expect(got.ETag).to_equal(done.ETag)
  expect(got.AcceptRanges).to_equal("bytes")
  expect(got.LastModified).to_match("GMT$")  -- an HTTP date
end)

test("a range: bytes 3-7 are \"lo\" and the first three bytes of the binary part", function()
  local ranged, ranged_meta = s3.get_object{ Bucket = BUCKET, Object = KEY, Range = "bytes=3-7" }
  expect(ranged_meta.status).to_equal(206)
  expect(ranged.Body).to_equal(whole:sub(4, 8))
  expect(ranged.ContentRange).to_equal(("bytes 3-7/%d"):format(#whole))
end)

test("a suffix range: the last two bytes", function()
  expect(s3.get_object{ Bucket = BUCKET, Object = KEY, Range = "bytes=-2" }.Body).to_equal(whole:sub(-2))
end)

test("a range past the end is InvalidRange (416)", function()
  expect(s3.get_object, { Bucket = BUCKET, Object = KEY, Range = ("bytes=%d-"):format(#whole) })
    .to_fail{ code = "InvalidRange", status = 416 }
end)

test("HeadObject: the headers, no bytes", function()
  local head, head_meta = s3.head_object{ Bucket = BUCKET, Object = KEY }
  expect(head_meta.status).to_equal(200)
  expect(head.ETag).to_equal(done.ETag)
  expect(head.Body).to_be_nil()
end)

-- A HEAD answer has no body: the model's errorsByStatus names the code, as boto3 does.
test("HeadObject of a missing key is NoSuchKey / Not Found (404), naming the request", function()
  local err = expect(s3.head_object, { Bucket = BUCKET, Object = "no/such/key" })
    .to_fail{ kind = "api", code = "NoSuchKey", status = 404, operation = "HeadObject" }
  expect(err.message).to_match("^Not Found %(404%), no body, from [^ ]+ for HEAD https?://")
  expect(err.message).to_contain("/" .. BUCKET .. "/no/such/key")
end)

---------------------------------------------------------------- awkward keys

-- Each round-trips through PutObject and GetObject, encoded once.
for _, k in ipairs{ "a b.txt", "a+b.txt", "100%.txt", "%2F", "%41", "日本語/ファイル.txt", "dir/sub/file",
                    "~tilde-_.txt", "a//b", "trailing/", "(x)=[y];{z}!*'@&$,.txt" } do
  test(("the key '%s' round-trips"):format(k), function()
    local put = s3.put_object{ Bucket = BUCKET, Object = k, Body = k }
    expect(put.ETag).to_match('^"%x+"$')
    local back = s3.get_object{ Bucket = BUCKET, Object = k }
    expect(back.Body).to_equal(k)
    expect(back.ETag).to_equal(put.ETag)
  end)
end

test("keys are stored as written: '%2F' not decoded twice, '+' not a space", function()
  if not emu then skip("needs the embedded emulator's state") end
  for _, k in ipairs{ "%2F", "a+b.txt" } do s3.put_object{ Bucket = BUCKET, Object = k, Body = k } end
  local stored = {}
  for _, b in ipairs(emu.state().buckets) do
    if b.name == BUCKET then for _, o in ipairs(b.objects) do stored[o.key] = o.size end end
  end
  expect(stored["%2F"]).to_equal(3)
  expect(stored["a+b.txt"]).to_equal(7)
end)

---------------------------------------------------------------- the completion's error paths

-- An upload of bad.bin with one part: its id and the part's ETag.
local bad, bad_etag
local function bad_upload()
  if not bad then
    bad = s3.create_multipart_upload{ Bucket = BUCKET, Object = "bad.bin" }
    bad_etag = s3.upload_part{ Bucket = BUCKET, Object = "bad.bin", uploadId = bad.UploadId, partNumber = 1,
                               body = "hello" }.ETag
  end
  return bad.UploadId, bad_etag
end

local function complete_bad(client, list, id)
  return client.storage.complete_multipart_upload{ Bucket = BUCKET, Object = "bad.bin",
                                                   uploadId = id or (bad_upload()), Part = list }
end

test("a wrong ETag is InvalidPart", function()
  bad_upload()
  expect(complete_bad, once, { { PartNumber = 1, ETag = '"00000000000000000000000000000000"' } })
    .to_fail{ code = "InvalidPart", kind = "api", status = 400, operation = "CompleteMultipartUpload" }
end)

test("a part never uploaded is InvalidPart", function()
  local _, etag = bad_upload()
  expect(complete_bad, once, { { PartNumber = 2, ETag = etag } }).to_fail{ code = "InvalidPart" }
end)

test("parts repeated are refused before anything is sent", function()
  local _, etag = bad_upload()
  local err = expect(complete_bad, cloud, { { PartNumber = 1, ETag = etag }, { PartNumber = 1, ETag = etag } })
    .to_fail{ kind = "validation" }
  expect(err.fields[1].path).to_equal("Part[2].PartNumber")
  expect(err.fields[1].problem).to_equal("must be greater than the previous part's (1)")
end)

test("parts out of order sent anyway get the platform's own InvalidPartOrder", function()
  local id, etag = bad_upload()
  local xml = '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' ..
              ('<Part><PartNumber>2</PartNumber><ETag>%s</ETag></Part>'):format(etag) ..
              ('<Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part>'):format(etag) .. '</CompleteMultipartUpload>'
  local raw = cloud.request{ api = "storage", method = "POST", path = "/test-bucket/bad.bin",
                             query = { uploadId = id }, body = xml }
  expect(raw.status).to_equal(400)
  expect(raw.body).to_contain("<Code>InvalidPartOrder</Code>")
end)

test("an unknown upload is NoSuchUpload", function()
  local _, etag = bad_upload()
  expect(complete_bad, cloud, { { PartNumber = 1, ETag = etag } }, "0123456789abcdef0123456789abcdef")
    .to_fail{ code = "NoSuchUpload", status = 404 }
end)

test("an aborted upload: 204, then completing it is NoSuchUpload", function()
  local id, etag = bad_upload()
  local _, abort_meta = s3.abort_multipart_upload{ Bucket = BUCKET, Object = "bad.bin", uploadId = id }
  expect(abort_meta.status).to_equal(204)
  expect(complete_bad, cloud, { { PartNumber = 1, ETag = etag } }).to_fail{ code = "NoSuchUpload", kind = "api" }
end)

test("an aborted upload stores nothing: NoSuchKey", function()
  expect(s3.get_object, { Bucket = BUCKET, Object = "bad.bin" }).to_fail{ code = "NoSuchKey", status = 404 }
end)

test("an unknown bucket is NoSuchBucket", function()
  expect(s3.put_object, { Bucket = "no-such-bucket", Object = "k", Body = "x" })
    .to_fail{ code = "NoSuchBucket", status = 404 }
end)

---------------------------------------------------------------- file =

-- A temporary file holding `binary` (its name in `path`), removed by teardown.
local path
local function write_binary()
  path = path or os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(binary)
  f:close()
end
teardown(function() if path then os.remove(path) end end)

local function file_upload()
  return s3.create_multipart_upload{ Bucket = BUCKET, Object = "from-file.bin" }
end

test("upload_part{file = path}: the part's bytes come from a file (binary, NUL included)", function()
  write_binary()
  local fup = file_upload()
  local fpart = s3.upload_part{ Bucket = BUCKET, Object = "from-file.bin", uploadId = fup.UploadId,
                                partNumber = 1, file = path }
  if expected_etags then expect(fpart.ETag).to_equal(expected_etags[2]) end
  s3.complete_multipart_upload{ Bucket = BUCKET, Object = "from-file.bin", uploadId = fup.UploadId,
                                Part = { { PartNumber = 1, ETag = fpart.ETag } } }
  expect(s3.get_object{ Bucket = BUCKET, Object = "from-file.bin" }.Body == binary).to_be_truthy()
end)

test("put_object takes file= too", function()
  write_binary()
  local md5 = s3.put_object{ Bucket = BUCKET, Object = "put-body.bin", Body = binary }.ETag
  expect(s3.put_object{ Bucket = BUCKET, Object = "put-from-file.bin", file = path }.ETag).to_equal(md5)
end)

test("body and file together: a validation error naming file", function()
  write_binary()
  local err = expect(s3.upload_part, { Bucket = BUCKET, Object = "from-file.bin", uploadId = file_upload().UploadId,
                                       partNumber = 2, body = "x", file = path }).to_fail{ kind = "validation" }
  expect(err.fields[1].path).to_equal("file")
  expect(err.fields[1].problem).to_equal("give body or file, not both")
end)

test("a file that cannot be read: a validation error, reported with the other problems", function()
  local missing = os.tmpname()
  os.remove(missing)
  local err = expect(s3.upload_part, { Bucket = BUCKET, Object = "from-file.bin", uploadId = file_upload().UploadId,
                                       partNumber = 0, file = missing }).to_fail{ kind = "validation" }
  expect(err.fields[1].problem).to_equal(("cannot read '%s': No such file or directory"):format(missing))
  expect(err.fields[2].path).to_equal("partNumber")
  expect(#err.fields).to_equal(2)
end)

test("a directory as file is named", function()
  local err = expect(s3.upload_part, { Bucket = BUCKET, Object = "k", uploadId = file_upload().UploadId,
                                       partNumber = 1, file = "/" }).to_fail()
  expect(err.fields[1].problem).to_match("^cannot read '/': Is a directory")
end)

test("file must be a path", function()
  local err = expect(s3.upload_part, { Bucket = BUCKET, Object = "k", uploadId = file_upload().UploadId,
                                       partNumber = 1, file = true }).to_fail()
  expect(err.fields[1].problem).to_equal("string expected, got boolean")
end)

test("file= only where the body is bytes: elsewhere an unknown field", function()
  local err = expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", file = "x" }).to_fail()
  expect(err.fields[1].path).to_equal("file")
  expect(err.fields[1].problem).to_contain("unknown field")
end)

test("S3's Key for the object's key is told its name here, Object", function()
  local err = expect(s3.get_object, { Bucket = BUCKET, Key = "a.txt" }).to_fail{ kind = "validation" }
  expect(err.fields[1]).to_equal{ path = "Key", problem = "unknown field (the object's key is 'Object' here, S3's Key)" }
  expect(tostring(err)).to_contain("Key: unknown field (the object's key is 'Object' here, S3's Key)")
  -- where Key is the name (DeleteObjects' items), it is taken
  expect(s3.delete_objects{ Bucket = BUCKET, Object = { { Key = "not-there" } } }.Deleted[1].Key).to_equal("not-there")
end)

---------------------------------------------------------------- checksums

-- The published check values of "123456789": CRC-32 0xCBF43926, CRC-32C 0xE3069283.
local DIGITS = "123456789"

test("a checksum header is checked, echoed, and answered with the object when asked", function()
  local put = s3.put_object{ Bucket = BUCKET, Object = "sum.txt", Body = DIGITS, ChecksumCRC32 = "y/Q5Jg==" }
  expect(put.ChecksumCRC32).to_equal("y/Q5Jg==")
  expect(s3.get_object{ Bucket = BUCKET, Object = "sum.txt" }.ChecksumCRC32).to_be_nil()
  local got = s3.get_object{ Bucket = BUCKET, Object = "sum.txt", ChecksumMode = "ENABLED" }
  expect(got.ChecksumCRC32).to_equal("y/Q5Jg==")
  expect(s3.head_object{ Bucket = BUCKET, Object = "sum.txt", ChecksumMode = "ENABLED" }.ChecksumCRC32).to_equal("y/Q5Jg==")
end)

test("a checksum that is not the body's is BadDigest (400)", function()
  expect(s3.put_object, { Bucket = BUCKET, Object = "sum.txt", Body = DIGITS .. "0", ChecksumCRC32C = "4waSgw==" })
    .to_fail{ code = "BadDigest", status = 400 }
  local aws = cloud.client{ dialect = "aws" }
  expect(aws.storage.put_object, { Bucket = BUCKET, Object = "sum.txt", Body = DIGITS .. "0", ChecksumCRC32C = "4waSgw==" })
    .to_fail{ code = "BadDigest", status = 400 }
  expect(s3.put_object{ Bucket = BUCKET, Object = "sum.txt", Body = DIGITS, ChecksumCRC32C = "4waSgw==" }.ChecksumCRC32C)
    .to_equal("4waSgw==")
end)

test("ChecksumAlgorithm takes S3's names only", function()
  local err = expect(s3.put_object, { Bucket = BUCKET, Object = "sum.txt", Body = DIGITS, ChecksumAlgorithm = "MD5" })
    .to_fail{ kind = "validation" }
  expect(err.fields[1].path).to_equal("ChecksumAlgorithm")
end)

---------------------------------------------------------------- the aws dialect

test("the aws dialect (x-amz-* headers) gets the same answers", function()
  local aws = cloud.client{ dialect = "aws" }
  local put = aws.storage.put_object{ Bucket = BUCKET, Object = "aws key+1.txt", Body = "hello" }
  expect(put.ETag).to_equal('"5d41402abc4b2a76b9719d911017c592"')
  expect(put.ServerSideEncryption).to_equal("AES256")  -- read from x-amz-server-side-encryption
  expect(aws.storage.get_object{ Bucket = BUCKET, Object = "aws key+1.txt" }.Body).to_equal("hello")
end)

test("cloud.request and cloud.sign take a body byte for byte, NULs included", function()
  local body = "a\0b\0\255c"
  s3.create_bucket{ Bucket = "raw-bytes" }
  local r = cloud.request{ api = "storage", method = "PUT", path = "/raw-bytes/k", body = body }
  expect(r.status).to_equal(200)
  expect(s3.get_object{ Bucket = "raw-bytes", Object = "k" }.Body).to_equal(body)
  local function signature(b)
    return cloud.sign{ method = "PUT", url = "https://h/k", body = b, access_key_id = "AK", secret_access_key = "SK",
                       region = "jp-east-1", service = "s3", time = "20150830T123600Z", sign_body = true }.signature
  end
  expect(signature(body) ~= signature("a")).to_be_truthy()  -- what follows the NUL is signed too
end)

test("an empty bucket's listing: Contents and CommonPrefixes are empty lists, not nil", function()
  s3.create_bucket{ Bucket = "empty-listing" }
  local r = s3.list_objects_v2{ Bucket = "empty-listing", Delimiter = "/" }
  expect(r.Contents).to_equal{}
  expect(r.CommonPrefixes).to_equal{}
  expect(r.KeyCount).to_equal(0)
  s3.delete_bucket{ Bucket = "empty-listing" }
end)

test("a listing's LastModified is the object's Last-Modified in ISO 8601, in every month", function()
  if not emu then skip("needs the embedded emulator's clock") end
  local MONTHS = { Jan = "01", Feb = "02", Mar = "03", Apr = "04", May = "05", Jun = "06", Jul = "07", Aug = "08",
                   Sep = "09", Oct = "10", Nov = "11", Dec = "12" }
  s3.create_bucket{ Bucket = "months" }
  for n = 1, 13 do  -- 29 days apart: every month of a year, some day of it
    s3.put_object{ Bucket = "months", Object = ("m%02d"):format(n), Body = "x" }
    emu.advance(29 * 86400 + 3671)
  end
  local seen = {}
  for _, o in ipairs(s3.list_objects_v2{ Bucket = "months" }.Contents) do
    local http = s3.head_object{ Bucket = "months", Object = o.Key }.LastModified
    local d, mon, y, t = http:match("^%a%a%a, (%d%d) (%a%a%a) (%d%d%d%d) (%d%d:%d%d:%d%d) GMT$")
    expect(o.LastModified).to_equal(("%s-%s-%sT%s.000Z"):format(y, MONTHS[mon], d, t))
    seen[mon] = true
  end
  for mon in pairs(MONTHS) do expect(seen[mon]).to_equal(true) end
end)
