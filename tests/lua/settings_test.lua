-- One rule per setting, wherever it is set: the same bad value is refused with the
-- same words by cloud.client{}, by a profile of the config file (for the session, and
-- for cloud.client{profile=}), by its CLOUDLUA_* variable and by its flag, each
-- message starting with where the value came from; `serve`'s flags follow the rules
-- of the main command's.
-- Run: CLOUDLUA_TEST_BIN=build/cloudlua cloudlua test tests/lua/settings_test.lua
local t = dofile("tests/lua/support/cli.lua")
local q = t.quote

teardown(t.cleanup)

-- Each bad value: as cloud.client{} takes it, as text elsewhere, and the problem.
local cases = {
  { key = "max_attempts", value = 0, problem = "max_attempts must be an integer from 1 to 10 (got 0)" },
  { key = "max_attempts", value = 11, problem = "max_attempts must be an integer from 1 to 10 (got 11)" },
  { key = "max_attempts", value = 2.5, problem = "max_attempts must be an integer from 1 to 10 (got 2.5)" },
  { key = "timeout", value = 0, problem = "timeout must be a number of seconds from 0.001 to 86400 (got 0)" },
  { key = "connect_timeout", value = "soon",
    problem = "connect_timeout must be a number of seconds from 0.001 to 86400 (got 'soon')" },
  { key = "dialect", value = "v4", flag = "--dialect", problem = "dialect must be ext or aws (got 'v4')" },
  { key = "region", value = "jp_east", flag = "--region",
    problem = "region must be letters, digits and hyphens, e.g. jp-east-1 (got 'jp_east')" },
  { key = "endpoint.storage", value = "ftp://x", flag = "--endpoint storage=ftp://x",
    client = { endpoints = { storage = "ftp://x" } },
    client_problem = "endpoints.storage must be a URL starting with http:// or https:// (got 'ftp://x')",
    problem = "endpoint.storage must be a URL starting with http:// or https:// (got 'ftp://x')" },
}

local function variable(key) return "CLOUDLUA_" .. key:upper():gsub("%.", "_") end

for _, c in ipairs(cases) do
  local name = ("%s = %s"):format(c.key, tostring(c.value))

  test(name .. ": refused by cloud.client{}", function()
    expect(cloud.client, c.client or { [c.key] = c.value }).to_fail{ kind = "config", code = "InvalidSetting",
      message = "cloud.client: " .. (c.client_problem or c.problem) }
  end)

  test(name .. ": refused in a profile, for the session and for cloud.client{profile=}", function()
    local file = t.temp_file("[p]\n" .. c.key .. " = " .. tostring(c.value) .. "\n")
    local env = { CLOUDLUA_CONFIG_FILE = file }
    local _, err, code = t.cloudlua("--profile p config", { env = env })
    expect(code).to_equal(1)
    expect(err).to_equal("cloudlua config: config error: InvalidSetting: " .. file .. ":2: " .. c.problem .. "\n")
    local out, err2, code2 = t.cloudlua("-e " .. q("print(select(2, pcall(cloud.client, { profile = 'p' })).message)"),
                                        { env = env })
    expect({ out, err2, code2 }).to_equal{ file .. ":2: " .. c.problem .. "\n", "", 0 }
  end)

  test(name .. ": refused from " .. variable(c.key), function()
    local _, err, code = t.cloudlua("config", { env = { [variable(c.key)] = tostring(c.value) } })
    expect(code).to_equal(1)
    expect(err).to_equal("cloudlua config: config error: InvalidSetting: " .. variable(c.key) .. ": " .. c.problem .. "\n")
  end)

  if c.flag then
    test(name .. ": refused from " .. c.flag:match("^%S+"), function()
      local flag = c.flag:find(" ") and c.flag or c.flag .. " " .. q(c.value)
      local _, err, code = t.cloudlua(flag .. " config")
      expect(code).to_equal(1)
      expect(err).to_equal("cloudlua config: config error: InvalidSetting: " .. c.flag:match("^%S+") .. ": " .. c.problem .. "\n")
    end)
  end
