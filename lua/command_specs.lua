-- The sub-commands of the command line (`cloudlua sync|check|cp|...`, each also a
-- function of cloud.commands), declared once, as data: nothing else in cloudlua spells
-- their names or their options. lua/command_line.lua reads it into the parser, the
-- checks and --help; lua/command_docs.lua into the main --help's list, the bash and
-- zsh completion, the manual's option lists, help() and the LuaLS types
-- (docs/design.md, "The sub-commands, declared once"). To add a sub-command, add an
-- entry here and its function to lua/commands.lua.
--
-- An option: { "long-name", type =, value =, check =, choices =, default =, doc = }
--   type     its LuaLS type in the table form: "boolean" (a flag), "integer", "string",
--            "string[]", "integer|string"...; a value's choices make it a union of literals
--   value    how --help names the value it takes (N, GLOB); none for a flag
--   check    the check that reads and converts the value (lua/command_line.lua's checks)
--   ordered  --include/--exclude: each occurrence a filter, in the order typed
-- In the table form an option is its long name with '_' for '-' (--dry-run: dry_run).
-- A command: name, summary (one line: the main --help, completion), about (its own
-- --help), args (positional: { "NAME", doc =, optional =, paths = a local path too }),
-- options (its own, or the name of a shared one), fields (the table form's fields
-- no command line types) and result (the fields of the table it returns, beside the
-- shared ones: { "name", "LuaLS type", "doc", optional = }).

-- The options several commands take, declared once.
local shared = {
  ["dry-run"] = { type = "boolean", doc = "Show what would be done; change nothing" },
  exclude = { type = "string[]", value = "GLOB", ordered = true,
              doc = "Leave out the paths GLOB matches (* ** ? [...]); may repeat" },
  include = { type = "string[]", value = "GLOB", ordered = true,
              doc = "Take the paths GLOB matches back in; may repeat; the later filter wins" },
  concurrency = { type = "integer", value = "N", check = "count", default = 16,
                  doc = "Transfers at once, parts of large files included" },
  output = { type = "string", value = "FORMAT", choices = { "text", "json" }, default = "text",
             doc = "json: one JSON line per item, then a summary record" },
  progress = { type = "boolean", doc = "A progress line on stderr, off a terminal too (every few seconds)" },
  quiet = { type = "boolean", doc = "Print nothing but failures" },
  ["limit-rate"] = { type = "integer|string", value = "RATE", check = "rate",
                     doc = "Cap the bandwidth of all transfers together at RATE bytes a second (50M, 512K)" },
  ["part-size"] = { type = "integer|string", value = "SIZE", check = "size", default = "8M",
                    doc = "Transfer in parts of SIZE" },
  recursive = { type = "boolean", doc = "Every object under the prefix (every file under the folder)" },
  ["content-type"] = { type = "string", value = "TYPE",
                       doc = "The Content-Type of every object uploaded or copied (default: from each file's name)" },
  ["cache-control"] = { type = "string", value = "VALUE", doc = "The Cache-Control of every object uploaded or copied" },
  metadata = { type = "string|table<string, string>", value = "K=V,...", check = "metadata",
               doc = "User metadata of every object uploaded or copied (x-amz-meta-K)" },
}

-- Two sides: a local folder or a bucket location each.
local SRC = { "SRC", paths = true, doc = "A local folder or s3://BUCKET[/PREFIX]" }
local DST = { "DST", paths = true, doc = "A local folder or s3://BUCKET[/PREFIX]" }

-- The failures of a command that goes on after one: { path, error } each
-- (cloud.storage.PathError, lua/declared_types.lua).
local ERRORS = "cloud.storage.PathError[]"

return {
  shared = shared,

  -- The table form's field every command takes: the filters in the order given.
  filters = { "filters", type = '{ [1]: "include"|"exclude", [2]: string }[]',
              doc = "include and exclude globs in order: { { \"exclude\", glob }, { \"include\", glob } }" },

  -- The fields of every command's result.
  result = { { "status", "integer", "The command's exit status: 0 done, 1 something failed or differs" } },

  -- The sub-commands, in the order --help lists them.
  commands = {
    { name = "sync", summary = "Make a folder or bucket location the same as another",
      about = "Makes DST the same as SRC, each a local folder or s3://BUCKET[/PREFIX]: copies what is missing or changed.",
      args = { SRC, DST },
      options = {
        { "delete", type = "boolean",
          doc = "Remove what DST has and SRC does not (never what --exclude keeps out), after the copies" },
        { "delete-all", type = "boolean", doc = "With --delete, allow an empty SRC to empty DST (refused otherwise)" },
        { "max-delete", type = "integer", value = "N", check = "limit",
          doc = "With --delete, remove at most N; the rest is reported and the exit status is 1" },
        "dry-run", "exclude", "include",
        { "checksum", type = "boolean", doc = "Compare contents (MD5 and ETags), not sizes and times" },
        { "size-only", type = "boolean", doc = "Compare sizes only" },
        "concurrency", "part-size",
        { "shard", type = "string|{ index: integer, count: integer }", value = "I/N", check = "shard",
          doc = "Take only the paths of shard I of N (0-based; FNV-1a of the path)" },
        "output", { "verbose", type = "boolean", doc = "With --output json, a line for each path skipped too" },
        "progress", "quiet", "limit-rate", "content-type", "cache-control", "metadata" },
      result = { { "copied", "integer", "Files and objects copied" }, { "skipped", "integer", "Paths the same on both sides" },
                 { "deleted", "integer", "Paths deleted from DST" }, { "failed", "integer", "Copies and deletions that failed" },
                 { "bytes", "integer", "Bytes copied" }, { "errors", ERRORS, "What failed, and why" },
                 { "dry_run", "boolean", "Nothing was changed", optional = true },
                 { "not_deleted", "integer", "Deletions held back by max_delete", optional = true },
                 { "deletes_withheld", "integer", "Deletions held back by a folder not listed", optional = true },
                 { "delete_note", "string", "Why deletions were held back", optional = true } } },
    { name = "check", summary = "Tell what differs between two folders or bucket locations",
      about = "Tells what differs between SRC and DST (a local folder or s3://BUCKET[/PREFIX] each), transferring nothing.",
      args = { SRC, DST },
      options = { { "size-only", type = "boolean", doc = "Compare sizes only, not contents" },
                  "exclude", "include", "output", "quiet" },
      result = { { "same", "integer", "Paths the same on both sides" }, { "differ", "string[]", "Paths that differ" },
                 { "only_in_from", "string[]", "Paths only SRC has" }, { "only_in_to", "string[]", "Paths only DST has" },
                 { "failed", ERRORS, "Local folders that could not be listed" } } },
    { name = "cp", summary = "Copy files and objects (wildcards, --recursive, - for stdin or stdout)",
      about = "Copies a file or object: local to s3://, s3:// to local, s3:// to s3://; - is stdin or stdout; "
        .. "wildcards (* ? [...]) in an s3:// source; --recursive for a folder or prefix.",
      args = { { "SRC", paths = true, doc = "A file, a folder (--recursive), s3://BUCKET/KEY (wildcards allowed) or -" },
               { "DST", paths = true, doc = "A file, a folder, s3://BUCKET/KEY, s3://BUCKET/PREFIX/ or -" } },
      options = { "recursive", "dry-run", "exclude", "include", "concurrency", "part-size", "output", "progress",
                  "quiet", "limit-rate", "content-type", "cache-control", "metadata" },
      fields = { { "copy_limit", type = "integer|string", check = "size",
                   doc = "CopyObject's limit lowered: a copy between buckets above it goes in parts (as storage.sync's)" } },
      result = { { "copied", "integer", "Files and objects copied" }, { "failed", "integer", "Copies that failed" },
                 { "bytes", "integer", "Bytes copied" }, { "errors", ERRORS, "What failed, and why" } } },
    { name = "ls", summary = "List buckets, or the objects and folders under a location",
      about = "Lists the buckets, or one level of s3://BUCKET[/PREFIX] (folders as PRE), or everything under it with --recursive.",
      args = { { "LOCATION", optional = true, doc = "s3://BUCKET[/PREFIX]; none: the buckets" } },
      options = { "recursive", { "human-readable", type = "boolean", doc = "Sizes as 1.5 MiB rather than in bytes" },
                  { "summarize", type = "boolean", doc = "End with the count of objects and their total size" },
                  "output", "quiet" },
      result = { { "buckets", "cloud.ListBuckets.Result.Buckets[]", "The buckets (no LOCATION)", optional = true },
                 { "prefixes", "string[]", "The folders listed (a LOCATION)", optional = true },
                 { "objects", "cloud.ListObjectsV2.Result.Contents[]",
                   "The objects listed (a LOCATION; the command line prints them, keeping none)", optional = true },
                 { "bytes", "integer", "The objects' total size (a LOCATION)", optional = true } } },
    { name = "rm", summary = "Remove an object, or every object under a prefix",
      about = "Removes an object, or with --recursive every object under a prefix (after listing all of them).",
      args = { { "LOCATION", doc = "s3://BUCKET/KEY, or s3://BUCKET/PREFIX with --recursive" } },
      options = { "recursive", "dry-run", "exclude", "include", "output", "quiet" },
      result = { { "deleted", "integer", "Objects deleted (or that would be)" }, { "failed", "integer", "Deletions that failed" } } },
    { name = "cat", summary = "Write an object to stdout",
      about = "Writes an object to stdout as it comes, a part at a time.",
      args = { { "LOCATION", doc = "s3://BUCKET/KEY" } },
      options = { "part-size", "limit-rate" },
      result = { { "bytes", "integer", "Bytes written" } } },
    { name = "mb", summary = "Make a bucket",
      about = "Makes the bucket s3://BUCKET.",
      args = { { "LOCATION", doc = "s3://BUCKET" } },
      options = { "output", "quiet" },
      result = { { "bucket", "string", "The bucket made" } } },
    { name = "rb", summary = "Remove a bucket (--force: its objects first)",
      about = "Removes the bucket s3://BUCKET; --force removes its objects first (after listing all of them).",
      args = { { "LOCATION", doc = "s3://BUCKET" } },
      options = { { "force", type = "boolean", doc = "Remove every object first, then the bucket" },
                  "dry-run", "output", "quiet" },
      result = { { "bucket", "string", "The bucket" }, { "deleted", "integer", "Objects deleted first (--force)" },
                 { "failed", "integer", "Objects that could not be deleted (the bucket is then kept)" } } },
  },
}
