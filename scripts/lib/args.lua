-- The command line of the scripts in scripts/: positional arguments and --options,
-- checked against a small description, with the script's usage in every complaint.
--
--   local args = require("lib.args").parse({
--     usage = "cloudlua scripts/x.lua GROUP CIDR [--no-wait]",
--     positional = { "group", "cidr", "key?" },         -- "?": may be left out
--     options = { ["no-wait"] = "flag", ["part-size"] = "value" },
--   }, ...)
--   -- args.group, args.cidr, args.no_wait (true/nil), args.part_size (string/nil);
--   -- nil when --help was asked (the usage is printed).
local M = {}

local function usage_error(spec, message) error(("%s\nusage: %s"):format(message, spec.usage), 0) end

-- "--name=value" or "--name" (its value the next argument when it takes one).
local function take_option(spec, out, list, i)
  local name, value = list[i]:match("^%-%-([^=]+)=(.*)$")
  name = name or list[i]:sub(3)
  local kind = spec.options and spec.options[name]
  if not kind then usage_error(spec, "unknown option --" .. name) end
  local key = name:gsub("-", "_")
  if kind == "flag" then
    if value then usage_error(spec, "--" .. name .. " takes no value") end
    out[key] = true
    return i + 1
  end
  if not value then
    value = list[i + 1]
    if value == nil then usage_error(spec, "--" .. name .. " needs a value") end
    i = i + 1
  end
  out[key] = value
  return i + 1
end

function M.parse(spec, ...)
  local list, out, positional = table.pack(...), {}, {}
  local i = 1
  while i <= list.n do
    local a = list[i]
    if a == "-h" or a == "--help" then print("usage: " .. spec.usage) return nil end
    if a:match("^%-%-.") then i = take_option(spec, out, list, i)
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
