-- The declarations' vocabulary (require "cloud.declared_types"): p, the constructor of a
-- parameter, a field or a result, and the classes and aliases the declarations' types
-- name (cloud.fs.Entry, cloud.JSON...), each a name, one line of doc, and its fields (a
-- class) or its type (an alias, `alias`). lua/reference.lua declares the functions of
-- cloud with them; lua/definitions.lua writes the classes for the editors.
local M = {}

-- A parameter, a field or a result: name, LuaLS type, one line of doc, and `more`.
function M.p(name, type, doc, more)
  local t = more or {}
  t.name, t.type, t.doc = name, type, doc
  return t
end
local p = M.p

M.classes = {
  { name = "cloud.Value", doc = "Any Lua value.", alias = "string|number|boolean|table|function|userdata|thread|nil" },
  { name = "cloud.JSON", doc = "A value JSON can say (cloud.null for null).", alias = "string|number|boolean|table|nil" },
  { name = "cloud.OperationInfo", doc = "An operation of the model, as cloud.operations() lists it.", fields = {
    p("name", "string", "CamelCase name"), p("api", "string", "its API"), p("fn", "string", "its function's name"),
    p("method", "string", "the HTTP method"), p("path", "string", "the path template"), p("doc", "string", "what it does"),
    p("paginator", "table?", "input_token, output_token, more_results: when it has pages") } },
  { name = "cloud.Description", doc = "An operation as data (cloud.describe).", fields = {
    p("name", "string", "CamelCase name"), p("fn", "string", "its function's name"), p("api", "string", "its API"),
    p("method", "string", "the HTTP method"), p("path", "string", "the path template"), p("doc", "string", "what it does"),
    p("idempotent", "boolean", "whether it may be sent again"), p("parameters", "table[]", "its arguments, one per path"),
    p("result", "table[]", "its result's fields, one per path"), p("limits", "table<string, integer>?", "its limits") } },
  { name = "cloud.Response", doc = "What cloud.request returns: an HTTP error status is returned, not raised.", fields = {
    p("status", "integer", "the HTTP status"), p("headers", "table<string, string>", "the headers, names in lower case"),
    p("body", "string", "the body") } },
  { name = "cloud.Signed", doc = "A request signed by cloud.sign, nothing sent.", fields = {
    p("canonical_request", "string", "the canonical request"), p("string_to_sign", "string", "the string to sign"),
    p("signature", "string", "the signature, hex"), p("authorization", "string", "the Authorization header"),
    p("headers", "table<string, string>", "every header to send"), p("url", "string", "the URL (presigned when asked)") } },
  { name = "cloud.Credentials", doc = "A client's credentials (\"\" clears one).", fields = {
    p("access_key_id", "string?", "the key id"), p("secret_access_key", "string?", "the secret"),
    p("session_token", "string?", "the session token") } },
  { name = "cloud.FieldProblem", doc = "A field at fault in an error.", fields = {
    p("path", "string", "the field's path"), p("problem", "string", "what is wrong with it") } },
  { name = "cloud.Waiter", doc = "A named waiter of the model.", fields = {
    p("name", "string", "its name"), p("api", "string", "its API"), p("operation", "string", "the operation it calls"),
    p("delay", "number", "seconds between tries"), p("max_attempts", "integer", "tries at most"),
    p("acceptors", "table[]", "what ends the wait: success, failure or retry") } },
  { name = "cloud.WaitProgress", doc = "What a wait's progress function is called with after a try.", fields = {
    p("what", "string", "what is awaited"), p("attempt", "integer", "the try just made"),
    p("max_attempts", "integer?", "tries at most"), p("elapsed", "number", "seconds since the first try"),
    p("status", "string?", "the last status seen") } },
  { name = "cloud.Task", doc = "A task on the event loop (cloud.spawn).", fields = {
    p("join", "fun(self: cloud.Task): cloud.Value", "waits for the task; its results, or raises its error") } },
  { name = "cloud.Event", doc = "A wait without polling (cloud.event).", fields = {
    p("wait", "fun(self: cloud.Event)", "parks the task until a signal"),
    p("signal", "fun(self: cloud.Event): integer", "wakes the tasks waiting; how many") } },
  { name = "cloud.Outcome", doc = "An item's outcome under cloud.map{ collect = true }.", fields = {
    p("ok", "boolean", "whether fn returned"), p("value", "cloud.Value", "what it returned"),
    p("error", "cloud.Value", "what it raised") } },
  { name = "cloud.Stubber", doc = "A client's calls answered from queues (cloud.stub): stubber.storage.get_object...",
    fields = {
    p("storage", "table<string, cloud.StubQueue>", "the storage API's operations"),
    p("cluster", "table<string, cloud.StubQueue>", "the cluster API's operations"),
    p("devops", "table<string, cloud.StubQueue>", "the devops API's operations"),
    p("catalog", "table<string, cloud.StubQueue>", "the catalog API's operations"),
    p("assert_no_pending", "fun(self: cloud.Stubber)", "raises when a queued answer was not used"),
    p("deactivate", "fun(self: cloud.Stubber)", "the client calls the platform again") } },
  { name = "cloud.StubQueue", doc = "One operation's queued answers (cloud.stub).", fields = {
    p("returns", "fun(self: cloud.StubQueue, result: table): cloud.StubQueue", "queues a result, checked by the model"),
    p("fails", "fun(self: cloud.StubQueue, error: table): cloud.StubQueue", "queues an error { code, status, ... }"),
    p("expects", "fun(self: cloud.StubQueue, args: table): cloud.StubQueue",
      "the arguments the next call must have (cloud.ANY: any value)") } },
  { name = "cloud.storage.Location", doc = "A bucket location.", fields = {
    p("Bucket", "string", "the bucket"), p("Prefix", "string?", "the folder in it") } },
  { name = "cloud.storage.Shard", doc = "The paths whose FNV-1a hash mod count is index.", fields = {
    p("index", "integer", "0 .. count - 1", { min = 0 }), p("count", "integer", "how many shards", { min = 1 }) } },
  { name = "cloud.storage.Filter", doc = "{ \"include\" | \"exclude\", glob }.", alias = "string[]" },
  { name = "cloud.storage.PathError", doc = "A path that failed.", fields = {
    p("path", "string", "the relative path"), p("error", "cloud.Error|string", "why") } },
  { name = "cloud.storage.PostForm", doc = "A browser upload's form (presign_post).", fields = {
    p("url", "string", "where the form is posted"), p("fields", "table<string, string>", "the form's fields") } },
  { name = "cloud.storage.SyncSummary", doc = "What storage.sync did.", fields = {
    p("copied", "integer", "copies made"), p("skipped", "integer", "entries the same on both sides"),
    p("deleted", "integer", "deletions made"), p("failed", "integer", "copies or deletions that failed"),
    p("bytes", "integer", "bytes copied"), p("errors", "cloud.storage.PathError[]", "each failure"),
    p("not_deleted", "integer?", "deletions held back by max_delete"),
    p("deletes_withheld", "integer?", "deletions withheld after a listing failed"),
    p("delete_note", "string?", "why deletions were held back"),
    p("interrupted", "boolean?", "the run was interrupted") } },
  { name = "cloud.storage.CheckReport", doc = "What storage.check found.", fields = {
    p("same", "integer", "entries the same"), p("differ", "string[]", "paths that differ"),
    p("only_in_from", "string[]", "paths only in from"), p("only_in_to", "string[]", "paths only in to"),
    p("failed", "cloud.storage.PathError[]", "paths that could not be compared") } },
  { name = "cloud.fs.Entry", doc = "An entry of a folder (cloud.fs.list, walk, stat).", fields = {
    p("path", "string", "the path relative to the folder listed (stat: the path)"),
    p("size", "integer", "bytes"), p("mtime", "number", "modification time, seconds since 1970"),
    p("type", '"file"|"dir"|"link"|"other"', "what it is") } },
  { name = "cloud.fs.Part", doc = "A download's part file (cloud.fs.part).", fields = {
    p("path", "fun(self: cloud.fs.Part): string", "its path"),
    p("commit", "fun(self: cloud.fs.Part, target: string, options?: { durable: boolean? })", "renames it onto target"),
    p("discard", "fun(self: cloud.fs.Part)", "removes it") } },
}

return M
