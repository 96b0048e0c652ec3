-- scripts/multipart_upload.lua, run in this state against the embedded emulator: a
-- file in several parts (minimum part size lowered so parts can be small), an empty
-- file, the bucket created on request, and a failed completion that leaves no upload.

local emu = cloud.emulator
local support = dofile("tests/scripts/support.lua")
local run = support.runner("scripts/multipart_upload.lua")


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

before_each(function()
  if not emu then skip("needs the embedded emulator") end
  emu.reset()
  emu.seed{ buckets = { "uploads" } }
  emu.configure{ min_part_size = 1024 }
end)

test("uploads a file in parts, completes, and verifies it by download", function()
  local bytes = every_byte:rep(10)  -- 2560 bytes: parts of 1024, 1024 and 512
  local file = temp_file(bytes)
  local out = run(file, "uploads", "backups/2024 Q1/data+1.bin", "--part-size", "1K")
  os.remove(file)
  expect(out[1]).to_match('^uploaded .* to uploads/backups/2024 Q1/data%+1%.bin: 2560 bytes in 3 parts, ETag "%x+%-3", verified by download$')
  expect(cloud.storage.get_object{ Bucket = "uploads", Object = "backups/2024 Q1/data+1.bin" }.Body).to_equal(bytes)
  expect(emu.state().uploads).to_equal({})
end)

test("the key defaults to the file's name; an empty file is one empty part", function()
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
  local file = temp_file(every_byte:rep(8))
  emu.fault{ operation = "CompleteMultipartUpload", times = 5, status = 500, code = "InternalError" }
  expect(run, file, "uploads", "k", "--part-size", "1K").to_fail{ kind = "api", code = "InternalError" }
  os.remove(file)
  expect(emu.state().uploads).to_equal({})
  expect(cloud.storage.get_object, { Bucket = "uploads", Object = "k" }).to_fail{ code = "NoSuchKey" }
end)

test("parts under the platform's minimum are refused (EntityTooSmall), the upload aborted", function()
  local file = temp_file(every_byte:rep(4))
  expect(run, file, "uploads", "k", "--part-size", "512").to_fail{ code = "EntityTooSmall" }
  os.remove(file)
  expect(emu.state().uploads).to_equal({})
end)

test("a bad part size is refused before anything is sent", function()
  expect(run, "/dev/null", "uploads", "k", "--part-size", "lots").to_fail("--part-size lots: a size such as 8M or 5242880 expected")
end)
