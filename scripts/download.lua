-- Downloads an object of any size to a local file with cloud.storage.download_file:
-- ranged GETs in parallel written in place into a temporary file beside FILE, the
-- size and ETag checked, then renamed onto FILE (left as it was on any failure).
-- Shows a progress line on a terminal.
--
--   cloudlua scripts/download.lua BUCKET KEY [FILE] [--part-size SIZE] [--concurrency N]
--   cloudlua scripts/download.lua demo-bucket backups/2024-06-01.tar restore.tar --concurrency 16
--
-- FILE defaults to the key's last segment, in the current directory. SIZE is bytes per
-- range, or with K, M or G (binary units); default 8M.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path

local args = require("lib.args").parse({
  usage = "cloudlua scripts/download.lua BUCKET KEY [FILE] [--part-size SIZE] [--concurrency N]",
  about = "Downloads KEY of BUCKET to FILE (else the key's last segment), ranges in parallel.",
  positional = { "bucket", "key", "file?" },
  options = {
    { "part-size", value = "SIZE", check = "size", doc = "Bytes per ranged GET, or with K, M or G (default 8M)" },
    { "concurrency", value = "N", check = "count", doc = "Ranges in flight at once (default 8)" },
  },
}, ...)
if not args then return end

local file = args.file or args.key:match("([^/]+)$")
local r, meta = cloud.storage.download_file{ Bucket = args.bucket, Object = args.key, file = file,
                                             part_size = args.part_size, concurrency = args.concurrency }
print(("downloaded %s/%s to %s: %d bytes in %d range%s, ETag %s"):format(
  args.bucket, args.key, file, meta.size, meta.parts, meta.parts == 1 and "" or "s", r.ETag))
