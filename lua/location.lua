-- The one grammar of a location (require "cloud.location"): s3://BUCKET[/PREFIX] (or
-- cloud://) read as { Bucket =, Prefix = } (storage.location), a side of a sync or
-- check (a local folder or a bucket location), a side as the command line names it,
-- and a location checked as the model checks a bucket name and a key.

local argcheck = require("cloud.check")
local cloud_module = argcheck.cloud

local M = {}

-- Raises lauxlib's "bad argument" error for argument 1 of `fname`, blaming the caller
-- of sync or check (`level` frames up).
local function arg_error(fname, message, level)
  argcheck.arg_error(1, fname, message, level)
end

-- The two forms a location takes, for messages.
M.FORMS = "a local folder or a bucket location s3://BUCKET[/PREFIX] (or { Bucket =, Prefix = })"
local SCHEMES = { s3 = true, cloud = true }  -- cloud:// is the platform's own spelling of s3://

-- storage.location(text): the bucket location `text` names, s3://BUCKET[/PREFIX] (or
-- cloud://BUCKET[/PREFIX]), as { Bucket =, Prefix = } (Prefix nil for the whole
-- bucket); nil and the reason for any other string. The one grammar of a location:
-- sync, check and the commands read their strings through it.
function M.parse(text)
  if type(text) ~= "string" then return nil, "a string expected, got " .. type(text) end
  local shown = cloud_module().printable(text)
  local scheme, rest = text:match("^([%a][%w+.-]*)://(.*)$")
  if not scheme then return nil, ("'%s' is not a bucket location: s3://BUCKET[/PREFIX] expected"):format(shown) end
  if not SCHEMES[scheme] then
    return nil, ("'%s': unknown scheme '%s'; a bucket location is s3://BUCKET[/PREFIX]"):format(shown, scheme)
  end
  local bucket, prefix = rest:match("^([^/]*)/?(.*)$")
  if bucket == "" then return nil, ("'%s' names no bucket: s3://BUCKET[/PREFIX] expected"):format(shown) end
  if bucket:find("[%c%s\\]") then return nil, ("'%s': a bucket name has no spaces, control characters or '\\'"):format(shown) end
  return { Bucket = bucket, Prefix = prefix ~= "" and prefix or nil }
end

-- Whether `text` starts as a location would ("s3:", "S3://", "gs://"): such a string
-- is never taken for a new local folder.
local function looks_like_location(text)
  return text:match("^[%a][%w+.-]*:") ~= nil
end

-- A side of the transfer: { dir = } for a local directory, { bucket =, prefix = } for
-- a bucket location (prefix "" or ending with '/'). A string is a location when it
-- has a scheme (M.parse), else a local path; a string that starts like a
-- location but is not a valid one, and names nothing on disk, is refused.
function M.side(fname, field, value)
  if type(value) == "string" then
    if value == "" then arg_error(fname, "field '" .. field .. "' must not be empty", 5) end
    local where, why = M.parse(value)
    if not where and looks_like_location(value) and cloud_module().fs.stat(value) == nil then
      arg_error(fname, "field '" .. field .. "': " .. why .. "; neither an existing local path nor a bucket location", 5)
    end
    if not where then return { dir = value:gsub("(.)/+$", "%1"), given = value } end
    value = where
  end
  if type(value) ~= "table" or type(value.Bucket) ~= "string" then
    arg_error(fname, "field '" .. field .. "' must be " .. M.FORMS, 5)
  end
  local prefix = value.Prefix or ""
  if type(prefix) ~= "string" then arg_error(fname, "field '" .. field .. ".Prefix' must be a string", 5) end
  if prefix ~= "" and prefix:sub(-1) ~= "/" then prefix = prefix .. "/" end
  return { bucket = value.Bucket, prefix = prefix }
end

-- A side as the command line names it: the folder as given, or s3://BUCKET/PREFIX.
function M.describe(side)
  return side.given or side.dir or ("s3://" .. side.bucket .. "/" .. side.prefix)
end

-- Why the bucket location `where` ({ Bucket =, Prefix = }) cannot be an object's,
-- as the model checks a bucket name and a key (not UTF-8, over 1,024 bytes), or nil
-- when it can: storage.presign validates so and sends nothing.
function M.unfit(where)
  local ok, err = pcall(cloud_module().storage.presign, { Bucket = where.Bucket,
    Object = where.Prefix ~= nil and where.Prefix ~= "" and where.Prefix or "-" })
  if ok or type(err) ~= "table" or err.kind ~= "validation" then return nil end
  local problems = {}
  for i, f in ipairs(err.fields or {}) do
    problems[i] = ("%s: %s"):format(f.path == "Object" and "its key" or "its bucket", f.problem)
  end
  return #problems > 0 and table.concat(problems, "; ") or tostring(err.message)
end

return M
