-- Makes DST the same as SRC, a local folder and a bucket location or two bucket
-- locations, with cloud.storage.sync: only what is missing or changed is copied;
-- with --delete, what DST has and SRC does not is removed.
--
--   cloudlua scripts/sync.lua SRC DST [--delete] [--dry-run] [--exclude GLOB]... [--include GLOB]...
--                             [--checksum | --size-only] [--concurrency N] [--part-size SIZE]
--                             [--delete-all] [--max-delete N] [--shard I/N] [--output json] [--verbose] [--progress]
--                             [--content-type TYPE] [--cache-control VALUE] [--metadata K=V,...]
--   cloudlua scripts/sync.lua ./build s3://site/www --delete --exclude '*.tmp'
--   cloudlua scripts/sync.lua s3://site/www ./mirror
--
-- A bucket location is s3://BUCKET/PREFIX (or cloud://BUCKET/PREFIX), read by
-- cloud.storage.location; anything else is a local folder, and a source folder must
-- exist. --exclude and --include apply in the order given, the later winning.
-- Uploads are typed from each file's name (the system's /etc/mime.types) unless
-- --content-type says otherwise; --content-type, --cache-control and --metadata apply
-- to every object uploaded or copied.
-- Deletions come after the copies, and only when both sides were listed whole; an
-- empty source never empties DST without --delete-all; --max-delete N stops at N.
-- Output: a progress line on a terminal (with --progress, a line every few seconds
-- off one), then one summary line; with --output json, one JSON line per copy and
-- deletion (and skip, with --verbose) and a summary record. Failures are listed on
-- stderr. Exit status 0 when nothing failed, 1 when something did (or deletions were
-- held back), 2 on a usage error (a missing source, an empty source with --delete),
-- 130 when interrupted (Ctrl-C or SIGTERM: the summary so far is printed, marked
-- "(interrupted)", after the multipart uploads the sync opened were aborted).

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local lib = require("lib.args")
local trees = require("lib.trees")
local printable = cloud.printable  -- names and messages are anybody's bytes

local args = lib.parse({
  usage = "cloudlua scripts/sync.lua SRC DST [--delete] [--dry-run] [--exclude GLOB]... [--include GLOB]... [options]",
  about = "Makes DST the same as SRC: a local folder or s3://BUCKET/PREFIX each; copies what is missing or changed.",
  positional = { "src", "dst" },
  options = {
    { "delete", doc = "Remove what DST has and SRC does not (never what --exclude keeps out), after the copies" },
    { "delete-all", doc = "With --delete, allow an empty SRC to empty DST (refused otherwise)" },
    { "max-delete", value = "N", check = function(text)
        local n = math.tointeger(tonumber(text))
        if n and n >= 0 then return n end
        return nil, "a count >= 0 expected"
      end, doc = "With --delete, remove at most N; the rest is reported and the exit status is 1" },
    { "dry-run", doc = "Show what would be done; change nothing" },
    { "exclude", value = "GLOB", ordered = "filters", doc = "Leave out the paths GLOB matches (* ** ? [...]); may repeat" },
    { "include", value = "GLOB", ordered = "filters", doc = "Take the paths GLOB matches back in; may repeat; the later filter wins" },
    { "checksum", doc = "Compare contents (MD5 and ETags), not sizes and times" },
    { "size-only", doc = "Compare sizes only" },
    { "concurrency", value = "N", check = "count", doc = "Transfers at once, parts of large files included (default 16)" },
    { "part-size", value = "SIZE", check = "size", doc = "Files above SIZE go in parts of SIZE (default 8M)" },
    { "shard", value = "I/N", check = function(text)
        local i, n = text:match("^(%d+)/(%d+)$")
        i, n = tonumber(i), tonumber(n)
        if i and n and n >= 1 and i < n then return { index = i, count = n } end
        return nil, "I/N with 0 <= I < N expected (shard I of N)"
      end, doc = "Take only the paths of shard I of N (0-based; FNV-1a of the path)" },
    { "output", value = "FORMAT", choices = { "text", "json" }, doc = "json: one JSON line per action and a summary record" },
    { "verbose", doc = "With --output json, a line for each path skipped too" },
    { "progress", doc = "Off a terminal too, a progress line every few seconds" },
    { "content-type", value = "TYPE", doc = "The Content-Type of every object uploaded or copied (default: from each file's name)" },
    { "cache-control", value = "VALUE", doc = "The Cache-Control of every object uploaded or copied" },
    { "metadata", value = "K=V,...", check = function(text)
        local map = {}
        for pair in (text .. ","):gmatch("([^,]*),") do
          local k, v = pair:match("^([^=]+)=(.*)$")
          if not k then return nil, "K=V pairs separated by commas expected (got '" .. pair .. "')" end
          map[k] = v
        end
        return map
      end, doc = "User metadata of every object uploaded or copied: K=V pairs separated by commas" },
  },
}, ...)
if not args then return end

