-- What storage.upload_file/download_file (lua/transfer.lua) and storage.sync
-- (lua/sync.lua) share (require "cloud.transfer_parts"): the platform's part limits,
-- ETags as hex, byte counts as text, the progress line on stderr, a multipart
-- upload that is completed in part order or aborted, and what an object keeps of its
-- file: its HTTP headers (the type from the file's name) and its mtime in metadata.
local check = require("cloud.check")

local M = {}

-- The platform's least part but the last, its largest part, and the most parts of an
-- upload: the model's limits of UploadPart (read once).
local part_limits
function M.limits()
  part_limits = part_limits or check.cloud().describe("UploadPart").limits
  return part_limits.minPartBytes, part_limits.maxPartBytes, part_limits.maxParts
end

-- The ETag without its quotes, in lower case: the hex MD5 of a part (or "<hex>-<n>").
function M.etag_hex(etag)
  return (tostring(etag):gsub('^"(.*)"$', "%1"):lower())
end

-- "12.5 MiB": a byte count for a progress or summary line.
function M.size_text(n)
  if n < 1024 then return ("%d B"):format(n) end
  local units, i = { "KiB", "MiB", "GiB", "TiB" }, 0
  repeat n, i = n / 1024, i + 1 until n < 1024 or i == #units
  return ("%.1f %s"):format(n, units[i])
end

-- "1.2 MiB/s, 3 s left": the rate of `bytes` in `elapsed` seconds and the time the
-- rest of `total` takes at it.
function M.rate_text(bytes, total, elapsed)
  local rate = elapsed > 0 and bytes / elapsed or 0
  local left = rate > 0 and ("%d s left"):format(math.ceil((total - bytes) / rate)) or "? s left"
  return ("%s/s, %s"):format(M.size_text(math.floor(rate)), left)
end

-- The progress line on stderr for `progress` (nil, true or false; a function is the
-- caller's to call): nil when no line is wanted (false, or nil off a terminal); else
-- show(text, urgent), which writes `text` through cloud.printable (it holds keys and
-- file names), rewritten in place on a terminal; off one a line at most every `every`
-- seconds (each call when nil) unless urgent. show(nil) ends the line.
function M.progress_line(progress, every)
  local cloud = check.cloud()
  local tty = cloud.isatty(io.stderr)
  if progress == false or (progress == nil and not tty) then return nil end
  local last = -math.huge
  return function(text, urgent)
    if text == nil then
      if tty then io.stderr:write("\r\27[K") end
      return io.stderr:flush()
    end
    local now = cloud.clock()
    if not tty and every and now - last < every and not urgent then return end
    last = now
    text = cloud.printable(text)
    io.stderr:write(tty and ("\r\27[K" .. text) or (text .. "\n"))
    io.stderr:flush()
  end
end

-- The list CompleteMultipartUpload wants from `done` (PartNumber -> ETag), in part
-- order; also what a failure reports.
function M.part_list(done)
  local list = {}
  for number, etag in pairs(done) do list[#list + 1] = { PartNumber = number, ETag = etag } end
  table.sort(list, function(a, b) return a.PartNumber < b.PartNumber end)
  return list
end

-- The multipart uploads this process opened and has not completed or aborted yet:
-- UploadId -> { storage =, Bucket =, Object = }. An interruption (SIGINT, SIGTERM)
-- never resumes the tasks that opened them, so the one who catches it aborts them all
-- (abort_open).
local open_uploads = {}

-- Aborts every multipart upload still open (an interruption's clean-up); returns how many.
function M.abort_open()
  local ids = {}
  for id in pairs(open_uploads) do ids[#ids + 1] = id end
  for _, id in ipairs(ids) do
    local u = open_uploads[id]
    pcall(u.storage.abort_multipart_upload, { Bucket = u.Bucket, Object = u.Object, uploadId = id })
    open_uploads[id] = nil
  end
  return #ids
end

-- Whether `err` is an interruption (SIGINT, SIGTERM; repl/interrupt.h).
function M.interrupted(err) return type(err) == "table" and err.code == "Interrupted" end

-- A multipart upload to where.Bucket/where.Object (where.upload_id: one to go on
-- with, else a new one, created with the fields of where.headers: its type,
-- metadata): send(upload_id) fills `done` (PartNumber -> ETag), then it is completed
-- with those parts in order; returns the completion's result (its
-- UploadId set). On failure the upload is aborted unless where.keep, and the error
-- (a table) carries upload_id and parts when it is kept, so that it can be resumed.
-- While it is open (and not kept) it is listed for abort_open.
function M.multipart(storage, where, done, send)
  local bucket, object = where.Bucket, where.Object
  local upload_id = where.upload_id
  if upload_id == nil then
    upload_id = storage.create_multipart_upload(M.merge({ Bucket = bucket, Object = object }, where.headers)).UploadId
    if not where.keep then open_uploads[upload_id] = { storage = storage, Bucket = bucket, Object = object } end
  end
  local ok, r = pcall(function()
    send(upload_id)
    return storage.complete_multipart_upload{ Bucket = bucket, Object = object, uploadId = upload_id,
      Part = M.part_list(done) }
  end)
  if not ok then
    if not where.keep then
      pcall(storage.abort_multipart_upload, { Bucket = bucket, Object = object, uploadId = upload_id })
    end
    open_uploads[upload_id] = nil
    if type(r) == "table" then
      r.upload_id, r.parts = where.keep and upload_id or nil, where.keep and M.part_list(done) or nil
    end
    error(r, 0)
  end
  open_uploads[upload_id] = nil
  r.UploadId = upload_id
  return r
end

-- The HTTP headers an object keeps (PutObject, CreateMultipartUpload and CopyObject
-- take them, HeadObject and GetObject answer them), Metadata aside.
M.HEADERS = { "ContentType", "CacheControl", "ContentDisposition", "ContentEncoding", "ContentLanguage", "Expires" }

-- "1700000000" or "1700000000.25": a file's mtime as the user metadata `mtime` holds it,
-- rclone's form (seconds since the epoch as a decimal string), so that each reads the
-- other's.
function M.mtime_text(seconds)
  if seconds == math.floor(seconds) then return ("%d"):format(seconds) end
  return (("%.9f"):format(seconds):gsub("0+$", ""))
end

-- The seconds the user metadata `mtime` of an object holds (`metadata` as HeadObject
-- or GetObject answers it, any case of the name), or nil when it has none that reads.
function M.mtime_of(metadata)
  if type(metadata) ~= "table" then return nil end
  for name, value in pairs(metadata) do
    if type(name) == "string" and name:lower() == "mtime" and type(value) == "string" then
      local t = tonumber(value:match("^%s*(%d+%.?%d*)%s*$"))
      if t and t < 2^53 then return t end
    end
  end
  return nil
end

-- The header fields (M.HEADERS and Metadata) of an upload of `file` (mtime: its
-- seconds, or nil) from `given` (the caller's fields): those given, ContentType from
-- the file's name when not given (cloud.fs.media_type: the system's table; none for an
-- extension it does not know), and the mtime added to a copy of Metadata unless it has
-- one.
function M.upload_headers(given, file, mtime)
  local h = {}
  for _, field in ipairs(M.HEADERS) do h[field] = given[field] end
  h.ContentType = h.ContentType or check.cloud().fs.media_type(file)
  local meta = {}
  for k, v in pairs(given.Metadata or {}) do meta[k] = v end
  if mtime and M.mtime_of(meta) == nil then meta.mtime = M.mtime_text(mtime) end
  h.Metadata = next(meta) and meta or nil
  return h
end

-- The headers and metadata of the object bucket/key (HeadObject) with `given` (header
-- fields and Metadata, or nil) laid over them: what a copy that replaces them
-- (MetadataDirective REPLACE) sends so that it loses none the caller did not change.
function M.source_headers(storage, bucket, key, given)
  local head, h = storage.head_object{ Bucket = bucket, Object = key }, {}
  for _, field in ipairs(M.HEADERS) do h[field] = head[field] end
  local meta = M.merge(M.merge({}, head.Metadata), given and given.Metadata)
  M.merge(h, given)
  h.Metadata = next(meta) and meta or nil
  return h
end

-- `into` with the fields of `from` set in it; returns `into`.
function M.merge(into, from)
  for k, v in pairs(from or {}) do into[k] = v end
  return into
end

-- Seconds since the epoch of a date as a listing (RFC 3339, "2026-11-26T09:42:01.000Z")
-- or a header (HTTP, "Thu, 26 Nov 2026 09:42:01 GMT") gives it (cloud.time.parse, the
-- one reader of dates); nil for anything else.
function M.epoch_of(text)
  if type(text) ~= "string" then return nil end
  return (check.cloud().time.parse(text))
end

-- The seconds a downloaded file's mtime is set to: the object's `mtime` metadata when
-- it has one (what the uploader's file had), else its LastModified; `r` is HeadObject's
-- or GetObject's answer.
function M.object_mtime(r)
  return M.mtime_of(r.Metadata) or M.epoch_of(r.LastModified)
end

return M
