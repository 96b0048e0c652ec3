-- Uploads a local file to object storage with cloud.storage.upload_file: one PutObject
-- for a file no larger than a part, else a multipart upload whose parts go up in
-- parallel (each read from disk as it is sent, so memory stays flat, and retried on
-- its own); then downloads the object back with download_file (ranged GETs in
-- parallel) and compares it with the file. Shows a progress line on a terminal.
--
--   cloudlua scripts/multipart_upload.lua FILE BUCKET [KEY] [--part-size SIZE] [--concurrency N] [--create-bucket]
--   cloudlua scripts/multipart_upload.lua backup.tar demo-bucket backups/2024-06-01.tar --part-size 16M
--
-- KEY defaults to the file's name. SIZE is bytes, or with K, M or G (binary units);
-- default 8M. The platform refuses parts under 5 MiB other than the last one, and
-- more than 10000 parts: such a size is refused before anything is sent. On any
-- failure the upload is aborted, so no parts are left behind.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path

local args = require("lib.args").parse({
  usage = "cloudlua scripts/multipart_upload.lua FILE BUCKET [KEY] [--part-size SIZE] [--concurrency N] [--create-bucket]",
  about = "Uploads FILE to BUCKET (as KEY, else the file's name), parts in parallel, then\n" ..
          "downloads it back and compares.",
  positional = { "file", "bucket", "key?" },
  options = {
    { "part-size", value = "SIZE", check = "size", doc = "Bytes per part, or with K, M or G (default 8M)" },
    { "concurrency", value = "N", check = "count", doc = "Parts in flight at once (default 8)" },
    { "create-bucket", doc = "Create BUCKET first (one already yours is fine)" },
  },
}, ...)
if not args then return end

local s3 = cloud.storage
local key = args.key or args.file:match("([^/]+)$")

-- True when the files at paths a and b hold the same bytes (read a MiB at a time).
local function same_files(a, b)
  local fa, fb = assert(io.open(a, "rb")), assert(io.open(b, "rb"))
  local same
  repeat
    local x, y = fa:read(1024 * 1024), fb:read(1024 * 1024)
    same = x == y
  until not same or x == nil
  fa:close()
  fb:close()
  return same
end

if args.create_bucket then
  local ok, err = pcall(s3.create_bucket, { Bucket = args.bucket })
  if not ok and not (type(err) == "table" and err.code == "BucketAlreadyOwnedByYou") then error(err, 0) end
end
local r, meta = s3.upload_file{ Bucket = args.bucket, Object = key, file = args.file, part_size = args.part_size,
                                concurrency = args.concurrency }
local back = args.file .. ".verify"
s3.download_file{ Bucket = args.bucket, Object = key, file = back, part_size = args.part_size,
                  concurrency = args.concurrency }
local same = same_files(args.file, back)
os.remove(back)
if not same then error(("%s/%s differs from %s after download"):format(args.bucket, key, args.file), 0) end
print(("uploaded %s to %s/%s: %d bytes in %d part%s, ETag %s, verified by download"):format(
  args.file, args.bucket, key, meta.size, meta.parts, meta.parts == 1 and "" or "s", r.ETag))
