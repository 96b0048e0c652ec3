-- The documentation data of the cloud functions that are not operations (the
-- operations' help is read off the model). help() (lua/help.cpp) finds an entry by
-- its value (help(cloud.wait_until)), its full name (help"cloud.wait_until") or its
-- last part (help"wait_until"), and lists every entry's usage and summary in its
-- overview. To document a function, add one entry:
--   name     where it is reached from the globals ("cloud.emulator.fault")
--   usage    how it is called, one line
--   summary  what it does, one line
--   text     more lines (optional), shown by help(name) after the summary
--   see      the document that tells the whole story (optional)
--   alias_of the name an old name stands for, kept for one release (made by old_name)
-- An entry whose name does not resolve (cloud.emulator when an account is configured)
-- is still found by name.

-- The entry of `name`, an old name of `new` kept for one release, called as `usage`.
local function old_name(name, usage, new)
  return { name = name, usage = usage, alias_of = new, summary = "Old name of " .. new .. ", kept for one release.",
           see = "docs/emulator.md" }
end

return {
  { name = "cloud.call", usage = "cloud.call(name, args) -> result, meta",
    summary = "Calls an operation by its name, CamelCase or snake_case.",
    text = [[
Same arguments and results as the operation's function:
  cloud.call("UpdateSnapshot", { SnapshotName = "snap-1" })]],
    see = "docs/lua-api.md" },
  { name = "cloud.operations", usage = "cloud.operations() -> list",
    summary = "Every operation of the model as { name, api, fn, method, path, doc }.",
    see = "docs/lua-api.md" },
  { name = "cloud.check_result", usage = "cloud.check_result(name, result)",
    summary = "Raises the validation error naming each field of result the operation's output shape does not allow.",
    text = [[
What cloud.stub checks a queued result with; nothing when the result fits.]],
    see = "docs/testing.md" },
  { name = "cloud.request", usage = "cloud.request{ api, method, path, query, headers, body } -> response, meta",
    summary = "Signs and sends any request, for operations outside the model.",
    text = [[
path is as on the wire (already percent-encoded); query a table (encoded here);
headers a list of { name, value } pairs or a { name = value } map; body a string.
Returns { status, headers (lower-case names), body }: an HTTP error status is
returned, not raised (transport, timeout and config errors are).]],
    see = "docs/lua-api.md" },
  { name = "cloud.storage.presign", usage = "cloud.storage.presign{ Bucket, Object, method, expires } -> url",
    summary = "A URL that gets (GET), stores (PUT) or heads (HEAD) one object by itself, signed by the session.",
    text = [[
Signed with the session's own credentials, region, dialect and endpoint; method
GET (default), PUT or HEAD; expires in seconds, 1 to 604800 (a week), default 900.
Anyone holding the URL may use it until it expires (curl "$url", curl -T file "$url"):
the body is not signed. Bucket and Object are checked as the operation's are.]],
    see = "docs/lua-api.md" },
  { name = "cloud.storage.presign_post",
    usage = "cloud.storage.presign_post{ Bucket, Object, conditions, fields, expires } -> { url, fields }",
    summary = "The fields of a browser upload form (POST object with a signed policy), as boto3's generate_presigned_post.",
    text = [[
Post fields to url as multipart/form-data with the file last (curl -F "file=@f").
Object may end in ${filename}; fields are more form fields (each one not named by
a condition gets an exact-match condition); conditions: { field = "v" },
{ "eq" | "starts-with", "$field", "v" }, { "content-length-range", min, max };
expires in seconds, 1 to 604800, default 3600.]],
    see = "docs/lua-api.md" },
  { name = "cloud.sign", usage = "cloud.sign{ method, url, headers, body, region, service, ... } -> signed",
    summary = "Signs a request without sending it (Signature V4, ext or aws dialect).",
    text = [[
Returns canonical_request, string_to_sign, signature, authorization, headers (every
header to send) and url (presigned when presign_expires is given).]],
    see = "docs/lua-api.md" },
  { name = "cloud.client", usage = "cloud.client{ profile, region, dialect, endpoints, credentials, record, replay, ... } -> client",
    summary = "A client with the same API as cloud; fields left out come from the configuration.",
    text = [[
Also services, ca_file, timeout, connect_timeout and the retry options (max_attempts,
retry_base_delay, retry_max_delay, invalid_part_delay, retry_restores). record = DIR
records every exchange of the client into DIR; replay = DIR answers its calls from
that recording, offline (docs/testing.md). A bad value or an unknown field is a
config error, InvalidSetting, naming it.]],
    see = "docs/lua-api.md" },
  { name = "cloud.error", usage = "cloud.error{ kind, code, message, status, fields, ... } -> error",
    summary = "Makes an error object of the shape the client's own errors have; error() raises it.",
    see = "docs/lua-api.md" },
  { name = "cloud.printable", usage = "cloud.printable(text) -> text",
    summary = "The text as a terminal may show it: control characters (ESC, C1...) escaped, as \\027.",
    see = "docs/lua-api.md" },
  { name = "cloud.redact", usage = "cloud.redact(text) -> text",
    summary = "The text as cloudlua shows it: every secret as <redacted>.",
    see = "docs/lua-api.md" },
  { name = "cloud.describe", usage = "cloud.describe(op) -> table",
    summary = "An operation as data: name, fn, api, method, path, doc, idempotent, parameters, result.",
    see = "docs/cli.md" },
  { name = "cloud.help", usage = "help([x])   (also cloud.help)",
    summary = "Help on an operation, an API, a function of cloud, or a part of a name.",
    text = [[
help() lists everything; help"restore" lists the names containing "restore"; a
mistyped name gets the nearest one. Long help goes through $PAGER (else less -FRX)
on a terminal.]],
    see = "docs/cli.md" },
  { name = "cloud.nearest", usage = "cloud.nearest(word, names) -> name or nil",
    summary = "The name in the list nearest to word, when near enough to be what was meant.",
    text = [[
The rule of every "did you mean" of cloudlua: at most 2 edits, more than half of
word right, letters compared without case.]],
    see = "docs/lua-api.md" },
  { name = "cloud.null", usage = "cloud.null",
    summary = "JSON null: found in results, sent only where the model allows it.",
    see = "docs/lua-api.md" },
  { name = "cloud.pretty", usage = "cloud.pretty(value [, options]) -> text",
    summary = "The text of a value as the REPL shows it (tables laid out, strings quoted).",
    text = [[
Options (defaults): color = false, width = 80, indent = "  ", max_depth = 8,
max_items = 100, max_string = 400. require "cloud.pretty" is the same module.]],
    see = "docs/cli.md" },
  { name = "cloud.pretty.print", usage = "cloud.pretty.print(...)",
    summary = "print with tables pretty-printed.",
    see = "docs/cli.md" },
  { name = "cloud.wait_until", usage = "cloud.wait_until(fn [, { timeout, interval, what, real_time }]) -> ...",
    summary = "Calls fn until it returns a true value; returns everything it returned.",
    text = [[
timeout: seconds in all (default 600); interval: seconds between tries (default 5);
what: what is awaited, for the progress line and the error. fn may return false and
a status ("PROCESSING") that the progress line and the error show. On the embedded
emulator the time between tries is its virtual time (real_time = true sleeps). Past
the timeout: an error of kind timeout, code WaitTimeout.]],
    see = "docs/testing.md" },
  { name = "cloud.wait_for", usage = "cloud.wait_for(name, args [, { delay, max_attempts, progress, real_time }]) -> result, meta",
    summary = "Runs a named waiter of the model (ClusterRunning, ...) until it succeeds.",
    text = [[
Calls the waiter's read operation every delay seconds, at most max_attempts times.
A failure acceptor raises an error of kind waiter (WaiterFailed) naming it; running
out of tries raises kind timeout. help"ClusterRunning" describes one.]],
    see = "docs/lua-api.md" },
  { name = "cloud.pages", usage = "cloud.pages(name, args) -> iterator of result, meta",
    summary = "The pages of a listing (ListObjectsV2, ...), one call each: for page in cloud.pages(...) do ... end.",
    text = [[
Each page is the operation's result; the next call takes its tokens from it as the
operation's paginator (model data) says, until the answer says there is no more
(IsTruncated false). cloud.operations() shows which operations have a paginator. An
answer that says more follows without a new token: an error of kind api, code
PaginationError.]],
    see = "docs/lua-api.md" },
  { name = "cloud.waiters", usage = "cloud.waiters() -> list",
    summary = "The model's named waiters as { name, api, operation, delay, max_attempts, acceptors, ... }.",
    see = "docs/lua-api.md" },
  { name = "cloud.spawn", usage = "cloud.spawn(fn, ...) -> task",
    summary = "Runs fn(...) as a task whose calls wait on the event loop; t:join() returns its results.",
    text = [[
t:join() waits for the task and returns fn's results, or raises its error. Inside a
task, operations, cloud.request, cloud.sleep and cloud.wait_until park the task and
let the others run. A task nobody keeps is cancelled by the garbage collector.]],
    see = "docs/lua-api.md" },
  { name = "cloud.stub", usage = "cloud.stub([client]) -> stubber",
    summary = "Answers the client's calls from queued results and errors, each result checked against the model.",
    text = [[
s.storage.get_object:returns{ Body = "x" }, :fails{ code = "NoSuchKey", status = 404 },
:expects{ Bucket = "b", Object = cloud.ANY } before or after either; s:assert_no_pending(),
s:deactivate(). Under `cloudlua test` each case's end checks every stubber.]],
    see = "docs/testing.md" },
  { name = "cloud.map", usage = "cloud.map(list, fn [, { concurrency, collect }]) -> results",
    summary = "fn(item) for every item as tasks, at most concurrency (8) at once; results in list order.",
    text = [[
The first failure is raised after the tasks still running are cancelled; with
collect = true each item gets { ok = true, value = v } or { ok = false, error = e }.]],
    see = "docs/lua-api.md" },
  { name = "cloud.event", usage = "cloud.event() -> ev; ev:wait(); ev:signal() -> n",
    summary = "A wait without polling: ev:wait() parks the task until ev:signal() wakes the tasks waiting then.",
    text = [[
ev:signal() puts every task waiting at that moment back on the scheduler's ready list
(the path a finished transfer takes) and returns how many there were; wait again in a
loop until what you wait for holds. Outside a task, ev:wait() runs the tasks until a
signal comes.]],
    see = "docs/lua-api.md" },
  { name = "cloud.storage.upload_file",
    usage = "cloud.storage.upload_file{ Bucket, Object, file, part_size, concurrency, progress, keep, upload_id, parts } -> result, meta",
    summary = "Uploads a file of any size: one PutObject, or parts in parallel from disk, completed in order.",
    text = [[
part_size 8 MiB and concurrency 8 by default; a part size the platform refuses is a
validation error before anything is sent. A failed upload is aborted, or with
keep = true kept: the error then has upload_id. upload_file{ upload_id = } resumes
it: the parts ListParts shows with the size and MD5 of their range of the file are
not sent again (parts = the error's list: taken as done, nothing listed). progress:
a function called with (done, total), true or false for the line on stderr.]],
    see = "docs/lua-api.md" },
  { name = "cloud.storage.download_file",
    usage = "cloud.storage.download_file{ Bucket, Object, file, part_size, concurrency, progress } -> result, meta",
    summary = "Downloads an object of any size: ranges in parallel into a file beside file, checked, renamed.",
    see = "docs/lua-api.md" },
  { name = "cloud.storage.location", usage = "cloud.storage.location(text) -> { Bucket, Prefix } | nil, why",
    summary = "Reads a bucket location, s3://BUCKET[/PREFIX] (or cloud://): the one grammar sync, check and the scripts use.",
    see = "docs/lua-api.md" },
  { name = "cloud.storage.sync",
    usage = "cloud.storage.sync{ from, to, delete, delete_all, max_delete, dry_run, include, exclude, filters, compare, "
      .. "concurrency, part_size, progress, shard, collect, on_action, copy_limit } -> summary",
    summary = "Makes a folder and a bucket location (either way), or two bucket locations, the same: copies what is missing or changed.",
    text = [[
from and to: a local folder (string), "s3://BUCKET/PREFIX" or { Bucket, Prefix }; a
source folder or bucket that does not exist is refused (NoSuchSource). compare =
"size-mtime" (default), "size" or "checksum". delete removes what the source lacks
(never what exclude keeps out), after the copies and only when both sides were
listed whole; an empty source is refused (EmptySource) unless delete_all = true;
max_delete = N deletes at most N. A listing out of order is an error. dry_run sends no
write; globs apply in order, the later winning; shard = { index, count } takes the
paths whose FNV-1a hash mod count is index. Returns { copied, skipped, deleted,
failed, bytes, errors, not_deleted }; raises SyncFailed (with .summary) after
everything when something failed, unless collect = true.]],
    see = "docs/lua-api.md" },
  { name = "cloud.storage.check", usage = "cloud.storage.check{ from, to, compare, include, exclude, filters, shard } -> report",
    summary = "What differs between two sides (two local folders too), by content unless asked: "
      .. "{ same, differ, only_in_from, only_in_to, failed }.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs", usage = "cloud.fs",
    summary = "The file-system calls Lua lacks: list, walk, stat, mkdir, remove, part, set_mtime, sync, glob.",
    text = [[
Failures are errors of kind io whose code is the system's name (ENOENT) and whose
message names the path: help"cloud.fs.list" and so on describe each.]],
    see = "docs/lua-api.md" },
  { name = "cloud.fs.list", usage = "cloud.fs.list(dir [, { recursive, follow_links }]) -> { { path, size, mtime, type }, ... }",
    summary = "The entries of a folder (and below, recursive), sorted by the bytes of their relative path.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs.walk", usage = "for e in cloud.fs.walk(dir [, { recursive = true, follow_links }]) do ... end",
    summary = "list's entries in list's order, one at a time, holding a folder's entries per level, not the tree.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs.stat", usage = "cloud.fs.stat(path [, { follow_links }]) -> { path, size, mtime, type } | nil",
    summary = "What is at path, or nil when nothing is.", see = "docs/lua-api.md" },
  { name = "cloud.fs.mkdir", usage = "cloud.fs.mkdir(path [, { beneath }]) -> made",
    summary = "Makes a folder and its missing parents; false when it was there.", see = "docs/lua-api.md" },
  { name = "cloud.fs.remove", usage = "cloud.fs.remove(path [, { recursive, beneath }]) -> removed",
    summary = "Removes a file, link or empty folder (recursive: a whole folder); false when nothing was there.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs.part",
    usage = "cloud.fs.part(target [, { beneath }]) -> part (part:path(), part:commit(target [, { durable }]), part:discard())",
    summary = "A download's part file of its own in target's folder (core's, as get_object{ file = }'s): written, then renamed onto it.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs.part_state",
    usage = "cloud.fs.part_state(path [, { remove_stale, beneath }]) -> nil | \"live\" | \"stale\" | \"removed\"",
    summary = "Whether path is a download's part file (name, mark and lock), live or left by a killed run.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs.create", usage = "cloud.fs.create(path)",
    summary = "Makes a new, empty file; a file or link already there is an io error (EEXIST), never followed.", see = "docs/lua-api.md" },
  { name = "cloud.fs.set_mtime", usage = "cloud.fs.set_mtime(path, seconds)",
    summary = "Sets a file's modification time, to the nanosecond.", see = "docs/lua-api.md" },
  { name = "cloud.fs.sync", usage = "cloud.fs.sync(path)",
    summary = "Makes every write of the file system holding path durable at once (syncfs).", see = "docs/lua-api.md" },
  { name = "cloud.fs.glob", usage = "cloud.fs.glob(glob) -> matcher (matcher(path) -> boolean)",
    summary = "A glob over relative paths: * within a folder, ** across, ?, [...]; a leading / anchors it at the top.",
    see = "docs/lua-api.md" },
  { name = "cloud.fs.media_type", usage = "cloud.fs.media_type(name) -> type | nil",
    summary = "The media type of a file called name, from its extension in the system's /etc/mime.types (what uploads send).",
    see = "docs/lua-api.md" },
  { name = "cloud.sleep", usage = "cloud.sleep(seconds [, { real_time = true }])",
    summary = "Sleeps (virtual time under cloudlua test and --replay, unless real_time); Ctrl-C in the REPL ends it at once.",
    see = "docs/testing.md" },
  { name = "cloud.clock", usage = "cloud.clock() -> seconds",
    summary = "Seconds on a monotonic clock, the one sleeps, waiters and retries read.", see = "docs/testing.md" },
  { name = "cloud.isatty", usage = "cloud.isatty(file) -> boolean",
    summary = "Whether a file handle (io.stderr) is a terminal.", see = "docs/testing.md" },
  { name = "cloud.md5_file", usage = "cloud.md5_file(path [, offset [, length]]) -> hex | nil, message",
    summary = "The hex MD5 of a file's bytes (a range of them), read once in pieces: an ETag to compare.",
    see = "docs/lua-api.md" },
  { name = "cloud.limit_rate", usage = "cloud.limit_rate(bytes_per_second) -> previous",
    summary = "Caps the bandwidth of every transfer of the process together (0 or nil: no cap); returns the cap replaced.",
    see = "docs/cli.md" },
  { name = "cloud.commands", usage = "cloud.commands.NAME{ ARGS..., option = value }",
    summary = "The sub-commands of the command line as functions: sync, check, cp, ls, rm, cat, mb, rb.",
    text = [[
cloud.commands.cp{ "s3://logs/2024-*/*.gz", "dir/", dry_run = true }: the same options
as `cloudlua cp --dry-run ...` (--dry-run: dry_run); each prints what its command
prints (quiet = true: nothing but failures) and returns a table whose status is the
command's exit status (0 done, 1 failed or differs); a usage error is raised. cp's
table form also takes copy_limit (bytes: above it a copy between buckets goes in parts),
as storage.sync does.]],
    see = "docs/cli.md" },
  { name = "cloud.md5", usage = "cloud.md5(text) -> hex",
    summary = "The hex MD5 of a string's bytes (a multipart ETag is the MD5 of its parts' MD5s).",
    see = "docs/lua-api.md" },
  { name = "cloud.json", usage = "cloud.json",
    summary = "JSON text from Lua values and back, by the rules of every call's arguments and results: encode, decode.",
    see = "docs/lua-api.md" },
  { name = "cloud.json.encode", usage = "cloud.json.encode(value) -> text",
    summary = "Compact JSON text of a value: {} for an empty table, null for cloud.null, keys sorted.",
    see = "docs/lua-api.md" },
  { name = "cloud.json.decode", usage = "cloud.json.decode(text) -> value",
    summary = "The value of a JSON text; not JSON is InvalidJSON naming the byte (\"at byte 7: ...\").",
    see = "docs/lua-api.md" },
  { name = "cloud.time", usage = "cloud.time",
    summary = "Dates as the APIs send them (RFC 3339, HTTP, SigV4) to and from seconds since 1970: parse, format.",
    see = "docs/lua-api.md" },
  { name = "cloud.time.parse", usage = "cloud.time.parse(text) -> seconds | nil, error",
    summary = "The seconds (UTC) of an RFC 3339, HTTP or SigV4 date; nil and an InvalidDate error saying why for other text.",
    see = "docs/lua-api.md" },
  { name = "cloud.time.format", usage = "cloud.time.format(seconds [, form]) -> text",
    summary = "Seconds as a date in form \"iso\" (the default, 2026-11-28T07:04:18Z), \"http\" or \"sigv4\".",
    see = "docs/lua-api.md" },
  { name = "cloud.emulator", usage = "cloud.emulator",
    summary = "The emulator, when it serves the session: the embedded one, or a cloudlua serve reached by endpoint_url "
      .. "(nil against an account).",
    text = [[
cloud.emulator.seed{...}, advance(seconds), fault{...}, configure{...}, state(),
requests(), reset(), checkpoint(name), restore(name), checkpoints(), endpoints():
help"cloud.emulator.fault" and so on describe each. snapshot(name) and snapshots()
are the old names of checkpoint(name) and checkpoints(), kept for one release.]],
    see = "docs/emulator.md" },
  { name = "cloud.emulator.seed", usage = "cloud.emulator.seed{ buckets, firewall_groups, backups, snapshots, mesh_clusters }",
    summary = "Adds resources; a field left out gets its default.", see = "docs/emulator.md" },
  { name = "cloud.emulator.advance", usage = "cloud.emulator.advance(seconds)",
    summary = "Moves the platform's clock on; every transition that falls due settles.", see = "docs/emulator.md" },
  { name = "cloud.emulator.fault",
    usage = "cloud.emulator.fault{ operation, times, status, code, message, delay, drop, error_in_200, echo, maintenance }",
    summary = "Makes the next matching requests misbehave; faults queue up.", see = "docs/emulator.md" },
  { name = "cloud.emulator.requests", usage = "cloud.emulator.requests() -> { PutObject = 3, ... }",
    summary = "How many requests each operation was asked since the last reset.", see = "docs/emulator.md" },
  { name = "cloud.emulator.configure",
    usage = "cloud.emulator.configure{ firewall_settle, instance_restore, cluster_provision, mesh_upgrade, min_part_size, "
      .. "max_copy_size, real_time, seed }",
    summary = "Changes the emulator's settings; an unknown name is an error listing the known ones.", see = "docs/emulator.md" },
  { name = "cloud.emulator.state", usage = "cloud.emulator.state() -> table",
    summary = "Every resource as tables, after settling what is due.", see = "docs/emulator.md" },
  { name = "cloud.emulator.reset", usage = "cloud.emulator.reset()",
    summary = "Removes every resource and queued fault (settings and the clock stay).", see = "docs/emulator.md" },
  { name = "cloud.emulator.checkpoint", usage = "cloud.emulator.checkpoint(name)",
    summary = "Saves the whole platform as the checkpoint name (1 to 64 letters, digits, '.', '-', '_').",
    see = "docs/emulator.md" },
  { name = "cloud.emulator.restore", usage = "cloud.emulator.restore(name)",
    summary = "Puts the checkpoint name in place of this platform; an unknown name is NoSuchCheckpoint.",
    see = "docs/emulator.md" },
  { name = "cloud.emulator.checkpoints", usage = "cloud.emulator.checkpoints() -> { name, ... }",
    summary = "The names of the checkpoints, sorted.", see = "docs/emulator.md" },
  old_name("cloud.emulator.snapshot", "cloud.emulator.snapshot(name)", "cloud.emulator.checkpoint"),
  old_name("cloud.emulator.snapshots", "cloud.emulator.snapshots() -> { name, ... }", "cloud.emulator.checkpoints"),
  { name = "cloud.emulator.endpoints", usage = "cloud.emulator.endpoints() -> { storage = url, ... }",
    summary = "The URL of each API the emulator serves.", see = "docs/emulator.md" },
}
