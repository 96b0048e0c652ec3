-- The sub-commands of the command line (`cloudlua NAME ...`, the names and options
-- declared in lua/command_specs.lua), each also a function of cloud.commands that
-- takes the same options as a table:
--
--   cloud.commands.cp{ "s3://logs/2024-*/*.gz", "dir/", dry_run = true }
--   cloud.commands.sync{ "./build", "s3://site/www", delete = true, exclude = { "*.tmp" } }
--   cloud.commands.ls{ "s3://site/www/", recursive = true, quiet = true }  -- the entries, nothing printed
--
-- The list part holds the positional arguments; an option is its long name with '_'
-- for '-' (--dry-run: dry_run, --limit-rate: limit_rate). --include and --exclude are
-- lists (include = { glob, ... }), or, in the order typed, filters = { { "exclude",
-- glob }, { "include", glob } }. A function prints what its command prints (quiet =
-- true: nothing but failures) and returns a result table whose `status` is the exit
-- status its command would have: 0 done, 1 something failed or differs (sync: or a
-- deletion was held back). A usage error (an unknown option, a missing argument, a
-- bad location) is raised as a validation error with code UsageError; on the command
-- line it is status 2, as is sync's and check's refusal of what was typed (a missing
-- source, an empty source under delete: NoSuchSource, EmptySource). An interrupted
-- sync prints its summary so far, marked " (interrupted)", and raises the Interrupted
-- error again (the process exits 130).
--
-- main(name, ...) is the command line: the arguments parsed by the command's spec
-- (the one that checks the table form too), the function called, its status returned.
--
-- Decisions:
-- * The declaration (lua/command_specs.lua) lists each command's positional arguments,
--   options (the shared ones once) and result; lua/command_line.lua turns a command
--   line into exactly the table a script would pass, and the same check then runs on
--   both.
-- * The commands keep their arguments and their printing; every copy, deletion and
--   stream goes through lua/copy.lua, as sync's do: a download writes beneath DST's
--   folder, a multipart upload is aborted when interrupted (its head says the rest).
-- * Everything that deletes (rm --recursive, rb --force) reads the whole listing,
--   completely and without error, before the first deletion.
-- * cp's source: one that names an object (HeadObject) is that object; else a wildcard
--   (`s3://b/logs/2024-*/*.gz`) is one listing of its literal prefix (the key up to
--   the first wildcard, '\' escapes undone as cloud.fs.glob reads them), every key
--   matched with cloud.fs.glob anchored at the top; the keys keep their path below
--   the prefix's last folder; no key matched is status 1. One object goes to DST as a
--   file unless DST ends with '/' or is a folder. A typed location is checked as the
--   model checks a bucket and a key before any copy (a usage error).

local M = {}

local cloud_module = require("cloud.check").cloud  -- the `cloud` table
local copy = require("cloud.copy")  -- every copy and deletion (lua/copy.lua)
local command_line = require("cloud.command_line")  -- the parser, usage errors, the printer
local usage, printer = command_line.usage, command_line.printer
local size_shown, time_shown = command_line.size_shown, command_line.time_shown
M.json_line = command_line.json_line

---------------------------------------------------------------- locations

-- The bucket location `text` names, { Bucket =, Prefix = } (Prefix "" for none), read
-- by cloud.storage.location (the one grammar), or nil for a local path; a usage error
-- for a string that starts like a location (s3:/b, gs://b, s3://) but is not one and
-- names nothing on disk.
local function parse_location(text)
  local cloud = cloud_module()
  local where, why = cloud.storage.location(text)
  if where then return { Bucket = where.Bucket, Prefix = where.Prefix or "" } end
  if text:match("^[%a][%w+.-]*:") and cloud.fs.stat(text) == nil then
    usage(why .. "; neither an existing local path nor a bucket location")
  end
  return nil
end

-- "s3://bucket/key": a location as the command line names it.
local function url(bucket, key) return "s3://" .. bucket .. "/" .. (key or "") end

-- The last segment of a key or path ("" for one ending with '/').
local function basename(path) return path:match("([^/]*)$") end

---------------------------------------------------------------- the declaration

-- The parser of the declaration (lua/command_specs.lua): the command line's words and
-- the table form, one check.
local parser = command_line.parser(require("cloud.command_specs"))
local checked_options, parse_words = parser.checked_options, parser.parse_words
-- The option tables of the commands main runs (run_for_status), weakly held.
local from_command_line = setmetatable({}, { __mode = "k" })
M.help_text = parser.help_text  -- the text of `cloudlua NAME --help`
-- The field names the table form of command `name` takes (the REPL completes them); {} for no command.
function M.fields_of(name) return parser.spec(name) and parser.fields_of(name) or {} end

---------------------------------------------------------------- shared steps

-- Runs body(...) with the process's bandwidth cap at o.limit_rate (when given), the
-- cap before it restored after, error or not.
local function with_rate(o, body, ...)
  if not o.limit_rate then return body(...) end
  local cloud = cloud_module()
  local before = cloud.limit_rate(o.limit_rate)
  local results = table.pack(pcall(body, ...))
  cloud.limit_rate(before)
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

-- A matcher of relative paths for o.filters (copy.filters and copy.selected: the last
-- filter that matches decides; everything is taken when none does, as sync does).
local function filter_of(o)
  local compiled = copy.filters(o.filters)
  return function(path) return copy.selected(compiled, path) end
end

-- Every object under `prefix` of `bucket`, read to the end of the listing before it
-- returns (an error on any page is raised: nothing has been acted on yet).
local function list_all(bucket, prefix)
  local out = {}
  for page in cloud_module().pages("list_objects_v2", { Bucket = bucket, Prefix = prefix ~= "" and prefix or nil }) do
    for _, c in ipairs(page.Contents) do out[#out + 1] = c end
  end
  return out
end

-- `prefix` as a folder: "" or ending with '/'.
local function folder(prefix)
  if prefix == "" or prefix:sub(-1) == "/" then return prefix end
  return prefix .. "/"
end

---------------------------------------------------------------- sync and check

-- Runs cloud.storage.NAME (sync or check) on `args`: its result, or the error it
-- raised turned into what the command reports. A bad argument (a location that is
-- not one, two local folders) becomes the usage error naming it; an interruption
-- carrying its summary is returned as (nil, err) for the caller to print it first;
-- anything else is raised as it is (a refusal such as NoSuchSource or EmptySource is
-- a validation error: status 2).
local function storage_call(name, args)
  local ok, r = pcall(cloud_module().storage[name], args)
  if ok then return r end
  if type(r) == "table" and r.code == "Interrupted" and r.summary then return nil, r end
  if type(r) == "string" and r:find("bad argument", 1, true) then
    usage((r:gsub("^%[?[^:]*%]? ?[^:]*:%d+: ", "")))  -- without the "chunk:line:" it was raised at
  end
  error(r, 0)
end

-- The summary line of a sync (or its record, with --output json); marked as
-- interrupted when it was.
local function sync_summary(p, o, summary, elapsed)
  local size_text = require("cloud.transfer_parts").size_text
  local src, dst = o.args[1], o.args[2]
  local held = summary.not_deleted or summary.deletes_withheld
  p.json{ { "summary", true }, { "copied", summary.copied }, { "skipped", summary.skipped },
          { "deleted", summary.deleted }, { "failed", summary.failed }, { "bytes", summary.bytes },
          { "dry_run", summary.dry_run or false }, { "seconds", tonumber(("%.3f"):format(elapsed)) },
          { "not_deleted", held }, { "interrupted", summary.interrupted and true or nil } }
  local note = held and (", %d not deleted"):format(held) or ""
  if summary.dry_run then
    p.out(("(dry run) %s -> %s: would copy %d (%s), delete %d%s; %d the same"):format(src, dst, summary.copied,
      size_text(summary.bytes), summary.deleted, note, summary.skipped))
  else
    p.out(("%s -> %s: %d copied (%s), %d the same, %d deleted%s, %d failed in %.1f s%s"):format(src, dst,
      summary.copied, size_text(summary.bytes), summary.skipped, summary.deleted, note, summary.failed, elapsed,
      summary.interrupted and " (interrupted)" or ""))
  end
end

-- cloud.commands.sync{ SRC, DST, ... }: cloud.storage.sync with the command's output.
-- Failures and held deletions go to stderr ("failed:", "not deleted:"); status 1 when
-- anything failed or a deletion was held back. Interrupted, the summary so far is
-- printed (marked) and the Interrupted error raised again (the process exits 130).
function M.sync(t)
  local o = checked_options("sync", t)
  if o.checksum and o.size_only then usage("--checksum and --size-only cannot be given together") end
  local p = printer(o)
  local on_action
  if p.json_mode then
    on_action = function(action, path, entry, err)
      if action == "skip" and not o.verbose then return end
      p.json{ { "action", o.dry_run and "plan-" .. action or action }, { "path", path },
              { "size", entry and action ~= "delete" and entry.size or nil }, { "error", err and tostring(err) or nil } }
    end
  elseif o.quiet then
    on_action = function() end
  end
  local start = cloud_module().clock()
  local summary, interruption = with_rate(o, function()
    return storage_call("sync", {
      from = o.args[1], to = o.args[2], delete = o.delete, dry_run = o.dry_run,
      delete_all = o.delete_all, max_delete = o.max_delete, filters = o.filters,
      compare = o.checksum and "checksum" or o.size_only and "size" or nil,
      concurrency = o.concurrency, part_size = o.part_size, shard = o.shard,
      progress = o.progress or (o.quiet and false) or nil, on_action = on_action, collect = true,
      content_type = o.content_type, cache_control = o.cache_control, metadata = o.metadata })
  end)
  if interruption then summary = interruption.summary end
  local elapsed = cloud_module().clock() - start
  for _, e in ipairs(summary.errors) do p.fail(e.path, e.error) end
  if summary.delete_note then p.note("not deleted: " .. summary.delete_note) end
  sync_summary(p, o, summary, elapsed)
  if interruption then io.stdout:flush(); error(interruption, 0) end
  summary.status = (summary.failed > 0 or summary.not_deleted or summary.deletes_withheld) and 1 or 0
  return summary
end

-- cloud.commands.check{ SRC, DST, ... }: cloud.storage.check with the command's
-- output; status 1 when anything differs or a folder could not be listed.
function M.check(t)
  local o = checked_options("check", t)
  local p = printer(o)
  local r = storage_call("check", { from = o.args[1], to = o.args[2], filters = o.filters,
                                    compare = o.size_only and "size" or "checksum" })
  local src, dst = o.args[1], o.args[2]
  for _, f in ipairs(r.failed) do p.fail(f.path, f.error) end
  local failed = {}
  for i, f in ipairs(r.failed) do failed[i] = f.path end
  p.json{ { "same", r.same }, { "differ", r.differ }, { "only_in_from", r.only_in_from }, { "only_in_to", r.only_in_to },
          { "failed", #failed > 0 and failed or nil } }
  for _, path in ipairs(r.differ) do p.out("differ: " .. path) end
  for _, path in ipairs(r.only_in_from) do p.out("only in " .. src .. ": " .. path) end
  for _, path in ipairs(r.only_in_to) do p.out("only in " .. dst .. ": " .. path) end
  p.out(("%d the same, %d differ, %d only in %s, %d only in %s"):format(r.same, #r.differ, #r.only_in_from, src,
    #r.only_in_to, dst))
  r.status = #r.differ + #r.only_in_from + #r.only_in_to + #r.failed > 0 and 1 or 0
  return r
end

---------------------------------------------------------------- streams

-- cloud.commands.cat{ "s3://b/key" }: the object to stdout, a part at a time.
function M.cat(t)
  local o = checked_options("cat", t)
  local where = parse_location(o.args[1])
  if not where or where.Prefix == "" or where.Prefix:sub(-1) == "/" then
    usage(("'%s' is not an object: cat takes s3://BUCKET/KEY"):format(o.args[1]))
  end
  local size = with_rate(o, function()
    return copy.download_stream(cloud_module().storage, { Bucket = where.Bucket, Object = where.Prefix,
                                                          part_size = o.part_size }, io.stdout)
  end)
  return { bytes = size, status = 0 }
end

---------------------------------------------------------------- cp

-- `where` (a location typed as `text`) checked as the model checks a bucket and a key
-- (location.unfit): a usage error naming it, before any copy.
local function checked_location(text, where)
  local problem = where and require("cloud.location").unfit(where)
  if problem then usage(("'%s' is not a location an object can have: %s"):format(text, problem)) end
  return where
end

-- Whether bucket/key names an object (HeadObject): a source that names one IS that
-- object, wildcard characters or not. An error but "not found" is raised.
local function object_exists(bucket, key)
  local ok, err = pcall(cloud_module().storage.head_object, { Bucket = bucket, Object = key })
  if ok then return true end
  if type(err) == "table" and (err.status == 404 or err.code == "NoSuchKey" or err.code == "NotFound") then return false end
  error(err, 0)
end

-- The folder a local DST names for what goes into it ("dir/" and "dir" alike).
local function local_root(dst)
  local root = dst:gsub("/+$", "")
  return root ~= "" and root or "/"
end

-- `copies` with the kind of each set: "upload", "download" or "copy".
local function with_kinds(copies)
  for _, c in ipairs(copies) do
    c.kind = c.from.file and "upload" or c.to.root and "download" or "copy"
  end
  return copies
end

-- The copies of `cp`: { from =, to =, size =, kind = "upload" | "download" | "copy" }
-- each; a download's `to` is { root =, path =, file = } (copy.download writes path
-- beneath root; file is how it is shown). `none_matched` when a wildcard matched no key.
local function plan_copies(o)
  local src, dst = o.args[1], o.args[2]
  local from = src ~= "-" and checked_location(src, parse_location(src))
  local to = dst ~= "-" and checked_location(dst, parse_location(dst))
  local cloud = cloud_module()
  local take = filter_of(o)
  if src == "-" or dst == "-" then
    if src == "-" and dst == "-" then usage("SRC and DST cannot both be - (stdin and stdout)") end
    if o.recursive then usage("--recursive cannot copy from stdin or to stdout") end
    local where = from or to
    if not where then usage("a copy from stdin or to stdout takes an s3://BUCKET/KEY on its other side, not a local path") end
    if where.Prefix == "" or where.Prefix:sub(-1) == "/" or copy.has_wildcard(where.Prefix) then
      usage(("'%s' is not one object: with -, the other side is s3://BUCKET/KEY"):format(from and src or dst))
    end
    return { { kind = src == "-" and "stdin" or "stdout", from = from, to = to } }
  end
  if not from and not to then
    usage(("'%s' and '%s' are both local paths: cloudlua copies to or from s3://BUCKET/KEY (use cp(1) for local copies)"):format(src, dst))
  end
  local copies = {}
  -- the target of a relative path `rel`
  local function target(rel)
    if to then return { bucket = to.Bucket, key = folder(to.Prefix) .. rel } end
    local root = local_root(dst)
    return { root = root, path = rel, file = root .. "/" .. rel }
  end
  -- every key under `prefix` that `match` takes, kept below `base`; going down, an
  -- empty key ending with '/' (a folder marker) is left out, as sync leaves it
  local function add_listed(prefix, base, match)
    for _, c in ipairs(list_all(from.Bucket, prefix)) do
      local rel = c.Key:sub(#base + 1)
      local marker = not to and rel:sub(-1) == "/" and c.Size == 0
      if rel ~= "" and not marker and match(c.Key) and take(rel) then
        copies[#copies + 1] = { from = { bucket = from.Bucket, key = c.Key }, to = target(rel), size = c.Size }
      end
    end
  end
  if from and o.recursive then
    if copy.has_wildcard(from.Prefix) then
      usage("--recursive and a wildcard cannot be given together: the wildcard says which keys")
    end
    add_listed(folder(from.Prefix), folder(from.Prefix), function() return true end)
  elseif from then
    local key = from.Prefix
    if key:find("[*?[\\]") and not object_exists(from.Bucket, key) then
      if copy.has_wildcard(key) then  -- one listing of the literal prefix, each key matched
        local literal = copy.literal_prefix(key)
        add_listed(literal, literal:match("^(.*/)") or "", cloud.fs.glob("/" .. key))
        copies.none_matched = #copies == 0
        return with_kinds(copies)
      end
      key = copy.unescaped(key)  -- escapes only: the one key they name
    end
    if key == "" or key:sub(-1) == "/" then
      usage(("'%s' is a prefix, not an object: give --recursive to copy what is under it"):format(src))
    end
    local into_folder = to and (to.Prefix == "" or to.Prefix:sub(-1) == "/")
      or not to and (dst:sub(-1) == "/" or (cloud.fs.stat(dst) or {}).type == "dir")
    local dest
    if into_folder then
      dest = target(basename(key))
    elseif to then
      dest = { bucket = to.Bucket, key = to.Prefix }
    else  -- DST is the file: written beneath its folder
      local dir = dst:match("^(.*)/[^/]*$")
      dest = { root = dir == nil and "." or dir == "" and "/" or dir, path = basename(dst), file = dst }
    end
    copies[1] = { from = { bucket = from.Bucket, key = key }, to = dest }
  else
    local stat = cloud.fs.stat(src)
    if not stat then usage(("'%s': no such file (a location is s3://BUCKET/KEY)"):format(src)) end
    if stat.type == "dir" then
      if not o.recursive then usage(("'%s' is a folder: give --recursive to copy what is in it"):format(src)) end
      for e in cloud.fs.walk(src) do
        if e.type == "file" and take(e.path) then
          copies[#copies + 1] = { from = { file = src:gsub("/+$", "") .. "/" .. e.path }, to = target(e.path), size = e.size }
        end
      end
    else
      local into_folder = to.Prefix == "" or to.Prefix:sub(-1) == "/"
      local key = into_folder and folder(to.Prefix) .. basename(src) or to.Prefix
      copies[1] = { from = { file = src }, to = { bucket = to.Bucket, key = key }, size = stat.size }
    end
  end
  return with_kinds(copies)
end

-- How a side of a copy is named on the command line.
local function named(s) return s.file or url(s.bucket, s.key) end

-- The header fields and metadata --content-type, --cache-control and --metadata give,
-- or nil when none is given.
local function given_headers(o)
  if not (o.content_type or o.cache_control or o.metadata) then return nil end
  return { ContentType = o.content_type, CacheControl = o.cache_control, Metadata = o.metadata }
end

-- Makes one copy of the plan through the one module of copies (lua/copy.lua); returns
-- the bytes copied.
local function copy_one(o, c)
  local storage, merge = cloud_module().storage, require("cloud.transfer_parts").merge
  local common = { concurrency = o.concurrency, part_size = o.part_size, progress = o.progress or false,
                   size = c.size, given = given_headers(o) }
  if c.kind == "upload" then
    return copy.upload(storage, merge({ file = c.from.file, Bucket = c.to.bucket, Object = c.to.key }, common))
  elseif c.kind == "download" then
    return (copy.download(storage, merge({ Bucket = c.from.bucket, Object = c.from.key, root = c.to.root,
                                           path = c.to.path }, common)))
  end
  return copy.server(storage, merge({ from = { Bucket = c.from.bucket, Object = c.from.key }, Bucket = c.to.bucket,
                                      Object = c.to.key, copy_limit = o.copy_limit }, common))
end

-- A stream's copy (`cp - s3://b/k`, `cp s3://b/k -`): the bytes, or nothing on a dry run.
local function copy_stream(o, p, c)
  local storage = cloud_module().storage
  if c.kind == "stdin" then
    if o.dry_run then return p.out("(dry run) upload: - to " .. url(c.to.Bucket, c.to.Prefix)) end
    return copy.upload_stream(storage, io.stdin, { Bucket = c.to.Bucket, Object = c.to.Prefix, part_size = o.part_size,
                                                   given = given_headers(o) })
  end
  if o.dry_run then return io.stderr:write("(dry run) download: " .. url(c.from.Bucket, c.from.Prefix) .. " to -\n") end
  return copy.download_stream(storage, { Bucket = c.from.Bucket, Object = c.from.Prefix, part_size = o.part_size }, io.stdout)
end

-- Makes the copies of the plan, `concurrency` at once, each printed as it ends (a
-- failure on stderr, the others go on); counts them in `result`.
local function copy_all(o, p, copies, result)
  cloud_module().map(copies, function(c)
    local action = o.dry_run and "plan-" .. c.kind or c.kind
    local ok, got = true, c.size or 0
    if not o.dry_run then ok, got = pcall(copy_one, o, c) end
    if not ok and require("cloud.transfer_parts").interrupted(got) then error(got, 0) end
    if ok then
      result.copied, result.bytes = result.copied + 1, result.bytes + (got or 0)
      p.out(("%s%s: %s to %s"):format(o.dry_run and "(dry run) " or "", c.kind, named(c.from), named(c.to)))
      p.json{ { "action", action }, { "from", named(c.from) }, { "to", named(c.to) }, { "size", c.size } }
    else
      result.failed = result.failed + 1
      result.errors[#result.errors + 1] = { path = named(c.from), error = got }
      p.fail(named(c.from), got)
      p.json{ { "action", action }, { "from", named(c.from) }, { "to", named(c.to) }, { "error", tostring(got) } }
    end
  end, { concurrency = o.concurrency or 16 })
end

-- cloud.commands.cp{ SRC, DST, ... }: see the head of this file and docs/cli.md. An
-- interruption aborts the multipart uploads left open (copy.guarded) and is raised again.
function M.cp(t)
  local o = checked_options("cp", t)
  local p = printer(o)
  local result = { copied = 0, failed = 0, bytes = 0, errors = {} }
  with_rate(o, copy.guarded, function()
    local copies = plan_copies(o)
    local c = copies[1]
    if c and (c.kind == "stdin" or c.kind == "stdout") then
      local bytes = copy_stream(o, p, c)
      if not o.dry_run then result.bytes, result.copied = bytes, 1 end
      return
    end
    if copies.none_matched then
      result.failed = 1
      result.errors[1] = { path = o.args[1], error = "no objects matched" }
      p.fail(o.args[1], "no objects matched (a '\\' before * ? [ names the character itself)")
    end
    copy_all(o, p, copies, result)
    p.json{ { "summary", true }, { "copied", result.copied }, { "failed", result.failed }, { "bytes", result.bytes },
            { "dry_run", o.dry_run or false } }
  end)
  result.status = result.failed > 0 and 1 or 0
  return result
end

---------------------------------------------------------------- ls

-- cloud.commands.ls{ [LOCATION], recursive =, human_readable =, ... }: prints the
-- listing; returns { buckets = } or { prefixes =, objects = }.
function M.ls(t)
  local o = checked_options("ls", t)
  local p = printer(o)
  local storage = cloud_module().storage
  if not o.args[1] then
    local r = storage.list_buckets{}
    for _, b in ipairs(r.Buckets) do
      p.out(("%s %s"):format(time_shown(b.CreationDate), b.Name))
      p.json{ { "bucket", b.Name }, { "created", b.CreationDate } }
    end
    return { buckets = r.Buckets, status = 0 }
  end
  local where = parse_location(o.args[1])
  if not where then usage(("'%s' is not a location: ls takes s3://BUCKET[/PREFIX]"):format(o.args[1])) end
  local keep = not from_command_line[t]  -- a command line's listing is printed, not kept
  local out, count = { prefixes = {}, objects = {}, bytes = 0 }, 0
  local args = { Bucket = where.Bucket, Prefix = where.Prefix ~= "" and where.Prefix or nil,
                 Delimiter = not o.recursive and "/" or nil }
  local base = o.recursive and "" or (where.Prefix:match("^(.*/)") or "")
  for page in cloud_module().pages("list_objects_v2", args) do
    for _, cp in ipairs(page.CommonPrefixes) do
      if keep then out.prefixes[#out.prefixes + 1] = cp.Prefix end
      p.out(("%30s %s"):format("PRE", cp.Prefix:sub(#base + 1)))
      p.json{ { "prefix", cp.Prefix } }
    end
    for _, c in ipairs(page.Contents) do
      if keep then out.objects[#out.objects + 1] = c end
      count = count + 1
      out.bytes = out.bytes + (c.Size or 0)
      p.out(("%s %10s %s"):format(time_shown(c.LastModified), size_shown(c.Size or 0, o.human_readable),
        c.Key:sub(#base + 1)))
      p.json{ { "key", c.Key }, { "size", c.Size }, { "last_modified", c.LastModified }, { "etag", c.ETag } }
    end
  end
  if o.summarize then
    p.out("")
    p.out(("Total Objects: %d"):format(count))
    p.out(("   Total Size: %s"):format(size_shown(out.bytes, o.human_readable)))
    p.json{ { "summary", true }, { "objects", count }, { "bytes", out.bytes } }
  end
  out.status = 0
  return out
end

---------------------------------------------------------------- rm, mb, rb

-- Deletes every object under bucket/prefix the filter takes, after the whole listing
-- has been read; prints each key (or its plan) and failure. Returns deleted, failed.
local function remove_all(o, p, bucket, prefix)
  local take = filter_of(o)
  local keys = {}
  for _, c in ipairs(list_all(bucket, prefix)) do
    if take(c.Key:sub(#prefix + 1)) then keys[#keys + 1] = c.Key end
  end
  if o.dry_run then
    for _, k in ipairs(keys) do
      p.out("(dry run) delete: " .. url(bucket, k))
      p.json{ { "action", "plan-delete" }, { "key", k } }
    end
    return #keys, 0
  end
  local deleted, failed, entries = 0, 0, {}
  for i, k in ipairs(keys) do entries[i] = { key = k } end
  copy.delete(cloud_module().storage, { bucket = bucket }, entries, function(e, err)
    local key = e.key
    if err then
      failed = failed + 1
      p.fail(url(bucket, key), err)
      p.json{ { "action", "delete" }, { "key", key }, { "error", tostring(err) } }
    else
      deleted = deleted + 1
      p.out("delete: " .. url(bucket, key))
      p.json{ { "action", "delete" }, { "key", key } }
    end
  end)
  return deleted, failed
end

-- cloud.commands.rm{ "s3://b/key" } or { "s3://b/prefix/", recursive = true, ... }.
function M.rm(t)
  local o = checked_options("rm", t)
  local where = parse_location(o.args[1])
  if not where then usage(("'%s' is not a location: rm takes s3://BUCKET/KEY (it never removes local files)"):format(o.args[1])) end
  local p = printer(o)
  local deleted, failed
  if o.recursive then
    deleted, failed = remove_all(o, p, where.Bucket, folder(where.Prefix))
  else
    if where.Prefix == "" or where.Prefix:sub(-1) == "/" then
      usage(("'%s' is a prefix, not an object: give --recursive to remove everything under it"):format(o.args[1]))
    end
    if #o.filters > 0 then usage("--include and --exclude choose among the keys of --recursive") end
    deleted, failed = 1, 0
    if o.dry_run then
      p.out("(dry run) delete: " .. o.args[1])
    else
      cloud_module().storage.delete_object{ Bucket = where.Bucket, Object = where.Prefix }
      p.out("delete: " .. o.args[1])
    end
    p.json{ { "action", o.dry_run and "plan-delete" or "delete" }, { "key", where.Prefix } }
  end
  p.json{ { "summary", true }, { "deleted", deleted }, { "failed", failed }, { "dry_run", o.dry_run or false } }
  return { deleted = deleted, failed = failed, status = failed > 0 and 1 or 0 }
end

-- The bucket a mb or rb location names; a usage error when it names more.
local function bucket_only(name, text)
  local where = parse_location(text)
  if not where or where.Prefix ~= "" then usage(("'%s': %s takes s3://BUCKET"):format(text, name)) end
  return where.Bucket
end

-- cloud.commands.mb{ "s3://bucket" }.
function M.mb(t)
  local o = checked_options("mb", t)
  local bucket = bucket_only("mb", o.args[1])
  cloud_module().storage.create_bucket{ Bucket = bucket }
  local p = printer(o)
  p.out("make_bucket: " .. bucket)
  p.json{ { "action", "make_bucket" }, { "bucket", bucket } }
  return { bucket = bucket, status = 0 }
end

-- cloud.commands.rb{ "s3://bucket", force = }: with force, every object first (after
-- the whole listing was read), then the bucket; not when an object could not go.
function M.rb(t)
  local o = checked_options("rb", t)
  local bucket = bucket_only("rb", o.args[1])
  local p = printer(o)
  local deleted, failed = 0, 0
  if o.force then deleted, failed = remove_all(o, p, bucket, "") end
  if failed > 0 then
    p.fail(bucket, ("%d objects could not be removed; the bucket is kept"):format(failed))
    return { bucket = bucket, deleted = deleted, failed = failed, status = 1 }
  end
  if o.dry_run then
    p.out("(dry run) remove_bucket: " .. bucket)
  else
    cloud_module().storage.delete_bucket{ Bucket = bucket }
    p.out("remove_bucket: " .. bucket)
  end
  p.json{ { "action", o.dry_run and "plan-remove_bucket" or "remove_bucket" }, { "bucket", bucket } }
  return { bucket = bucket, deleted = deleted, failed = failed, status = 0 }
end

---------------------------------------------------------------- the command line

-- The names of the sub-commands, in the order --help lists them.
M.names = parser.names()

-- The command NAME run on a command line's words: its result, or the usage error
-- raised (what main reports).
function M.run(name, ...)
  return M[name](parse_words(name, { ... }))
end

-- The command NAME run for main, which reads only its exit status: the options table
-- is marked, so that a command whose result would grow with the work (ls's listing)
-- prints as it goes and keeps nothing.
local function run_for_status(name, words)
  local t = parse_words(name, words)
  from_command_line[t] = true
  return M[name](t)
end

-- `cloudlua NAME ARGS...`: parses the words, runs the command, returns its exit
-- status (2 and the reason with the usage on stderr for a usage error). Any other
-- error is raised, for the top level to report.
function M.main(name, ...)
  local words = { ... }
  for _, w in ipairs(words) do
    if w == "-h" or w == "--help" then io.write(M.help_text(name)) return 0 end
    if w == "--" then break end
  end
  local ok, result = pcall(run_for_status, name, words)
  if ok then return result.status end
  local refused = type(result) == "table" and result.kind == "validation"
  if not refused then error(result, 0) end
  io.stdout:flush()
  local printable = cloud_module().printable
  if not command_line.is_usage_error(result) then  -- refused as typed (NoSuchSource, EmptySource): the reason only
    io.stderr:write(printable(("cloudlua %s: %s"):format(name, tostring(result))), "\n")
    return 2
  end
  io.stderr:write(printable(("cloudlua %s: %s"):format(name, result.message)), "\n",
    ("usage: %s"):format(M.help_text(name):match("^usage: ([^\n]*)")), "\n",
    ("Run 'cloudlua %s --help' for every option.\n"):format(name))
  return 2
end

return M
