-- The sub-commands' declaration (lua/command_specs.lua) and what is derived from it:
-- the real declaration with one toy sub-command added gives that sub-command its
-- parser and --help (lua/command_line.lua), its bash and zsh completion and its part
-- of the manual page (the packaging/*.in templates filled by lua/command_docs.lua),
-- its help() entry and its LuaLS types; and every option declared is typed.
-- Run: cloudlua test tests/lua/command_specs_test.lua
local t = dofile("tests/lua/support/cli.lua")
local command_line = require("cloud.command_line")
local docs = require("cloud.command_docs")

teardown(t.cleanup)

-- A deep copy of `v`.
local function copied(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = copied(x) end
  return out
end

-- The real declaration with the sub-command `toy` added.
local function with_toy()
  local decl = copied(require("cloud.command_specs"))
  decl.commands[#decl.commands + 1] = {
    name = "toy", summary = "Polish a toy", about = "Polishes the toy THING.",
    args = { { "THING", doc = "s3://BUCKET/KEY" } },
    options = { { "shine", type = "integer", value = "N", check = "count", default = 3, doc = "Coats of polish" },
                { "finish", type = "string", value = "KIND", choices = { "matt", "gloss" }, doc = "The finish" },
                "dry-run", "quiet" },
    result = { { "coats", "integer", "Coats given" } } }
  return decl
end

-- packaging/NAME.in filled from `decl`, written to a temporary file; its name and text.
local function filled(name, decl)
  local text = docs.fill(t.read_file("packaging/" .. name .. ".in"), decl)
  return t.temp_file(text), text
end

-- What the bash completion in `file` offers for the words typed (the last one being
-- completed), run in a folder holding the one file "afile" (offered where a file is).
local function bash_offers(file, ...)
  local words = {}
  for i, w in ipairs{ ... } do words[i] = t.quote(w) end
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. t.quote(dir) .. " && touch " .. t.quote(dir .. "/afile")))
  local pipe = io.popen(("cd %s && bash -c %s _ %s %s 2>&1"):format(t.quote(dir), t.quote(
    'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cloudlua; echo "${COMPREPLY[*]}"'),
    t.quote(file), table.concat(words, " ")))
  local out = pipe:read("a")
  pipe:close()
  os.execute("rm -r " .. t.quote(dir))
  return (out:gsub("\n$", ""))
end

test("a sub-command added to the declaration has its parser and --help", function()
  local parser = command_line.parser(with_toy())
  local help = parser.help_text("toy")
  expect(help).to_contain("usage: cloudlua toy THING [options]\n\nPolishes the toy THING.\n")
  expect(help).to_contain("\n  --shine N                Coats of polish (default 3)\n")
  expect(help).to_contain("\n  --finish KIND            The finish; one of matt, gloss\n")
  expect(help).to_contain("\n  --dry-run ")
  local o = parser.checked_options("toy", parser.parse_words("toy", { "s3://b/k", "--shine", "2", "--finish=gloss" }))
  expect(o.args).to_equal{ "s3://b/k" }
  expect(o.shine).to_equal(2)
  expect(o.finish).to_equal("gloss")
  expect(function() parser.parse_words("toy", { "--shnie", "2" }) end)
    .to_fail{ code = "UsageError", message = "unknown option '--shnie'; did you mean '--shine'?" }
  expect(function() parser.checked_options("toy", { "s3://b/k", finsh = "matt" }) end)
    .to_fail{ code = "UsageError", message = "bad argument #1 to 'toy' (unknown field 'finsh', did you mean 'finish'?)" }
  expect(function() parser.checked_options("toy", {}) end).to_fail{ message = "missing THING" }
  expect(parser.names()[#parser.names()]).to_equal("toy")
end)

test("a sub-command added to the declaration has its bash completion", function()
  local file, text = filled("cloudlua.bash", with_toy())
  expect(text:find("@[%u_]+@")).to_be_nil()  -- every placeholder filled
  expect(bash_offers(file, "cloudlua", "to")).to_equal("toy")
  expect(bash_offers(file, "cloudlua", "toy", "--sh")).to_equal("--shine")
  expect(bash_offers(file, "cloudlua", "toy", "--finish", "")).to_equal("matt gloss")
  expect(bash_offers(file, "cloudlua", "toy", "--shine", "")).to_equal("")  -- a number: nothing to offer
  expect(bash_offers(file, "cloudlua", "sync", "--max-delete", "")).to_equal("")  -- a count, not a file
  expect(bash_offers(file, "cloudlua", "toy", "")).to_equal("afile")
  expect(bash_offers(file, "cloudlua", "co")).to_equal("config")
end)

test("a sub-command added to the declaration has its zsh completion and its part of the manual page", function()
  local _, zsh = filled("_cloudlua", with_toy())
  expect(zsh).to_contain("\n  toy) _arguments $config_opts $command_opts '--shine[Coats of polish]:N:' "
    .. "'--finish[The finish]:KIND:(matt gloss)' '--dry-run[Show what would be done; change nothing]' "
    .. "'--quiet[Print nothing but failures]' '1:THING:' ;;\n")
  expect(zsh).to_contain("(serve config test sync check cp ls rm cat mb rb toy)")
  local _, man = filled("cloudlua.1", with_toy())
  expect(man).to_contain("\n.br\n.B cloudlua toy\nTHING [\\fIoptions\\fR]\n")
  expect(man).to_contain("\n.SS toy THING\nPolishes the toy THING.\n.TP\n.BI \\-\\-shine \" N\"\nCoats of polish (default 3).\n")
end)

test("a sub-command added to the declaration has its LuaLS types and help() entry", function()
  local decl = with_toy()
  local defs = docs.definitions(decl)
  expect(defs).to_contain("\n---@class cloud.commands.toy.Options\n---@field [1] string THING: s3://BUCKET/KEY\n"
    .. "---@field shine? integer Coats of polish (default 3) (--shine)\n"
    .. '---@field finish? "matt"|"gloss" The finish; one of matt, gloss (--finish)\n'
    .. "---@field dry_run? boolean ")
  expect(defs).to_contain("\n---@class cloud.commands.toy.Result\n---@field status integer ")
  expect(defs).to_contain("\n---@field coats integer Coats given\n")
  expect(defs).to_contain("\n---@param options cloud.commands.toy.Options\n---@return cloud.commands.toy.Result\n"
    .. "function cloud.commands.toy(options) end\n")
  local entry
  for _, e in ipairs(docs.reference(decl)) do if e.name == "cloud.commands.toy" then entry = e end end
  expect(entry.usage).to_equal("cloud.commands.toy{ THING, option = value, ... } -> result")
  expect(entry.text).to_contain("\n  shine            Coats of polish (default 3) (--shine)\n")
  expect(entry.text).to_contain("\nReturns: status, coats")
  expect(entry.summary).to_equal("Polish a toy.")
end)

test("every option declared has a type precise enough for LuaLS, a doc, and a value name unless a flag", function()
  local decl = require("cloud.command_specs")
  local parser = command_line.parser(decl)
  for _, name in ipairs(parser.names()) do
    for _, o in ipairs(parser.options_of(name)) do
      local typed = type(o.type) == "string" and o.type ~= "any" and not o.type:find("table$")
      local documented = type(o.doc) == "string" and o.doc ~= ""
      if not (typed and documented and (o.type == "boolean") == (o.value == nil)) then
        error(("%s --%s: type %s, value %s"):format(name, o.name, tostring(o.type), tostring(o.value)))
      end
    end
  end
  -- no field of cloud.commands.* typed `any`, in what --lua-definitions prints
  local defs = docs.definitions()
  expect(defs:find("---@field [%w_%[%]]+%?? any")).to_be_nil()
end)

test("the manual page, completion and help name each real sub-command", function()
  local names = command_line.parser(require("cloud.command_specs")).names()
  local _, bash = filled("cloudlua.bash")
  local _, man = filled("cloudlua.1")
  for _, name in ipairs(names) do
    expect(bash).to_contain("\n    " .. name .. ') opts="')
    expect(man).to_contain("\n.SS " .. name)
  end
  local out = t.cloudlua("--help")
  for _, name in ipairs(names) do expect(out).to_match("\n  " .. name .. " +%u") end
end)

test("every sub-command declared is a function of cloud.commands, and its --help runs", function()
  for _, spec in ipairs(require("cloud.command_specs").commands) do
    expect(type(cloud.commands[spec.name])).to_equal("function")
    local out, _, code = t.cloudlua(spec.name .. " --help")
    expect(code).to_equal(0)
    expect(out).to_contain("\n" .. spec.about .. "\n")
  end
end)
