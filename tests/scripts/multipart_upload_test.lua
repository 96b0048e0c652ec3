-- scripts/multipart_upload.lua and scripts/download.lua, run in this state against the
-- embedded emulator: a file in several parts (5 MiB, the platform's least), an empty
-- file, the bucket created on request, a failed completion that leaves no upload, part
-- sizes refused before anything is sent; and the download script.

local emu = assert(cloud.emulator, "needs the embedded emulator")
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/multipart_upload.lua")
local download = support.runner("scripts/download.lua")

-- A temporary file holding `bytes`; its name.
local function temp_file(bytes)
  local name = os.tmpname()
  local f = assert(io.open(name, "wb"))
  f:write(bytes)
  f:close()
  return name
end

local every_byte = {}
for i = 0, 255 do every_byte[#every_byte + 1] = string.char(i) end
every_byte = table.concat(every_byte)
-- 11 MiB, every 4 KiB block numbered: parts of 5, 5 and 1 MiB
local blocks = {}
for i = 1, 11 * 256 do blocks[i] = ("%06d"):format(i) .. every_byte:rep(16):sub(7) end
local eleven_mib = table.concat(blocks)
blocks = nil  -- luacheck: ignore 311 (the memory freed)

before_each(function()
  emu.reset()
  emu.seed{ buckets = { "uploads" } }
end)

test("uploads a file in parts, completes, and verifies it by download", function()
  local file = temp_file(eleven_mib)
  local out = run(file, "uploads", "backups/2024 Q1/data+1.bin", "--part-size", "5M", "--concurrency", "2")
  os.remove(file)
  expect(out[1]).to_match('^uploaded .* to uploads/backups/2024 Q1/data%+1%.bin: 11534336 bytes in 3 parts, '
    .. 'ETag "%x+%-3", verified by download$')
  expect(cloud.storage.get_object{ Bucket = "uploads", Object = "backups/2024 Q1/data+1.bin" }.Body == eleven_mib).to_equal(true)
  expect(emu.state().uploads).to_equal({})
end)

test("the key defaults to the file's name; a small file is one PutObject", function()
  local file = temp_file("")
  local out = run(file, "uploads")
  local name = file:match("([^/]+)$")
  os.remove(file)
  expect(out[1]).to_contain("0 bytes in 1 part,")
  expect(cloud.storage.get_object{ Bucket = "uploads", Object = name }.Body).to_equal("")
end)

test("--create-bucket creates a missing bucket, and accepts one that exists", function()
  local file = temp_file("small")
  expect(run, file, "new-bucket").to_fail{ code = "NoSuchBucket" }
  run(file, "new-bucket", "a", "--create-bucket")
  run(file, "new-bucket", "b", "--create-bucket")
  os.remove(file)
  expect(cloud.storage.get_object{ Bucket = "new-bucket", Object = "b" }.Body).to_equal("small")
end)

test("a failed completion aborts the upload: no parts left behind", function()
  local file = temp_file(eleven_mib)
  emu.fault{ operation = "CompleteMultipartUpload", times = 5, status = 500, code = "InternalError" }
  expect(run, file, "uploads", "k", "--part-size", "5M").to_fail{ kind = "api", code = "InternalError" }
  os.remove(file)
  expect(emu.state().uploads).to_equal({})
  expect(cloud.storage.get_object, { Bucket = "uploads", Object = "k" }).to_fail{ code = "NoSuchKey" }
end)

test("parts under the platform's minimum are refused before anything is sent", function()
  local file = temp_file(eleven_mib)
  expect(run, file, "uploads", "k", "--part-size", "1M").to_fail{ kind = "validation", field = "part_size" }
  os.remove(file)
  expect(emu.state().uploads).to_equal({})
end)

test("a bad part size or concurrency is refused before anything is sent", function()
  expect(run, "/dev/null", "uploads", "k", "--part-size", "lots").to_fail("--part-size lots: a size such as 8M or 5242880 expected")
  expect(run, "/dev/null", "uploads", "k", "--concurrency", "0").to_fail("--concurrency 0: a whole number from 1 on expected")
end)

test("download.lua writes an object to a file in ranges, named after the key by default", function()
  cloud.storage.put_object{ Bucket = "uploads", Object = "a/b.bin", Body = eleven_mib }
  local file = os.tmpname()
  local out = download("uploads", "a/b.bin", file, "--part-size", "4M", "--concurrency", "3")
  local f = assert(io.open(file, "rb"))
  local got = f:read("a")
  f:close()
  os.remove(file)
  expect(out[1]).to_match('^downloaded uploads/a/b%.bin to .*: 11534336 bytes in 3 ranges, ETag "%x+"$')
  expect(got == eleven_mib).to_equal(true)
  expect(download, "uploads", "missing", file).to_fail{ operation = "HeadObject", status = 404 }
end)
