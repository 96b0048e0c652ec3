-- storage.upload_file and storage.download_file against the embedded emulator: one
-- PutObject below part_size; parts in order and a byte-for-byte round trip through
-- ranged downloads; a part that fails once is retried; a failed upload is aborted, or
-- kept and resumed sending only the missing parts (given as parts =, or found by
-- ListParts and checked against the file); two uploads in two tasks at once; part
-- sizes the platform refuses;
-- failed downloads leave no temporary file, a killed one's is removed by the next; the
-- progress function; and the primitive
-- under the downloads, get_object{file =, offset =} writing in place.
-- Run: cloudlua test tests/lua/transfer_test.lua

local s3 = cloud.storage
local emu = assert(cloud.emulator, "needs the embedded emulator")
local once = cloud.client{ max_attempts = 1 }
local BUCKET = "transfers"
local MiB = 1024 * 1024
local PART = 5 * MiB

-- 11 MiB whose every 8-byte line says where it is: a part out of place shows.
local lines = {}
for i = 0, 11 * MiB // 8 - 1 do lines[#lines + 1] = ("%07d\n"):format(i % 10000000) end
local content = table.concat(lines)
lines = nil  -- luacheck: ignore 311 (the memory freed)

local files = dofile("tests/lua/support/files.lua")
local read, write = files.read, files.write
local dir
local function entries() return files.entries(dir) end
local function uploads() return #emu.state().uploads end

before_each(function()
  emu.reset()
  s3.create_bucket{ Bucket = BUCKET }
  dir = files.make_dir()
  write(dir .. "/big.bin", content)
end)

after_each(function()
  if dir then files.remove_dir(dir) end
end)

test("a file no larger than part_size goes up in one PutObject and comes back whole", function()
  write(dir .. "/small.txt", "hello, files")
  local r, meta = s3.upload_file{ Bucket = BUCKET, Object = "small.txt", file = dir .. "/small.txt", progress = false }
  expect(r.ETag).to_equal('"' .. "291e8fcc5faaa694a5d78e0464dd645a" .. '"')
  expect(meta.parts).to_equal(1)
  expect(meta.sent).to_equal(1)
  expect(meta.size).to_equal(12)
  expect(uploads()).to_equal(0)
  local got = s3.download_file{ Bucket = BUCKET, Object = "small.txt", file = dir .. "/small.back", progress = false }
  expect(got.ContentLength).to_equal(12)
  expect(read(dir .. "/small.back")).to_equal("hello, files")
end)

test("a larger file goes up in parts, completed in order, and comes back byte for byte in ranges", function()
  local r, meta = s3.upload_file{ Bucket = BUCKET, Object = "big.bin", file = dir .. "/big.bin", part_size = PART,
                                  concurrency = 3, progress = false }
  expect(r.ETag).to_match('^"%x+%-3"$')
  expect(meta.parts).to_equal(3)
  expect(meta.sent).to_equal(3)
  expect(uploads()).to_equal(0)
  expect(s3.get_object{ Bucket = BUCKET, Object = "big.bin" }.Body == content).to_equal(true)
  local got, got_meta = s3.download_file{ Bucket = BUCKET, Object = "big.bin", file = dir .. "/back.bin",
                                          part_size = 2 * MiB, concurrency = 4, progress = false }
  expect(got.ETag).to_equal(r.ETag)
  expect(got_meta.parts).to_equal(6)
  expect(read(dir .. "/back.bin") == content).to_equal(true)
  expect(entries()).to_equal{ "back.bin", "big.bin" }
end)

test("a part that fails once is retried on its own and the upload succeeds", function()
  emu.fault{ operation = "UploadPart", times = 1, status = 500 }
  local r = s3.upload_file{ Bucket = BUCKET, Object = "retried.bin", file = dir .. "/big.bin", part_size = PART,
                            progress = false }
  expect(r.ETag).to_match('%-3"$')
  expect(s3.get_object{ Bucket = BUCKET, Object = "retried.bin" }.Body == content).to_equal(true)
end)

