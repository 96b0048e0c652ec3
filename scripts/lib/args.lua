-- The command line of the scripts in scripts/, as Unix tools have it: positional
-- arguments and --options checked against a description; --help describes every
-- option; a usage error writes "<script>: <reason>" and the usage on stderr and exits
-- with status 2, no traceback. An unknown option or a value not allowed gets the
-- nearest one suggested (cloud.nearest, the rule of every "did you mean" of cloudlua),
-- and every complaint names the option as typed and the value.
--
--   local args = require("lib.args").parse({
--     usage = "cloudlua scripts/x.lua GROUP CIDR [options]",
--     about = "What the script does, one or two lines.",
--     positional = { "group", "cidr", "key?" },          -- "?": may be left out
--     options = {                                          -- in the order --help lists them
--       { "no-wait", doc = "Do not wait" },                -- a flag: true or nil
--       { "timeout", value = "SECONDS", check = "seconds", doc = "Wait at most SECONDS (default 600)" },
--       { "poll", value = "SECONDS", check = "interval", doc = "..." },  -- seconds > 0
--       { "disk", value = "GB", choices = args.allowed("RestoreInstance", "diskSize"), doc = "..." },
--       { "part-size", value = "SIZE", check = "size", doc = "..." },   -- 8M, 16MiB, 5242880: bytes
--       { "concurrency", value = "N", check = "count", doc = "..." },   -- an integer >= 1
--       { "name", value = "X", check = function(text) return value or nil, "why" end, doc = "..." },
--       { "exclude", value = "GLOB", ordered = "filters", doc = "..." },  -- may repeat: see below
--     },
--   }, ...)
--   -- args.group, args.cidr, args.no_wait, args.timeout (a number), args.disk (the
--   -- choice as the model has it: 100), args.part_size (what check returned);
--   -- nil when --help was asked (the help is printed). An option with `ordered = "list"`
--   -- may be given many times: each adds { "exclude", value } to args.list, the options
--   -- sharing that list kept in the order typed (sync's --exclude and --include).
local M = {}

-- How a usage error ends the script: `text` on stderr, then exit `status`.
-- tests/scripts/support.lua replaces it, to see the error in the test's own state.
function M.exit(status, text)
  io.stderr:write(text)
  os.exit(status, true)
end

-- Ends the script as a Unix tool does on a usage error: the reason and the usage on
-- stderr, status 2.
local function usage_error(spec, message)
  local script = spec.usage:match("^cloudlua%s+(%S+)") or "script"
  M.exit(2, ("%s: %s\nusage: %s\nRun 'cloudlua %s --help' for every option.\n"):format(
    script:match("[^/]+$"), message, spec.usage, script))
end

-- The values the operation model allows for a field of an operation's arguments
-- (cloud.describe), so a script's choices are the ones validation enforces.
function M.allowed(operation, path)
  for _, p in ipairs(cloud.describe(operation).parameters) do
    if p.path == path then return p.allowed end
  end
  error("no parameter " .. path .. " in " .. operation, 2)
end

local function option_named(spec, name)
  for _, o in ipairs(spec.options or {}) do
    if o[1] == name then return o end
  end
end

local function option_names(spec)
  local names = { "--help" }
  for _, o in ipairs(spec.options or {}) do names[#names + 1] = "--" .. o[1] end
  return names
end

-- The "; did you mean 'x'?" for `typed` among `names`, or "".
local function hint(typed, names)
  local near = cloud.nearest(typed, names)
  return near and ("; did you mean '%s'?"):format(near) or ""
end

local checks = {
  seconds = function(text)
    local n = tonumber(text)
    if n and n >= 0 and n < math.huge then return n end
    return nil, "a number of seconds expected"
  end,
  -- seconds between two tries: more than none
  interval = function(text)
    local n = tonumber(text)
    if n and n > 0 and n < math.huge then return n end
    return nil, "a number of seconds above 0 expected"
  end,
  size = require("cloud.check").size,    -- "8M", "16MiB", "5242880": bytes (K, M and G binary units)
  count = require("cloud.check").count,  -- a whole number from 1 on
}

-- The value of --name checked and converted: a choice (as the model has it), what the
-- check returns, or the text; a usage error naming the option and the value otherwise.
local function checked_value(spec, o, typed, text)
  if o.choices then
    local shown = {}
    for i, choice in ipairs(o.choices) do
      if tostring(choice) == text then return choice end
      shown[i] = tostring(choice)
    end
    usage_error(spec, ("%s %s: must be one of %s%s"):format(typed, text, table.concat(shown, ", "), hint(text, shown)))
  end
  local check = type(o.check) == "string" and checks[o.check] or o.check
  if not check then return text end
  local value, why = check(text)
  if value == nil then usage_error(spec, ("%s %s: %s"):format(typed, text, why or "not allowed")) end
  return value
end

-- "--name=value" or "--name" (its value the next argument when it takes one); the
-- index of the next argument.
local function take_option(spec, out, list, i)
  local typed, value = list[i]:match("^(%-%-[^=]+)=(.*)$")
  typed = typed or list[i]
  local o = option_named(spec, typed:sub(3))
  if not o then usage_error(spec, "unknown option '" .. typed .. "'" .. hint(typed, option_names(spec))) end
  local key = o[1]:gsub("-", "_")
  if not o.value then
    if value then usage_error(spec, typed .. " takes no value") end
    out[key] = true
    return i + 1
  end
  if not value then
    value = list[i + 1]
    if value == nil then usage_error(spec, typed .. " needs a value (" .. o.value .. ")") end
    i = i + 1
  end
  value = checked_value(spec, o, typed, value)
  if o.ordered then
    out[o.ordered] = out[o.ordered] or {}
    table.insert(out[o.ordered], { o[1], value })
  else
    out[key] = value
  end
  return i + 1
end

-- `text` in lines of at most `width` characters (where words allow), joined by a line
-- break and `indent`.
local function wrap(text, width, indent)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > width then lines[#lines + 1], line = line, word
    else line = line == "" and word or line .. " " .. word end
  end
  lines[#lines + 1] = line
  return table.concat(lines, "\n" .. indent)
end

-- The text of --help: the usage, what the script does, and every option.
function M.help_text(spec)
  local lines = { "usage: " .. spec.usage }
  if spec.about then lines[#lines + 1] = "\n" .. spec.about end
  lines[#lines + 1] = "\nOptions:"
  local rows = { { "-h, --help", "Show this help" } }
  for _, o in ipairs(spec.options or {}) do
    local doc = o.doc or ""
    if o.choices then
      local shown = {}
      for i, c in ipairs(o.choices) do shown[i] = tostring(c) end
      doc = doc .. (doc == "" and "" or "; ") .. "one of " .. table.concat(shown, ", ")
    end
    rows[#rows + 1] = { "--" .. o[1] .. (o.value and " " .. o.value or ""), doc }
  end
  for _, row in ipairs(rows) do lines[#lines + 1] = ("  %-24s %s"):format(row[1], wrap(row[2], 53, (" "):rep(27))) end
  return table.concat(lines, "\n") .. "\n"
end

function M.parse(spec, ...)
  local list, out, positional = table.pack(...), {}, {}
  local i = 1
  while i <= list.n do
    local a = list[i]
    if a == "-h" or a == "--help" then io.write(M.help_text(spec)) return nil end
    if a:match("^%-%-.") then i = take_option(spec, out, list, i)
    elseif a:match("^%-.") then usage_error(spec, "unknown option '" .. a .. "'" .. hint(a, option_names(spec)))
    else positional[#positional + 1] = a; i = i + 1 end
  end
  for n, name in ipairs(spec.positional or {}) do
    local key, optional = name:match("^([^?]+)(%??)$")
    if positional[n] == nil and optional == "" then usage_error(spec, "missing " .. key:upper()) end
    out[key] = positional[n]
  end
  if #positional > #(spec.positional or {}) then
    usage_error(spec, "unexpected argument '" .. positional[#(spec.positional or {}) + 1] .. "'")
  end
  return out
end

return M
