-- Where calls go: the embedded emulator serves only when no account is configured at
-- all (no credentials, no profile chosen, no endpoint), and a script, -e or a scripted
-- session says so in one line on stderr, which quiet_emulator silences. Credentials
-- or a profile without an endpoint make every call fail with NoEndpoint, naming the
-- three places to set one: never a silent call to the emulator.
local t = dofile("tests/lua/support/cli.lua")
local q = t.quote

local CALL = 'print(cloud.cluster.update_snapshot{ SnapshotName = "snap-1" }.snapshot.name)'
local NOTICE = "cloudlua: no account configured; using the embedded emulator\n"
local LOUD = { CLOUDLUA_QUIET_EMULATOR = false }  -- the helper silences the notice unless told

teardown(function() t.cleanup() end)

---------------------------------------------------------------- nothing configured: the emulator, said once

test("-e on the emulator: the call runs and the notice is said once", function()
  local out, err, code = t.cloudlua("-e " .. q(CALL), { env = LOUD })
  expect(code).to_equal(0)
  expect(out).to_equal("snap-1\n")
  expect(err).to_equal(NOTICE)
end)

test("-e that makes no call starts no emulator and says nothing", function()
  local out, err, code = t.cloudlua("-e " .. q('print(type(cloud.emulator), cloud.storage ~= nil)'), { env = LOUD })
  expect(code).to_equal(0)
  expect(out).to_equal("table\ttrue\n")
  expect(err).to_equal("")
end)

test("the emulator starts at the first call, or at the first use of cloud.emulator, and says so then", function()
  local script = 'io.stderr:write("before\\n"); cloud.emulator.reset(); io.stderr:write("after\\n")'
  local _, err, code = t.cloudlua("-e " .. q(script), { env = LOUD })
  expect(code).to_equal(0)
  expect(err).to_equal("before\n" .. NOTICE .. "after\n")
end)

test("a script on the emulator says so", function()
  local out, err = t.cloudlua(q(t.temp_file(CALL .. "\n")), { env = LOUD })
  expect(out .. err).to_equal("snap-1\n" .. NOTICE)
end)

test("a scripted session on the emulator says so", function()
  local out, err = t.cloudlua("", { input = CALL .. "\n", env = LOUD })
  expect(out .. err).to_equal("snap-1\n" .. NOTICE)
end)

test("a region alone is no account", function()
  local out, err = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_QUIET_EMULATOR = false, CLOUDLUA_REGION = "jp-west-1" } })
  expect(out .. err).to_equal("snap-1\n" .. NOTICE)
end)

---------------------------------------------------------------- quiet_emulator

test("CLOUDLUA_QUIET_EMULATOR=1 silences the notice", function()
  local out, err = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_QUIET_EMULATOR = "1" } })
  expect(out .. err).to_equal("snap-1\n")
end)

test("quiet_emulator = true in the profile silences the notice", function()
  local quiet = t.temp_file("[default]\nquiet_emulator = true\n")
  local out, err = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_CONFIG_FILE = quiet, CLOUDLUA_QUIET_EMULATOR = false } })
  expect(out .. err).to_equal("snap-1\n")
end)

test("a bad quiet_emulator is refused", function()
  local _, err, code = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_QUIET_EMULATOR = "yes" } })
  expect(code).to_equal(1)
  expect(err).to_contain("CLOUDLUA_QUIET_EMULATOR: quiet_emulator must be true or false (got 'yes')")
end)

---------------------------------------------------------------- an account without an endpoint: NoEndpoint

local PROFILES = "[prod]\nregion = jp-west-1\n\n[keys]\naccess_key_id = AKIDPROD\nsecret_access_key = prod-secret-key-0001\n"
local KEYED_DEFAULT = "[default]\naccess_key_id = AKIDPROD\nsecret_access_key = prod-secret-key-0001\n"

-- { what, flags, env (with the file's text in place of a file name) }
local cases = {
  { "flags", "--access-key AKIDPROD --secret-key prod-secret-key-0001", {} },
  { "variables", "", { CLOUDLUA_ACCESS_KEY_ID = "AKIDPROD", CLOUDLUA_SECRET_ACCESS_KEY = "prod-secret-key-0001" } },
  { "--profile", "--profile prod", { CLOUDLUA_CONFIG_FILE = PROFILES } },
  { "CLOUDLUA_PROFILE", "", { CLOUDLUA_CONFIG_FILE = PROFILES, CLOUDLUA_PROFILE = "prod" } },
  { "a profile's keys", "--profile keys", { CLOUDLUA_CONFIG_FILE = PROFILES } },
  { "the default profile's keys", "", { CLOUDLUA_CONFIG_FILE = KEYED_DEFAULT } },
}
for _, case in ipairs(cases) do
  local what, flags, given = case[1], case[2], case[3]
  test(what .. " without an endpoint: NoEndpoint naming the three places, no notice", function()
    local env = { CLOUDLUA_QUIET_EMULATOR = false }
    for k, v in pairs(given) do env[k] = k == "CLOUDLUA_CONFIG_FILE" and t.temp_file(v, "600") or v end
    local out, err, code = t.cloudlua(flags .. " -e " .. q(CALL), { env = env })
    expect(code).to_equal(1)
    expect(out).to_equal("")
    expect(err).to_contain("config error in UpdateSnapshot: NoEndpoint: no endpoint configured for the cluster API")
    expect(err).to_contain("set endpoint.cluster in the profile, CLOUDLUA_ENDPOINT_CLUSTER or --endpoint cluster=URL")
    expect(err:find("no account configured", 1, true)).to_be_nil()
  end)
end

test("cloudlua test follows the same rule", function()
  local probe = t.temp_file('test("a call", function() ' .. CALL .. ' end)\n')
  local out, _, code = t.cloudlua("test --access-key AKIDPROD --secret-key prod-secret-key-0001 " .. q(probe))
  expect(code).to_equal(1)
  expect(out).to_contain("NoEndpoint")
end)

---------------------------------------------------------------- cloudlua config says where calls go

test("config: the emulator serves, quiet_emulator shown", function()
  local out = t.cloudlua("config", { env = LOUD })
  expect(out).to_contain("endpoint.cluster   (the embedded emulator)")
  expect(out).to_contain("quiet_emulator     false")
end)

-- A placeholder says what stands in for a value: shown as it is, never masked as if
-- it were the key it stands for.
test("config: the emulator's credentials are named as they are, not masked", function()
  local out = t.cloudlua("config", { env = LOUD })
  expect(out).to_contain("access_key_id      (the emulator's built-in one)  default")
  expect(out).to_contain("secret_access_key  (the emulator's built-in one)  default")
  expect(out:find("*", 1, true)).to_be_nil()
end)

test("config: credentials without an endpoint fail, no emulator", function()
  local out = t.cloudlua("config --access-key AKIDPROD --secret-key prod-secret-key-0001")
  expect(out).to_contain("calls to this API fail: no endpoint")
  expect(out:find("(the embedded emulator)", 1, true)).to_be_nil()
end)
