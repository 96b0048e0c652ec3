-- Copying and deleting objects and files, once for every command (require
-- "cloud.copy"): storage.sync and storage.check (lua/sync.lua) and the sub-commands
-- cp, rm and cat (lua/commands.lua) call it for each copy and deletion, as rclone's
-- sync and copyto share operations.Copy and operations.DeleteFiles, so that a guard
-- written here holds for every command, a new one included.
--
--   copy.upload(storage, { file =, Bucket =, Object =, ... })      a file to a key
--   copy.download(storage, { Bucket =, Object =, root =, path =, ... })  a key to root/path
--   copy.server(storage, { from = { Bucket =, Object = }, Bucket =, Object =, ... })  key to key
--   copy.delete(storage, { bucket = } or { dir = }, entries, done)  1,000 keys a DeleteObjects
--   copy.upload_stream(storage, stream, where) / copy.download_stream(storage, where, stream)
--   copy.filters(list), copy.selected(filters, path)   include/exclude, the last match decides
--   copy.guarded(body)   an interruption aborts the multipart uploads left open
--
-- Decisions:
-- * A download writes beneath a root folder it is given, always: a key is refused
--   (unsafe_local_name: absolute, an empty, '.' or '..' folder, a NUL byte) before
--   anything is written, and its folders, its part file and its writes reach the root
--   without following a link (cloud.fs.mkdir, get_object and download_file with
--   beneath = root). A link inside the root is never followed; the root itself is the
--   caller's, as given.
-- * An upload refuses a key that is not UTF-8 or longer than 1,024 bytes (unsafe_key);
--   a file no larger than part_size is one PutObject, a larger one upload_file's parts.
--   Both send the file's type and mtime (transfer_parts.upload_headers).
-- * A copy between buckets is one CopyObject up to the model's CopyObject limit
--   (copy_limit lowers it), above it a multipart upload of UploadPartCopy ranges. It
--   keeps the source's headers and metadata (COPY); with `given` fields, the source's
--   are read (HeadObject), those laid over them and sent with REPLACE.
-- * Every multipart upload (files, streams, copies in parts) goes through
--   transfer_parts.multipart, which lists it for abort_open whatever the options; an
--   interruption caught by guarded aborts them all, since the tasks that opened them are
--   not resumed.
-- * Deletions: keys 1,000 to a DeleteObjects, each key the server refuses reported on
--   its own; local files removed one by one beneath their root, never through a link.

local MiB = 1024 * 1024
local DELETE_BATCH = 1000  -- keys in one DeleteObjects

local parts_of = require("cloud.transfer_parts")
local cloud_module = require("cloud.check").cloud

local M = { DELETE_BATCH = DELETE_BATCH }

---------------------------------------------------------------- names and filters

-- Why a bucket's relative path cannot be a local file's name, or nil when it can.
function M.unsafe_local_name(path)
  if path:sub(1, 1) == "/" then return "a key that would be an absolute path" end
  for part in (path .. "/"):gmatch("(.-)/") do
    if part == "" or part == "." or part == ".." then return "a key with an empty, '.' or '..' folder" end
  end
  if path:find("\0", 1, true) then return "a key with a NUL byte" end
end

-- Why a local relative path cannot be an object key, or nil when it can.
function M.unsafe_key(key)
  if not utf8.len(key) then return "the name is not UTF-8, which an object key must be" end
  if #key > 1024 then return ("the key would be %d bytes, more than 1024"):format(#key) end
end

