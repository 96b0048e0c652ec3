-- The documentation's Lua examples run as they are written: every ```lua block of the
-- README and of docs/lua-api.md's sections Operations, Errors, Retries and Tasks, in order,
-- against the embedded emulator
-- and its fixtures. What a block prints must match its `-->` comments, line by line:
-- runs of spaces and tabs count as one space, and `...` stands for any text (ids,
-- times, ports). So the reference cannot drift from what the functions do. Each
-- block is a case of its own.
-- Run: cloudlua test tests/lua/readme_test.lua

-- { file, section title }; a nil title takes the whole file.
local SECTIONS = {
  { "README.md" },
  { "docs/lua-api.md", "Operations" }, { "docs/lua-api.md", "Errors" }, { "docs/lua-api.md", "Retries" },
  { "docs/lua-api.md", "Tasks" },
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

-- Runs a block and compares what it printed with its `-->` comments.
local function check(code, name, expected)
  local printed = run(code, name)
  for i = 1, math.max(#expected, #printed) do
    local want, got = expected[i], printed[i] and squeeze(printed[i])
    if not (want and got and got:match(pattern_of(want))) then
      error(("%s, printed line %d:\n  expected: %s\n  got:      %s"):format(name, i, tostring(want), tostring(got)), 0)
    end
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

-- One case per block, in order (later blocks may build on what earlier ones did).
local blocks, lines = 0, 0
for _, where in ipairs(SECTIONS) do
  local file, title = where[1], where[2]
  local label = title and file .. " " .. title or file
  local found, text = pcall(function() return section(read(file), file, title) end)
  local n = 0
  for code in (found and text or ""):gmatch("```lua\n(.-)```") do
    n = n + 1
    local name = ("%s example %d (%s)"):format(label, n, code:match("[^\n]*"))
    local expected = expected_lines(code)
    lines = lines + #expected
    test(name, function() check(code, name, expected) end)
  end
  test(label .. " has examples", function()
    assert(found, text)
    expect(n > 0).to_be_truthy()
  end)
  blocks = blocks + n
end

test("enough examples are checked", function()
  assert(blocks >= 16 and lines >= 40, ("too few examples checked: %d blocks, %d lines"):format(blocks, lines))
end)
