-- Uploads a local file to object storage by multipart upload: creates the upload,
-- sends the file in parts (each read from disk as it is sent, so memory stays flat),
-- completes it, then downloads the object back part by part
-- (ranged GETs) and compares it with the file. Shows a progress line on a terminal.
--
--   cloudlua scripts/multipart_upload.lua FILE BUCKET [KEY] [--part-size SIZE] [--create-bucket]
--   cloudlua scripts/multipart_upload.lua backup.tar demo-bucket backups/2024-06-01.tar --part-size 16M
--
-- KEY defaults to the file's name. SIZE is bytes, or with K, M or G (binary units);
-- default 8M. The platform refuses parts under 5 MiB other than the last one
-- (EntityTooSmall). On any failure the upload is aborted, so no parts are left behind.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local MiB = 1024 * 1024

-- "8M", "16MiB", "5242880": bytes; nil and why for anything else.
local function parse_size(text)
  local number, unit = tostring(text):upper():match("^(%d+)([KMG]?)I?B?$")
  local size = number and math.tointeger(tonumber(number) * ({ [""] = 1, K = 1024, M = MiB, G = 1024 * MiB })[unit])
  if not size or size < 1 then return nil, "a size such as 8M or 5242880 expected" end
  return size
end

local args = require("lib.args").parse({
  usage = "cloudlua scripts/multipart_upload.lua FILE BUCKET [KEY] [--part-size SIZE] [--create-bucket]",
  about = "Uploads FILE to BUCKET (as KEY, else the file's name) by multipart upload, then\n" ..
          "downloads it back part by part and compares.",
  positional = { "file", "bucket", "key?" },
  options = {
    { "part-size", value = "SIZE", check = parse_size, doc = "Bytes per part, or with K, M or G (default 8M)" },
    { "create-bucket", doc = "Create BUCKET first (one already yours is fine)" },
  },
}, ...)
if not args then return end

local s3 = cloud.storage

local part_size = args.part_size or 8 * MiB
local key = args.key or args.file:match("([^/]+)$")
local file = assert(io.open(args.file, "rb"))
local size = file:seek("end")
local parts_total = math.max(1, (size + part_size - 1) // part_size)

-- One progress line, rewritten in place; on a terminal only.
local show = cloud.isatty(io.stderr) and function(done, sent, finished)
  io.stderr:write(("\r\27[Kuploading %s: part %d of %d, %.1f of %.1f MiB (%d%%)%s"):format(
    args.file, done, parts_total, sent / MiB, size / MiB, size > 0 and sent * 100 // size or 100, finished and "\n" or ""))
  io.stderr:flush()
end or function() end

-- The n-th part of the file.
local function chunk(n)
  file:seek("set", (n - 1) * part_size)
  return file:read(part_size) or ""
end

local function upload_parts(upload_id)
  local listed, sent = {}, 0
  show(0, 0)
  for n = 1, parts_total do
    local first = (n - 1) * part_size
    local length = math.min(part_size, size - first)
    local r = s3.upload_part{ Bucket = args.bucket, Object = key, uploadId = upload_id, partNumber = n,
                              file = args.file, offset = first, length = length }  -- read from disk as it is sent
    listed[n] = { PartNumber = n, ETag = r.ETag }
    sent = sent + length
    show(n, sent, n == parts_total)
  end
  return listed
end

-- Reads the object back a part at a time and compares it with the file.
local function verify(etag)
  if not etag:match("%-" .. parts_total .. '"?$') then error("unexpected ETag " .. etag .. " for " .. parts_total .. " parts", 0) end
  for n = 1, parts_total do
    local first = (n - 1) * part_size
    local expected = chunk(n)
    local got = size == 0 and s3.get_object{ Bucket = args.bucket, Object = key }
      or s3.get_object{ Bucket = args.bucket, Object = key, Range = ("bytes=%d-%d"):format(first, first + #expected - 1) }
    if got.Body ~= expected then error(("part %d differs from the file after download"):format(n), 0) end
  end
end

if args.create_bucket then
  local ok, err = pcall(s3.create_bucket, { Bucket = args.bucket })
  if not ok and not (type(err) == "table" and err.code == "BucketAlreadyOwnedByYou") then error(err, 0) end
end
local up = s3.create_multipart_upload{ Bucket = args.bucket, Object = key }
local ok, result = pcall(function()
  local done = s3.complete_multipart_upload{ Bucket = args.bucket, Object = key, uploadId = up.UploadId, Part = upload_parts(up.UploadId) }
  verify(done.ETag)
  return done
end)
if not ok then
  pcall(s3.abort_multipart_upload, { Bucket = args.bucket, Object = key, uploadId = up.UploadId })
  file:close()
  error(result, 0)
end
file:close()
print(("uploaded %s to %s/%s: %d bytes in %d part%s, ETag %s, verified by download"):format(
  args.file, args.bucket, key, size, parts_total, parts_total == 1 and "" or "s", result.ETag))
