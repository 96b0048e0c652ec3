-- What every sub-command shares of its command line (require "cloud.command_line"),
-- from their declaration (lua/command_specs.lua): usage errors; the parser of a command's
-- words and the check of its table form, both from one spec so that they cannot
-- drift; --help; and the printer of its output (lines for people, JSON lines,
-- failures on stderr, every text from outside through cloud.printable).

local M = {}

local cloud_module = require("cloud.check").cloud  -- the `cloud` table

---------------------------------------------------------------- errors

-- Raises the usage error `message` (what was wrong and what is allowed).
function M.usage(message)
  error(cloud_module().error{ kind = "validation", code = "UsageError", message = message }, 0)
end

-- Whether `err` is such a usage error.
function M.is_usage_error(err)
  return type(err) == "table" and err.code == "UsageError"
end

---------------------------------------------------------------- output

-- A JSON string: UTF-8 text as it is, control characters and bytes that are not UTF-8
-- escaped (\u00XX: a name's bytes still show).
local function json_string(s)
  local short = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
  local out = s:gsub('[%c"\\]', function(c) return short[c] or ("\\u%04x"):format(c:byte()) end)
  if utf8.len(out) then return '"' .. out .. '"' end
  local fixed, i = {}, 1
  while i <= #out do
    local ok, after = pcall(utf8.offset, out, 2, i)
    local code = ok and after and utf8.len(out:sub(i, after - 1)) and out:sub(i, after - 1)
    if code then fixed[#fixed + 1], i = code, after
    else fixed[#fixed + 1], i = ("\\u%04x"):format(out:byte(i)), i + 1 end
  end
  return '"' .. table.concat(fixed) .. '"'
end

-- One JSON object on one line from `fields`, a list of { name, value } (strings,
-- numbers, booleans, lists of strings), in that order; nil values left out.
function M.json_line(fields)
  local parts = {}
  for _, f in ipairs(fields) do
    local v, text = f[2], nil
    if type(v) == "string" then text = json_string(v)
    elseif type(v) == "table" then
      local items = {}
      for i, item in ipairs(v) do items[i] = json_string(tostring(item)) end
      text = "[" .. table.concat(items, ",") .. "]"
    elseif math.type(v) == "float" and v == math.floor(v) and v < 2 ^ 53 then text = ("%d"):format(v)
    elseif v ~= nil then text = tostring(v) end
    if text then parts[#parts + 1] = json_string(f[1]) .. ":" .. text end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- The printer of a command: out(text) writes a line for people (unless quiet or
-- JSON), json(fields) a JSON line (with --output json), fail(what, err) a failure on
-- stderr (always). Every text from outside goes through cloud.printable.
function M.printer(o)
  local cloud = cloud_module()
  local p = { json_mode = o.output == "json" }
  function p.out(text)
    if not o.quiet and not p.json_mode then print(cloud.printable(text)) end
  end
  function p.json(fields)
    if p.json_mode and not o.quiet then print(M.json_line(fields)) end
  end
  function p.fail(what, err)
    p.note(("failed: %s: %s"):format(what, tostring(err)))
  end
  function p.note(text)
    io.stderr:write(cloud.printable(text), "\n")
  end
  return p
end

-- "12.5 MiB", or the exact count of bytes.
function M.size_shown(n, human)
  if not human then return tostring(n) end
  return require("cloud.transfer_parts").size_text(n)
end

-- "2024-05-01 12:00:00" from an ISO 8601 time.
function M.time_shown(iso)
  local d, t = tostring(iso or ""):match("^(%d+%-%d+%-%d+)T(%d+:%d+:%d+)")
  return d and (d .. " " .. t) or tostring(iso or "")
end

---------------------------------------------------------------- options

-- The option values' checks: each returns the value or nil and what is allowed.
local value_check = require("cloud.check")
local checks = {
  size = value_check.size,
  count = value_check.count,
  limit = function(text)
    local n = math.tointeger(tonumber(text))
    if n and n >= 0 then return n end
    return nil, "a count >= 0 expected"
  end,
  shard = function(text)
    if type(text) == "table" then return text end
    local i, n = tostring(text):match("^(%d+)/(%d+)$")
    i, n = tonumber(i), tonumber(n)
    if i and n and n >= 1 and i < n then return { index = math.tointeger(i), count = math.tointeger(n) } end
    return nil, "I/N with 0 <= I < N expected (shard I of N)"
  end,
  -- K=V,... : user metadata (x-amz-meta-K), a table of strings; a value may hold '='.
  metadata = function(text)
    if type(text) == "table" then return text end
    local map = {}
    for pair in (tostring(text) .. ","):gmatch("([^,]*),") do
      local k, v = pair:match("^([^=]+)=(.*)$")
      if not k then return nil, ("K=V pairs separated by commas expected (got '%s')"):format(pair) end
      map[k] = v
    end
    return map
  end,
}
-- A byte rate, as curl's --limit-rate: 50M, 512K, 1G, 1000000 (bytes a second).
checks.rate = checks.size

-- The parser of the sub-commands of `decl` (the declaration, lua/command_specs.lua, or
-- one extended by a test): { checked_options(name, t), parse_words(name, list),
-- help_text(name), usage_line(name), fields_of(name), options_of(name), spec(name),
-- option_doc(o), names() }.
function M.parser(decl)
  local usage = M.usage
  local by_name, resolved = {}, {}
  for _, spec in ipairs(decl.commands) do by_name[spec.name] = spec end

  local function field_of(option_name) return (option_name:gsub("-", "_")) end

  -- The options of a command: { name =, field =, type =, value =, check =, choices =,
  -- default =, ordered =, doc = } each, in the order of its spec (the shared ones
  -- from decl.shared), made once.
  local function options_of(name)
    if resolved[name] then return resolved[name] end
    local list = {}
    for _, o in ipairs(by_name[name].options) do
      local d = type(o) == "string" and assert(decl.shared[o], o) or o
      local long = type(o) == "string" and o or o[1]
      list[#list + 1] = { name = long, field = field_of(long), type = d.type, value = d.value, check = d.check,
                          choices = d.choices, default = d.default, ordered = d.ordered, doc = d.doc }
    end
    resolved[name] = list
    return list
  end

  -- The names allowed in the table form of `name`: its options' fields, `filters`
  -- and its own fields.
  local function fields_of(name)
    local names = { decl.filters[1] }
    for _, o in ipairs(options_of(name)) do names[#names + 1] = o.field end
    for _, f in ipairs(by_name[name].fields or {}) do names[#names + 1] = f[1] end
    return names
  end


  -- The value of option `o` checked and converted; a usage error names `shown` (how it
  -- was given: --concurrency or concurrency) and the value.
  local function checked(o, shown, value)
    if o.choices then
      for _, c in ipairs(o.choices) do if c == value then return value end end
      usage(cloud_module()._suggested(("%s %s: must be one of %s"):format(shown, tostring(value),
        table.concat(o.choices, ", ")), tostring(value), o.choices))
    end
    if not o.check then return value end
    local v, why = checks[o.check](value)
    if v == nil then usage(("%s %s: %s"):format(shown, tostring(value), why)) end
    return v
  end

  -- The option (or table-form field) `key` of command `name`, or nil.
  local function option_at(name, key)
    for _, o in ipairs(options_of(name)) do if o.field == key then return o end end
    for _, f in ipairs(by_name[name].fields or {}) do
      if f[1] == key then return { field = key, value = true, check = f.check } end
    end
    return nil
  end

  -- The table form of a command, checked: unknown fields refused (with the nearest
  -- known one), values converted, positional arguments counted; the options table the
  -- command runs with (include/exclude folded into filters, in order).
  local function checked_options(name, t)
    if type(t) ~= "table" then usage(("%s takes a table, got %s"):format(name, type(t))) end
    local spec = by_name[name]
    local o = { filters = {} }
    for key, value in pairs(t) do
      if math.type(key) ~= "integer" and key ~= "filters" then
        local opt = option_at(name, key)
        if not opt then usage(value_check.wording(1, name, value_check.unknown_field(tostring(key), fields_of(name)))) end
        if opt.ordered then
          if type(value) ~= "table" then usage(("field '%s' must be a list of globs"):format(key)) end
        elseif opt.value then
          o[key] = checked(opt, key, value)
        else
          o[key] = value and true or nil
        end
      end
    end
    for _, kind in ipairs{ "exclude", "include" } do
      for _, glob in ipairs(t[kind] or {}) do o.filters[#o.filters + 1] = { kind, glob } end
    end
    for i, f in ipairs(t.filters or {}) do
      if type(f) ~= "table" or (f[1] ~= "include" and f[1] ~= "exclude") or type(f[2]) ~= "string" then
        usage(("filters[%d] must be { \"include\" | \"exclude\", glob }"):format(i))
      end
      o.filters[#o.filters + 1] = f
    end
    local positional = {}
    for i, a in ipairs(t) do
      if type(a) ~= "string" then usage(("argument %d must be a string"):format(i)) end
      positional[i] = a
    end
    for i, arg in ipairs(spec.args) do
      if positional[i] == nil and not arg.optional then usage("missing " .. arg[1]) end
    end
    if #positional > #spec.args then usage(("unexpected argument '%s'"):format(positional[#spec.args + 1])) end
    o.args = positional
    return o
  end

  -- `list` (a command line's words) as the table form of `name`: --opt, --opt=value,
  -- --opt value; "--" ends the options.
  local function parse_words(name, list)
    local t, by_option, names = {}, {}, { "--help" }
    for _, o in ipairs(options_of(name)) do by_option[o.name], names[#names + 1] = o, "--" .. o.name end
    local i, ended = 1, false
    while i <= #list do
      local a = list[i]
      if ended or a == "-" or not a:match("^%-") then
        t[#t + 1] = a
      elseif a == "--" then
        ended = true
      else
        local typed, value = a:match("^(%-%-[^=]+)=(.*)$")
        typed = typed or a
        local o = by_option[typed:match("^%-%-(.*)") or ""]
        if not o then usage(cloud_module()._unknown_option(typed, names)) end
        if not o.value then
          if value then usage(typed .. " takes no value") end
          t[o.field] = true
        else
          if not value then
            i = i + 1
            value = list[i]
            if value == nil then usage(("%s needs a value (%s)"):format(typed, o.value)) end
          end
          value = checked(o, typed, value)
          if o.ordered then t.filters = t.filters or {}; t.filters[#t.filters + 1] = { o.name, value }
          else t[o.field] = value end
        end
      end
      i = i + 1
    end
    return t
  end

  -- An option's line of help: its doc, its choices and its default.
  local function option_doc(o)
    return o.doc .. (o.choices and ("; one of " .. table.concat(o.choices, ", ")) or "")
      .. (o.default ~= nil and (" (default %s)"):format(o.default) or "")
  end

  -- "sync SRC DST" or "ls [LOCATION]": the command and its positional arguments.
  local function usage_line(name)
    local words = { name }
    for _, a in ipairs(by_name[name].args) do words[#words + 1] = a.optional and "[" .. a[1] .. "]" or a[1] end
    return table.concat(words, " ")
  end

  -- The text of `cloudlua NAME --help`.
  local function help_text(name)
    local lines = { ("usage: cloudlua %s [options]"):format(usage_line(name)), "", by_name[name].about, "",
                    "Options:", ("  %-24s %s"):format("-h, --help", "Show this help") }
    for _, o in ipairs(options_of(name)) do
      lines[#lines + 1] = ("  %-24s %s"):format("--" .. o.name .. (o.value and " " .. o.value or ""), option_doc(o))
    end
    lines[#lines + 1] = ""
    lines[#lines + 1] = "The configuration flags of cloudlua (--profile, --endpoint, --region...) may come before or after"
    lines[#lines + 1] = "the command; --debug shows every exchange. A location is s3://BUCKET[/PREFIX]."
    lines[#lines + 1] = "Exit status: 0 done; 1 something failed (check: something differs; sync: deletions held back);"
    lines[#lines + 1] = "2 a usage error or a refusal (a SRC that does not exist, an empty SRC under --delete); 130 interrupted."
    return table.concat(lines, "\n") .. "\n"
  end
  -- The names of the sub-commands, in the order of the declaration.
  local function names()
    local list = {}
    for i, spec in ipairs(decl.commands) do list[i] = spec.name end
    return list
  end
  return { checked_options = checked_options, parse_words = parse_words, help_text = help_text, usage_line = usage_line,
           fields_of = fields_of, options_of = options_of, spec = function(name) return by_name[name] end,
           option_doc = option_doc, names = names }
end

return M
