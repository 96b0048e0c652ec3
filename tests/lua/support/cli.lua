-- Helpers for the tests that drive the built binary (CLOUDLUA_TEST_BIN): run a
-- command with its stdin, stdout and stderr in files, and write temporary files.
-- Loaded with dofile("tests/lua/support/cli.lua") by the *_test.lua files beside it
-- (run from the repository's root, as ctest does); not a test file itself.
local M = {}

M.bin = assert(os.getenv("CLOUDLUA_TEST_BIN"), "CLOUDLUA_TEST_BIN not set")

function M.quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local temporaries = {}

-- Writes `text` to a new temporary file (chmod `mode` when given); returns its name.
function M.temp_file(text, mode)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(text)
  f:close()
  if mode then assert(os.execute("chmod " .. mode .. " " .. M.quote(name))) end
  temporaries[#temporaries + 1] = name
  return name
end

function M.read_file(name)
  local f = assert(io.open(name, "r"))
  local text = f:read("a")
  f:close()
  return text
end

function M.cleanup()
  for _, name in ipairs(temporaries) do os.remove(name) end
  temporaries = {}
end

-- Runs cloudlua with `args` (a shell-quoted string) and `opts.env` (a table of
-- variables; false unsets one). The config file is /dev/null and the line saying
-- the embedded emulator serves is silenced (CLOUDLUA_QUIET_EMULATOR) unless given.
-- stdin from `opts.input` (else /dev/null); `opts.cd` runs it in that folder.
-- Returns stdout, stderr and the exit code.
function M.cloudlua(args, opts)
  opts = opts or {}
  local env = { CLOUDLUA_CONFIG_FILE = "/dev/null", CLOUDLUA_QUIET_EMULATOR = "1" }
  for k, v in pairs(opts.env or {}) do env[k] = v end
  local unset, set = "", ""  -- env takes its -u options before the assignments
  for k, v in pairs(env) do
    if v == false then unset = unset .. " -u " .. k else set = set .. " " .. k .. "=" .. M.quote(v) end
  end
  local prefix = (opts.cd and "cd " .. M.quote(opts.cd) .. " && " or "") .. "env" .. unset .. set
  local input = opts.input and M.temp_file(opts.input) or "/dev/null"
  local err_file = os.tmpname()
  local p = assert(io.popen(("%s %s %s <%s 2>%s"):format(prefix, M.quote(M.bin), args, M.quote(input), err_file), "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = M.read_file(err_file)
  os.remove(err_file)
  return out, err, code
end

return M
