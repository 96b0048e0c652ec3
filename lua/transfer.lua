-- File transfers: storage.upload_file and storage.download_file, composed from the
-- storage operations of a client and cloud.map (lua/tasks.lua).
--
--   local r, meta = c.storage.upload_file{ Bucket =, Object =, file =, part_size = 8 MiB,
--     concurrency = 8, progress = nil | true | false | function(done, total) end,
--     keep = false, upload_id = nil, parts = nil, ContentType =, CacheControl =,
--     ContentDisposition =, ContentEncoding =, ContentLanguage =, Expires =, Metadata = }
--   local r, meta = c.storage.download_file{ Bucket =, Object =, file =, part_size = 8 MiB,
--     concurrency = 8, progress =, durable = true, beneath = nil }
--
-- Decisions: the object gets the HTTP headers given (PutObject's or
-- CreateMultipartUpload's), ContentType from the file's name when none is given
-- (cloud.fs.media_type, the system's table; none for an unknown extension, as aws-cli),
-- and the file's mtime in its user metadata `mtime` (rclone's form; a download sets
-- the file's mtime from it, else from LastModified). A file no larger than part_size goes up in one PutObject{file=}; a larger
-- one in parts, each an upload_part{file=, offset=, length=} read from disk as it is
-- sent and retried on its own by the client's retry policy, at most `concurrency` at
-- once, then completed with the parts in order. A failed multipart upload is aborted
-- unless keep = true; the error then carries upload_id and parts (the parts done).
-- upload_file{ upload_id = } resumes it: ListParts (every page, through cloud.pages
-- and the model's paginator) says which parts
-- are there, and a part is kept, not sent again, when its Size is the length of its
-- range of the file and its ETag the MD5 of that range (cloud.md5_file: one read of
-- the range on disk, no network); any other part is sent again. With parts = (the
-- list a failed call reported) those are taken as done unchecked and nothing is
-- listed, for a server without ListParts. A download
-- asks HeadObject for the size and ETag, writes ranges in parallel in place into the
-- target's part file (cloud.fs.part: core's, the one get_object{ file = } writes too;
-- get_object{file=, offset=, durable = false}), checks every range's ETag and the
-- size, and commits it: flushed to disk once (not with durable = false, for a caller
-- that makes a batch durable at once) and renamed; on failure the part file is removed. With
-- beneath (a folder file lies under, as storage.sync's destination), the part file and
-- every range's write reach file's folder without following a link. Progress counts
-- bytes of finished parts.
-- Interrupted (SIGINT, SIGTERM: an error of code "Interrupted"), a multipart upload
-- this process opened is aborted like any failed one, and the error raised again;
-- the uploads still open elsewhere in the process (a sync's other tasks) are listed
-- by transfer_parts.multipart so that the one who catches the interruption aborts
-- them all (abort_open). An upload with keep = true is left for a resume, as on any
-- failure.

local check = require("cloud.check")
local parts_of = require("cloud.transfer_parts")
local cloud_module, limits, etag_hex = check.cloud, parts_of.limits, parts_of.etag_hex

-- A validation error naming `field`, raised before anything is sent.
local function refuse(operation, field, problem)
  error(cloud_module().error{ kind = "validation", code = "ValidationError", operation = operation,
    message = field .. ": " .. problem .. "; nothing was sent", fields = { { path = field, problem = problem } } }, 0)
end

-- The arguments of `fname` (upload_file or download_file), checked against its
-- declaration (lua/reference.lua): a copy with the defaults filled in.
local function options(args, fname)
  local o = check.arguments(fname, nil, 3, args)  -- not a tail call: the level counts this frame
  return o
end

-- The progress reporter: report(done) after each part, report(nil) at the end.
-- A function is called with (done, total); on a terminal (or with progress = true)
-- one line on stderr: bytes done, percentage, rate and time left.
local function make_progress(o, what, total)
  local p = o.progress
  if type(p) == "function" then
    return function(done) if done then p(done, total) end end
  end
  local show = parts_of.progress_line(p)
  if not show then return function() end end
  local start, size_text = cloud_module().clock(), parts_of.size_text
  return function(done)
    if not done then return show(nil) end
    local line = ("%s: %s of %s (%d%%), %s"):format(what, size_text(done), size_text(total),
      total > 0 and math.floor(done * 100 / total) or 100, parts_of.rate_text(done, total, cloud_module().clock() - start))
    show(line)  -- printable there: the object's key is anybody's text
  end
end

-- The size of a readable regular file, or a validation error on `file`.
local function file_size(operation, path)
  local f, err = io.open(path, "rb")
  if not f then refuse(operation, "file", "cannot read '" .. path .. "': " .. tostring(err):gsub("^[^:]*: ", "")) end
  local size = f:seek("end")
  f:close()
  if not size then refuse(operation, "file", "cannot read '" .. path .. "': not a regular file") end
  return size
end

-- The parts of a file of `size` bytes: { number, offset, length } each; a part size
-- the platform would refuse is a validation error on part_size.
local function plan_parts(size, part_size)
  local MIN_PART, MAX_PART, MAX_PARTS = limits()
  if part_size < MIN_PART then
    refuse("UploadFile", "part_size", ("at least %d (5 MiB) for a file larger than one part (got %d)"):format(MIN_PART, part_size))
  end
  if part_size > MAX_PART then
    refuse("UploadFile", "part_size", ("at most %d (5 GiB) (got %d)"):format(MAX_PART, part_size))
  end
  local count = (size + part_size - 1) // part_size
  if count > MAX_PARTS then
    refuse("UploadFile", "part_size", ("%d bytes in parts of %d make %d parts, more than %d; give at least %d"):format(
      size, part_size, count, MAX_PARTS, (size + MAX_PARTS - 1) // MAX_PARTS))
  end
  local parts = {}
  for i = 1, count do
    local offset = (i - 1) * part_size
    parts[i] = { number = i, offset = offset, length = math.min(part_size, size - offset) }
  end
  return parts
end

-- Every part the upload has, through every page of ListParts (cloud.pages: the model's
-- paginator, which also refuses a truncated page that names no new marker): PartNumber
-- -> { ETag, Size }.
local function listed_parts(o)
  local listed = {}
  for page in o.pages("ListParts", { Bucket = o.Bucket, Object = o.Object, uploadId = o.upload_id }) do
    for _, p in ipairs(page.Part) do listed[p.PartNumber] = p end
  end
  return listed
end

-- The parts of `parts` the upload has already with the bytes of their range of the
-- file: PartNumber -> ETag; the others are to be sent (again).
local function parts_there(o, parts)
  local listed, done = listed_parts(o), {}
  for _, part in ipairs(parts) do
    local there = listed[part.number]
    if there and there.Size == part.length
       and etag_hex(there.ETag) == cloud_module().md5_file(o.file, part.offset, part.length) then
      done[part.number] = there.ETag
    end
  end
  return done
end

-- The parts a resumed upload has already: PartNumber -> ETag, from `parts`.
local function parts_done(o)
  local done = {}
  if o.parts == nil then return done end
  if o.upload_id == nil then refuse("UploadFile", "parts", "only with upload_id") end
  if type(o.parts) ~= "table" then refuse("UploadFile", "parts", "a list of { PartNumber =, ETag = } expected") end
  for i, p in ipairs(o.parts) do
    if type(p) ~= "table" or math.type(p.PartNumber) ~= "integer" or type(p.ETag) ~= "string" then
      refuse("UploadFile", ("parts[%d]"):format(i), "{ PartNumber = <integer>, ETag = <string> } expected")
    end
    done[p.PartNumber] = p.ETag
  end
  return done
end

-- Sends the parts not in `done` (PartNumber -> ETag, filled in as parts end), at most
-- o.concurrency at once; returns how many were sent.
local function send_parts(storage, o, upload_id, parts, done, report)
  local todo, bytes = {}, 0
  for _, part in ipairs(parts) do
    if done[part.number] then bytes = bytes + part.length else todo[#todo + 1] = part end
  end
  report(bytes)
  cloud_module().map(todo, function(part)
    local r = storage.upload_part{ Bucket = o.Bucket, Object = o.Object, uploadId = upload_id,
      partNumber = part.number, file = o.file, offset = part.offset, length = part.length }
    done[part.number] = r.ETag
    bytes = bytes + part.length
    report(bytes)
  end, { concurrency = o.concurrency })
  return #todo
end

-- The multipart upload of a file in `parts`; returns the completion's result and the
-- count of parts this call sent.
local function upload_parts(storage, o, parts, report)
  local done = parts_done(o)
  if o.upload_id ~= nil and o.parts == nil then done = parts_there(o, parts) end
  local sent
  -- Aborted on failure unless kept; the error then carries the upload's id and the
  -- parts done, so that upload_file{ upload_id =, parts = } resumes it.
  local r = parts_of.multipart(storage, o, done, function(upload_id)
    sent = send_parts(storage, o, upload_id, parts, done, report)
  end)
  return r, sent
end

-- storage.upload_file{...}: see the head of this file and docs/lua-api.md; `client`
-- is the client whose storage table it is (cloud, or a cloud.client{}).
local function upload_file(client, args)
  local o = options(args, "cloud.storage.upload_file")
  local storage = client.storage
  o.pages = client.pages  -- the client's own listing of pages (ListParts on a resume)
  local size = file_size("UploadFile", o.file)
  local start = cloud_module().clock()
  local report = make_progress(o, "upload " .. o.Object, size)
  local st = cloud_module().fs.stat(o.file)
  o.headers = parts_of.upload_headers(o, o.file, st and st.mtime)
  local r, sent, count
  if size <= o.part_size and o.upload_id == nil then
    parts_done(o)  -- parts without upload_id is refused the same way
    r = storage.put_object(parts_of.merge({ Bucket = o.Bucket, Object = o.Object, file = o.file }, o.headers))
    report(size)
    sent, count = 1, 1
  else
    local parts = plan_parts(size, o.part_size)
    r, sent = upload_parts(storage, o, parts, report)
    count = #parts
  end
  report(nil)
  return r, { size = size, parts = count, sent = sent, elapsed = cloud_module().clock() - start }
end

-- An api error for a download whose object changed, or came short, midway.
local function download_error(o, message)
  return cloud_module().error{ kind = "api", code = "ObjectChanged", operation = "DownloadFile",
    message = ("%s/%s: %s; '%s' left as it was"):format(o.Bucket, o.Object, message, o.file) }
end

-- Writes the object's ranges in place into `temp` (size bytes, ETag etag).
local function fetch_ranges(storage, o, temp, size, etag, report)
  local ranges, bytes = {}, 0
  for offset = 0, size - 1, o.part_size do
    ranges[#ranges + 1] = { offset = offset, last = math.min(offset + o.part_size, size) - 1 }
  end
  cloud_module().map(ranges, function(range)
    local r = storage.get_object{ Bucket = o.Bucket, Object = o.Object, file = temp, offset = range.offset,
      Range = ("bytes=%d-%d"):format(range.offset, range.last), durable = false, beneath = o.beneath }
    if r.ETag ~= etag then error(download_error(o, "its ETag changed from " .. etag .. " to " .. tostring(r.ETag))) end
    bytes = bytes + r.ContentLength
    report(bytes)
  end, { concurrency = o.concurrency })
end

-- storage.download_file{...}: see the head of this file and docs/lua-api.md. The
-- file's mtime is the object's (parts_of.object_mtime: its `mtime` metadata, else
-- LastModified).
local function download_file(client, args)
  local o = options(args, "cloud.storage.download_file")
  local storage = client.storage
  local start = cloud_module().clock()
  local head = storage.head_object{ Bucket = o.Bucket, Object = o.Object }
  local size, etag = head.ContentLength, head.ETag
  -- The part file, core's (cloud.fs.part): the one get_object{ file = } writes too.
  local made, part = pcall(cloud_module().fs.part, o.file, { beneath = o.beneath })
  if not made and type(part) == "table" and part.code == "LinkInDestination" then error(part, 0) end
  if not made then refuse("DownloadFile", "file", "cannot write '" .. o.file .. "': " .. tostring(part.message or part)) end
  local report = make_progress(o, "download " .. o.Object, size)
  local ok, problem = pcall(function()
    fetch_ranges(storage, o, part:path(), size, etag, report)
    local got = cloud_module().fs.stat(part:path()).size
    if got ~= size then error(download_error(o, ("%d bytes written of %d"):format(got, size))) end
    part:commit(o.file, { durable = o.durable ~= false })
    local mtime = parts_of.object_mtime(head)
    if mtime then cloud_module().fs.set_mtime(o.file, mtime) end
  end)
  report(nil)
  if not ok then
    part:discard()
    error(problem, 0)
  end
  return { file = o.file, ContentLength = size, ETag = etag },
         { size = size, parts = math.max(1, (size + o.part_size - 1) // o.part_size), elapsed = cloud_module().clock() - start }
end

-- Each called with a client (lua/modules.cpp installs them in its storage table).
-- size_text and limits stay here too for scripts that used them (lua/transfer_parts.lua
-- is their home).
return { upload_file = upload_file, download_file = download_file, size_text = parts_of.size_text, limits = limits }