local json = args.output == "json"
local on_action = nil
if json then
  on_action = function(action, path, entry, err)
    if action == "skip" and not args.verbose then return end
    local fields = { { "action", args.dry_run and "plan-" .. action or action }, { "path", path } }
    if entry and entry.size and action ~= "delete" then fields[#fields + 1] = { "size", entry.size } end
    if err then fields[#fields + 1] = { "error", tostring(err) } end
    print(trees.json_line(fields))
  end
end

local start = cloud.clock()
local ok, summary = pcall(cloud.storage.sync, {
  from = args.src, to = args.dst, delete = args.delete, dry_run = args.dry_run,
  delete_all = args.delete_all, max_delete = args.max_delete,
  filters = args.filters, compare = args.checksum and "checksum" or args.size_only and "size" or nil,
  concurrency = args.concurrency, part_size = args.part_size, shard = args.shard,
  progress = args.progress or nil, on_action = on_action, collect = true,
  content_type = args.content_type, cache_control = args.cache_control, metadata = args.metadata,
})
local interruption = nil  -- an interruption's error: raised again once its summary is out
if not ok then
  if type(summary) == "table" and summary.code == "Interrupted" and summary.summary then
    interruption, summary = summary, summary.summary
  else
    lib.exit(trees.status_of(summary), "sync.lua: " .. printable(trees.message_of(summary)) .. "\n")
  end
end
local elapsed = cloud.clock() - start
local size_text = require("cloud.transfer_parts").size_text
for _, e in ipairs(summary.errors) do
  io.stderr:write(printable(("failed: %s: %s"):format(e.path, tostring(e.error))), "\n")
end
if summary.delete_note then io.stderr:write(printable("not deleted: " .. summary.delete_note), "\n") end
if json then
  local fields = { { "summary", true }, { "copied", summary.copied }, { "skipped", summary.skipped },
    { "deleted", summary.deleted }, { "failed", summary.failed }, { "bytes", summary.bytes },
    { "dry_run", summary.dry_run or false }, { "seconds", tonumber(("%.3f"):format(elapsed)) },
    { "not_deleted", summary.not_deleted or summary.deletes_withheld } }
  if summary.interrupted then fields[#fields + 1] = { "interrupted", true } end
  print(trees.json_line(fields))
else
  local held = summary.not_deleted or summary.deletes_withheld
  local note = held and (", %d not deleted"):format(held) or ""
  if summary.dry_run then
    print(printable(("(dry run) %s -> %s: would copy %d (%s), delete %d%s; %d the same"):format(args.src, args.dst,
      summary.copied, size_text(summary.bytes), summary.deleted, note, summary.skipped)))
  else
    print(printable(("%s -> %s: %d copied (%s), %d the same, %d deleted%s, %d failed in %.1f s%s"):format(args.src,
      args.dst, summary.copied, size_text(summary.bytes), summary.skipped, summary.deleted, note, summary.failed, elapsed,
      summary.interrupted and " (interrupted)" or "")))
  end
end
if interruption then io.stdout:flush(); error(interruption, 0) end
if summary.failed > 0 or summary.not_deleted or summary.deletes_withheld then lib.exit(1, "") end