end

test("good values are taken alike: as numbers, or as the text a file holds", function()
  local file = t.temp_file("[p]\nmax_attempts = 10\ntimeout = 0.5\n")
  local out = t.cloudlua("--profile p config", { env = { CLOUDLUA_CONFIG_FILE = file } })
  expect(out).to_contain("max_attempts       10 ")
  expect(out).to_contain("timeout            0.5 ")
  expect(tostring(cloud.client{ max_attempts = 10, timeout = 0.5, dialect = "aws" })).to_contain("dialect aws")
  expect(tostring(cloud.client{ max_attempts = "10", timeout = "0.5" })).to_contain("cloud.client")
end)

test("an unknown field of cloud.client{} is refused like an unknown key of a profile", function()
  expect(cloud.client, { max_attempt = 3 }).to_fail{ kind = "config", code = "InvalidSetting",
    message = "cloud.client: unknown field 'max_attempt', did you mean 'max_attempts'?" }
  expect(cloud.client, { zzzzzz = 3 }).to_fail{ kind = "config", code = "InvalidSetting",
    message = "cloud.client: unknown field 'zzzzzz' (fields: profile, region, dialect, endpoints," }
  expect(cloud.client, { endpoints = { stroage = "http://x" } })
    .to_fail{ message = "cloud.client: no API named 'stroage' in 'endpoints.stroage' (APIs: catalog, cluster, devops, storage)" }
  expect(cloud.client, { credentials = { acces_key_id = "K" } })
    .to_fail{ message = "cloud.client: unknown field 'credentials.acces_key_id'" }
  expect(cloud.client, { credentials = { access_key_id = 7 } })
    .to_fail{ message = "cloud.client: credentials.access_key_id must be a string (got 7)" }
  expect(cloud.client, { max_attempts = print }).to_fail{ kind = "config", message = "cloud.client: max_attempts: cannot send a function" }
end)

test("cloud.client{}'s own tuning is refused in a profile, with the reason", function()
  local file = t.temp_file("[p]\nretry_base_delay = 1\n")
  local _, err, code = t.cloudlua("--profile p config", { env = { CLOUDLUA_CONFIG_FILE = file } })
  expect(code).to_equal(1)
  expect(err).to_contain(file .. ":2: retry_base_delay is an argument of cloud.client{} only, not a profile setting")
end)

---------------------------------------------------------------- serve

-- serve's output and exit status; `timeout` stops a server that started when it
-- should have refused (a safety net for a broken build, not an assertion).
local function serve(args, env)
  local err_file = t.temp_file("")
  local prefix = "env"
  for k, v in pairs(env or {}) do prefix = prefix .. " " .. k .. "=" .. q(v) end
  local p = assert(io.popen(("%s timeout 20 %s serve %s 2>%s"):format(prefix, q(t.bin), args, q(err_file))))
  p:read("a")
  local _, _, code = p:close()
  return t.read_file(err_file), code
end

test("serve --region is checked as --region is", function()
  local err, code = serve("--region jp_east")
  expect(code).to_equal(1)
  expect(err).to_equal("cloudlua serve: config error: InvalidSetting: --region: "
                       .. "region must be letters, digits and hyphens, e.g. jp-east-1 (got 'jp_east')\n")
end)

test("serve takes keys as a unit, as the main command does", function()
  local err, code = serve("--access-key SERVEKEY")
  expect(code).to_equal(1)
  expect(err).to_equal("cloudlua serve: config error: MissingCredentials: --access-key is set but --secret-key is not: give both\n")
  local _, main_err = t.cloudlua("--access-key SERVEKEY config")
  expect(main_err).to_contain("MissingCredentials: --access-key is set but --secret-key is not: give both")
  -- a key from the flag and a secret from the environment are two accounts: refused
  local mixed = serve("--access-key SERVEKEY", { CLOUDLUA_SECRET_ACCESS_KEY = "other-account" })
  expect(mixed).to_contain("--access-key is set but --secret-key is not: give both")
end)
