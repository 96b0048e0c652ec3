-- Everything said about the sub-commands outside their parser, derived from their
-- declaration (lua/command_specs.lua) by one reader (require "cloud.command_docs"):
-- the bash and zsh completion and the manual page (templates in packaging/, their
-- @NAME@ lines filled by fill()), help()'s entries of cloud.commands.* (reference())
-- and their LuaLS types (definitions()). Each function takes the declaration, the
-- real one when none is given, so a test can pass one with a sub-command more.

local M = {}

local command_line = require("cloud.command_line")

-- The declaration given, or the real one.
local function declaration(decl) return decl or require("cloud.command_specs") end

-- The parser of the declaration: options_of, usage_line, option_doc... (one reading).
local function reader(decl) return command_line.parser(declaration(decl)) end

-- Each value of `list` through fn, joined by `sep`.
local function mapped(list, fn, sep)
  local out = {}
  for i, v in ipairs(list) do out[i] = fn(v) end
  return table.concat(out, sep)
end

-- The options of every command once, in the order they first appear.
local function all_options(decl, r)
  local seen, list = {}, {}
  for _, spec in ipairs(decl.commands) do
    for _, o in ipairs(r.options_of(spec.name)) do
      if not seen[o.name] then seen[o.name], list[#list + 1] = true, o end
    end
  end
  return list
end

---------------------------------------------------------------- completion

-- The blocks of packaging/cloudlua.bash.in, by placeholder.
local function bash(decl)
  local r = reader(decl)
  local options = all_options(decl, r)
  local valued, choices, arms = {}, {}, {}
  for _, o in ipairs(options) do
    if o.choices then
      choices[#choices + 1] = ('--%s) COMPREPLY=($(compgen -W "%s" -- "$cur")); return ;;'):format(o.name,
        table.concat(o.choices, " "))
    elseif o.value then
      valued[#valued + 1] = "--" .. o.name
    end
  end
  for _, spec in ipairs(decl.commands) do
    arms[#arms + 1] = ('%s) opts="%s -h --debug $config" ;;'):format(spec.name,
      mapped(r.options_of(spec.name), function(o) return "--" .. o.name end, " "))
  end
  return { BASH_VALUE_OPTIONS = { table.concat(valued, "|") .. ") return ;;" }, BASH_CHOICE_OPTIONS = choices,
           BASH_COMMAND_OPTIONS = arms }
end

-- A description inside a zsh _arguments spec ("--opt[description]"): [ ] : and \
-- escaped, as _arguments reads them.
local function zsh_described(text) return (text:gsub("[%[%]:\\]", "\\%0")) end

-- `spec` in single quotes for the shell: each ' closed, escaped and reopened.
local function zsh_quoted(spec) return "'" .. spec:gsub("'", "'\\''") .. "'" end

-- The _arguments spec of one option of a sub-command.
local function zsh_option(o)
  local spec = (o.ordered and "*" or "") .. "--" .. o.name .. "[" .. zsh_described(o.doc) .. "]"
  if o.value then spec = spec .. ":" .. o.value .. ":" .. (o.choices and "(" .. table.concat(o.choices, " ") .. ")" or "") end
  return zsh_quoted(spec)
end

-- The blocks of packaging/_cloudlua.in: one case arm per sub-command.
local function zsh(decl)
  local r, arms = reader(decl), {}
  for _, spec in ipairs(decl.commands) do
    local words = { spec.name .. ") _arguments $config_opts $command_opts" }
    for _, o in ipairs(r.options_of(spec.name)) do words[#words + 1] = zsh_option(o) end
    for i, a in ipairs(spec.args) do
      words[#words + 1] = zsh_quoted(("%d%s:%s:%s"):format(i, a.optional and ":" or "", a[1], a.paths and "_files" or ""))
    end
    arms[#arms + 1] = table.concat(words, " ") .. " ;;"
  end
  return { ZSH_COMMANDS = arms }
end

---------------------------------------------------------------- the manual page

-- Text as roff shows it literally: \ and - escaped, a leading . or ' made plain.
local function roff(text)
  return (text:gsub("\\", "\\e"):gsub("%-", "\\-"):gsub("^([.'])", "\\&%1"))
end

-- The blocks of packaging/cloudlua.1.in: the synopsis lines and each sub-command's
-- section with its options.
local function man(decl)
  local r, synopsis, sections = reader(decl), {}, {}
  for _, spec in ipairs(decl.commands) do
    local args = r.usage_line(spec.name):match("^%S+ ?(.*)$")
    synopsis[#synopsis + 1] = ".br"
    synopsis[#synopsis + 1] = ".B cloudlua " .. spec.name
    synopsis[#synopsis + 1] = roff(args) .. (args ~= "" and " " or "") .. "[\\fIoptions\\fR]"
    sections[#sections + 1] = ".SS " .. roff(r.usage_line(spec.name))
    sections[#sections + 1] = roff(spec.about)
    for _, o in ipairs(r.options_of(spec.name)) do
      sections[#sections + 1] = ".TP"
      sections[#sections + 1] = o.value and (".BI %s \" %s\""):format(roff("--" .. o.name), roff(o.value))
                                or ".B " .. roff("--" .. o.name)
      sections[#sections + 1] = roff(r.option_doc(o)) .. "."
    end
  end
  return { MAN_SYNOPSIS = synopsis, MAN_COMMANDS = sections }
end

-- `template` with its placeholders filled from the declaration: a line that is only
-- @NAME@ becomes the block NAME (each of its lines indented as the placeholder was);
-- @COMMAND_NAMES@ and @COMMAND_ALTERNATIVES@ within a line, the names "sync check ..."
-- and "sync|check|...". An unknown placeholder is an error.
function M.fill(template, decl)
  decl = declaration(decl)
  local blocks, names = {}, reader(decl).names()
  for _, part in ipairs{ bash(decl), zsh(decl), man(decl) } do
    for k, v in pairs(part) do blocks[k] = v end
  end
  local inline = { COMMAND_NAMES = table.concat(names, " "), COMMAND_ALTERNATIVES = table.concat(names, "|") }
  local out = {}
  for line in (template .. (template:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    local indent, name = line:match("^(%s*)@([%u_]+)@$")
    if name and blocks[name] then
      for _, l in ipairs(blocks[name]) do out[#out + 1] = indent .. l end
    else
      out[#out + 1] = line:gsub("@([%u_]+)@", function(n) return assert(inline[n], "no placeholder @" .. n .. "@") end)
    end
  end
  return table.concat(out, "\n") .. "\n"
end

---------------------------------------------------------------- help() and LuaLS

-- The fields of a command's table form: { name, type, doc, optional } each, its
-- positional arguments first (as [1], [2]).
local function fields(decl, r, spec)
  local list = {}
  for i, a in ipairs(spec.args) do
    list[#list + 1] = { "[" .. i .. "]", a.optional and "string?" or "string", a[1] .. ": " .. a.doc }
  end
  for _, o in ipairs(r.options_of(spec.name)) do
    local t = o.type
    if o.choices then t = mapped(o.choices, function(c) return ("%q"):format(c) end, "|") end
    list[#list + 1] = { o.field, t, r.option_doc(o) .. " (--" .. o.name .. ")", true }
  end
  list[#list + 1] = { decl.filters[1], decl.filters.type, decl.filters.doc, true }
  for _, f in ipairs(spec.fields or {}) do list[#list + 1] = { f[1], f.type, f.doc, true } end
  return list
end

-- The fields of a command's result, the shared ones first.
local function results(decl, spec)
  local list = {}
  for _, f in ipairs(decl.result) do list[#list + 1] = f end
  for _, f in ipairs(spec.result) do list[#list + 1] = f end
  return list
end

-- help()'s entries (lua/reference.lua's shape) of cloud.commands and each sub-command;
-- `typed_elsewhere` marks them as typed by definitions() below, not from params.
function M.reference(decl)
  decl = declaration(decl)
  local r = reader(decl)
  local entries = {
    { name = "cloud.commands", usage = "cloud.commands.NAME{ ARGS..., option = value }", typed_elsewhere = true,
      summary = "The sub-commands of the command line as functions: " .. table.concat(r.names(), ", ") .. ".",
      text = [[
cloud.commands.cp{ "s3://logs/2024-*/*.gz", "dir/", dry_run = true }: the same options
as `cloudlua cp --dry-run ...` (--dry-run: dry_run); each prints what its command
prints (quiet = true: nothing but failures) and returns a table whose status is the
command's exit status (0 done, 1 failed or differs); a usage error is raised.
help"cloud.commands.NAME" lists the fields of each.]],
      see = "docs/cli.md" } }
  for _, spec in ipairs(decl.commands) do
    local form = fields(decl, r, spec)
    local text = { spec.about, "Fields (`cloudlua " .. r.usage_line(spec.name) .. " [options]`):" }
    for _, f in ipairs(form) do text[#text + 1] = ("  %-16s %s"):format(f[1], f[3]) end
    text[#text + 1] = "Returns: " .. mapped(results(decl, spec), function(f) return f[1] end, ", ")
    entries[#entries + 1] = {
      name = "cloud.commands." .. spec.name, typed_elsewhere = true, summary = spec.summary .. ".", see = "docs/cli.md",
      usage = ("cloud.commands.%s{ %soption = value, ... } -> result"):format(spec.name,
        mapped(spec.args, function(a) return (a.optional and "[" .. a[1] .. "]" or a[1]) .. ", " end, "")),
      text = table.concat(text, "\n") }
  end
  return entries
end

-- A field line of a LuaLS class: `---@field name? type doc`.
local function field_line(name, type_text, doc, optional)
  return ("---@field %s%s %s %s"):format(name, optional and "?" or "", type_text, (doc:gsub("%s*\n%s*", " ")))
end

-- The LuaLS definitions of cloud.commands and each sub-command: an options class
-- (cloud.commands.NAME.Options, each field typed, allowed values as literal unions)
-- and a result class (cloud.commands.NAME.Result); text for lua/definitions.lua.
function M.definitions(decl)
  decl = declaration(decl)
  local r = reader(decl)
  local out = { "---The sub-commands of the command line as functions (docs/cli.md).", "cloud.commands = {}", "" }
  for _, spec in ipairs(decl.commands) do
    local class = "cloud.commands." .. spec.name
    out[#out + 1] = "---@class " .. class .. ".Options"
    for _, f in ipairs(fields(decl, r, spec)) do out[#out + 1] = field_line(f[1], f[2], f[3], f[4]) end
    out[#out + 1] = ""
    out[#out + 1] = "---@class " .. class .. ".Result"
    for _, f in ipairs(results(decl, spec)) do out[#out + 1] = field_line(f[1], f[2], f[3], f.optional) end
    out[#out + 1] = ""
    out[#out + 1] = "---" .. spec.summary .. "."
    out[#out + 1] = ("---`cloudlua %s [options]` (docs/cli.md)"):format(r.usage_line(spec.name))
    out[#out + 1] = "---@param options " .. class .. ".Options"
    out[#out + 1] = "---@return " .. class .. ".Result"
    out[#out + 1] = ("function %s(options) end"):format(class)
    out[#out + 1] = ""
  end
  return table.concat(out, "\n")
end

return M
