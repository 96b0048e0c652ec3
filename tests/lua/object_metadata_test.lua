-- What HTTP says of an object, end to end through Lua and the wire: content headers and
-- user metadata set by put_object, create_multipart_upload and copy_object (COPY and
-- REPLACE) and answered by get_object and head_object; S3's limits checked before
-- anything is sent; conditional GETs (304 NotModified, 412 PreconditionFailed) and
-- conditional writes; keys with '+', '=', spaces, '%' and non-ASCII letters as copy
-- sources; a metadata value that is empty or holds '%'.
-- Run: cloudlua test tests/lua/object_metadata_test.lua

local s3 = cloud.storage
local once = cloud.client{ max_attempts = 1 }.storage
local BUCKET = "metadata-bucket"
local ODD = "odd/a+b=c 50% ü.txt"  -- a key every form of encoding must carry

setup(function()
  s3.create_bucket{ Bucket = BUCKET }
end)

test("put_object's content headers and Metadata come back from head_object and get_object", function()
  s3.put_object{ Bucket = BUCKET, Object = "page.html", Body = "<p>hi</p>", ContentType = "text/html",
                 CacheControl = "max-age=300", ContentDisposition = 'inline; filename="page.html"',
                 ContentLanguage = "en", ContentEncoding = "identity", Expires = "Thu, 01 Jan 2037 00:00:00 GMT",
                 Metadata = { Mtime = "1767225600", owner = "ann", empty = "", pct = "100%25 sure" } }
  for _, r in ipairs{ s3.head_object{ Bucket = BUCKET, Object = "page.html" },
                      (s3.get_object{ Bucket = BUCKET, Object = "page.html" }) } do
    expect(r.ContentType).to_equal("text/html")
    expect(r.CacheControl).to_equal("max-age=300")
    expect(r.ContentDisposition).to_equal('inline; filename="page.html"')
    expect(r.ContentLanguage).to_equal("en")
    expect(r.ContentEncoding).to_equal("identity")
    expect(r.Expires).to_equal("Thu, 01 Jan 2037 00:00:00 GMT")
    expect(r.Metadata).to_equal{ mtime = "1767225600", owner = "ann", empty = "", pct = "100%25 sure" }
  end
end)

test("an object stored without a type is binary/octet-stream, with an empty Metadata table", function()
  s3.put_object{ Bucket = BUCKET, Object = "plain", Body = "x" }
  local h = s3.head_object{ Bucket = BUCKET, Object = "plain" }
  expect(h.ContentType).to_equal("binary/octet-stream")
  expect(h.Metadata).to_equal({})
end)

test("Metadata is refused before sending: 2 KB, HTTP-token names, header values, names equal but for case", function()
  local function refused(metadata, field, words)
    expect(s3.put_object, { Bucket = BUCKET, Object = "k", Body = "x", Metadata = metadata })
      .to_fail{ kind = "validation", code = "ValidationError", field = field, problem = words }
  end
  refused({ k = ("v"):rep(2048) }, "Metadata", "at most 2048 bytes of names and values together")
  refused({ ["a b"] = "1" }, "Metadata.a b (its name)", "HTTP token")
  refused({ a = "1\r\nX-Injected: 1" }, "Metadata.a", "control character")
  refused({ Colour = "1", colour = "2" }, nil, "but for case")
  expect(s3.put_object, { Bucket = BUCKET, Object = "k", Body = "x", Tagging = "a=b" })
    .to_fail{ kind = "validation", field = "Tagging" }
end)

test("a multipart upload's object has what create_multipart_upload gave", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = "big", ContentType = "video/mp4",
                                         Metadata = { k = "v" } }
  local p = s3.upload_part{ Bucket = BUCKET, Object = "big", uploadId = up.UploadId, partNumber = 1, body = "bytes" }
  s3.complete_multipart_upload{ Bucket = BUCKET, Object = "big", uploadId = up.UploadId,
                                Part = { { PartNumber = 1, ETag = p.ETag } } }
  local h = s3.head_object{ Bucket = BUCKET, Object = "big" }
  expect(h.ContentType).to_equal("video/mp4")
  expect(h.Metadata).to_equal{ k = "v" }
end)

