-- cloud.pages(name, args): the pages of a listing, one call each, as the iterator of
-- a generic for:
--   for page, meta in cloud.pages("ListObjectsV2", { Bucket = "b" }) do ... end
-- The operation's paginator, model data (docs/model.md, *Paginators*), says which
-- input members the next call takes from which paths of the answer before it, and
-- which boolean of the answer says that more pages follow. The first call is made
-- with `args` as given (a ContinuationToken there starts the listing from it); the
-- caller's table is never changed.
--
-- Decisions: a call's error is raised as it is, ending the loop; an answer that says
-- more follows but gives no token, or the tokens the call was made with again, would
-- never end, and raises an error of kind "api", code "PaginationError", made by
-- cloud.error. Calls go through cloud.call, so every page is validated, signed,
-- retried and (inside a task) waited for as any call is.
--
-- ahead(iterator) reads such an iterator one page ahead (storage.sync's listings): the
-- call for the next page is made, and its request sent, as a page is handed over, so
-- that the server answers while the caller works through the page it has. One page
-- ahead at most; the calls, their order and their errors are the iterator's own.

local check = require("cloud.check")
local cloud_module = check.cloud

-- The value at "a.b[-1].c" in v ("[n]" after a list: its item n, "[-1]" its last), or nil.
local function value_at(v, path)
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    local name, index = part:match("^(.-)%[(%-?%d+)%]$")
    if name then
      local list, n = v[name], tonumber(index)
      v = type(list) == "table" and list[n < 0 and #list + 1 + n or n] or nil
    else
      v = v[part]
    end
  end
  return v
end

-- The first of the paths "A || B" the answer has a value at.
local function token_at(result, paths)
  for path in (paths .. "||"):gmatch("%s*(.-)%s*||") do
    local v = value_at(result, path)
    if v ~= nil then return v end
  end
end

local function shallow_copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

local function pagination_error(op, message)
  return cloud_module().error{ kind = "api", code = "PaginationError", operation = op.name,
                               message = op.name .. ": " .. message }
end

-- The arguments of the page after `result`, or nil when it was the last.
local function next_args(op, args, result)
  local p = op.paginator
  if value_at(result, p.more_results) ~= true then return nil end
  local out, given, same = shallow_copy(args), false, true
  for i, input in ipairs(p.input_token) do
    out[input] = token_at(result, p.output_token[i])
    given = given or out[input] ~= nil
    same = same and out[input] == args[input]
  end
  if not given then
    error(pagination_error(op, p.more_results .. " is true but the answer has no " .. table.concat(p.output_token, ", ")), 0)
  end
  if same then error(pagination_error(op, "the answer gives the token the call was made with again"), 0) end
  return out
end

local function find_operation(client, name)
  for _, op in ipairs(client.operations()) do
    if op.name == name or op.fn == name then return op end
  end
end

-- `client`: a cloud.client{} table, whose calls the pages are (its own `pages`);
-- nil for cloud.pages, the default client's.
local function pages(name, args, client)
  local fname = client and "pages" or "cloud.pages"
  name, args = check.arguments("cloud.pages", fname, 2, name, args)
  client = client or cloud_module()
  local op = find_operation(client, name)
  if not op.paginator then check.arg_error(1, fname, op.name .. " has no paginator; cloud.operations() shows which have one") end
  local current = shallow_copy(args or {})
  return function()
    if not current then return nil end
    local result, meta = client.call(op.name, current)
    current = next_args(op, current, result)
    return result, meta
  end
end

-- The pages of `iterator` (what pages returns), the call for the next one under way
-- while the caller holds the current one: a task (cloud.spawn) makes it, and
-- cloud.sleep(0) lets the loop turn once, which sends its request at once (a call's
-- transfer only goes out when the loop turns). A call's error is raised when its page
-- is asked for.
local function ahead(iterator)
  local cloud = cloud_module()
  local function prefetch()
    local task = cloud.spawn(iterator)
    cloud.sleep(0)
    return task
  end
  local pending = nil
  return function()
    local task = pending or prefetch()
    local result, meta = task:join()
    pending = result ~= nil and prefetch() or nil
    return result, meta
  end
end

return { pages = pages, ahead = ahead }
