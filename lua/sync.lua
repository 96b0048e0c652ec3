-- Trees of files and whole buckets: storage.sync and storage.check, composed from
-- cloud.fs, the listing's pages (cloud.pages) and cloud.map. This file holds the merge
-- of the two sorted listings, the comparison and the rules before any deletion; each
-- copy and deletion is lua/copy.lua's (require "cloud.copy"), the one module every
-- command copies through, with its guards (names, links, uploads left open).
--
--   local summary = c.storage.sync{ from =, to =, delete = false, delete_all = false,
--     max_delete = nil, dry_run = false,
--     include = {}, exclude = {}, filters = {}, compare = "size-mtime", concurrency = 16,
--     part_size = 8 MiB, progress =, shard = { index =, count = }, collect = false,
--     follow_links = false, content_type = nil, cache_control = nil, metadata = nil }
--   local report = c.storage.check{ from =, to =, compare = "checksum", ... }
--
-- `from` and `to` are each a local directory (a string), a bucket location string
-- "s3://BUCKET/PREFIX" (storage.location, the one grammar) or { Bucket =, Prefix = }
-- (a Prefix is a folder: "site" means the keys under "site/"); check's may both be
-- local directories (compared by MD5, as rclone check does).
--
-- Decisions:
-- * Both sides are listed in the byte order of their relative paths (cloud.fs.walk
--   walks so, holding a folder's entries per level; a bucket lists its keys so, read a
--   page at a time) and merged as two sorted streams, each checked to go strictly
--   forward (a path that comes back or repeats is an error, as in rclone's march).
--   The merge is the producer of a bounded queue the workers take the copies from as
--   they are found: memory is a window, not the tree; progress's totals grow until
--   the merge ends.
-- * Nothing is deleted unless everything was seen: a missing source root is refused
--   before any listing; the deletions found are held (packed) until the merge ended
--   cleanly, then checked (a folder that could not be listed withholds them all; an
--   empty source needs delete_all; max_delete caps them) and made after the copies.
-- * Filters (include/exclude globs, cloud.fs.glob) are applied in order, the last that
--   matches a path deciding, everything included by default (aws-cli's rule); they
--   apply to both sides, so `delete` never removes what an exclude keeps out. A shard
--   takes the paths whose FNV-1a 32-bit hash of the relative path's bytes, modulo
--   count, is its index (0 .. count - 1), on both sides too.
-- * Whether two entries differ (size-mtime, the default, `aws s3 sync`'s; size;
--   checksum) is lua/compare.lua's; its head says how each compares.
-- * Headers: an upload sends the type of the file's name (cloud.fs.media_type: the
--   system's table; none for an unknown extension, as aws-cli) unless content_type is
--   given; content_type, cache_control and metadata apply to every object uploaded or
--   copied (lua/copy.lua keeps or replaces a copied object's, as it says).
-- * Files no larger than part_size go `concurrency` at once; a larger one waits until
--   the copies in hand have ended and goes alone, through copy.upload/copy.download
--   (upload_file/download_file) with the same `concurrency` for its parts: one budget. Between buckets every
--   object is one CopyObject up to the model's CopyObject limit (copy_limit lowers it),
--   and a larger one a multipart upload of UploadPartCopy parts, `concurrency` at once.
-- * Each copy or deletion is tried on its own (every call retried by the client's
--   policy); a failure is recorded in the summary and the others go on. The error is
--   raised after everything else was done (collect = true returns the summary instead).
-- * Downloads are written beside their target and renamed (get_object{ file = },
--   download_file), each without a flush of its own (durable = false); the file system
--   is made durable once at the end of the batch (cloud.fs.sync).

local argcheck = require("cloud.check")
local parts_of = require("cloud.transfer_parts")
local copy = require("cloud.copy")
local locations = require("cloud.location")
local compare = require("cloud.compare")  -- whether two entries differ
local differ, differ_now, newer_stored = compare.differ, compare.differ_now, compare.newer_stored
local FORMS, describe = locations.FORMS, locations.describe
local DELETE_BATCH = copy.DELETE_BATCH  -- keys in one DeleteObjects
local cloud_module, epoch_of = argcheck.cloud, parts_of.epoch_of

-- Raises lauxlib's "bad argument" error for argument 1 of `fname`, blaming the caller
-- of sync or check (called from what options calls).
local function arg_error(fname, message, level)
  argcheck.arg_error(1, fname, message, level or 4)
end

---------------------------------------------------------------- options

-- The filters in order, compiled (copy.filters): `filters` as given, else every
-- exclude and then every include.
local function compile_filters(fname, args)
  local list = {}
  local function add(kind, glob)
    if type(glob) ~= "string" then arg_error(fname, kind .. " globs must be strings", 6) end
    list[#list + 1] = { kind, glob }
  end
  for _, kind in ipairs{ "exclude", "include" } do
    if args[kind] ~= nil and type(args[kind]) ~= "table" then arg_error(fname, "field '" .. kind .. "' must be a list of globs", 5) end
    for _, glob in ipairs(args[kind] or {}) do add(kind, glob) end
  end
  if args.filters ~= nil and type(args.filters) ~= "table" then arg_error(fname, "field 'filters' must be a list", 5) end
  for i, f in ipairs(args.filters or {}) do
    if type(f) ~= "table" or (f[1] ~= "include" and f[1] ~= "exclude") then
      arg_error(fname, ("filters[%d] must be { \"include\" | \"exclude\", glob }"):format(i), 5)
    end
    add(f[1], f[2])
  end
  return copy.filters(list)
end

-- The arguments, checked against the declaration of `fname` (lua/reference.lua: every
-- field's type, bound and default) and completed with `defaults` (operation; folders:
-- whether two local folders may be compared, as check's may).
local function options(args, fname, defaults)
  local o = argcheck.arguments(fname, nil, 3, args)
  o.operation = defaults.operation  -- "Sync" or "Check": the operation its errors name
  o.from, o.to = locations.side(fname, "from", args.from), locations.side(fname, "to", args.to)
  if o.from.dir and o.to.dir and not defaults.folders then
    arg_error(fname, "'from' and 'to' cannot both be local directories")
  end
  o.copy_limit = o.copy_limit or copy.copy_limit()
  if o.shard and o.shard.index >= o.shard.count then  -- the one rule between two fields
    arg_error(fname, "field 'shard' must be { index = 0 .. count - 1, count = n >= 1 }")
  end
  -- the fields every upload or copy sets (parts_of.HEADERS' names); nil when none
  local given = { ContentType = o.content_type, CacheControl = o.cache_control, Metadata = o.metadata }
  o.given = next(given) and given or nil
  o.filters = compile_filters(fname, args)
  return o
end

---------------------------------------------------------------- paths and times

-- FNV-1a, 32 bits, of the bytes of `s`: the shard a path belongs to is this mod count.
local function fnv1a32(s)
  local h = 0x811c9dc5
  for i = 1, #s do h = ((h ~ s:byte(i)) * 0x01000193) & 0xffffffff end
  return h
end

-- Whether `path` takes part: the filters (copy.selected) and the shard.
local function selected(o, path)
  return copy.selected(o.filters, path) and (o.shard == nil or fnv1a32(path) % o.shard.count == o.shard.index)
end

---------------------------------------------------------------- the two listings

-- The error that ends a sync or check (o.operation: "Sync" or "Check"): kind, code and
-- message as cloud.error's.
local function sync_failure(o, kind, code, message)
  return cloud_module().error{ kind = kind, code = code, operation = o.operation, message = message }
end

-- Refuses a source folder that is not there or is not a folder, and a target that is
-- something else than a folder: before anything is listed, copied or deleted (a
-- typo must never read as an empty source).
local function check_roots(o)
  local fs, printable = cloud_module().fs, cloud_module().printable
  if o.from.dir then
    local st = fs.stat(o.from.dir)
    if st == nil then
      error(sync_failure(o, "validation", "NoSuchSource", ("the source '%s' does not exist: it is neither an existing local path "
        .. "nor a bucket location; %s expected; nothing was done"):format(printable(o.from.dir), FORMS)), 0)
    elseif st.type ~= "dir" then
      error(sync_failure(o, "validation", "SourceNotAFolder", ("the source '%s' is not a folder; nothing was done")
        :format(printable(o.from.dir))), 0)
    end
  end
  if o.to.dir then
    local st = fs.stat(o.to.dir)
    if st ~= nil and st.type ~= "dir" then
      error(sync_failure(o, "validation", "TargetNotAFolder", ("the target '%s' is not a folder; nothing was done")
        :format(printable(o.to.dir))), 0)
    end
  end
end

-- An iterator over the files under a local directory, { path, size, mtime, file }, in
-- cloud.fs.walk's order (one folder's entries held per level); nothing when the
-- directory is not there (a target not made yet; a source was checked). A folder the
-- walk cannot read is a failure of its own (listing.failures, report(path, err)) and
-- the walk goes on with the next entry.
local function local_entries(run, side, listing)
  local fs, o = cloud_module().fs, run.options
  if fs.stat(side.dir) == nil then return function() return nil end end
  -- follow_links is the source's: a link in the target is never entered (nor compared or deleted)
  local walk = fs.walk(side.dir, { recursive = true, follow_links = side == o.from and o.follow_links or false })
  return function()
    while true do
      local ok, e = pcall(walk)
      if not ok then
        listing.failures = listing.failures + 1
        local where = type(e) == "table" and tostring(e.message or ""):match("'(.*)'") or side.dir
        if where:sub(1, #side.dir + 1) == side.dir .. "/" then where = where:sub(#side.dir + 2) end
        listing.report(where, e)
      elseif e == nil then
        return nil
      elseif e.type == "file" then
        e.file = side.dir .. "/" .. e.path
        -- a download's part file (name, mark and lock: never a user's file) takes no part;
        -- one a killed run left goes at the next sync into its folder
        local state = e.path:find("%.cloudlua%-%w+%.part$") and fs.part_state(e.file,
          { remove_stale = side == o.to and run.writes, beneath = side.dir })
        if not state then return e end
      end
    end
  end
end

-- An iterator over the objects under a bucket location, { path, size, mtime, etag,
-- key }, a page of the listing at a time, the next page's call under way meanwhile
-- (pages.ahead: the server lists while the merge works); keys ending with '/' (folder
-- markers) left out, but a source's that holds bytes. A failed page is an error: the
-- sync ends, nothing deleted; a source bucket that does not exist is NoSuchSource.
local function bucket_entries(run, side)
  local client, o, pages = run.client, run.options, cloud_module().pages
  if client ~= cloud_module() then pages = client.pages end
  local ahead = require("cloud.pages").ahead(
    pages("ListObjectsV2", { Bucket = side.bucket, Prefix = side.prefix ~= "" and side.prefix or nil }))
  local first = true
  local function next_page()
    if not first then return ahead() end
    first = false
    local ok, page = pcall(ahead)
    if ok then return page end
    if side == o.from and type(page) == "table" and page.code == "NoSuchBucket" then
      error(sync_failure(o, "validation", "NoSuchSource", ("the source bucket '%s' does not exist; nothing was done")
        :format(cloud_module().printable(side.bucket))), 0)
    end
    error(page, 0)
  end
  local page, i = nil, 0
  return function()
    while true do
      i = i + 1
      local c = page and page.Contents and page.Contents[i]
      if c then
        local path = c.Key:sub(#side.prefix + 1)
        -- a key ending with '/' is a folder marker, left out when empty; one of the source
        -- that holds bytes takes part (a copy down refuses its name: that key's failure)
        if path ~= "" and (path:sub(-1) ~= "/" or (side == o.from and c.Size ~= 0)) then
          return { path = path, size = c.Size, mtime = epoch_of(c.LastModified), etag = c.ETag, key = c.Key }
        end
      else
        page, i = next_page(), 0
        if page == nil then return nil end
      end
    end
  end
end

-- The entries of a side that take part, in order; listing.count counts them.
local function entries(run, side, listing)
  local it = side.dir and local_entries(run, side, listing) or bucket_entries(run, side)
  return function()
    for e in it do
      if selected(run.options, e.path) then
        listing.count = listing.count + 1
        return e
      end
    end
  end
end

-- A listing's state: entries taken, folders that failed, and what reports a failure.
local function new_listing(report)
  return { count = 0, failures = 0, report = report or function() end }
end

-- `next_entry` checked to go strictly forward in the bytes of the paths (rclone's
-- march checks so): a path that comes back, or repeats, is an error naming the side,
-- raised before anything could be deleted for it.
local function in_order(next_entry, side, o)
  local last
  return function()
    local e = next_entry()
    if e ~= nil then
      if last ~= nil and e.path <= last then
        local printable = cloud_module().printable
        error(sync_failure(o, "api", "ListingOutOfOrder", ("the listing of %s is not in byte order: '%s' came after '%s'; "
          .. "the sync stopped and nothing was deleted"):format(printable(describe(side)), printable(e.path),
          printable(last))), 0)
      end
      last = e.path
    end
    return e
  end
end

-- The merge of two sorted streams: each call gives true and the source's and the
-- target's entry of the next relative path (either nil when that side lacks it), or
-- nothing once both streams have ended. Only the two heads are held; each stream is
-- checked to be in order (in_order).
local function merged(next_from, next_to, o)
  next_from, next_to = in_order(next_from, o.from, o), in_order(next_to, o.to, o)
  local a, b = next_from(), next_to()
  return function()
    if a == nil and b == nil then return nil end
    local x, y = a, b
    if b == nil or (a and a.path < b.path) then
      y, a = nil, next_from()
    elseif a == nil or b.path < a.path then
      x, b = nil, next_to()
    else
      a, b = next_from(), next_to()
    end
    return true, x, y
  end
end

---------------------------------------------------------------- acting

-- Copies the entry `e` (of the source) to the target through the one module of
-- copies (lua/copy.lua: its guards on names, links and uploads); returns the bytes.
local function copy_one(run, e)
  local o, storage = run.options, run.client.storage
  local from, to = o.from, o.to
  local common = { part_size = o.part_size, concurrency = o.concurrency, size = e.size }
  if from.dir then
    copy.upload(storage, parts_of.merge({ file = e.file, Bucket = to.bucket, Object = to.prefix .. e.path,
                                          mtime = e.mtime, given = o.given }, common))
  elseif to.dir then
    copy.download(storage, parts_of.merge({ Bucket = from.bucket, Object = e.key, root = to.dir, path = e.path,
                                            mtime = e.mtime, durable = false, made = run.made }, common))
    run.downloaded = true
  else
    copy.server(storage, parts_of.merge({ from = { Bucket = from.bucket, Object = e.key }, Bucket = to.bucket,
                                          Object = to.prefix .. e.path, given = o.given, copy_limit = o.copy_limit }, common))
  end
  return e.size
end

---------------------------------------------------------------- progress

-- The reporter: report() after each action, report(true) at the end. A function gets
-- { done =, total =, bytes =, bytes_total =, elapsed =, planning = }: the totals are
-- those of the actions planned so far, final once planning is false (the listings run
-- ahead of the transfers, at most a bounded window); on a terminal (or with progress =
-- true) one line on stderr, its totals with a "+" while they may still grow.
local function make_progress(run)
  local p, cloud, summary, totals = run.options.progress, cloud_module(), run.summary, run.totals
  local start = cloud.clock()
  local function state()
    return { done = summary.copied + summary.deleted + summary.failed, total = totals.actions, bytes = summary.bytes,
             bytes_total = totals.bytes, elapsed = cloud.clock() - start, planning = totals.planning }
  end
  if type(p) == "function" then return function() p(state()) end end
  local show = parts_of.progress_line(p, 2)  -- off a terminal, a line every 2 s and the last
  if not show then return function() end end
  local size_text = parts_of.size_text
  return function(final)
    if final then return show(nil) end
    local s = state()
    local more = s.planning and "+" or ""
    show(("sync: %d of %d%s files, %s of %s%s, %s"):format(s.done, s.total, more, size_text(s.bytes),
      size_text(s.bytes_total), more, parts_of.rate_text(s.bytes, s.bytes_total, s.elapsed)),
      not s.planning and s.done >= s.total)
  end
end

---------------------------------------------------------------- deletions held

local PACK = 1000  -- paths packed into one string

-- The deletions the merge found, held until it has ended cleanly and the copies are
-- done: relative paths packed PACK to a string (string.pack "s4"), so that what is
-- held is about the bytes of the paths plus 4 each (a million 60-byte paths: 64 MB),
-- not a table per path.
local function held_deletions()
  local h = { count = 0, packs = {}, open = {} }
  function h.add(path)
    h.count = h.count + 1
    h.open[#h.open + 1] = ("s4"):pack(path)
    if #h.open == PACK then h.packs[#h.packs + 1], h.open = table.concat(h.open), {} end
  end
  -- An iterator over the first `limit` paths held, in the order they were found.
  function h.paths(limit)
    local packs, i, pos, n = h.packs, 1, 1, 0
    local last = table.concat(h.open)
    return function()
      if n >= limit then return nil end
      while true do
        local pack = packs[i] or (i == #packs + 1 and last) or nil
        if pack == nil then return nil end
        if pos <= #pack then
          local path
          path, pos = ("s4"):unpack(pack, pos)
          n = n + 1
          return path
        end
        i, pos = i + 1, 1
      end
    end
  end
  return h
end

-- The target's entry of a relative path, for copy.delete and on_action.
local function target_entry(o, path)
  if o.to.dir then return { path = path, file = o.to.dir .. "/" .. path } end
  return { path = path, key = o.to.prefix .. path }
end

-- Applies the rules before any deletion to the deletions held: none when a listing had
-- a failure (summary.deletes_withheld says why); refused when the source is empty
-- and the target is not, unless delete_all; at most max_delete (summary.not_deleted
-- counts the rest). Returns how many to make.
local function deletions_allowed(run)
  local o, held, listings, summary = run.options, run.held, run.listings, run.summary
  if held.count == 0 then return 0 end
  local failed = listings.from.failures + listings.to.failures
  if failed > 0 then
    summary.deletes_withheld = held.count
    summary.delete_note = ("%d deletions not made: %d folders could not be listed, and a sync deletes only after "
      .. "seeing both sides whole"):format(held.count, failed)
    return 0
  end
  if listings.from.count == 0 and not o.delete_all then
    local printable = cloud_module().printable
    error(sync_failure(o, "validation", "EmptySource", ("the source %s holds nothing to compare (after the filters) while "
      .. "the target %s holds %d; refusing to delete them all: pass delete_all = true (--delete-all) if that is "
      .. "meant; nothing was deleted"):format(printable(describe(o.from)), printable(describe(o.to)), held.count)), 0)
  end
  local n = held.count
  if o.max_delete and n > o.max_delete then
    summary.not_deleted = n - o.max_delete
    summary.delete_note = ("%d deletions not made: more than max_delete = %d (--max-delete)")
      :format(n - o.max_delete, o.max_delete)
    n = o.max_delete
  end
  return n
end

-- Makes the first `n` deletions held, in batches of DELETE_BATCH, o.concurrency
-- batches at once; record(e, ok, err) for each.
local function delete_held(run, n, record)
  local o, paths, ended = run.options, run.held.paths(n), false
  local function next_batch()
    local batch = {}
    while not ended and #batch < DELETE_BATCH do
      local path = paths()
      if path == nil then ended = true else batch[#batch + 1] = target_entry(o, path) end
    end
    return #batch > 0 and batch or nil
  end
  local workers = {}
  for i = 1, math.min(o.concurrency, (n + DELETE_BATCH - 1) // DELETE_BATCH) do workers[i] = i end
  cloud_module().map(workers, function()
    for batch in next_batch do
      copy.delete(run.client.storage, o.to, batch, function(e, err) record(e, err == nil, err, "delete") end)
    end
  end, { concurrency = math.max(1, #workers) })
end

---------------------------------------------------------------- sync

-- The next copy of the sync, as the merge finds it: the source's entry; nil at the
-- end. The paths skipped are counted in summary.skipped (and shown to on_action) on
-- the way; with o.delete, the target's entries the source lacks are held (held.add).
-- With `defer`, a copy whose need only metadata can tell (differ's "ask") comes with
-- the target's entry as its second value, for a worker to ask (the merge never waits
-- on a HeadObject, as rclone's checkers); else that is asked here.
local function next_copy(run, defer)
  local o = run.options
  while true do
    local more, a, b = run.step()
    if not more then return nil end
    local d = a and (b == nil or differ(run, a, b))
    if d == "ask" and not defer then d = newer_stored(run, a, b) end
    if d then return a, d == "ask" and b or nil end
    if a then
      run.summary.skipped = run.summary.skipped + 1
      if o.on_action then o.on_action("skip", a.path, a) end
    elseif o.delete then
      run.held.add(b.path)
    end
  end
end

-- The error raised when something failed: the first failure's kind, the summary in
-- it, and why deletions were not made when they were not.
local function sync_error(run)
  local summary, first = run.summary, run.summary.errors[1]
  local message, kind = summary.delete_note, nil
  if first then
    kind = type(first.error) == "table" and first.error.kind or nil
    message = ("%d of %d copies and deletions failed; the first, %s: %s%s"):format(summary.failed, run.totals.actions,
      cloud_module().printable(first.path), tostring(first.error), summary.delete_note and "; " .. summary.delete_note or "")
  end
  local err = sync_failure(run.options, kind or "api", "SyncFailed", message)
  err.summary = summary
  return err
end

-- Records a failure of the sync in its summary and to on_action: a copy's or a
-- deletion's (with its entry), or a folder a listing could not read (no entry).
local function failed(run, path, entry, err)
  local summary, on_action = run.summary, run.options.on_action
  summary.failed = summary.failed + 1
  summary.errors[#summary.errors + 1] = { path = path, error = err }
  if on_action then on_action("fail", path, entry, err) end
end

---------------------------------------------------------------- one run

-- One sync's (or check's) run, made once and handed to every phase, as rclone's
-- syncCopyMove carries one; its options are only read. The fields:
--   options   the checked options (options(): from, to, filters, ...), never written
--   client    the client called: its storage copies, its HeadObject reads a kept mtime
--   summary   what sync returns: copied, skipped, deleted, failed, bytes, errors, notes
--   listings  { from =, to = }: each side's new_listing (entries taken, folders failed)
--   step      the merge of the two listings (merged): true, source entry, target entry
--   held      the deletions the merge found (held_deletions), made after the copies
--   totals    { actions =, bytes =, planning = }: the plan so far, as progress shows it
--   report    the progress reporter (make_progress); nothing for a dry run or a check
--   writes    whether the target's stale part files go as it is listed (a sync, not dry)
--   made      the folders downloads made (copy.download's); downloaded: whether any ran
-- `failure(path, err)` records a folder a listing could not read; sync's by default.
local function new_run(client, o, failure)
  local run = { options = o, client = client, held = held_deletions(), made = {}, downloaded = false,
                summary = { copied = 0, skipped = 0, deleted = 0, failed = 0, bytes = 0, errors = {} },
                totals = { actions = 0, bytes = 0, planning = true }, writes = o.operation == "Sync" and not o.dry_run }
  failure = failure or function(path, err) failed(run, path, nil, err) end
  run.listings = { from = new_listing(failure), to = new_listing(failure) }
  run.step = merged(entries(run, o.from, run.listings.from), entries(run, o.to, run.listings.to), o)
  run.report = run.writes and make_progress(run) or function() end
  return run
end

-- A dry run: each action as it is planned to on_action, else one line on stdout
-- (printable: names are anybody's bytes), and counted in the summary; the deletions
-- after the merge, under the same rules as a sync's. Nothing sent but the listings.
local function dry_run(run)
  local o, summary, printable = run.options, run.summary, cloud_module().printable
  local show = o.on_action or function(action, path) print("(dry run) " .. action .. " " .. printable(path)) end
  for e in function() return next_copy(run) end do
    show("copy", e.path, e)
    summary.copied, summary.bytes = summary.copied + 1, summary.bytes + e.size
  end
  for path in run.held.paths(deletions_allowed(run)) do
    show("delete", path, target_entry(o, path))
    summary.deleted = summary.deleted + 1
  end
  summary.dry_run = true
end

local BACKLOG = 1000  -- actions planned ahead of the workers at most: the bounded window

-- A bounded queue of planned work, first in first out.
local function queue()
  local q = { first = 1, last = 0 }
  function q.push(job) q.last = q.last + 1; q[q.last] = job end
  function q.pop()
    local job = q[q.first]
    q[q.first], q.first = nil, q.first + 1
    return job
  end
  function q.size() return q.last - q.first + 1 end
  return q
end

-- Carries out the sync as it is planned. One task plans (the merge) into a queue of at
-- most BACKLOG jobs, waiting (an event, cloud.event) while it is full; o.concurrency
-- workers take the jobs in order, waiting while it is empty. A job is a copy; the
-- deletions the merge finds are held (held_deletions), and once it has ended, the
-- rules of deletions_allowed say how many are to be made, after the copies. A large
-- copy (above part_size, or copy_limit between buckets) waits until the other workers
-- have ended what they hold and keeps them waiting while its parts go `concurrency`
-- at once: one budget. Memory is the queue, the jobs in hand and the listings'
-- windows, whatever the number of paths.
local function carry_out(run)
  local o, summary, totals, report, jobs = run.options, run.summary, run.totals, run.report, queue()
  local busy, alone = 0, false
  local changed = cloud_module().event()  -- signalled when the queue, busy or alone change
  local function record(e, ok, result, what)
    if ok then
      if what == "copy" then summary.copied, summary.bytes = summary.copied + 1, summary.bytes + result
      else summary.deleted = summary.deleted + 1 end
      if o.on_action then o.on_action(what, e.path, e) end
    else
      failed(run, e.path, e, result)
    end
    report()
  end
  local deletions = 0
  local function plan()
    local function put(job)
      while jobs.size() >= BACKLOG do changed:wait() end
      jobs.push(job)
      changed:signal()
    end
    for e, against in function() return next_copy(run, true) end do
      totals.actions, totals.bytes = totals.actions + 1, totals.bytes + e.size
      put{ copy = e, against = against, large = e.size > ((o.from.dir or o.to.dir) and o.part_size or o.copy_limit) }
    end
    deletions = deletions_allowed(run)
    totals.actions = totals.actions + deletions
    totals.planning = false
    changed:signal()
  end
  local function work(job)
    if job.against and not newer_stored(run, job.copy, job.against) then  -- the same after all
      totals.actions, totals.bytes = totals.actions - 1, totals.bytes - job.copy.size
      summary.skipped = summary.skipped + 1
      if o.on_action then o.on_action("skip", job.copy.path, job.copy) end
      return report()
    end
    local ok, result = pcall(copy_one, run, job.copy)
    if not ok and parts_of.interrupted(result) then error(result, 0) end  -- stops the sync
    record(job.copy, ok, result, "copy")
  end
  local function worker()
    while true do
      while alone or (totals.planning and jobs.size() == 0) do changed:wait() end
      if jobs.size() == 0 then return end
      local job = jobs.pop()
      changed:signal()  -- room in the queue
      if job.large then
        alone = true
        while busy > 0 do changed:wait() end
        work(job)
        alone = false
      else
        busy = busy + 1
        work(job)
        busy = busy - 1
      end
      changed:signal()
    end
  end
  local tasks = { plan }
  for i = 1, o.concurrency do tasks[i + 1] = worker end
  cloud_module().map(tasks, function(task) task() end, { concurrency = #tasks })
  if run.downloaded then cloud_module().fs.sync(o.to.dir) end
  if deletions > 0 then delete_held(run, deletions, record) end
end

-- storage.sync{...}: see the head of this file and docs/lua-api.md. The caller's table
-- is only read (options makes the run's own). An interruption (SIGINT, SIGTERM) stops
-- new work (its tasks are not resumed), aborts the multipart uploads left open
-- (copy.guarded) and is raised again with the summary so far, marked (err.summary).
local function sync(client, args)
  local o = options(args, "cloud.storage.sync", { compare = "size-mtime", operation = "Sync" })
  check_roots(o)
  local run = new_run(client, o)
  if o.dry_run then
    dry_run(run)
    return run.summary
  end
  local ok, err = pcall(copy.guarded, carry_out, run)
  run.report(true)
  if not ok then
    if parts_of.interrupted(err) then run.summary.interrupted, err.summary = true, run.summary end
    error(err, 0)
  end
  local summary = run.summary
  if (summary.failed > 0 or summary.not_deleted) and not o.collect then error(sync_error(run), 0) end
  return summary
end

---------------------------------------------------------------- check

-- storage.check{...}: { same =, differ = {}, only_in_from = {}, only_in_to = {} },
-- nothing transferred.
local function check(client, args)
  local o = options(args, "cloud.storage.check", { compare = "checksum", operation = "Check", folders = true })
  local out = { same = 0, differ = {}, only_in_from = {}, only_in_to = {}, failed = {} }
  check_roots(o)
  local run = new_run(client, o, function(path, err) out.failed[#out.failed + 1] = { path = path, error = err } end)
  for _, a, b in run.step do
    if a and b then
      if differ_now(run, a, b) then out.differ[#out.differ + 1] = a.path else out.same = out.same + 1 end
    elseif a then
      out.only_in_from[#out.only_in_from + 1] = a.path
    else
      out.only_in_to[#out.only_in_to + 1] = b.path
    end
  end
  return out
end

return { sync = sync, check = check, location = locations.parse, fnv1a32 = fnv1a32, describe = describe }