test("copy_object from an odd key: COPY keeps the source's metadata, REPLACE takes the call's", function()
  s3.put_object{ Bucket = BUCKET, Object = ODD, Body = "odd", ContentType = "text/plain", Metadata = { a = "1" } }
  local source = BUCKET .. "/odd/a%2Bb%3Dc%2050%25%20%C3%BC.txt"
  s3.copy_object{ Bucket = BUCKET, Object = "copy", CopySource = source, ContentType = "ignored/with-copy" }
  local kept = s3.head_object{ Bucket = BUCKET, Object = "copy" }
  expect(kept.ContentType).to_equal("text/plain")
  expect(kept.Metadata).to_equal{ a = "1" }
  s3.copy_object{ Bucket = BUCKET, Object = "copy", CopySource = source, MetadataDirective = "REPLACE",
                  ContentType = "text/csv", Metadata = { b = "2" } }
  local replaced = s3.head_object{ Bucket = BUCKET, Object = "copy" }
  expect(replaced.ContentType).to_equal("text/csv")
  expect(replaced.Metadata).to_equal{ b = "2" }
  -- '+' and '=' left as they are, as rclone sends them, name the same key
  s3.copy_object{ Bucket = BUCKET, Object = "copy2", CopySource = BUCKET .. "/odd/a%2Bb=c%2050%25%20%C3%BC.txt" }
  expect(s3.get_object{ Bucket = BUCKET, Object = "copy2" }.Body).to_equal("odd")
end)

test("conditional GETs: 304 is the error NotModified, 412 PreconditionFailed, in S3's order", function()
  s3.put_object{ Bucket = BUCKET, Object = "cond", Body = "hello" }
  local h = s3.head_object{ Bucket = BUCKET, Object = "cond" }
  local before, after = "Sat, 01 Jan 2000 00:00:00 GMT", "Fri, 01 Jan 2100 00:00:00 GMT"
  expect(once.get_object, { Bucket = BUCKET, Object = "cond", IfNoneMatch = h.ETag })
    .to_fail{ code = "NotModified", status = 304 }
  expect(once.head_object, { Bucket = BUCKET, Object = "cond", IfModifiedSince = h.LastModified })
    .to_fail{ code = "NotModified", status = 304 }
  expect(once.get_object, { Bucket = BUCKET, Object = "cond", IfMatch = '"0123"' })
    .to_fail{ code = "PreconditionFailed", status = 412 }
  expect(once.head_object, { Bucket = BUCKET, Object = "cond", IfUnmodifiedSince = before })
    .to_fail{ code = "PreconditionFailed", status = 412 }
  local unquoted = h.ETag:gsub('"', "")
  expect(s3.get_object{ Bucket = BUCKET, Object = "cond", IfMatch = unquoted, IfUnmodifiedSince = before }.Body)
    .to_equal("hello")
  expect(once.get_object, { Bucket = BUCKET, Object = "cond", IfNoneMatch = h.ETag, IfModifiedSince = before })
    .to_fail{ code = "NotModified" }
  expect(s3.get_object{ Bucket = BUCKET, Object = "cond", IfModifiedSince = before }.Body).to_equal("hello")
  expect(s3.get_object{ Bucket = BUCKET, Object = "cond", IfNoneMatch = '"0123"', IfModifiedSince = after }.Body)
    .to_equal("hello")
end)

test("conditional writes: IfNoneMatch = '*' creates only, IfMatch replaces only that object", function()
  s3.put_object{ Bucket = BUCKET, Object = "lock", Body = "mine", IfNoneMatch = "*" }
  expect(once.put_object, { Bucket = BUCKET, Object = "lock", Body = "theirs", IfNoneMatch = "*" })
    .to_fail{ code = "PreconditionFailed", status = 412 }
  local etag = s3.head_object{ Bucket = BUCKET, Object = "lock" }.ETag
  expect(once.put_object, { Bucket = BUCKET, Object = "lock", Body = "theirs", IfMatch = '"0123"' })
    .to_fail{ code = "PreconditionFailed", status = 412 }
  s3.put_object{ Bucket = BUCKET, Object = "lock", Body = "next", IfMatch = etag }
  expect(s3.get_object{ Bucket = BUCKET, Object = "lock" }.Body).to_equal("next")
  expect(once.put_object, { Bucket = BUCKET, Object = "none", Body = "x", IfMatch = etag })
    .to_fail{ code = "NoSuchKey", status = 404 }
  expect(s3.put_object, { Bucket = BUCKET, Object = "lock", Body = "x", IfNoneMatch = etag })
    .to_fail{ kind = "validation", field = "IfNoneMatch" }
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = "lock" }
  local p = s3.upload_part{ Bucket = BUCKET, Object = "lock", uploadId = up.UploadId, partNumber = 1, body = "parts" }
  local complete = { Bucket = BUCKET, Object = "lock", uploadId = up.UploadId, Part = { { PartNumber = 1, ETag = p.ETag } },
                     IfNoneMatch = "*" }
  expect(once.complete_multipart_upload, complete).to_fail{ code = "PreconditionFailed", status = 412 }
  complete.IfNoneMatch, complete.IfMatch = nil, s3.head_object{ Bucket = BUCKET, Object = "lock" }.ETag
  s3.complete_multipart_upload(complete)
  expect(s3.get_object{ Bucket = BUCKET, Object = "lock" }.Body).to_equal("parts")
end)
