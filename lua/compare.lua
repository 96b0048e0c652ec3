-- Whether two entries of a tree differ (require "cloud.compare"), for storage.sync and
-- storage.check (lua/sync.lua): by size, by size and time ("size-mtime": the source
-- newer, to the second, with the mtime an object keeps in its metadata asked when the
-- listings cannot tell), or by content ("checksum": MD5 against an ETag, single-part
-- or multipart, or of two local files). An entry is { path, size, mtime, etag, key }
-- of a bucket or { path, size, mtime, file } of a folder; `run` the sync's or check's
-- run (lua/sync.lua's new_run): its options (compare, part_size, from, to) and client.
--
-- Decisions:
-- * size-mtime (the default, `aws s3 sync`'s): changed when the sizes differ or the
--   source is newer, compared in whole seconds (a listing's LastModified has no finer
--   grain). An object's LastModified is the time it was written, so after an upload or
--   a server-side copy the target is never older than its source; a download gets its
--   object's LastModified as its mtime. A second sync with nothing changed therefore
--   sends nothing, in every direction. An upload also keeps the file's mtime in the
--   object's user metadata `mtime` (rclone's form), and a download sets the file's
--   mtime from it (else from LastModified): when the listing says the source is newer
--   but the sizes are equal, the object (or each object) is asked for it (HeadObject),
--   and the two are compared to the second with the stored mtime in place of
--   LastModified. So a file with a future mtime is not sent again on every run, and an
--   object rclone wrote (or copied, keeping its metadata) compares by its file's time.
-- * checksum: a local file's MD5 against a single-part ETag; against a multipart ETag
--   ("<hex>-<parts>") the MD5 of the parts' MD5s, for each part size that makes that
--   many parts (the sync's part_size, the common 5, 8, 16 MiB ones, and the size over
--   the parts rounded up to a MiB): equal only when one of them gives the ETag. Two
--   objects are the same when their ETags are, two local files (check's two folders)
--   when their MD5s are. Never "same" for different bytes; two equal objects put in
--   different parts are reported different (and copied again).

local MiB = 1024 * 1024

local parts_of = require("cloud.transfer_parts")
local cloud_module, etag_hex = require("cloud.check").cloud, parts_of.etag_hex

local M = {}

-- The bytes the hex digits `hex` spell.
local function from_hex(hex) return (hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)) end

-- Whether the local file `e` has the bytes an object of ETag `etag` has.
local function file_matches_etag(part_size, e, etag)
  local cloud = cloud_module()
  local hex, parts = etag_hex(etag):match("^(%x+)%-(%d+)$")
  if not hex then return cloud.md5_file(e.file) == etag_hex(etag) end
  parts = tonumber(parts)
  local tried = {}
  local sizes = { part_size, 8 * MiB, 5 * MiB, 16 * MiB, ((e.size + parts - 1) // parts + MiB - 1) // MiB * MiB }
  for _, size in ipairs(sizes) do
    if not tried[size] and size > 0 and (e.size + size - 1) // size == parts then
      tried[size] = true
      local digests = {}
      for n = 1, parts do
        local offset = (n - 1) * size
        digests[n] = from_hex(cloud.md5_file(e.file, offset, math.min(size, e.size - offset)) or "")
      end
      if cloud.md5(table.concat(digests)) == hex then return true end
    end
  end
  return false
end

-- The mtime the object of entry `e` (of `side`) keeps in its metadata (HeadObject),
-- or nil: for a local file, an object without one, or one that cannot be asked.
local function stored_mtime(client, side, e)
  if not e.key then return nil end
  local ok, r = pcall(client.storage.head_object, { Bucket = side.bucket, Object = e.key })
  if not ok and parts_of.interrupted(r) then error(r, 0) end
  return ok and parts_of.mtime_of(r.Metadata) or nil
end

-- Whether, under size-mtime, the source `a` is newer than the target `b` (to the
-- second) by the listings' times: true, false, or "ask" when the listings say newer
-- but an object among them may keep its file's time in its metadata (a LastModified
-- is when the object was written; a download sets the file to the time kept).
local function newer_listed(a, b)
  if a.mtime == nil or b.mtime == nil then return true end
  if math.floor(a.mtime) <= math.floor(b.mtime) then return false end
  return (a.key or b.key) and "ask" or true
end

-- newer_listed's "ask" answered by the mtimes the objects keep in their metadata in
-- place of LastModified (stored_mtime: a HeadObject each).
function M.newer_stored(run, a, b)
  local am, bm = stored_mtime(run.client, run.options.from, a), stored_mtime(run.client, run.options.to, b)
  if am == nil and bm == nil then return true end
  return math.floor(am or a.mtime) > math.floor(bm or b.mtime)
end

-- Whether the source entry `a` and the target entry `b` differ under the options'
-- compare: true, false, or (size-mtime) "ask", which newer_stored answers.
function M.differ(run, a, b)
  local how = run.options.compare
  if a.size ~= b.size then return true end
  if how == "size" then return false end
  if how == "size-mtime" then return newer_listed(a, b) end
  if a.etag and b.etag then return etag_hex(a.etag) ~= etag_hex(b.etag) end
  if a.file and b.file then return cloud_module().md5_file(a.file) ~= cloud_module().md5_file(b.file) end  -- check's two folders
  local file, object = a.file and a or b, a.file and b or a
  return not file_matches_etag(run.options.part_size, file, object.etag)
end

-- differ with its "ask" answered at once, in this task.
function M.differ_now(run, a, b)
  local d = M.differ(run, a, b)
  if d == "ask" then return M.newer_stored(run, a, b) end
  return d
end

return M
