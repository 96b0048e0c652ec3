-- cloud.stub: the platform's answers queued by a test, checked against the model, as
-- botocore's Stubber does for boto3. `cloud.stub(client)` (the default client when
-- none is given) returns a stubber; while it is active, each call of
-- client.<api>.<operation> (and client.call) is answered from that operation's queue,
-- in order, and nothing is sent:
--   s.storage.get_object:returns{ Body = "x" }                 a result
--   s.storage.get_object:fails{ code = "NoSuchKey", status = 404 }   an api error
--   s.storage.get_object:expects{ Bucket = "b", Object = cloud.ANY }:returns{ ... }
--   s.storage.get_object:returns{ ... }:expects{ ... }          the same, the other way
--   s:assert_no_pending()   every queued answer was taken; s:deactivate()
--
-- Decisions: a queued result is checked against the operation's output shape when it
-- is queued (client.check_result: the model's one validator), so a stub cannot answer
-- what the platform never would, and the error names the bad field's path. A call
-- with nothing queued, or whose arguments differ from what was expected, raises a
-- `config` error naming each differing path (as a replay names the nearest recorded
-- call), and is also kept: under `cloudlua test` the end of each case checks every
-- stubber (lua/testing.lua), so such a call fails its case even when the code under
-- test caught the error, and answers left unused fail it too. The queues are emptied
-- there; a stubber made inside a case is put away with it.

local M = {}

-- The value that matches any argument in :expects.
M.ANY = setmetatable({}, { __tostring = function() return "cloud.ANY" end, __name = "cloud.ANY" })

local live = {}  -- the active stubbers, checked at the end of each case

-- `value` with each cloud.ANY of `expected` replaced by what `actual` has there, so
-- that a comparison sees no difference at those places.
local function with_any(expected, actual)
  if expected == M.ANY then return actual end
  if type(expected) ~= "table" or type(actual) ~= "table" then return expected end
  local out = {}
  for k, v in pairs(expected) do out[k] = with_any(v, actual[k]) end
  return out
end

local function copy(value)
  if type(value) ~= "table" or getmetatable(value) then return value end
  local out = {}
  for k, v in pairs(value) do out[k] = copy(v) end
  return out
end

-- The error a stubber raises (kind config, or `kind`): `code`, a message, and the
-- differing fields as a validation error lists them.
local function stub_error(operation, code, message, fields, kind)
  return package.loaded.cloud.error{ kind = kind or "config", code = code, operation = operation, message = message,
                                     fields = fields }
end

-- The differences of `args` from `expected` as fields { path=, problem= }.
local function mismatch(args, expected)
  local lines = require("cloud.testing").differences(args, with_any(expected, args))
  local fields = {}
  for _, line in ipairs(lines) do
    local path, problem = line:match("^(.-): (.*)$")
    fields[#fields + 1] = { path = path or line, problem = problem or line }
  end
  return fields
end

local Stubber = {}
Stubber.__index = Stubber

-- Queues `entry` for operation `name`; returns the entry's handle, whose :expects sets
-- the arguments its call must have.
local function queue(self, name, entry)
  local q = self.queues[name]
  q[#q + 1] = entry
  return { expects = function(_, args) entry.expected = args return self.operations[name] end }
end

-- The stand-in of one operation: :returns, :fails and :expects queue its answers.
local function operation_stub(self, name)
  local op = {}
  function op.returns(_, result)
    result = result or {}
    local ok, err = pcall(self.client.check_result, name, result)
    if not ok and type(err) ~= "table" then error(err, 2) end  -- not a table: lauxlib's own words
    if not ok then
      error(stub_error(name, "InvalidStubbedResult",
                       ("the result queued for %s does not fit its output shape"):format(name), err.fields,
                       "validation"), 2)
    end
    return queue(self, name, { result = copy(result), kind = "returns" })
  end
  function op.fails(_, e)
    local fields = { kind = "api", code = "Error", operation = name }
    for k, v in pairs(e or {}) do fields[k] = v end
    fields.message = fields.message or fields.code
    return queue(self, name, { error = package.loaded.cloud.error(fields), kind = "fails" })
  end
  function op.expects(_, args)  -- for the next answer queued through what it returns
    return {
      returns = function(_, result) local h = op.returns(op, result) h:expects(args) return op end,
      fails = function(_, e) local h = op.fails(op, e) h:expects(args) return op end,
    }
  end
  return op
end

-- A stubbed call of `name`: the next queued answer, or the error (kept as a problem
-- of the case) saying why there is none that fits.
local function answer(self, name, args)
  local entry = table.remove(self.queues[name], 1)
  local problem
  if not entry then
    problem = stub_error(name, "NoStubbedAnswer",
                         ("no answer queued for %s (cloud.stub): queue one with :returns or :fails"):format(name))
  elseif entry.expected then
    local fields = mismatch(args or {}, entry.expected)
    if #fields > 0 then
      problem = stub_error(name, "UnexpectedArguments",
                           ("%s called with other arguments than :expects gave"):format(name), fields)
    end
  end
  if problem then
    self.problems[#self.problems + 1] = problem
    error(problem, 3)
  end
  if entry.error then error(entry.error, 3) end
  return copy(entry.result), { status = 200, headers = {}, attempts = 1, stubbed = true }
end

-- Makes client.<api>.<fn> and client.call answer from the queues.
local function activate(self)
  local names = {}
  for _, o in ipairs(self.client.operations()) do
    names[o.fn], names[o.name] = o.name, o.name
    self.queues[o.name] = {}
    self.operations[o.name] = operation_stub(self, o.name)
    self.originals[o.name] = rawget(self.client[o.api], o.fn)
    rawset(self.client[o.api], o.fn, function(args) return answer(self, o.name, args) end)
  end
  self.names = names
  self.original_call = rawget(self.client, "call")
  rawset(self.client, "call", function(name, args) return answer(self, names[name] or name, args) end)
  live[self] = true
end

-- s.<api>.<fn>: the operation's stand-in.
local function api_view(self, api)
  return setmetatable({}, { __index = function(_, fn)
    local name = self.names[fn]
    if not name then error(("cloud.stub: no operation %s.%s"):format(api, tostring(fn)), 2) end
    return self.operations[name]
  end })
end

-- cloud.stub([client]): a stubber for the client (the default client without one).
function M.stub(client)
  client = client or package.loaded.cloud
  local self = setmetatable({ client = client, queues = {}, operations = {}, problems = {}, originals = {} }, Stubber)
  activate(self)
  self.in_case = require("cloud.testing").in_case()
  return setmetatable({}, { __index = function(_, key)
    if Stubber[key] then return function(_, ...) return Stubber[key](self, ...) end end
    return api_view(self, key)
  end })
end

-- The answers still queued, "GetObject (returns)" each.
local function pending_answers(self)
  local out = {}
  for name, q in pairs(self.queues) do
    for _, entry in ipairs(q) do out[#out + 1] = name .. " (" .. entry.kind .. ")" end
  end
  table.sort(out)
  return out
end

-- Raises when a call found no answer that fitted, or an answer is still queued.
function Stubber.assert_no_pending(self)
  if #self.problems > 0 then error(self.problems[1], 2) end
  local left = pending_answers(self)
  if #left > 0 then
    error(stub_error(left[1]:match("^%S+"), "StubbedAnswersLeft",
                     ("%d answer%s queued and not taken: %s"):format(#left, #left == 1 and "" or "s",
                                                                     table.concat(left, ", "))), 2)
  end
end

-- Puts the client's functions back: it sends again.
function Stubber.deactivate(self)
  for _, o in ipairs(self.client.operations()) do rawset(self.client[o.api], o.fn, self.originals[o.name]) end
  rawset(self.client, "call", self.original_call)
  live[self] = nil
end

-- At the end of a case (lua/testing.lua): every stubber checked, its queues and
-- problems emptied, those made inside the case put away; the first failure raised.
function M.end_case()
  local failure
  for self in pairs(live) do
    local ok, err = pcall(Stubber.assert_no_pending, self)
    if not ok and not failure then failure = err end
    for name in pairs(self.queues) do self.queues[name] = {} end
    self.problems = {}
    if self.in_case then Stubber.deactivate(self) end
  end
  if failure then error(failure, 0) end
end

return M
