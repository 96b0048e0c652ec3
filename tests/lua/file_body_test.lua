-- Bodies from and to files against the embedded emulator: put_object and
-- upload_part with file (and a byte range: offset, length) sent from disk,
-- get_object{file =} written beside its target and renamed, byte for byte; a retried
-- upload sends the same bytes again; a download that fails leaves neither the
-- target nor a temporary file; the target's part file (cloud.fs.part, core's), a name
-- of its own, a user's file named like an old part file left alone; files from tasks at once; cloud.md5_file. (Flat memory:
-- tests/serve/file_body_memory_test.sh and transfer_memory_test.sh.)
-- Run: cloudlua test tests/lua/file_body_test.lua

local s3 = cloud.storage
local emu = assert(cloud.emulator, "needs the embedded emulator")
local once = cloud.client{ max_attempts = 1 }
local BUCKET = "files"

-- Bytes of every value, in a pattern that does not repeat within the ranges used.
local bytes = {}
for i = 0, 99999 do bytes[#bytes + 1] = string.char((i * 7 + i // 256) % 256) end
bytes = table.concat(bytes)

local files = dofile("tests/lua/support/files.lua")
local read, write = files.read, files.write
local dir
local function entries() return files.entries(dir) end

before_each(function()
  emu.reset()
  emu.configure{ min_part_size = 4 }
  s3.create_bucket{ Bucket = BUCKET }
  dir = files.make_dir()
  write(dir .. "/source.bin", bytes)
end)

after_each(function()
  if dir then files.remove_dir(dir) end
end)

test("put_object{file, offset, length} sends that range; get_object{file} writes it back byte for byte", function()
  local put = s3.put_object{ Bucket = BUCKET, Object = "range.bin", file = dir .. "/source.bin", offset = 1000, length = 70000 }
  local same = s3.put_object{ Bucket = BUCKET, Object = "copy.bin", Body = bytes:sub(1001, 71000) }
  expect(put.ETag).to_equal(same.ETag)
  local got, meta = s3.get_object{ Bucket = BUCKET, Object = "range.bin", file = dir .. "/back.bin" }
  expect(meta.status).to_equal(200)
  expect(got.Body).to_equal(nil)
  expect(got.file).to_equal(dir .. "/back.bin")
  expect(got.ContentLength).to_equal(70000)
  expect(read(dir .. "/back.bin") == bytes:sub(1001, 71000)).to_be_truthy()
  expect(entries()).to_equal{ "back.bin", "source.bin" }
end)

test("the whole file, and a range reaching its end, without length", function()
  s3.put_object{ Bucket = BUCKET, Object = "whole.bin", file = dir .. "/source.bin" }
  expect(s3.get_object{ Bucket = BUCKET, Object = "whole.bin" }.Body == bytes).to_be_truthy()
  s3.put_object{ Bucket = BUCKET, Object = "tail.bin", file = dir .. "/source.bin", offset = 99990 }
  expect(s3.get_object{ Bucket = BUCKET, Object = "tail.bin" }.Body).to_equal(bytes:sub(99991))
end)

test("parts as ranges of one file make the file again", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = "parts.bin" }
  local list = {}
  for n, first in ipairs{ 0, 40000, 80000 } do
    local length = math.min(40000, #bytes - first)
    local r = s3.upload_part{ Bucket = BUCKET, Object = "parts.bin", uploadId = up.UploadId, partNumber = n,
                              file = dir .. "/source.bin", offset = first, length = length }
    list[n] = { PartNumber = n, ETag = r.ETag }
  end
  s3.complete_multipart_upload{ Bucket = BUCKET, Object = "parts.bin", uploadId = up.UploadId, Part = list }
  s3.get_object{ Bucket = BUCKET, Object = "parts.bin", file = dir .. "/joined.bin" }
  expect(read(dir .. "/joined.bin") == bytes).to_be_truthy()
end)

test("an upload answered 500 once is sent again from the range's start, the same bytes", function()
  local up = s3.create_multipart_upload{ Bucket = BUCKET, Object = "retried.bin" }
  emu.fault{ operation = "UploadPart", status = 500, times = 1 }
  local r, meta = s3.upload_part{ Bucket = BUCKET, Object = "retried.bin", uploadId = up.UploadId, partNumber = 1,
                                  file = dir .. "/source.bin", offset = 5, length = 50000 }
  expect(meta.attempts).to_equal(2)
  s3.complete_multipart_upload{ Bucket = BUCKET, Object = "retried.bin", uploadId = up.UploadId,
                                Part = { { PartNumber = 1, ETag = r.ETag } } }
  expect(s3.get_object{ Bucket = BUCKET, Object = "retried.bin" }.Body == bytes:sub(6, 50005)).to_be_truthy()
end)

test("a download cut off midway leaves neither the target nor a temporary file", function()
  s3.put_object{ Bucket = BUCKET, Object = "cut.bin", Body = bytes }
  emu.fault{ operation = "GetObject", drop = true }
  expect(once.storage.get_object, { Bucket = BUCKET, Object = "cut.bin", file = dir .. "/cut.bin" })
    .to_fail{ kind = "transport" }
  expect(entries()).to_equal{ "source.bin" }
end)

test("a download that fails leaves a target that was there as it was", function()
  write(dir .. "/kept.bin", "old bytes")
  expect(s3.get_object, { Bucket = BUCKET, Object = "no-such-key", file = dir .. "/kept.bin" })
    .to_fail{ code = "NoSuchKey", status = 404 }
  emu.fault{ operation = "GetObject", drop = true }
  s3.put_object{ Bucket = BUCKET, Object = "cut.bin", Body = bytes }
  expect(once.storage.get_object, { Bucket = BUCKET, Object = "cut.bin", file = dir .. "/kept.bin" }).to_fail()
  expect(read(dir .. "/kept.bin")).to_equal("old bytes")
  expect(entries()).to_equal{ "kept.bin", "source.bin" }
end)

test("get_object{file} writes a part file of its own: a file of any other name is left alone", function()
  s3.put_object{ Bucket = BUCKET, Object = "obj", Body = "fresh" }
  write(dir .. "/t.bin.cloudlua-part", "a user's file")
  s3.get_object{ Bucket = BUCKET, Object = "obj", file = dir .. "/t.bin" }
  expect(read(dir .. "/t.bin")).to_equal("fresh")
  expect(entries()).to_equal{ "source.bin", "t.bin", "t.bin.cloudlua-part" }
  os.remove(dir .. "/t.bin.cloudlua-part")
  local live = cloud.fs.part(dir .. "/t.bin")  -- a download under way holds it
  expect(live:path():match("^.*/(%.cloudlua%-%w+%.part)$") ~= nil).to_equal(true)
  s3.get_object{ Bucket = BUCKET, Object = "obj", file = dir .. "/t.bin" }  -- writes a name of its own
  expect(#entries()).to_equal(3)
  write(live:path(), "live")
  live:commit(dir .. "/t.bin")
  expect(read(dir .. "/t.bin")).to_equal("live")
  expect(entries()).to_equal{ "source.bin", "t.bin" }
  expect(function() live:commit(dir .. "/t.bin") end).to_fail("committed or discarded already")
  local dropped = cloud.fs.part(dir .. "/t.bin")
  dropped:discard()
  do local _ <close> = cloud.fs.part(dir .. "/u.bin") end
  expect(entries()).to_equal{ "source.bin", "t.bin" }
end)

test("a download retried after a 500 is whole", function()
  s3.put_object{ Bucket = BUCKET, Object = "again.bin", Body = bytes }
  emu.fault{ operation = "GetObject", status = 500, times = 1 }
  local r, meta = s3.get_object{ Bucket = BUCKET, Object = "again.bin", file = dir .. "/again.bin" }
  expect(meta.attempts).to_equal(2)
  expect(r.ContentLength).to_equal(#bytes)
  expect(read(dir .. "/again.bin") == bytes).to_be_truthy()
  expect(entries()).to_equal{ "again.bin", "source.bin" }
end)

test("file problems are validation errors on their fields, with the other problems; nothing is sent", function()
  local err = expect(s3.put_object, { Bucket = BUCKET, Object = "k", file = dir .. "/source.bin", offset = 100001,
                                      Bogus = 1 }).to_fail{ kind = "validation" }
  expect(err.fields[1].path).to_equal("offset")
  expect(err.fields[1].problem).to_equal(("at most 100000, the size of '%s/source.bin' (got 100001)"):format(dir))
  expect(err.fields[2].path).to_equal("Bogus")
end)

test("files go up and down from tasks at once, each range whole", function()
  local got = cloud.map({ 1, 2, 3, 4 }, function(n)
    s3.put_object{ Bucket = BUCKET, Object = "task" .. n, file = dir .. "/source.bin", offset = (n - 1) * 25000, length = 25000 }
    return s3.get_object{ Bucket = BUCKET, Object = "task" .. n, file = dir .. "/task" .. n }.ContentLength
  end, { concurrency = 4 })
  expect(got).to_equal{ 25000, 25000, 25000, 25000 }
  for n = 1, 4 do
    expect(read(dir .. "/task" .. n) == bytes:sub((n - 1) * 25000 + 1, n * 25000)).to_be_truthy()
  end
end)

test("cloud.md5_file: the hex MD5 of a file or a range of it, an object's ETag; nil and a message when it cannot", function()
  write(dir .. "/small.txt", "hello, files")
  expect(cloud.md5_file(dir .. "/small.txt")).to_equal("291e8fcc5faaa694a5d78e0464dd645a")
  expect(cloud.md5_file(dir .. "/small.txt", 0, 5)).to_equal("5d41402abc4b2a76b9719d911017c592")  -- "hello"
  expect(cloud.md5_file(dir .. "/small.txt", 12)).to_equal("d41d8cd98f00b204e9800998ecf8427e")    -- nothing
  local put = s3.put_object{ Bucket = BUCKET, Object = "range.bin", file = dir .. "/source.bin", offset = 1000, length = 70000 }
  expect('"' .. cloud.md5_file(dir .. "/source.bin", 1000, 70000) .. '"').to_equal(put.ETag)
  local none, why = cloud.md5_file(dir .. "/none")
  expect({ none, why }).to_equal{ nil, dir .. "/none: No such file or directory" }
  expect(select(2, cloud.md5_file(dir))).to_equal(dir .. ": not a regular file")
  local past = dir .. "/small.txt: 12 bytes, the range asked ends past them"
  expect(select(2, cloud.md5_file(dir .. "/small.txt", 5, 8))).to_equal(past)
  expect(select(2, cloud.md5_file(dir .. "/small.txt", 13))).to_equal(past)
  expect(cloud.md5_file, dir .. "/small.txt", -1).to_fail{ message = "bad argument #2 to 'cloud.md5_file' (must be an integer >= 0)" }
end)
