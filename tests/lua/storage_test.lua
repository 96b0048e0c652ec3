-- The storage API end to end through Lua: bucket, multipart upload (create, three
-- parts, complete), download of the whole object and of a range, single-request
-- objects with awkward keys, and the error paths a script meets (InvalidPart,
-- NoSuchUpload, NoSuchKey, NoSuchBucket...). Everything goes over HTTP to the
-- embedded emulator, signed S3-style. Fails by raising an error.

local check = dofile(arg[0]:match("^(.*/)") .. "support/check.lua")
local eq, failure = check.eq, check.failure

local s3 = cloud.storage
local emu = cloud.emulator  -- the embedded emulator's controls, when it serves this session
local once = cloud.client{ max_attempts = 1 }  -- InvalidPart is retried by default: see it at once

-- a bucket; the second creation is refused
local _, meta = s3.create_bucket{ Bucket = "test-bucket" }
eq(meta.status, 200, "bucket created")
local err = failure(s3.create_bucket, { Bucket = "test-bucket" })
eq(err.code, "BucketAlreadyOwnedByYou", "bucket exists")
eq(err.status, 409, "bucket exists: status")

-- parts: with the emulator's minimum part size lowered, small parts whose MD5s are
-- known; otherwise 5 MiB parts and a small last one
local binary = {}
for i = 0, 255 do binary[#binary + 1] = string.char(i) end
binary = table.concat(binary):rep(4)  -- every byte value, NUL included
local parts, expected_etags, expected_etag
if emu and emu.configure then
  emu.configure{ min_part_size = 5 }
  parts = { "hello", binary, "!" }
  expected_etags = { '"5d41402abc4b2a76b9719d911017c592"', '"b2ea9f7fcea831a4a63b213f41a8855b"',
                     '"9033e0e305f247c0c3c80d0c7848c8b3"' }
  expected_etag = '"4a5f03187c03a8ed6ddd01f9296d1665-3"'
else
  local mib5 = 5 * 1024 * 1024
  parts = { "hello" .. ("h"):rep(mib5), binary:rep(mib5 // #binary), "!" }
end

-- the multipart upload of an object whose key needs encoding
local key = "uploads/2024 Q1/a+b%20c/日本語.bin"
local up = s3.create_multipart_upload{ Bucket = "test-bucket", Object = key }
eq(up.Bucket, "test-bucket", "upload bucket")
eq(up.Key, key, "upload key")
assert(up.UploadId:match("^%x+$"), "upload id is hex: " .. up.UploadId)
local listed = {}
for n, bytes in ipairs(parts) do
  local r, m = s3.upload_part{ Bucket = "test-bucket", Object = key, uploadId = up.UploadId, partNumber = n, body = bytes }
  eq(m.status, 200, "part " .. n .. " status")
  assert(r.ETag:match('^"' .. ("%x"):rep(32) .. '"$'), "part ETag is a quoted MD5: " .. r.ETag)
  if expected_etags then eq(r.ETag, expected_etags[n], "part " .. n .. " ETag") end
  listed[n] = { PartNumber = n, ETag = r.ETag }
end
if emu then eq(#emu.state().uploads[1].parts, 3, "three parts held by the emulator") end

local done, done_meta = s3.complete_multipart_upload{ Bucket = "test-bucket", Object = key, uploadId = up.UploadId,
                                                      Part = listed }
eq(done_meta.status, 200, "completed")
assert(done.ETag:match('^"' .. ("%x"):rep(32) .. '%-3"$'), "completed ETag form: " .. done.ETag)
if expected_etag then eq(done.ETag, expected_etag, "completed ETag") end
eq(done.Bucket, "test-bucket", "completed bucket")
eq(done.Key, key, "completed key")
local storage_url = emu and emu.endpoints().storage or done.Location:match("^https?://[^/]+")
eq(done.Location, storage_url .. "/test-bucket/uploads/2024%20Q1/a%2Bb%2520c/%E6%97%A5%E6%9C%AC%E8%AA%9E.bin", "Location")
eq(done.ServerSideEncryption, "AES256", "encryption header")
assert(done.VersionId and done.VersionId ~= "", "version id header")
if emu then eq(#emu.state().uploads, 0, "the upload is gone") end

-- the object is the parts joined, byte for byte
local whole = table.concat(parts)
local got, got_meta = s3.get_object{ Bucket = "test-bucket", Object = key }
eq(got_meta.status, 200, "get status")
eq(#got.Body, #whole, "object size")
assert(got.Body == whole, "object bytes are the parts joined")
eq(got.ETag, done.ETag, "object ETag")
eq(got.AcceptRanges, "bytes", "Accept-Ranges")
assert(got.LastModified:match("GMT$"), "Last-Modified is an HTTP date: " .. tostring(got.LastModified))

-- a range: bytes 3..7 are "lo" and the first three bytes of the binary part
local ranged, ranged_meta = s3.get_object{ Bucket = "test-bucket", Object = key, Range = "bytes=3-7" }
eq(ranged_meta.status, 206, "range status")
eq(ranged.Body, whole:sub(4, 8), "range bytes")
eq(ranged.ContentRange, ("bytes 3-7/%d"):format(#whole), "Content-Range")
local tail = s3.get_object{ Bucket = "test-bucket", Object = key, Range = "bytes=-2" }
eq(tail.Body, whole:sub(-2), "suffix range")
err = failure(s3.get_object, { Bucket = "test-bucket", Object = key, Range = ("bytes=%d-"):format(#whole) })
eq(err.code, "InvalidRange", "range past the end")
eq(err.status, 416, "range past the end: status")

-- HeadObject: the headers, no bytes
local head, head_meta = s3.head_object{ Bucket = "test-bucket", Object = key }
eq(head_meta.status, 200, "head status")
eq(head.ETag, done.ETag, "head ETag")
eq(head.Body, nil, "head has no body")
err = failure(s3.head_object, { Bucket = "test-bucket", Object = "no/such/key" })
eq(err.status, 404, "head of a missing key")

-- awkward keys round-trip through PutObject and GetObject, each encoded once
for _, k in ipairs{ "a b.txt", "a+b.txt", "100%.txt", "%2F", "%41", "日本語/ファイル.txt", "dir/sub/file",
                    "~tilde-_.txt", "a//b", "trailing/", "(x)=[y];{z}!*'@&$,.txt" } do
  local put = s3.put_object{ Bucket = "test-bucket", Object = k, Body = k }
  eq(put.ETag:match('^"%x+"$') ~= nil, true, "put ETag of '" .. k .. "'")
  local back = s3.get_object{ Bucket = "test-bucket", Object = k }
  eq(back.Body, k, "round trip of '" .. k .. "'")
  eq(back.ETag, put.ETag, "ETag of '" .. k .. "'")
end
if emu then
  local stored = {}
  for _, b in ipairs(emu.state().buckets) do
    if b.name == "test-bucket" then for _, o in ipairs(b.objects) do stored[o.key] = o.size end end
  end
  eq(stored["%2F"], 3, "the key '%2F' is stored as written, not decoded twice")
  eq(stored["a+b.txt"], 7, "'+' is not a space")
end

-- error paths of the completion
local bad = s3.create_multipart_upload{ Bucket = "test-bucket", Object = "bad.bin" }
local p1 = s3.upload_part{ Bucket = "test-bucket", Object = "bad.bin", uploadId = bad.UploadId, partNumber = 1,
                           body = "hello" }
err = failure(once.storage.complete_multipart_upload, { Bucket = "test-bucket", Object = "bad.bin",
  uploadId = bad.UploadId, Part = { { PartNumber = 1, ETag = '"00000000000000000000000000000000"' } } })
eq(err.code, "InvalidPart", "wrong ETag")
eq(err.kind, "api", "wrong ETag: kind")
eq(err.status, 400, "wrong ETag: status")
eq(err.operation, "CompleteMultipartUpload", "wrong ETag: operation")
err = failure(once.storage.complete_multipart_upload, { Bucket = "test-bucket", Object = "bad.bin",
  uploadId = bad.UploadId, Part = { { PartNumber = 2, ETag = p1.ETag } } })
eq(err.code, "InvalidPart", "a part never uploaded")
-- parts repeated or out of order are refused before anything is sent...
err = failure(s3.complete_multipart_upload, { Bucket = "test-bucket", Object = "bad.bin", uploadId = bad.UploadId,
  Part = { { PartNumber = 1, ETag = p1.ETag }, { PartNumber = 1, ETag = p1.ETag } } })
eq(err.kind, "validation", "repeated part: kind")
eq(err.fields[1].path, "Part[2].PartNumber", "repeated part: path")
eq(err.fields[1].problem, "must be greater than the previous part's (1)", "repeated part: problem")
-- ...and a client that sends them anyway gets the platform's own InvalidPartOrder
local xml = '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' ..
            ('<Part><PartNumber>2</PartNumber><ETag>%s</ETag></Part>'):format(p1.ETag) ..
            ('<Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part>'):format(p1.ETag) .. '</CompleteMultipartUpload>'
local raw = cloud.request{ api = "storage", method = "POST", path = "/test-bucket/bad.bin",
                           query = { uploadId = bad.UploadId }, body = xml }
eq(raw.status, 400, "out of order on the wire: status")
assert(raw.body:find("<Code>InvalidPartOrder</Code>", 1, true), "out of order on the wire: " .. raw.body)
err = failure(s3.complete_multipart_upload, { Bucket = "test-bucket", Object = "bad.bin",
  uploadId = "0123456789abcdef0123456789abcdef", Part = { { PartNumber = 1, ETag = p1.ETag } } })
eq(err.code, "NoSuchUpload", "unknown upload")
eq(err.status, 404, "unknown upload: status")

-- abort, then completing is NoSuchUpload
local _, abort_meta = s3.abort_multipart_upload{ Bucket = "test-bucket", Object = "bad.bin", uploadId = bad.UploadId }
eq(abort_meta.status, 204, "aborted")
err = failure(s3.complete_multipart_upload, { Bucket = "test-bucket", Object = "bad.bin", uploadId = bad.UploadId,
  Part = { { PartNumber = 1, ETag = p1.ETag } } })
eq(err.code, "NoSuchUpload", "completing an aborted upload")
eq(err.kind, "api", "aborted: kind")

-- unknown keys and buckets
err = failure(s3.get_object, { Bucket = "test-bucket", Object = "bad.bin" })
eq(err.code, "NoSuchKey", "nothing stored by an aborted upload")
eq(err.status, 404, "NoSuchKey status")
err = failure(s3.put_object, { Bucket = "no-such-bucket", Object = "k", Body = "x" })
eq(err.code, "NoSuchBucket", "unknown bucket")
eq(err.status, 404, "unknown bucket: status")

-- upload_part{file = path}: the part's bytes come from a file (binary, NUL included)
local path = os.tmpname()
local f = assert(io.open(path, "wb"))
f:write(binary)
f:close()
local fup = s3.create_multipart_upload{ Bucket = "test-bucket", Object = "from-file.bin" }
local fpart = s3.upload_part{ Bucket = "test-bucket", Object = "from-file.bin", uploadId = fup.UploadId,
                              partNumber = 1, file = path }
if expected_etags then eq(fpart.ETag, expected_etags[2], "ETag of the part read from a file") end
s3.complete_multipart_upload{ Bucket = "test-bucket", Object = "from-file.bin", uploadId = fup.UploadId,
                              Part = { { PartNumber = 1, ETag = fpart.ETag } } }
assert(s3.get_object{ Bucket = "test-bucket", Object = "from-file.bin" }.Body == binary, "object is the file's bytes")
eq(s3.put_object{ Bucket = "test-bucket", Object = "put-from-file.bin", file = path }.ETag, fpart.ETag,
   "put_object takes file= too")

-- body and file together, a file that cannot be read: validation errors naming the path
err = failure(s3.upload_part, { Bucket = "test-bucket", Object = "from-file.bin", uploadId = fup.UploadId,
                                partNumber = 2, body = "x", file = path })
eq(err.kind, "validation", "body and file: kind")
eq(err.fields[1].path, "file", "body and file: field")
eq(err.fields[1].problem, "give body or file, not both", "body and file: problem")
os.remove(path)
err = failure(s3.upload_part, { Bucket = "test-bucket", Object = "from-file.bin", uploadId = fup.UploadId,
                                partNumber = 0, file = path })
eq(err.kind, "validation", "missing file: kind")
eq(err.fields[1].problem, ("cannot read '%s': No such file or directory"):format(path), "missing file: problem")
eq(err.fields[2].path, "partNumber", "the other problems are reported with it")
eq(#err.fields, 2, "missing file: two problems")
err = failure(s3.upload_part, { Bucket = "test-bucket", Object = "k", uploadId = fup.UploadId, partNumber = 1,
                                file = "/" })
assert(err.fields[1].problem:find("^cannot read '/': Is a directory"), "a directory: " .. err.fields[1].problem)
err = failure(s3.upload_part, { Bucket = "test-bucket", Object = "k", uploadId = fup.UploadId, partNumber = 1,
                                file = true })
eq(err.fields[1].problem, "string expected (the path of a file to send as body)", "file must be a path")
err = failure(cloud.cluster.update_snapshot, { SnapshotName = "snap-1", file = "x" })
eq(err.fields[1].path, "file", "file= only where the body is bytes")
assert(err.fields[1].problem:find("unknown field"), "file= elsewhere is an unknown field")

-- the aws dialect (x-amz-* headers) gets the same answers
local aws = cloud.client{ dialect = "aws" }
local put = aws.storage.put_object{ Bucket = "test-bucket", Object = "aws key+1.txt", Body = "hello" }
eq(put.ETag, '"5d41402abc4b2a76b9719d911017c592"', "aws dialect: ETag")
eq(put.ServerSideEncryption, "AES256", "aws dialect: x-amz-server-side-encryption read")
eq(aws.storage.get_object{ Bucket = "test-bucket", Object = "aws key+1.txt" }.Body, "hello", "aws dialect: get")
print("storage_test: ok")
