-- The stubs through which parts of the `cloud` API written in Lua are installed
-- (lua/modules.cpp requires this module once per state and calls its functions).
-- Each stub requires its module on the first call and tail-calls into it: nothing is
-- compiled that a script does not use, and, the tail call leaving no frame, the
-- module's errors point at the script's line as they would without the stub.

local M = {}

-- stub(name, field) -> a function that calls require(name)[field].
function M.stub(name, field)
  return function(...) return require(name)[field](...) end
end

-- transfers(client): the client's storage.upload_file and download_file, calling
-- require "cloud.transfer"'s with the client (its pages list an upload's parts).
function M.transfers(client)
  rawset(client.storage, "upload_file", function(args) return require("cloud.transfer").upload_file(client, args) end)
  rawset(client.storage, "download_file", function(args) return require("cloud.transfer").download_file(client, args) end)
end

-- sync(client): the client's storage.sync and check, calling require "cloud.sync"'s
-- with the client (its pages list the bucket), and location, the parser of
-- s3://BUCKET/PREFIX they read their strings with (require "cloud.location").
function M.sync(client)
  rawset(client.storage, "sync", function(args) return require("cloud.sync").sync(client, args) end)
  rawset(client.storage, "check", function(args) return require("cloud.sync").check(client, args) end)
  rawset(client.storage, "location", function(text) return require("cloud.location").parse(text) end)
end

-- client(client): a cloud.client{}'s own pages and wait_for, calling the modules'
-- with the client (cloud.pages and cloud.wait_for are the default client's).
function M.client(client)
  rawset(client, "pages", function(name, args) return require("cloud.pages").pages(name, args, client) end)
  rawset(client, "wait_for", function(name, args, opts) return require("cloud.wait").wait_for(name, args, opts, client) end)
end

return M
