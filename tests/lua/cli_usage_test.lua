-- The command line's own errors and help, as lua's and aws's: an unknown option or a
-- mistyped sub-command says so with the usage and exit status 1 (never CLI11's 10x
-- codes), the nearest option or sub-command is suggested, and --help is one usage
-- block naming every option, `-`, `--`, the sub-commands and the environment.
-- Run: cloudlua test tests/lua/cli_usage_test.lua
local t = dofile("tests/lua/support/cli.lua")

teardown(t.cleanup)

-- Runs cloudlua expecting a usage error: nothing on stdout, status 1, the reason
-- first on stderr and the usage after it; returns stderr.
local function usage_error(args, first_line)
  local out, err, code = t.cloudlua(args)
  expect(out).to_equal("")
  expect(code).to_equal(1)
  expect(err:match("^[^\n]*")).to_equal(first_line)
  expect(err).to_contain("\nusage: cloudlua")
  expect(err).to_contain("--help' for every option.")
  return err
end

---------------------------------------------------------------- errors

test("an unknown option is named, with the usage, status 1", function()
  usage_error("--bogus", "cloudlua: unknown option '--bogus'")
  usage_error("-x -e 'print(1)'", "cloudlua: unknown option '-x'")
end)

test("an unknown option near a known one suggests it", function()
  usage_error("--degub -e 1", "cloudlua: unknown option '--degub'; did you mean '--debug'?")
  usage_error("--outptu=json", "cloudlua: unknown option '--outptu'; did you mean '--output'?")
  usage_error("--endpont x -e ''", "cloudlua: unknown option '--endpont'; did you mean '--endpoint'?")
  usage_error("serve --prot 9000", "cloudlua serve: unknown option '--prot'; did you mean '--port'?")
end)

test("the command line and the Lua sub-commands word an unknown option alike", function()
  usage_error("--dleete -e 1", "cloudlua: unknown option '--dleete'")
  local _, err = t.cloudlua("sync a s3://b --dleete")
  expect(err).to_contain("cloudlua sync: unknown option '--dleete'; did you mean '--delete'?")
end)

test("a mistyped sub-command that is no file suggests the sub-command", function()
  usage_error("confg", "cloudlua: cannot open confg (no such file); did you mean the sub-command 'config'?")
  usage_error("serv --port 1", "cloudlua: cannot open serv (no such file); did you mean the sub-command 'serve'?")
end)

test("a file named like a sub-command still runs as a script", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. t.quote(dir) .. " && printf 'print(42)' > " .. t.quote(dir .. "/confg")))
  local out, err, code = t.cloudlua("-e 'x=1' " .. t.quote(dir .. "/confg"))
  os.execute("rm -r " .. t.quote(dir))
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_equal("42\n")
end)

test("after --, a name starting with - is the script, not an option", function()
  local _, err, code = t.cloudlua("-- --bogus")
  expect(code).to_equal(1)
  expect(err).to_contain("cannot open --bogus")
  expect(err:find("unknown option", 1, true)).to_be_nil()
end)

test("CLI11's errors carry the cloudlua: prefix and exit 1", function()
  usage_error("--output xml -e 1", "cloudlua: --output: xml not in {text,json,json-meta}")
  usage_error("-e", "cloudlua: -e: 1 required CODE missing")
end)

test("a sub-command's unknown option names the sub-command and the nearest option", function()
  local err = usage_error("serve --prot 1", "cloudlua serve: unknown option '--prot'; did you mean '--port'?")
  expect(err).to_contain("usage: cloudlua serve [options]\nRun 'cloudlua serve --help'")
  usage_error("config --bogus", "cloudlua config: unknown option '--bogus'")
  usage_error("test --lst x", "cloudlua test: unknown option '--lst'; did you mean '--list'?")
  usage_error("config extra", "cloudlua config: unexpected argument 'extra'")
end)

---------------------------------------------------------------- --help

test("--help is one usage block: every option, -, --, the sub-commands, the environment", function()
  local out, err, code = t.cloudlua("--help")
  expect(err).to_equal("")
  expect(code).to_equal(0)
  local _, usages = out:gsub("usage:", "")
  expect(usages).to_equal(1)
  for _, line in ipairs{ "-e CODE", "-l MOD", "-i ", "-v, --version", "-E ", "-W ", "--output FORMAT", "--debug",
                         "--keep-going", "--profile NAME", "--region REGION", "--endpoint API=URL",
                         "--dialect DIALECT", "--access-key ID", "--secret-key SECRET", "-h, --help" } do
    expect(out).to_contain("\n  " .. line)
  end
  expect(out).to_match("\n  %-%s+Run the script from stdin")
  expect(out).to_match("\n  %-%-%s+End the options")
  for _, sub in ipairs{ "serve", "config", "test" } do expect(out).to_match("\n  " .. sub .. "%s+%u") end
  for _, var in ipairs{ "NO_COLOR", "CLOUDLUA_HISTORY", "CLOUDLUA_INIT", "CLOUDLUA_PROFILE", "PAGER" } do
    expect(out).to_match("\n  " .. var .. "[ ,]")
  end
  expect(out).to_contain("Exit status:")
end)

test("a sub-command's --help lists its own options", function()
  local out, _, code = t.cloudlua("serve --help")
  expect(code).to_equal(0)
  expect(out).to_contain("usage: cloudlua serve [options]\n")
  for _, line in ipairs{ "--port PORT", "--host ADDR", "--dialect DIALECT", "--state FILE" } do
    expect(out).to_contain("\n  " .. line)
  end
  expect((t.cloudlua("test -h"))).to_contain("usage: cloudlua test [options] [paths...]\n")
end)

---------------------------------------------------------------- the pager: a terminal only

test("help() in a pipe never goes through $PAGER", function()
  local out, err, code = t.cloudlua("-e 'help()'", { env = { PAGER = "sed s/^/paged:/" } })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_match("^The platform's APIs as Lua functions")
  expect(out:find("paged:", 1, true)).to_be_nil()
end)
