-- The documentation's Lua examples run as they are written: every ```lua block of the
-- README and of docs/*.md, in order, against the embedded emulator and its fixtures.
-- What a block prints must match its `-->` comments, line by line: runs of spaces and
-- tabs count as one space, and `...` stands for any text (ids, times, ports). So the
-- reference cannot drift from what the functions do. Each block is a case of its own.
-- Two kinds of block run in a child process instead:
--   * docs/configuration.md's, with that page's own ```ini examples as the config and
--     credentials files (so the example files are checked too);
--   * a block whose first line is `-- NAME_test.lua` is a test file: it runs through
--     `cloudlua test NAME_test.lua`, and what that prints must match the page's
--     transcript block that starts `$ cloudlua test [OPTIONS] NAME_test.lua` (run with
--     those options; with --junit FILE, the ```xml block after it is FILE's text); a
--     transcript may hold further `$ cloudlua test` commands on that file, run in turn.
-- The other blocks of a page build on one another; any one runs alone too (--filter):
-- the page's earlier blocks run first.
-- Run: cloudlua test tests/lua/readme_test.lua (CLOUDLUA_TEST_BIN names the binary)

local cli = dofile("tests/lua/support/cli.lua")

-- { file, section title, config = true }; a nil title takes the whole file.
local SECTIONS = {
  { "README.md" }, { "docs/lua-api.md" }, { "docs/emulator.md" }, { "docs/testing.md" },
  { "docs/configuration.md", config = true },
}

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- The text of "## <title>" up to the next heading of level 1 or 2 (the whole text
-- when title is nil).
local function section(text, file, title)
  if not title then return text end
  local _, start = text:find("\n## " .. title .. "\n", 1, true)
  assert(start, file .. " has no section '## " .. title .. "'")
  local stop = text:find("\n##? ", start) or #text
  return text:sub(start, stop)
end

local function squeeze(s)
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

-- `expected` with `...` as a wildcard, as an anchored Lua pattern.
local function pattern_of(expected)
  local parts = {}
  for piece in (expected .. "..."):gmatch("(.-)%.%.%.") do
    parts[#parts + 1] = piece:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")
  end
  return "^" .. table.concat(parts, ".-") .. "$"
end

-- The lines a block prints, run in an environment whose print records them.
local function run(code, name)
  local printed = {}
  local env = setmetatable({
    print = function(...)
      local values = table.pack(...)
      for i = 1, values.n do values[i] = tostring(values[i]) end
      for line in (table.concat(values, "\t", 1, values.n) .. "\n"):gmatch("(.-)\n") do printed[#printed + 1] = line end
    end,
  }, { __index = _ENV })
  local chunk = assert(load(code, "=" .. name, "t", env))
  local ok, err = pcall(chunk)
  if not ok then error(("%s failed: %s"):format(name, tostring(err)), 0) end
  return printed
end

-- Compares printed lines with the expected ones.
local function compare(name, expected, printed)
  for i = 1, math.max(#expected, #printed) do
    local want, got = expected[i], printed[i] and squeeze(printed[i])
    if not (want and got and got:match(pattern_of(want))) then
      error(("%s, printed line %d:\n  expected: %s\n  got:      %s"):format(name, i, tostring(want), tostring(got)), 0)
    end
  end
end

-- Runs a block and compares what it printed with its `-->` comments.
local function check(code, name, expected)
  compare(name, expected, run(code, name))
end

local function lines_of(text)
  local out = {}
  for line in text:gmatch("([^\n]*)\n") do out[#out + 1] = line end
  return out
end

-- A temporary folder with `files` ({ name = text }) in it, each chmod 600.
local function folder_with(files)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -m 700 " .. cli.quote(dir)))
  for name, text in pairs(files) do
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
    assert(os.execute("chmod 600 " .. cli.quote(dir .. "/" .. name)))
  end
  return dir
end

-- Runs a block as a script in a child process whose config file is the page's first
-- ```ini block and whose credentials file is its second.
local function check_with_config(code, name, expected, page)
  local ini = {}
  for block in page:gmatch("```ini\n(.-)```") do ini[#ini + 1] = block end
  assert(#ini == 2, name .. ": the page should have a config and a credentials example")
  local dir = folder_with{ config = ini[1], credentials = ini[2], ["example.lua"] = code }
  local out, err, status = cli.cloudlua(cli.quote(dir .. "/example.lua"), { env = { CLOUDLUA_CONFIG_FILE = dir .. "/config" } })
  os.execute("rm -rf " .. cli.quote(dir))
  assert(status == 0, name .. " failed: " .. err)
  compare(name, expected, lines_of(out))
end

local function squeezed_lines(text)
  local out = {}
  for _, line in ipairs(lines_of(text)) do out[#out + 1] = squeeze(line) end
  return out
end

-- The commands of a transcript on `file` ("$ cloudlua test OPTIONS file" lines), each
-- with its options and the output shown after it.
local function commands_of(options, transcript, file)
  local commands = { { options = options, output = "" } }
  for line in transcript:gmatch("([^\n]*)\n") do
    local more = line:match("^%$ cloudlua test (.-)" .. file:gsub("%p", "%%%0") .. "$")
    if more then commands[#commands + 1] = { options = more, output = "" }
    else commands[#commands].output = commands[#commands].output .. line .. "\n" end
  end
  return commands
end

-- Runs a test-file block through `cloudlua test` and compares its output with the
-- page's transcript of that command, whose options are used too; a transcript of
-- several commands on the file runs them in turn in one folder (--record, then
-- --replay). With `--junit FILE` the page's ```xml block after the transcript is
-- what FILE must hold.
local function check_test_file(code, name, file, page)
  local options, transcript, after = page:match("```\n%$ cloudlua test ([^\n]-)" .. file:gsub("%p", "%%%0") .. "\n(.-)```()")
  assert(transcript, name .. ": no transcript '$ cloudlua test ... " .. file .. "' on the page")
  local dir = folder_with{ [file] = code }
  for _, command in ipairs(commands_of(options, transcript, file)) do
    local out = cli.cloudlua("test " .. command.options .. cli.quote(file), { cd = dir })
    local ok, err = pcall(compare, name .. " ($ cloudlua test " .. command.options .. file .. ")",
                          squeezed_lines(command.output), lines_of(out))
    if not ok then os.execute("rm -rf " .. cli.quote(dir)) error(err, 0) end
  end
  local report = options:match("%-%-junit (%S+)") and cli.read_file(dir .. "/" .. options:match("%-%-junit (%S+)"))
  os.execute("rm -rf " .. cli.quote(dir))
  if report then
    local xml = page:match("^%s*```xml\n(.-)```", after)
    assert(xml, name .. ": no ```xml block after the transcript")
    compare(name .. " (the JUnit report)", squeezed_lines(xml), lines_of(report))
  end
end

-- The `-->` comments of a block, squeezed.
local function expected_lines(code)
  local expected = {}
  for line in code:gmatch("[^\n]*") do
    local out = line:match("%-%->%s?(.*)$")
    if out then expected[#expected + 1] = squeeze(out) end
  end
  return expected
end

-- The blocks of a page that run in this process build on one another (a bucket made
-- by one is read by the next). Run in order, each runs once; a block run alone
-- (--filter) first runs the page's earlier ones, their output unchecked.
local function prepared(page, upto)
  for i = page.ran + 1, upto - 1 do
    if page.blocks[i] then  -- test files and config examples run in processes of their own
      local ok, err = pcall(run, page.blocks[i], page.names[i])
      if not ok then error("an earlier example, run first: " .. tostring(err), 0) end
    end
  end
  page.ran = upto
end

-- Runs a test-file block (its first line: `-- x_test.lua: `cloudlua test x_test.lua`
-- prints "LINE"`) through `cloudlua test`; its output must hold LINE.
local function check_prints(code, file, line)
  local dir = folder_with{ [file] = code }
  local out = cli.cloudlua("test " .. cli.quote(file), { cd = dir })
  os.execute("rm -rf " .. cli.quote(dir))
  expect(out).to_contain(line .. "\n")
end

-- One case per block, in order.
local blocks, lines = 0, 0
for _, where in ipairs(SECTIONS) do
  local file, title = where[1], where[2]
  local label = title and file .. " " .. title or file
  local found, text = pcall(function() return section(read(file), file, title) end)
  local n = 0
  local page = { ran = 0, blocks = {}, names = {} }
  for code in (found and text or ""):gmatch("```lua\n(.-)```") do
    n = n + 1
    local name = ("%s example %d (%s)"):format(label, n, code:match("[^\n]*"))
    local expected = expected_lines(code)
    local test_file = code:match("^%-%- (%S+_test%.lua)\n") or code:match("^%-%- (%S+_spec%.lua)\n")
    local named_file, prints = code:match('^%-%- (%S+%.lua): `cloudlua test %S+` prints "(.-)"\n')
    lines = lines + #expected
    if test_file then
      test(name, function() check_test_file(code, name, test_file, text) end)
    elseif named_file then
      test(name, function() check_prints(code, named_file, prints) end)
    elseif where.config then
      test(name, function() check_with_config(code, name, expected, text) end)
    else
      page.blocks[n], page.names[n] = code, name
      local this = n
      test(name, function()
        prepared(page, this)
        check(code, name, expected)
      end)
    end
  end
  test(label .. " has examples", function()
    assert(found, text)
    expect(n > 0).to_be_truthy()
  end)
  blocks = blocks + n
end

-- The README's listing loop over a prefix with no objects: no line, no error (a
-- result's lists are tables also when empty).
test("README's loop over page.Contents runs on an empty prefix", function()
  local code = read("README.md"):match("```lua\n([^`]-ipairs%(page%.Contents%)[^`]-)```")
  assert(code, "README.md has no example looping over page.Contents")
  local empty, n = code:gsub('Prefix = "[^"]*"', 'Prefix = "no-such-prefix/"')
  assert(n > 0, "the README's loop names no Prefix")
  expect(run(empty, "README's loop on an empty prefix")).to_equal{}
end)

test("enough examples are checked", function()
  assert(blocks >= 30 and lines >= 50, ("too few examples checked: %d blocks, %d lines"):format(blocks, lines))
end)
