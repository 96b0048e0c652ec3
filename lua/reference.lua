-- The declaration of every function of cloud that is not an operation (the operations
-- are declared by the model, core/model/*.json), and help's text for them. One reader
-- each: help() (lua/help.cpp) shows an entry, the one checker (lua/check.lua,
-- check.arguments) checks a call's arguments against it, and the LuaLS definitions
-- (lua/definitions.lua) are made from it. help() finds an entry by its value
-- (help(cloud.wait_until)), its full name (help"cloud.wait_until") or its last part
-- (help"wait_until"), and lists every entry's usage and summary in its overview. To
-- declare a function, add one entry:
--   name     where it is reached from the globals ("cloud.emulator.fault")
--   usage    how it is called, one line: derived from params and returns (usage_of
--            below); written only where the derived line cannot say it (an iterator)
--   summary  what it does, one line
--   text     more lines (optional), shown by help(name) after the summary
--   see      the document that tells the whole story (optional)
--   params   its parameters in order, each made by p(name, type, doc, more): type is a
--            LuaLS type ("string", "integer", "boolean|function", "string[]",
--            "table<string, string>", a class "cloud.fs.Entry", literals
--            '"GET"|"PUT"'), a trailing "?" when it may be left out; more: default
--            (filled in by the checker), min / above (numbers: >= min, > above),
--            unit ("seconds", for messages), what (what a message says it must be,
--            when the type says it badly), names (a kind of name: "waiter" or
--            "operation", looked up with "did you mean"), fields (an option table:
--            its fields, each a p(...); the class <name>.Options)
--   returns  what it returns, each a p(name, type, doc); none: it returns nothing
--   generic  the type parameters its params and returns name ("T", "T, R")
--   value    true for a table or value, not a function (cloud.null, cloud.fs)
--   alias_of the name an old name stands for, kept for one release (made by old_name)
-- The classes the types name (cloud.fs.Entry...) are declared in lua/declared_types.lua.
-- An entry whose name does not resolve (cloud.emulator when an account is configured)
-- is still found by name.

-- p(name, type, doc, more): a parameter, a field or a result (lua/declared_types.lua).
local types = require("cloud.declared_types")
local p = types.p
local check = require("cloud.check")  -- type_words: whether a declared type may be nil

-- The entry of `name`, an old name of `new` kept for one release, declared as `new` is
-- (params and returns: the entry `of`).
local function old_name(name, new, of)
  return { name = name, alias_of = new, summary = "Old name of " .. new .. ", kept for one release.",
           see = "docs/emulator.md", params = of.params, returns = of.returns }
end

local MiB = 1024 * 1024
local FORMS = require("cloud.location").FORMS  -- what a side of sync and check may be
local PROGRESS = "boolean|fun(done: integer, total: integer)"

-- The fields of upload_file and download_file (lua/transfer.lua).
local TRANSFER = {
  p("Bucket", "string", "the bucket"),
  p("Object", "string", "the object's key"),
  p("file", "string", "the local file"),
  p("part_size", "integer?", "bytes per part or range", { default = 8 * MiB, min = 1 }),
  p("concurrency", "integer?", "parts at once", { default = 8, min = 1 }),
  p("progress", PROGRESS .. "?", "called with (done, total), or true/false for the line on stderr"),
  p("keep", "boolean?", "a failed upload is kept (the error has upload_id), not aborted"),
  p("upload_id", "string?", "the upload to resume"),
  p("parts", "table[]?", "the parts taken as done (the error's list)"),
  p("durable", "boolean?", "a download is flushed to disk before it is renamed"),
  p("beneath", "string?", "the folder the file must stay beneath (no link followed out)"),
  p("Metadata", "table<string, string>?", "the object's user metadata"),
  p("ContentType", "string?", "the object's media type (default: from the file's name)"),
  p("CacheControl", "string?", "the Cache-Control header"),
  p("ContentDisposition", "string?", "the Content-Disposition header"),
  p("ContentEncoding", "string?", "the Content-Encoding header"),
  p("ContentLanguage", "string?", "the Content-Language header"),
  p("Expires", "string?", "the Expires header"),
}

-- What storage.check reads of them: the sides, the filters and how to compare (sync's
-- copies, deletions and their options are not check's: refused as unknown there).
local CHECK_FIELDS = { from = true, to = true, include = true, exclude = true, filters = true, compare = true,
                       concurrency = true, part_size = true, shard = true, follow_links = true }

-- The fields of storage.sync, or with `checking` storage.check's (lua/sync.lua), `compare`
-- by default.
local function tree_fields(compare, checking)
  local fields = {
    p("from", "string|cloud.storage.Location", "a local folder, \"s3://BUCKET/PREFIX\" or { Bucket, Prefix }",
      { what = FORMS }),
    p("to", "string|cloud.storage.Location", "the other side, in the same forms", { what = FORMS }),
    p("delete", "boolean?", "removes what the source lacks"),
    p("delete_all", "boolean?", "delete even when the source is empty"),
    p("max_delete", "integer?", "deletes at most this many", { min = 0 }),
    p("dry_run", "boolean?", "sends no write, says what it would do"),
    p("include", "string[]?", "globs of the paths taken"),
    p("exclude", "string[]?", "globs of the paths left out"),
    p("filters", "cloud.storage.Filter[]?", "{ \"include\" | \"exclude\", glob } in order, the later winning"),
    p("compare", '"size-mtime"|"size"|"checksum"?', "how two entries are compared", { default = compare }),
    p("concurrency", "integer?", "copies at once", { default = 16, min = 1 }),
    p("part_size", "integer?", "bytes per part of a large file", { default = 8 * MiB, min = 1 }),
    p("progress", PROGRESS .. "?", "called with (done, total), or true/false for the line on stderr"),
    p("shard", "cloud.storage.Shard?", "the paths whose FNV-1a hash mod count is index",
      { what = "{ index = 0 .. count - 1, count = n >= 1 }" }),
    p("collect", "boolean?", "returns the summary instead of raising SyncFailed"),
    p("follow_links", "boolean?", "follows links in a local folder"),
    p("on_action", "fun(action: table)?", "called with each copy or deletion done"),
    p("copy_limit", "integer?", "bytes above which a copy between buckets goes in parts", { min = 1 }),
    p("content_type", "string?", "the media type of every object uploaded or copied"),
    p("cache_control", "string?", "the Cache-Control of every object uploaded or copied"),
    p("metadata", "table<string, string>?", "the user metadata of every object uploaded or copied",
      { what = "a table of strings" }),
  }
  if not checking then return fields end
  local kept = {}
  for _, f in ipairs(fields) do if CHECK_FIELDS[f.name] then kept[#kept + 1] = f end end
  return kept
end

-- The LuaLS type of each kind of setting (core/client/settings' SettingKind).
local SETTING_TYPES = { name = "string", url = "string", text = "string", integer = "integer", seconds = "number",
                        boolean = "boolean", field_names = "string[]" }

-- cloud.client{}'s fields: the profile, core's table of settings (cloud._client_settings:
-- each with its kind, values and doc, checked there), the credentials.
local function client_fields()
  local fields = { p("profile", "string?", "the profile to start from") }
  local cloud = package.loaded.cloud
  for _, s in ipairs(cloud and cloud._client_settings() or {}) do
    local t = s.per_api and "table<string, string>" or SETTING_TYPES[s.kind]
              or '"' .. table.concat(s.choices, '"|"') .. '"'
    fields[#fields + 1] = p(s.key, t .. "?", s.doc)
  end
  fields[#fields + 1] = p("credentials", "cloud.Credentials?", "access_key_id, secret_access_key, session_token")
  return fields
end

-- cloud.emulator.configure{}'s fields: the platform's settings (cloud._emulator_settings,
-- the list the control plane checks names against), real_time and seed.
local function emulator_settings()
  local fields = {}
  local cloud = package.loaded.cloud
  for _, s in ipairs(cloud and cloud._emulator_settings() or {}) do
    fields[#fields + 1] = p(s.name, "number?", s.doc .. (" (default %.14g)"):format(s.default))
  end
  fields[#fields + 1] = p("real_time", "boolean?", "the clock follows real time")
  fields[#fields + 1] = p("seed", "integer?", "the seed of the platform's random choices, 0 or more")
  return fields
end

local REAL_TIME = "waits in real time, not the emulator's virtual time"
local WAIT_PROGRESS = "boolean|fun(info: cloud.WaitProgress)"
local BENEATH = p("beneath", "string?", "the folder the path must stay beneath (no link followed out)")

local checkpoint = { params = { p("name", "string", "1 to 64 letters, digits, '.', '-', '_'") } }
local checkpoints = { returns = { p("names", "string[]", "the names, sorted") } }

local entries = {
  { name = "cloud.call",
    summary = "Calls an operation by its name, CamelCase or snake_case.",
    text = [[
Same arguments and results as the operation's function:
  cloud.call("UpdateSnapshot", { SnapshotName = "snap-1" })]],
    see = "docs/lua-api.md",
    params = { p("name", "string", "the operation's name, CamelCase or snake_case", { names = "operation" }),
              p("args", "table?", "the operation's arguments") },
    returns = { p("result", "table", "the operation's result"), p("meta", "cloud.Meta", "the call's status, request id, attempts") } },
  { name = "cloud.operations",
    summary = "Every operation of the model as { name, api, fn, method, path, doc }.",
    see = "docs/lua-api.md",
    returns = { p("operations", "cloud.OperationInfo[]", "every operation of the model") } },
  { name = "cloud.check_result",
    summary = "Raises the validation error naming each field of result the operation's output shape does not allow.",
    text = [[
What cloud.stub checks a queued result with; nothing when the result fits.]],
    see = "docs/testing.md",
    params = { p("name", "string", "the operation, CamelCase or snake_case", { names = "operation" }),
               p("result", "table", "the result to check") } },
  { name = "cloud.request",
    summary = "Signs and sends any request, for operations outside the model.",
    text = [[
path is as on the wire (already percent-encoded); query a table (encoded here);
headers a list of { name, value } pairs or a { name = value } map; body a string.
Returns { status, headers (lower-case names), body }: an HTTP error status is
returned, not raised (transport, timeout and config errors are).]],
    see = "docs/lua-api.md",
    params = { p("options", "table", "the request", { fields = {
      p("api", "string?", "the API whose endpoint, region and credentials sign it"),
      p("method", "string?", "the HTTP method", { default = "GET" }),
      p("path", "string?", "the path as on the wire (already percent-encoded)", { default = "/" }),
      p("query", "table?", "the query, { name = value }, encoded here"),
      p("headers", "table?", "{ name = value } or a list of { name, value }"),
      p("body", "string?", "the body") } }) },
    returns = { p("response", "cloud.Response", "status, headers (lower-case names), body"),
                p("meta", "cloud.Meta", "the call's status, request id, attempts") } },
  { name = "cloud.storage.presign",
    summary = "A URL that gets (GET), stores (PUT) or heads (HEAD) one object by itself, signed by the session.",
    text = [[
Signed with the session's own credentials, region, dialect and endpoint; method
GET (default), PUT or HEAD; expires in seconds, 1 to 604800 (a week), default 900.
Anyone holding the URL may use it until it expires (curl "$url", curl -T file "$url"):
the body is not signed. Bucket and Object are checked as the operation's are.]],
    see = "docs/lua-api.md",
    params = { p("options", "table", "the object and the method; GetObject's (PutObject's...) other fields, checked by the model",
                 { fields = {
      p("Bucket", "string", "the bucket"), p("Object", "string", "the object's key"),
      p("method", '"GET"|"PUT"|"HEAD"?', "what the URL does", { default = "GET" }),
      p("expires", "integer?", "seconds, 1 to 604800", { default = 900 }) } }) },
    returns = { p("url", "string", "the signed URL") } },
  { name = "cloud.storage.presign_post",
    summary = "The fields of a browser upload form (POST object with a signed policy), as boto3's generate_presigned_post.",
    text = [[
Post fields to url as multipart/form-data with the file last (curl -F "file=@f").
Object may end in ${filename}; fields are more form fields (each one not named by
a condition gets an exact-match condition); conditions: { field = "v" },
{ "eq" | "starts-with", "$field", "v" }, { "content-length-range", min, max };
expires in seconds, 1 to 604800, default 3600.]],
    see = "docs/lua-api.md",
    params = { p("options", "table", "the object and the form's rules", { fields = {
      p("Bucket", "string", "the bucket"), p("Object", "string", "the object's key (may end in ${filename})"),
      p("conditions", "table[]?", "the policy's conditions"),
      p("fields", "table<string, string>?", "more form fields"),
      p("expires", "integer?", "seconds, 1 to 604800", { default = 3600 }) } }) },
    returns = { p("form", "cloud.storage.PostForm", "{ url, fields }") } },
  { name = "cloud.sign",
    summary = "Signs a request without sending it (Signature V4, ext or aws dialect).",
    text = [[
Returns canonical_request, string_to_sign, signature, authorization, headers (every
header to send) and url (presigned when presign_expires is given).]],
    see = "docs/lua-api.md",
    params = { p("options", "table", "the request to sign", { fields = {
      p("method", "string?", "the HTTP method", { default = "GET" }), p("url", "string", "the URL"),
      p("headers", "table?", "{ name = value } or a list of { name, value }"), p("body", "string?", "the body"),
      p("region", "string?", "the region (default: the session's)"), p("service", "string", "the credential scope's service"),
      p("access_key_id", "string?", "the key id"), p("secret_access_key", "string?", "the secret"),
      p("session_token", "string?", "the session token"), p("omit_session_token", "boolean?", "leaves the token unsigned"),
      p("time", "string?", "the signing time (ISO 8601)"), p("dialect", '"ext"|"aws"?', "the dialect", { default = "ext" }),
      p("normalize", "boolean?", "normalises the path", { default = true }),
      p("double_encode", "boolean?", "encodes the path twice", { default = true }),
      p("sign_body", "boolean?", "signs the body's hash (a header)"),
      p("presign_expires", "integer?", "seconds: a presigned URL instead of a header") } }) },
    returns = { p("signed", "cloud.Signed", "canonical_request, string_to_sign, signature, authorization, headers, url") } },
  { name = "cloud.client",
    summary = "A client with the same API as cloud; fields left out come from the configuration.",
    text = [[
Also services, ca_file, timeout, connect_timeout and the retry options (max_attempts,
retry_base_delay, retry_max_delay, invalid_part_delay, retry_restores). record = DIR
records every exchange of the client into DIR; replay = DIR answers its calls from
that recording, offline (docs/testing.md). A bad value or an unknown field is a
config error, InvalidSetting, naming it.]],
    see = "docs/lua-api.md",
    params = { p("options", "table?", "the settings that differ from the configuration's", { fields = client_fields() }) },
    returns = { p("client", "cloud.Client", "a client with the same API as cloud") } },
  { name = "cloud.error",
    summary = "Makes an error object of the shape the client's own errors have; error() raises it.",
    see = "docs/lua-api.md",
    params = { p("options", "table", "the error's fields", { fields = {
      p("kind", "string", "api, validation, transport, timeout, config..."), p("code", "string?", "the code"),
      p("message", "string?", "what was wrong"), p("status", "integer?", "the HTTP status"),
      p("operation", "string?", "the operation"), p("request_id", "string?", "the request id"),
      p("attempts", "integer?", "how many times it was sent"),
      p("fields", "cloud.FieldProblem[]?", "the fields at fault") } }) },
    returns = { p("error", "cloud.Error", "the error object") } },
  { name = "cloud.printable",
    summary = "The text as a terminal may show it: control characters (ESC, C1...) escaped, as \\027.",
    see = "docs/lua-api.md",
    params = { p("text", "string", "any text") }, returns = { p("text", "string", "the text, control characters escaped") } },
  { name = "cloud.redact",
    summary = "The text as cloudlua shows it: every secret as <redacted>.",
    see = "docs/lua-api.md",
    params = { p("text", "string", "any text") }, returns = { p("text", "string", "the text, secrets as <redacted>") } },
  { name = "cloud.describe",
    summary = "An operation as data: name, fn, api, method, path, doc, idempotent, parameters, result.",
    see = "docs/cli.md",
    params = { p("op", "string|function", "an operation's name or function", { names = "operation" }) },
    returns = { p("description", "cloud.Description", "the operation as data") } },
  -- usage written: the global help is how it is called, which a line derived from
  -- cloud.help's declaration cannot say.
  { name = "cloud.help", usage = "help([x])   (also cloud.help)",
    summary = "Help on an operation, an API, a function of cloud, or a part of a name.",
    text = [[
help() lists everything; help"restore" lists the names containing "restore"; a
mistyped name gets the nearest one. Long help goes through $PAGER (else less -FRX)
on a terminal.]],
    see = "docs/cli.md",
    params = { p("x", "string|function|table?", "an operation, an API, a function of cloud, or a part of a name") } },
  { name = "cloud.nearest",
    summary = "The name in the list nearest to word, when near enough to be what was meant.",
    text = [[
The rule of every "did you mean" of cloudlua: at most 2 edits, more than half of
word right, letters compared without case.]],
    see = "docs/lua-api.md",
    params = { p("word", "string", "what was typed"), p("names", "string[]", "the names it may mean") },
    returns = { p("name", "string?", "the nearest name, or nil") } },
  { name = "cloud.null",
    summary = "JSON null: found in results, sent only where the model allows it.",
    see = "docs/lua-api.md",
    value = true },
  { name = "cloud.pretty",
    summary = "The text of a value as the REPL shows it (tables laid out, strings quoted).",
    text = [[
Options (defaults): color = false, width = 80, indent = "  ", max_depth = 8,
max_items = 100, max_string = 400. require "cloud.pretty" is the same module.]],
    see = "docs/cli.md",
    params = { p("value", "cloud.Value", "any value"),
              p("options", "table?", "how it is shown", { fields = {
      p("color", "boolean?", "ANSI colours", { default = false }),
      p("width", "number?", "columns a table may take before it is split", { default = 80, min = 1 }),
      p("indent", "string?", "one level's indentation", { default = "  " }),
      p("max_depth", "number?", "nesting shown", { default = 8, min = 0 }),
      p("max_items", "number?", "entries shown per table", { default = 100, min = 0 }),
      p("max_string", "number?", "bytes of a string shown", { default = 400, min = 0 }) } }) },
    returns = { p("text", "string", "the value as text") } },
  { name = "cloud.pretty.print",
    summary = "print with tables pretty-printed.",
    see = "docs/cli.md",
    params = { p("...", "cloud.Value", "the values to print") } },
  { name = "cloud.wait_until",
    summary = "Calls fn until it returns a true value; returns everything it returned.",
    text = [[
timeout: seconds in all (default 600); interval: seconds between tries (default 5);
what: what is awaited, for the progress line and the error. fn may return false and
a status ("PROCESSING") that the progress line and the error show. On the embedded
emulator the time between tries is its virtual time (real_time = true sleeps). Past
the timeout: an error of kind timeout, code WaitTimeout.]],
    see = "docs/testing.md",
    generic = "T",
    params = { p("fn", "fun(attempt: integer): T?, string?", "called until it returns a true value (false and a status: not yet)"),
              p("options", "table?", "how long and how often", { fields = {
      p("timeout", "number?", "seconds in all", { default = 600, min = 0, unit = "seconds" }),
      p("interval", "number?", "seconds between tries", { default = 5, above = 0, unit = "seconds" }),
      p("what", "string?", "what is awaited, for the progress line and the error", { default = "condition" }),
      p("real_time", "boolean?", REAL_TIME, { default = false }),
      p("progress", WAIT_PROGRESS .. "?", "a function called after each try, or true/false for the line on stderr") } }) },
    returns = { p("value", "T", "what fn returned") } },
  { name = "cloud.wait_for",
    summary = "Runs a named waiter of the model (ClusterRunning, ...) until it succeeds.",
    text = [[
Calls the waiter's read operation every delay seconds, at most max_attempts times.
A failure acceptor raises an error of kind waiter (WaiterFailed) naming it; running
out of tries raises kind timeout. help"ClusterRunning" describes one.]],
    see = "docs/lua-api.md",
    params = { p("name", "string", "the waiter's name (ClusterRunning...)", { names = "waiter" }),
              p("args", "table?", "the arguments of the waiter's read operation"),
              p("options", "table?", "how often and how many times", { fields = {
      p("delay", "number?", "seconds between tries (default: the waiter's)", { above = 0, unit = "seconds" }),
      p("max_attempts", "integer?", "tries at most (default: the waiter's)", { min = 1 }),
      p("real_time", "boolean?", REAL_TIME, { default = false }),
      p("progress", WAIT_PROGRESS .. "?", "a function called after each try, or true/false for the line on stderr") } }) },
    returns = { p("result", "table", "the read operation's last result"),
                p("meta", "cloud.Meta", "its status, request id, attempts") } },
  -- usage written: an iterator is called by a for loop, which a derived line cannot say.
  { name = "cloud.pages", usage = "for page, meta in cloud.pages(name [, args]) do ... end",
    summary = "The pages of a listing (ListObjectsV2, ...), one call each: for page in cloud.pages(...) do ... end.",
    text = [[
Each page is the operation's result; the next call takes its tokens from it as the
operation's paginator (model data) says, until the answer says there is no more
(IsTruncated false). cloud.operations() shows which operations have a paginator. An
answer that says more follows without a new token: an error of kind api, code
PaginationError.]],
    see = "docs/lua-api.md",
    params = { p("name", "string", "an operation with a paginator, CamelCase or snake_case", { names = "operation" }),
              p("args", "table?", "the first call's arguments") },
    returns = { p("pages", "fun(): table?, cloud.Meta?", "an iterator of each page's result and meta") } },
  { name = "cloud.waiters",
    summary = "The model's named waiters as { name, api, operation, delay, max_attempts, acceptors, ... }.",
    see = "docs/lua-api.md",
    returns = { p("waiters", "cloud.Waiter[]", "every named waiter of the model") } },
  { name = "cloud.spawn",
    summary = "Runs fn(...) as a task whose calls wait on the event loop; t:join() returns its results.",
    text = [[
t:join() waits for the task and returns fn's results, or raises its error. Inside a
task, operations, cloud.request, cloud.sleep and cloud.wait_until park the task and
let the others run. A task nobody keeps is cancelled by the garbage collector.]],
    see = "docs/lua-api.md",
    params = { p("fn", "function", "what the task runs"), p("...", "cloud.Value", "fn's arguments") },
    returns = { p("task", "cloud.Task", "the task: t:join() returns fn's results") } },
  { name = "cloud.stub",
    summary = "Answers the client's calls from queued results and errors, each result checked against the model.",
    text = [[
s.storage.get_object:returns{ Body = "x" }, :fails{ code = "NoSuchKey", status = 404 },
:expects{ Bucket = "b", Object = cloud.ANY } before or after either; s:assert_no_pending(),
s:deactivate(). Under `cloudlua test` each case's end checks every stubber.]],
    see = "docs/testing.md",
    params = { p("client", "cloud.Client?", "the client whose calls are answered (default: cloud)") },
    returns = { p("stubber", "cloud.Stubber", "its APIs' operations, each a queue of answers") } },
  { name = "cloud.map",
    summary = "fn(item) for every item as tasks, at most concurrency (8) at once; results in list order.",
    text = [[
The first failure is raised after the tasks still running are cancelled; with
collect = true each item gets { ok = true, value = v } or { ok = false, error = e }.]],
    see = "docs/lua-api.md",
    generic = "T, R",
    params = { p("list", "T[]", "the items"), p("fn", "fun(item: T): R", "called with each item, as a task"),
              p("options", "table?", "how many at once", { fields = {
      p("concurrency", "integer?", "tasks at once", { default = 8, min = 1 }),
      p("collect", "boolean?", "each item gets { ok, value } or { ok, error } instead of the first failure raised",
        { default = false }) } }) },
    returns = { p("results", "R[]|cloud.Outcome[]", "fn's results in list order") } },
  { name = "cloud.event",
    summary = "A wait without polling: ev:wait() parks the task until ev:signal() wakes the tasks waiting then.",
    text = [[
ev:signal() puts every task waiting at that moment back on the scheduler's ready list
(the path a finished transfer takes) and returns how many there were; wait again in a
loop until what you wait for holds. Outside a task, ev:wait() runs the tasks until a
signal comes.]],
    see = "docs/lua-api.md",
    returns = { p("event", "cloud.Event", "ev:wait() parks the task, ev:signal() wakes the waiting ones") } },
  { name = "cloud.storage.upload_file",
    summary = "Uploads a file of any size: one PutObject, or parts in parallel from disk, completed in order.",
    text = [[
part_size 8 MiB and concurrency 8 by default; a part size the platform refuses is a
validation error before anything is sent. A failed upload is aborted, or with
keep = true kept: the error then has upload_id. upload_file{ upload_id = } resumes
it: the parts ListParts shows with the size and MD5 of their range of the file are
not sent again (parts = the error's list: taken as done, nothing listed). progress:
a function called with (done, total), true or false for the line on stderr.]],
    see = "docs/lua-api.md",
    params = { p("options", "table", "the object, the file and how", { fields = TRANSFER }) },
    returns = { p("result", "cloud.CompleteMultipartUpload.Result|cloud.PutObject.Result", "the last call's result"),
                p("meta", "cloud.Meta", "its status, request id, attempts") } },
  { name = "cloud.storage.download_file",
    summary = "Downloads an object of any size: ranges in parallel into a file beside file, checked, renamed.",
    see = "docs/lua-api.md",
    params = { p("options", "table", "the object, the file and how", { fields = TRANSFER }) },
    returns = { p("result", "cloud.HeadObject.Result", "the object's headers"),
                p("meta", "cloud.Meta", "the last call's status, request id, attempts") } },
  { name = "cloud.storage.location",
    summary = "Reads a bucket location, s3://BUCKET[/PREFIX] (or cloud://): the one grammar sync, check and the scripts use.",
    see = "docs/lua-api.md",
    params = { p("text", "string", "s3://BUCKET[/PREFIX] or cloud://BUCKET[/PREFIX]") },
    returns = { p("location", "cloud.storage.Location?", "{ Bucket, Prefix }, or nil"), p("why", "string?", "why not") } },
  { name = "cloud.storage.sync",
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
    see = "docs/lua-api.md",
    params = { p("options", "table", "the two sides and how", { fields = tree_fields("size-mtime") }) },
    returns = { p("summary", "cloud.storage.SyncSummary", "what was copied, skipped, deleted, failed") } },
  { name = "cloud.storage.check",
    summary = "What differs between two sides (two local folders too), by content unless asked: "
      .. "{ same, differ, only_in_from, only_in_to, failed }.",
    see = "docs/lua-api.md",
    params = { p("options", "table", "the two sides and how", { fields = tree_fields("checksum", true) }) },
    returns = { p("report", "cloud.storage.CheckReport", "what is the same and what differs") } },
  { name = "cloud.fs",
    summary = "The file-system calls Lua lacks: list, walk, stat, mkdir, remove, part, set_mtime, sync, glob.",
    text = [[
Failures are errors of kind io whose code is the system's name (ENOENT) and whose
message names the path: help"cloud.fs.list" and so on describe each.]],
    see = "docs/lua-api.md",
    value = true },
  { name = "cloud.fs.list",
    summary = "The entries of a folder (and below, recursive), sorted by the bytes of their relative path.",
    see = "docs/lua-api.md",
    params = { p("dir", "string", "the folder"), p("options", "table?", "how deep", { fields = {
      p("recursive", "boolean?", "the folders below too", { default = false }),
      p("follow_links", "boolean?", "follows links (else a link is an entry of type link)", { default = false }) } }) },
    returns = { p("entries", "cloud.fs.Entry[]", "sorted by the bytes of their relative path") } },
  -- usage written: an iterator is called by a for loop, which a derived line cannot say.
  { name = "cloud.fs.walk", usage = "for e in cloud.fs.walk(dir [, { recursive, follow_links }]) do ... end",
    summary = "list's entries in list's order, one at a time, holding a folder's entries per level, not the tree.",
    see = "docs/lua-api.md",
    params = { p("dir", "string", "the folder"), p("options", "table?", "how deep", { fields = {
      p("recursive", "boolean?", "the folders below too", { default = true }),
      p("follow_links", "boolean?", "follows links (else a link is an entry of type link)", { default = false }) } }) },
    returns = { p("entries", "fun(): cloud.fs.Entry?", "an iterator of the entries, in list's order") } },
  { name = "cloud.fs.stat",
    summary = "What is at path, or nil when nothing is.", see = "docs/lua-api.md",
    params = { p("path", "string", "the path"), p("options", "table?", "whether links are followed", { fields = {
      p("follow_links", "boolean?", "what a link points to, not the link", { default = true }) } }) },
    returns = { p("entry", "cloud.fs.Entry?", "what is there, or nil") } },
  { name = "cloud.fs.mkdir",
    summary = "Makes a folder and its missing parents; false when it was there.", see = "docs/lua-api.md",
    params = { p("path", "string", "the folder"), p("options", "table?", "where it must stay", { fields = { BENEATH } }) },
    returns = { p("made", "boolean", "false when it was there") } },
  { name = "cloud.fs.remove",
    summary = "Removes a file, link or empty folder (recursive: a whole folder); false when nothing was there.",
    see = "docs/lua-api.md",
    params = { p("path", "string", "the path"), p("options", "table?", "how much", { fields = {
      p("recursive", "boolean?", "a whole folder", { default = false }), BENEATH } }) },
    returns = { p("removed", "boolean", "false when nothing was there") } },
  { name = "cloud.fs.part",
    summary = "A download's part file of its own in target's folder (core's, as get_object{ file = }'s): written, then renamed onto it.",
    see = "docs/lua-api.md",
    params = { p("target", "string", "the file the part becomes"),
              p("options", "table?", "where it must stay", { fields = { BENEATH } }) },
    returns = { p("part", "cloud.fs.Part", "part:path(), part:commit(target [, { durable }]), part:discard()") } },
  { name = "cloud.fs.part_state",
    summary = "Whether path is a download's part file (name, mark and lock), live or left by a killed run.",
    see = "docs/lua-api.md",
    params = { p("path", "string", "the path"), p("options", "table?", "what to do with a stale one", { fields = {
      p("remove_stale", "boolean?", "removes a part file left by a killed run", { default = false }), BENEATH } }) },
    returns = { p("state", '"live"|"stale"|"removed"?', "nil when path is no part file") } },
  { name = "cloud.fs.create",
    summary = "Makes a new, empty file; a file or link already there is an io error (EEXIST), never followed.", see = "docs/lua-api.md",
    params = { p("path", "string", "the new file") } },
  { name = "cloud.fs.set_mtime",
    summary = "Sets a file's modification time, to the nanosecond.", see = "docs/lua-api.md",
    params = { p("path", "string", "the file"), p("seconds", "number", "seconds since 1970, to the nanosecond") } },
  { name = "cloud.fs.sync",
    summary = "Makes every write of the file system holding path durable at once (syncfs).", see = "docs/lua-api.md",
    params = { p("path", "string", "a path on the file system to make durable") } },
  { name = "cloud.fs.glob",
    summary = "A glob over relative paths: * within a folder, ** across, ?, [...]; a leading / anchors it at the top.",
    see = "docs/lua-api.md",
    params = { p("glob", "string", "the glob") },
    returns = { p("matcher", "fun(path: string): boolean", "whether a relative path matches") } },
  { name = "cloud.fs.media_type",
    summary = "The media type of a file called name, from its extension in the system's /etc/mime.types (what uploads send).",
    see = "docs/lua-api.md",
    params = { p("name", "string", "a file's name") }, returns = { p("type", "string?", "the media type, or nil") } },
  { name = "cloud.sleep",
    summary = "Sleeps (virtual time under cloudlua test and --replay, unless real_time); Ctrl-C in the REPL ends it at once.",
    see = "docs/testing.md",
    params = { p("seconds", "number", "how long", { min = 0 }),
              p("options", "table?", "whether time is real",
                { fields = { p("real_time", "boolean?", REAL_TIME, { default = false }) } }) } },
  { name = "cloud.clock",
    summary = "Seconds on a monotonic clock, the one sleeps, waiters and retries read.", see = "docs/testing.md",
    returns = { p("seconds", "number", "seconds on the monotonic clock") } },
  { name = "cloud.isatty",
    summary = "Whether a file handle (io.stderr) is a terminal.", see = "docs/testing.md",
    params = { p("file", "file*", "a file handle (io.stderr)") }, returns = { p("tty", "boolean", "whether it is a terminal") } },
  { name = "cloud.md5_file",
    summary = "The hex MD5 of a file's bytes (a range of them), read once in pieces: an ETag to compare.",
    see = "docs/lua-api.md",
    params = { p("path", "string", "the file"), p("offset", "integer?", "the first byte", { min = 0 }),
              p("length", "integer?", "bytes from offset", { min = 0 }) },
    returns = { p("hex", "string?", "the hex MD5, or nil"), p("message", "string?", "why not") } },
  { name = "cloud.limit_rate",
    summary = "Caps the bandwidth of every transfer of the process together (0 or nil: no cap); returns the cap replaced.",
    params = { p("bytes_per_second", "integer?", "the cap (0 or nil: none)", { min = 0 }) },
    returns = { p("previous", "integer", "the cap replaced") },
    see = "docs/cli.md" },
  { name = "cloud.md5",
    summary = "The hex MD5 of a string's bytes (a multipart ETag is the MD5 of its parts' MD5s).",
    see = "docs/lua-api.md",
    params = { p("text", "string", "the bytes") }, returns = { p("hex", "string", "their hex MD5") } },
  { name = "cloud.json",
    summary = "JSON text from Lua values and back, by the rules of every call's arguments and results: encode, decode.",
    see = "docs/lua-api.md",
    value = true },
  { name = "cloud.json.encode",
    summary = "Compact JSON text of a value: {} for an empty table, null for cloud.null, keys sorted.",
    see = "docs/lua-api.md",
    params = { p("value", "cloud.JSON", "a value JSON can say") }, returns = { p("text", "string", "compact JSON text") } },
  { name = "cloud.json.decode",
    summary = "The value of a JSON text; not JSON is InvalidJSON naming the byte (\"at byte 7: ...\").",
    see = "docs/lua-api.md",
    params = { p("text", "string", "JSON text") }, returns = { p("value", "cloud.JSON", "its value") } },
  { name = "cloud.time",
    summary = "Dates as the APIs send them (RFC 3339, HTTP, SigV4) to and from seconds since 1970: parse, format.",
    see = "docs/lua-api.md",
    value = true },
  { name = "cloud.time.parse",
    summary = "The seconds (UTC) of an RFC 3339, HTTP or SigV4 date; nil and an InvalidDate error saying why for other text.",
    see = "docs/lua-api.md",
    params = { p("text", "string", "an RFC 3339, HTTP or SigV4 date") },
    returns = { p("seconds", "number?", "seconds since 1970 (UTC), or nil"), p("error", "cloud.Error?", "why not (InvalidDate)") } },
  { name = "cloud.time.format",
    summary = "Seconds as a date in form \"iso\" (the default, 2026-11-28T07:04:18Z), \"http\" or \"sigv4\".",
    see = "docs/lua-api.md",
    params = { p("seconds", "number", "seconds since 1970"),
              p("form", '"iso"|"http"|"sigv4"?', "the form", { default = "iso" }) },
    returns = { p("text", "string", "the date") } },
  { name = "cloud.emulator",
    summary = "The emulator, when it serves the session: the embedded one, or a cloudlua serve reached by endpoint_url "
      .. "(nil against an account).",
    text = [[
cloud.emulator.seed{...}, advance(seconds), fault{...}, configure{...}, state(),
requests(), reset(), checkpoint(name), restore(name), checkpoints(), endpoints():
help"cloud.emulator.fault" and so on describe each. snapshot(name) and snapshots()
are the old names of checkpoint(name) and checkpoints(), kept for one release.]],
    see = "docs/emulator.md",
    value = true },
  { name = "cloud.emulator.seed",
    summary = "Adds resources, the calling account's; a field left out gets its default.", see = "docs/emulator.md",
    params = { p("options", "table", "the resources to add", { fields = {
      p("buckets", "(string|table)[]?", "buckets: names or { name, objects... }"),
      p("firewall_groups", "table[]?", "firewall groups"), p("backups", "table[]?", "backups"),
      p("instances", "table[]?", "instances"), p("snapshots", "table[]?", "snapshots"),
      p("clusters", "table[]?", "clusters"), p("mesh_clusters", "table[]?", "service-mesh clusters") } }) } },
  { name = "cloud.emulator.advance",
    summary = "Moves the platform's clock on; every transition that falls due settles.", see = "docs/emulator.md",
    params = { p("seconds", "number", "how far the clock moves on") } },
  { name = "cloud.emulator.fault",
    summary = "Makes the next matching requests misbehave; faults queue up.", see = "docs/emulator.md",
    params = { p("options", "table", "which requests and how they fail", { fields = {
      p("operation", "string?", "the operation it applies to (default: any)", { names = "operation" }),
      p("times", "integer?", "how many requests", { default = 1, min = 1 }),
      p("status", "integer?", "the HTTP status answered"), p("code", "string?", "the error code"),
      p("message", "string?", "the error message"), p("delay", "number?", "seconds before the answer"),
      p("drop", "boolean?", "the connection is dropped"), p("error_in_200", "boolean?", "an error inside a 200"),
      p("echo", "boolean?", "answers with the request"), p("maintenance", "boolean?", "the JSON APIs' maintenance answer") } }) } },
  { name = "cloud.emulator.requests",
    summary = "How many requests each operation was asked since the last reset.", see = "docs/emulator.md",
    returns = { p("counts", "table<string, integer>", "requests per operation") } },
  { name = "cloud.emulator.configure",
    summary = "Changes the emulator's settings; an unknown name is an error listing the known ones.", see = "docs/emulator.md",
    params = { p("options", "table", "the settings to change", { fields = emulator_settings() }) } },
  { name = "cloud.emulator.state",
    summary = "Every resource as tables (the buckets, and the calling account's others), after settling what is due.",
    see = "docs/emulator.md",
    returns = { p("state", "table<string, table>", "every resource as tables") } },
  { name = "cloud.emulator.reset",
    summary = "Removes every resource and queued fault (settings and the clock stay).", see = "docs/emulator.md",
    params = {} },
  { name = "cloud.emulator.checkpoint",
    summary = "Saves the whole platform as the checkpoint name (1 to 64 letters, digits, '.', '-', '_').",
    see = "docs/emulator.md",
    params = checkpoint.params },
  { name = "cloud.emulator.restore",
    summary = "Puts the checkpoint name in place of this platform; an unknown name is NoSuchCheckpoint.",
    see = "docs/emulator.md",
    params = { p("name", "string", "a checkpoint's name") } },
  { name = "cloud.emulator.checkpoints",
    summary = "The names of the checkpoints, sorted.", see = "docs/emulator.md",
    returns = checkpoints.returns },
  old_name("cloud.emulator.snapshot", "cloud.emulator.checkpoint", checkpoint),
  old_name("cloud.emulator.snapshots", "cloud.emulator.checkpoints", checkpoints),
  { name = "cloud.emulator.endpoints",
    summary = "The URL of each API the emulator serves.", see = "docs/emulator.md",
    returns = { p("urls", "table<string, string>", "each API's URL") } },
}

-- The entries of cloud.commands and its functions, derived from the sub-commands'
-- declaration (lua/command_specs.lua).
for _, e in ipairs(require("cloud.command_docs").reference()) do entries[#entries + 1] = e end

-- The classes and aliases the declarations' types name (lua/declared_types.lua).
entries.classes = types.classes

-- A parameter as a usage line shows it: an option table as `{ field, ... }` listing its
-- declared fields, anything else by its name.
local function shown(d)
  if not d.fields then return d.name end
  local names = {}
  for i, f in ipairs(d.fields) do names[i] = f.name end
  return "{ " .. table.concat(names, ", ") .. " }"
end

-- Whether a declared parameter or result may be left out (nil).
local function optional(d) return select(2, check.type_words(d.type)) end

-- The call of a usage line: `name{ field, ... }` when an option table is the only
-- parameter, else `name(a, b [, c [, d]])`, each optional parameter in brackets.
local function call_of(e)
  local params = e.params or {}
  if #params == 1 and params[1].fields then return e.name .. shown(params[1]) end
  local out, open = {}, 0
  for i, d in ipairs(params) do
    if optional(d) then
      out[#out + 1], open = (i > 1 and " [, " or "[") .. shown(d), open + 1
    else
      out[#out + 1], open = ("]"):rep(open) .. (i > 1 and ", " or "") .. shown(d), 0
    end
  end
  return e.name .. "(" .. table.concat(out) .. ("]"):rep(open) .. ")"
end

-- An entry's usage line, derived from its declaration: its call, then ` -> ` and its
-- results' names (`name?` when it may be nil); a value's is its name.
local function usage_of(e)
  if e.value then return e.name end
  local results = {}
  for i, d in ipairs(e.returns or {}) do results[i] = d.name .. (optional(d) and "?" or "") end
  return call_of(e) .. (#results > 0 and " -> " .. table.concat(results, ", ") or "")
end

-- help's lines of one declared parameter, field or result, `indent` deep: its name,
-- its type, its default and its doc; an option table's fields below it.
local function declared_lines(out, d, indent)
  local default = d.default ~= nil and (", default " .. (type(d.default) == "string" and ("%q"):format(d.default)
                                                           or tostring(d.default))) or ""
  out[#out + 1] = ("%s%s (%s%s): %s"):format(indent, d.name,
                                                  d.fields and ("table" .. d.type:match("%??$")) or d.type, default, d.doc)
  for _, f in ipairs(d.fields or {}) do declared_lines(out, f, indent .. "  ") end
end

-- Each entry's usage line (derived unless written) and `declared`: what help(name) shows
-- of its declaration after the summary
-- (an old name's is its new name's, not shown again).
for _, e in ipairs(entries) do
  e.usage = e.usage or usage_of(e)
  local out = {}
  if e.params and #e.params > 0 then out[#out + 1] = "Arguments:" end
  for _, d in ipairs(e.params or {}) do declared_lines(out, d, "  ") end
  if e.returns then out[#out + 1] = "Returns:" end
  for _, d in ipairs(e.returns or {}) do declared_lines(out, d, "  ") end
  if #out > 0 and not e.alias_of then e.declared = table.concat(out, "\n") end
end

return entries