test("a failed upload is aborted: no upload is left", function()
  -- One part at a time: a part still in flight when the upload fails could reach the
  -- emulator after the next test has set its fault, and take it (CI saw it once).
  emu.fault{ operation = "UploadPart", times = 1, status = 500 }
  expect(once.storage.upload_file, { Bucket = BUCKET, Object = "failed.bin", file = dir .. "/big.bin",
                                     part_size = PART, concurrency = 1, progress = false }).to_fail{ code = "InternalError", status = 500 }
  expect(uploads()).to_equal(0)
end)

test("keep = true keeps a failed upload; upload_id and parts resume it, sending only the missing parts", function()
  emu.fault{ operation = "UploadPart", times = 1, status = 500 }
  local ok, err = pcall(once.storage.upload_file, { Bucket = BUCKET, Object = "kept.bin", file = dir .. "/big.bin",
                                                    part_size = PART, concurrency = 1, keep = true, progress = false })
  expect(ok).to_equal(false)
  expect(err.code).to_equal("InternalError")
  expect(#err.upload_id).to_equal(32)
  expect(err.parts).to_equal{}
  expect(uploads()).to_equal(1)
  -- part 2 goes up by hand; then the file's bytes of part 2 change on disk: were part 2
  -- sent again, the object would hold the new bytes
  local p2 = s3.upload_part{ Bucket = BUCKET, Object = "kept.bin", uploadId = err.upload_id, partNumber = 2,
                             file = dir .. "/big.bin", offset = PART, length = PART }
  write(dir .. "/big.bin", content:sub(1, PART) .. ("x"):rep(PART) .. content:sub(2 * PART + 1))
  local r, meta = s3.upload_file{ Bucket = BUCKET, Object = "kept.bin", file = dir .. "/big.bin", part_size = PART,
                                  upload_id = err.upload_id, parts = { { PartNumber = 2, ETag = p2.ETag } },
                                  progress = false }
  expect(meta.sent).to_equal(2)
  expect(meta.parts).to_equal(3)
  expect(r.UploadId).to_equal(err.upload_id)
  expect(uploads()).to_equal(0)
  expect(s3.get_object{ Bucket = BUCKET, Object = "kept.bin" }.Body == content).to_equal(true)
end)

test("the parts a failed upload reports done are the ones it finished", function()
  emu.fault{ operation = "UploadPart", times = 2, delay = 0.001 }  -- parts 1 and 2 go through,
  emu.fault{ operation = "UploadPart", times = 1, status = 500 }     -- part 3 fails
  local ok, err = pcall(once.storage.upload_file, { Bucket = BUCKET, Object = "half.bin", file = dir .. "/big.bin",
                                                    part_size = PART, concurrency = 1, keep = true, progress = false })
  expect(ok).to_equal(false)
  expect(#err.parts).to_equal(2)
  expect(err.parts[1].PartNumber).to_equal(1)
  expect(err.parts[2].PartNumber).to_equal(2)
  local _, meta = s3.upload_file{ Bucket = BUCKET, Object = "half.bin", file = dir .. "/big.bin", part_size = PART,
                                  upload_id = err.upload_id, parts = err.parts, progress = false }
  expect(meta.sent).to_equal(1)
  expect(s3.get_object{ Bucket = BUCKET, Object = "half.bin" }.Body == content).to_equal(true)
end)

-- A client whose upload_part calls are counted: the part numbers sent, in order of sending.
local function counting_client()
  local c, sent = cloud.client{}, {}
  local upload_part = c.storage.upload_part
  rawset(c.storage, "upload_part", function(args)
    sent[#sent + 1] = args.partNumber
    return upload_part(args)
  end)
  return c, sent
end

test("upload_id alone resumes a kept upload: ListParts says which parts are there, only the others are sent", function()
  emu.fault{ operation = "UploadPart", times = 2, delay = 0.001 }  -- parts 1 and 2 go through,
  emu.fault{ operation = "UploadPart", times = 1, status = 500 }     -- part 3 fails
  local ok, err = pcall(once.storage.upload_file, { Bucket = BUCKET, Object = "resumed.bin", file = dir .. "/big.bin",
                                                    part_size = PART, concurrency = 1, keep = true, progress = false })
  expect(ok).to_equal(false)
  expect(emu.state().uploads[1].parts[2].partNumber).to_equal(2)
  local c, sent = counting_client()
  local r, meta = c.storage.upload_file{ Bucket = BUCKET, Object = "resumed.bin", file = dir .. "/big.bin",
                                         part_size = PART, upload_id = err.upload_id, progress = false }
  expect(sent).to_equal{ 3 }
  expect(meta.sent).to_equal(1)
  expect(meta.parts).to_equal(3)
  expect(r.UploadId).to_equal(err.upload_id)
  expect(uploads()).to_equal(0)
  expect(s3.get_object{ Bucket = BUCKET, Object = "resumed.bin" }.Body == content).to_equal(true)
end)

test("a resumed upload sends again a part whose bytes or size differ from its range of the file", function()
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = "mixed.bin" }.UploadId
  local function part(n, args)
    args.Bucket, args.Object, args.uploadId, args.partNumber = BUCKET, "mixed.bin", id, n
    s3.upload_part(args)
  end
  part(1, { file = dir .. "/big.bin", offset = 0, length = PART })            -- right: kept
  part(2, { body = ("x"):rep(PART) })                                          -- right size, other bytes
  part(3, { file = dir .. "/big.bin", offset = 2 * PART, length = 10 })        -- right bytes, too few
  local c, sent = counting_client()
  local seen = {}
  local _, meta = c.storage.upload_file{ Bucket = BUCKET, Object = "mixed.bin", file = dir .. "/big.bin",
                                         part_size = PART, upload_id = id, concurrency = 2,
                                         progress = function(done) seen[#seen + 1] = done end }
  table.sort(sent)
  expect(sent).to_equal{ 2, 3 }
  expect(meta.sent).to_equal(2)
  expect(seen[1]).to_equal(PART)  -- the part kept counts as done from the start
  expect(s3.get_object{ Bucket = BUCKET, Object = "mixed.bin" }.Body == content).to_equal(true)
end)

test("a resumed upload lists every page of parts", function()
  local many = content:rep(3)  -- 33 MiB: 7 parts, 5 of them there
  write(dir .. "/many.bin", many)
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = "many.bin" }.UploadId
  for n = 1, 5 do
    s3.upload_part{ Bucket = BUCKET, Object = "many.bin", uploadId = id, partNumber = n, file = dir .. "/many.bin",
                    offset = (n - 1) * PART, length = PART }
  end
  local c, sent = counting_client()
  local markers = {}
  local call = c.call  -- every call of the client's pages goes through it
  rawset(c, "call", function(name, args)
    if name == "ListParts" then
      markers[#markers + 1] = args.PartNumberMarker or 0
      args.MaxParts = 2  -- pages of two parts: three pages
    end
    return call(name, args)
  end)
  c.storage.upload_file{ Bucket = BUCKET, Object = "many.bin", file = dir .. "/many.bin", part_size = PART,
                         upload_id = id, progress = false }
  expect(markers).to_equal{ 0, 2, 4 }  -- each page asked from where the one before ended
  table.sort(sent)
  expect(sent).to_equal{ 6, 7 }
  expect(s3.get_object{ Bucket = BUCKET, Object = "many.bin" }.Body == many).to_equal(true)
end)

test("a truncated ListParts page whose marker does not move on is an error, not an endless listing", function()
  local id = s3.create_multipart_upload{ Bucket = BUCKET, Object = "stuck.bin" }.UploadId
  local c, sent = counting_client()
  local call, listed = c.call, 0
  rawset(c, "call", function(name, args)
    if name ~= "ListParts" then return call(name, args) end
    listed = listed + 1
    return { IsTruncated = true, NextPartNumberMarker = 0, Part = {} }  -- as a parsed answer has it
  end)
  expect(c.storage.upload_file, { Bucket = BUCKET, Object = "stuck.bin", file = dir .. "/big.bin", part_size = PART,
                                  upload_id = id, progress = false })
    .to_fail{ kind = "api", code = "PaginationError", operation = "ListParts",
              message = "ListParts: the answer gives the token the call was made with again" }
  expect(listed).to_equal(2)  -- the page after the first asked once, not for ever
  expect(sent).to_equal{}
end)

test("an unknown upload_id is NoSuchUpload, and nothing is sent", function()
  local c, sent = counting_client()
  expect(c.storage.upload_file, { Bucket = BUCKET, Object = "x", file = dir .. "/big.bin", part_size = PART,
                                  upload_id = ("0"):rep(32), progress = false })
    .to_fail{ kind = "api", code = "NoSuchUpload", operation = "ListParts", status = 404 }
  expect(sent).to_equal{}
end)

test("two uploads in two tasks go on at once, each file whole", function()
  write(dir .. "/other.bin", content:reverse())
  emu.fault{ operation = "UploadPart", times = 6, delay = 0.2 }
  local events = {}
  local function up(name, file)
    return cloud.spawn(function()
      events[#events + 1] = "+"
      local r = s3.upload_file{ Bucket = BUCKET, Object = name, file = dir .. "/" .. file, part_size = PART,
                                concurrency = 3, progress = false }
      events[#events + 1] = "-"
      return r.ETag
    end)
  end
  local a, b = up("a.bin", "big.bin"), up("b.bin", "other.bin")
  expect(a:join()).to_match('%-3"$')
  expect(b:join()).to_match('%-3"$')
  expect(events).to_equal{ "+", "+", "-", "-" }  -- both were under way before either ended
  expect(s3.get_object{ Bucket = BUCKET, Object = "a.bin" }.Body == content).to_equal(true)
  expect(s3.get_object{ Bucket = BUCKET, Object = "b.bin" }.Body == content:reverse()).to_equal(true)
  expect(uploads()).to_equal(0)
end)

test("a part size the platform refuses is a validation error on part_size; nothing is sent", function()
  expect(s3.upload_file, { Bucket = BUCKET, Object = "x", file = dir .. "/big.bin", part_size = MiB })
    .to_fail{ kind = "validation", field = "part_size", message = "at least 5242880 (5 MiB)" }
  assert(os.execute("truncate -s 60G '" .. dir .. "/huge.bin'"))  -- sparse: 12288 parts of 5 MiB
  expect(s3.upload_file, { Bucket = BUCKET, Object = "x", file = dir .. "/huge.bin", part_size = PART })
    .to_fail{ kind = "validation", field = "part_size", message = "12288 parts, more than 10000; give at least 6442451" }
  expect(s3.upload_file, { Bucket = BUCKET, Object = "x", file = dir .. "/none" })
    .to_fail{ kind = "validation", field = "file", message = "No such file or directory" }
  expect(s3.upload_file, { Bucket = BUCKET, Object = "x", file = dir .. "/big.bin", parts = {} })
    .to_fail{ kind = "validation", field = "parts", message = "only with upload_id" }
  expect(uploads()).to_equal(0)
  expect(#emu.state().buckets[1].objects).to_equal(0)
end)

test("wrong arguments are lauxlib errors naming the function", function()
  expect(s3.upload_file, "x").to_fail{ message = "bad argument #1 to 'cloud.storage.upload_file' (table expected, got string)" }
  expect(s3.download_file, { Bucket = BUCKET, Object = "x", file = "y", partsize = 1 })
    .to_fail{ message = "unknown field 'partsize', did you mean 'part_size'?" }
  expect(s3.upload_file, { Bucket = BUCKET, Object = "x", file = "y", concurrency = 0 })
    .to_fail{ message = "field 'concurrency' must be an integer >= 1" }
end)

test("a download that fails leaves neither the target nor a temporary file", function()
  expect(s3.download_file, { Bucket = BUCKET, Object = "missing.bin", file = dir .. "/missing.bin" })
    .to_fail{ kind = "api", operation = "HeadObject", status = 404 }
  expect(entries()).to_equal{ "big.bin" }
  s3.put_object{ Bucket = BUCKET, Object = "big.bin", file = dir .. "/big.bin" }
  emu.fault{ operation = "GetObject", times = 1, status = 500 }
  expect(once.storage.download_file, { Bucket = BUCKET, Object = "big.bin", file = dir .. "/back.bin",
                                       part_size = PART, progress = false }).to_fail{ status = 500 }
  expect(entries()).to_equal{ "big.bin" }
end)

test("a download leaves a file named like an old part file alone: only its own part file is its", function()
  s3.put_object{ Bucket = BUCKET, Object = "big.bin", file = dir .. "/big.bin" }
  write(dir .. "/back.bin.cloudlua-part", "a user's file")
  s3.download_file{ Bucket = BUCKET, Object = "big.bin", file = dir .. "/back.bin", part_size = PART, progress = false }
  expect(read(dir .. "/back.bin")).to_equal(content)
  expect(read(dir .. "/back.bin.cloudlua-part")).to_equal("a user's file")
  expect(entries()).to_equal{ "back.bin", "back.bin.cloudlua-part", "big.bin" }
end)

test("the progress function sees done grow to total, for uploads and downloads", function()
  local seen = {}
  s3.upload_file{ Bucket = BUCKET, Object = "p.bin", file = dir .. "/big.bin", part_size = PART,
                  progress = function(done, total) seen[#seen + 1] = { done, total } end }
  expect(#seen > 1).to_equal(true)
  for i = 2, #seen do expect(seen[i][1] >= seen[i - 1][1]).to_equal(true) end
  expect(seen[#seen]).to_equal{ #content, #content }
  seen = {}
  s3.download_file{ Bucket = BUCKET, Object = "p.bin", file = dir .. "/p.back", part_size = 4 * MiB,
                    progress = function(done, total) seen[#seen + 1] = { done, total } end }
  expect(#seen).to_equal(3)
  for i = 2, #seen do expect(seen[i][1] > seen[i - 1][1]).to_equal(true) end
  expect(seen[#seen]).to_equal{ #content, #content }
end)

test("get_object{file, offset} writes the body in place into an existing file", function()
  s3.put_object{ Bucket = BUCKET, Object = "abc", Body = "abc" }
  write(dir .. "/t", "0123456789")
  local r = s3.get_object{ Bucket = BUCKET, Object = "abc", file = dir .. "/t", offset = 4 }
  expect(r.file).to_equal(dir .. "/t")
  expect(read(dir .. "/t")).to_equal("0123abc789")
  expect(entries()).to_equal{ "big.bin", "t" }
  expect(s3.get_object, { Bucket = BUCKET, Object = "abc", offset = 4 })
    .to_fail{ kind = "validation", field = "offset", problem = "only with file" }
  expect(s3.get_object, { Bucket = BUCKET, Object = "abc", file = dir .. "/new", offset = 0 })
    .to_fail{ kind = "validation", field = "file", problem = "the file must exist" }
end)

test("upload_file and download_file belong to every client", function()
  expect(type(once.storage.upload_file)).to_equal("function")
  expect(type(cloud.client{}.storage.download_file)).to_equal("function")
end)

test("off a terminal the progress line is written only with progress = true, one line per part", function()
  local bin = assert(os.getenv("CLOUDLUA_TEST_BIN"), "CLOUDLUA_TEST_BIN not set (ctest sets it)")
  local function stderr_of(progress)
    local code = ("cloud.storage.create_bucket{ Bucket = 'bkt' } cloud.storage.upload_file{ Bucket = 'bkt', Object = 'o', "
                  .. "file = [[%s]], part_size = %d, progress = %s }"):format(dir .. "/big.bin", PART, progress)
    assert(os.execute(("CLOUDLUA_CONFIG_FILE=/dev/null '%s' -e \"%s\" 2>'%s/err' </dev/null >/dev/null"):format(bin, code, dir)))
    return read(dir .. "/err"):gsub("cloudlua: no account configured; using the embedded emulator\n", "")
  end
  expect(stderr_of("nil")).to_equal("")
  local lines = {}
  for line in stderr_of("true"):gmatch("[^\n]+") do lines[#lines + 1] = line end
  expect(#lines).to_equal(4)  -- 0 bytes, then one per part
  expect(lines[4]).to_match("^upload o: 11%.0 MiB of 11%.0 MiB %(100%%%), [%d.]+ %a+/s, 0 s left$")
end)