-- The key `path` with each byte but unreserved ones and '/' percent-encoded (CopySource).
function M.url_encoded(path)
  return (path:gsub("[^%w%-%._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- Whether `glob` holds a wildcard of cloud.fs.glob (* ? [) that no '\' escapes.
function M.has_wildcard(glob)
  return glob:gsub("\\.", ""):find("[*?[]") ~= nil
end

-- The literal text `glob` starts with, its escapes undone (cloud.fs.glob reads "\x"
-- as x): the prefix a listing of what it matches needs. "data\[1\]*.csv" gives "data[1]".
function M.literal_prefix(glob)
  local out, i = {}, 1
  while i <= #glob do
    local c = glob:sub(i, i)
    if c == "*" or c == "?" or c == "[" then break end
    if c == "\\" then i = i + 1; c = glob:sub(i, i) end
    out[#out + 1], i = c, i + 1
  end
  return table.concat(out)
end

-- `glob` with its escapes undone: the one key a pattern without a wildcard names.
function M.unescaped(glob)
  return (glob:gsub("\\(.)", "%1"))
end

-- The filters of `list` ({ "include" | "exclude", glob } each, in order), compiled
-- once (cloud.fs.glob).
function M.filters(list)
  local out = {}
  for i, f in ipairs(list) do out[i] = { include = f[1] == "include", match = cloud_module().fs.glob(f[2]) } end
  return out
end

-- Whether `path` is taken by the compiled `filters`: the last one matching decides,
-- everything is taken when none does (aws-cli's rule).
function M.selected(filters, path)
  local keep = true
  for _, f in ipairs(filters) do
    if f.match(path) then keep = f.include end
  end
  return keep
end

---------------------------------------------------------------- one object

-- The error of a name that cannot be written (unsafe_local_name, unsafe_key): that
-- name's failure, the others go on.
local function refused(problem) error(problem, 0) end

-- Uploads t.file to t.Bucket/t.Object: t.size (else read), t.mtime (else the file's),
-- t.given (header fields and Metadata, or nil), t.part_size, t.concurrency,
-- t.progress. Returns the bytes sent.
function M.upload(storage, t)
  local problem = M.unsafe_key(t.Object)
  if problem then refused(problem) end
  local part_size = t.part_size or 8 * MiB
  local st = (t.size == nil or t.mtime == nil) and cloud_module().fs.stat(t.file) or {}
  local size, mtime = t.size or st.size, t.mtime or st.mtime
  local headers = parts_of.upload_headers(t.given or {}, t.file, mtime)
  if size and size <= part_size then
    storage.put_object(parts_of.merge({ Bucket = t.Bucket, Object = t.Object, file = t.file }, headers))
  else  -- upload_file: parts, each listed for abort_open while open
    storage.upload_file(parts_of.merge({ Bucket = t.Bucket, Object = t.Object, file = t.file, part_size = part_size,
                                         concurrency = t.concurrency, progress = t.progress or false }, headers))
  end
  return size or 0
end

-- Downloads t.Bucket/t.Object to the relative path t.path beneath the folder t.root
-- (required: no download skips the guard): t.size (nil: unknown, asked), t.mtime
-- (the listing's, else the object's), t.part_size, t.concurrency, t.progress,
-- t.durable (default true), t.made (a table that remembers the last folder made, for
-- a caller that downloads a folder's files in a row). Returns the bytes and the file.
function M.download(storage, t)
  local cloud = cloud_module()
  if type(t.root) ~= "string" or t.root == "" then
    error(cloud.error{ kind = "validation", code = "ValidationError", operation = "Download",
      message = "a download needs the folder it writes beneath (root); nothing was written" }, 0)
  end
  local problem = M.unsafe_local_name(t.path)
  if problem then refused(problem) end
  local target = t.root .. "/" .. t.path
  local parent = target:match("^(.*)/[^/]*$")
  local made = t.made or {}
  if made.folder ~= parent then  -- a link in the way is this file's failure
    cloud.fs.mkdir(parent, { beneath = t.root })
    made.folder = parent
  end
  local part_size, size = t.part_size or 8 * MiB, t.size
  if size and size <= part_size then
    local r = storage.get_object{ Bucket = t.Bucket, Object = t.Object, file = target, durable = t.durable,
                                  beneath = t.root }
    local mtime = parts_of.object_mtime(r) or t.mtime
    if mtime then cloud.fs.set_mtime(target, mtime) end
    return size, target
  end
  -- download_file sets the file's mtime itself (parts_of.object_mtime)
  local r = storage.download_file{ Bucket = t.Bucket, Object = t.Object, file = target, part_size = part_size,
                                   concurrency = t.concurrency, progress = t.progress or false, durable = t.durable,
                                   beneath = t.root }
  return r.ContentLength, target
end

-- The model's CopyObject limit: the largest source one CopyObject copies.
function M.copy_limit()
  return cloud_module().describe("CopyObject").limits.maxSourceBytes
end

-- The object t.from copied to t.Bucket/t.Object on the server in parts: a multipart
-- upload (created with the source's headers and t.given) of UploadPartCopy ranges of
-- part_size (larger when the platform's part count needs it), completed in order;
-- aborted on failure.
local function copy_in_parts(storage, t, size)
  local _, _, max_parts = parts_of.limits()
  local part = math.max(t.part_size or 8 * MiB, (size + max_parts - 1) // max_parts)
  local source, bucket, key = M.url_encoded(t.from.Bucket .. "/" .. t.from.Object), t.Bucket, t.Object
  local parts, done = {}, {}
  for n = 1, (size + part - 1) // part do parts[n] = { number = n, first = (n - 1) * part } end
  local headers = parts_of.source_headers(storage, t.from.Bucket, t.from.Object, t.given)
  parts_of.multipart(storage, { Bucket = bucket, Object = key, headers = headers }, done, function(upload)
    cloud_module().map(parts, function(p)
      local last = math.min(p.first + part, size) - 1
      done[p.number] = storage.upload_part_copy{ Bucket = bucket, Object = key, uploadId = upload,
        partNumber = p.number, CopySource = source, CopySourceRange = ("bytes=%d-%d"):format(p.first, last) }.ETag
    end, { concurrency = t.concurrency or 16 })
  end)
end

-- Copies t.from ({ Bucket =, Object = }) to t.Bucket/t.Object on the server: t.size
-- (nil: asked with HeadObject), t.given, t.copy_limit (default the model's),
-- t.part_size, t.concurrency. Returns the bytes copied.
function M.server(storage, t)
  local size = t.size or storage.head_object{ Bucket = t.from.Bucket, Object = t.from.Object }.ContentLength
  if size > (t.copy_limit or M.copy_limit()) then
    copy_in_parts(storage, t, size)
    return size
  end
  local copy = { Bucket = t.Bucket, Object = t.Object, CopySource = M.url_encoded(t.from.Bucket .. "/" .. t.from.Object) }
  if t.given then  -- COPY (the default) keeps the source's; with options, REPLACE with both
    parts_of.merge(copy, parts_of.source_headers(storage, t.from.Bucket, t.from.Object, t.given)).MetadataDirective = "REPLACE"
  end
  storage.copy_object(copy)
  return size
end

---------------------------------------------------------------- deletions

-- Deletes `entries` (a list) of `where`: { key = } each of the bucket where.bucket,
-- 1,000 to a DeleteObjects, or { file = } each beneath the folder where.dir, one by
-- one and never through a link; done(entry, err) for each (err nil when it went).
function M.delete(storage, where, entries, done)
  if where.dir then
    for _, e in ipairs(entries) do
      local ok, err = pcall(cloud_module().fs.remove, e.file, { beneath = where.dir })
      done(e, not ok and err or nil)
    end
    return
  end
  for first = 1, #entries, DELETE_BATCH do
    local keys, by_key = {}, {}
    for i = first, math.min(first + DELETE_BATCH - 1, #entries) do
      local e = entries[i]
      keys[#keys + 1], by_key[e.key] = { Key = e.key }, e
    end
    local ok, r = pcall(storage.delete_objects, { Bucket = where.bucket, Object = keys, Quiet = true })
    local failed = {}
    if not ok then
      for _, k in ipairs(keys) do failed[k.Key] = true; done(by_key[k.Key], r) end
    else
      for _, problem in ipairs(r.Error) do
        failed[problem.Key] = true
        done(by_key[problem.Key] or { key = problem.Key }, cloud_module().error{ kind = "api",
          code = problem.Code or "DeleteFailed", operation = "DeleteObjects", message = tostring(problem.Message) })
      end
    end
    for _, k in ipairs(keys) do if not failed[k.Key] then done(by_key[k.Key], nil) end end
  end
end

---------------------------------------------------------------- streams

-- Reads `stream` up to `n` bytes (fewer only at its end); nil at the end.
local function read_full(stream, n)
  local parts, got = {}, 0
  while got < n do
    local chunk = stream:read(n - got)
    if not chunk then break end
    parts[#parts + 1], got = chunk, got + #chunk
  end
  return got > 0 and table.concat(parts) or nil
end

-- Uploads what `stream` holds to where.Bucket/where.Object a part of where.part_size
-- at a time (one PutObject when it all fits in one), with where.given's header
-- fields; the multipart upload is transfer_parts.multipart's (aborted on failure and
-- listed for abort_open). Returns the bytes sent.
function M.upload_stream(storage, stream, where)
  local merge, min_part = parts_of.merge, parts_of.limits()
  local part_size = math.max(where.part_size or 8 * MiB, min_part)
  local first = read_full(stream, part_size) or ""
  if #first < part_size then
    storage.put_object(merge({ Bucket = where.Bucket, Object = where.Object, Body = first }, where.given))
    return #first
  end
  local done, sent = {}, 0
  parts_of.multipart(storage, { Bucket = where.Bucket, Object = where.Object, headers = where.given }, done,
    function(upload_id)
      local chunk, n = first, 0
      while chunk do
        n = n + 1
        done[n] = storage.upload_part{ Bucket = where.Bucket, Object = where.Object, uploadId = upload_id,
                                       partNumber = n, body = chunk }.ETag
        sent = sent + #chunk
        chunk = read_full(stream, part_size)
      end
    end)
  return sent
end

-- Writes the object where.Bucket/where.Object to `stream` in ranged GETs of
-- where.part_size, each checked against the ETag the object had at the start.
-- Returns the bytes written.
function M.download_stream(storage, where, stream)
  local cloud = cloud_module()
  local head = storage.head_object{ Bucket = where.Bucket, Object = where.Object }
  local size, etag, part_size = head.ContentLength or 0, head.ETag, where.part_size or 8 * MiB
  for offset = 0, size - 1, part_size do
    local last = math.min(offset + part_size, size) - 1
    local r = storage.get_object{ Bucket = where.Bucket, Object = where.Object, Range = ("bytes=%d-%d"):format(offset, last) }
    if r.ETag ~= etag then
      error(cloud.error{ kind = "api", code = "ObjectChanged", operation = "GetObject",
        message = ("s3://%s/%s changed while it was read (ETag %s, then %s)"):format(where.Bucket, where.Object,
          tostring(etag), tostring(r.ETag)) }, 0)
    end
    stream:write(r.Body)
  end
  stream:flush()
  return size
end

---------------------------------------------------------------- interruption

-- Runs body(); an interruption (SIGINT, SIGTERM) escaping it aborts every multipart
-- upload the process left open (transfer_parts.abort_open: the tasks that opened them
-- are not resumed) and is raised again, as is any other error.
function M.guarded(body, ...)
  local results = table.pack(pcall(body, ...))
  if results[1] then return table.unpack(results, 2, results.n) end
  if parts_of.interrupted(results[2]) then parts_of.abort_open() end
  error(results[2], 0)
end

return M
