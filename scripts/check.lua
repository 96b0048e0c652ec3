-- Tells what differs between SRC and DST (a local folder and a bucket location, or
-- two bucket locations) with cloud.storage.check, transferring nothing: by default by
-- content (MD5 and ETags).
--
--   cloudlua scripts/check.lua SRC DST [--size-only] [--exclude GLOB]... [--include GLOB]... [--output json]
--   cloudlua scripts/check.lua ./build s3://site/www
--
-- Prints each path that differs or is on one side only, then a summary line; with
-- --output json, one JSON record. Exit status 0 when both sides hold the same, 1 when
-- they differ (or a folder could not be listed), 2 on a usage error (a missing source
-- among them). A bucket location is s3://BUCKET/PREFIX, read by cloud.storage.location.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local lib = require("lib.args")
local trees = require("lib.trees")
local printable = cloud.printable  -- names and messages are anybody's bytes

local args = lib.parse({
  usage = "cloudlua scripts/check.lua SRC DST [--size-only] [--exclude GLOB]... [--include GLOB]... [--output json]",
  about = "Tells what differs between SRC and DST (a local folder or s3://BUCKET/PREFIX each), transferring nothing.",
  positional = { "src", "dst" },
  options = {
    { "size-only", doc = "Compare sizes only, not contents" },
    { "exclude", value = "GLOB", ordered = "filters", doc = "Leave out the paths GLOB matches; may repeat" },
    { "include", value = "GLOB", ordered = "filters", doc = "Take the paths GLOB matches back in; may repeat" },
    { "output", value = "FORMAT", choices = { "text", "json" }, doc = "json: one JSON record" },
  },
}, ...)
if not args then return end

local ok, r = pcall(cloud.storage.check, { from = args.src, to = args.dst, filters = args.filters,
                                            compare = args.size_only and "size" or "checksum" })
if not ok then lib.exit(trees.status_of(r), "check.lua: " .. printable(trees.message_of(r)) .. "\n") end
for _, f in ipairs(r.failed) do io.stderr:write(printable(("failed: %s: %s"):format(f.path, tostring(f.error))), "\n") end
if args.output == "json" then
  local failed = {}
  for i, f in ipairs(r.failed) do failed[i] = f.path end
  print(trees.json_line{ { "same", r.same }, { "differ", r.differ }, { "only_in_from", r.only_in_from },
                         { "only_in_to", r.only_in_to }, { "failed", #failed > 0 and failed or nil } })
else
  for _, p in ipairs(r.differ) do print(printable("differ: " .. p)) end
  for _, p in ipairs(r.only_in_from) do print(printable("only in " .. args.src .. ": " .. p)) end
  for _, p in ipairs(r.only_in_to) do print(printable("only in " .. args.dst .. ": " .. p)) end
  print(printable(("%d the same, %d differ, %d only in %s, %d only in %s"):format(r.same, #r.differ, #r.only_in_from,
    args.src, #r.only_in_to, args.dst)))
end
if #r.differ + #r.only_in_from + #r.only_in_to + #r.failed > 0 then lib.exit(1, "") end
