-- Where calls go: the embedded emulator serves only when no account is configured at
-- all (no credentials, no profile chosen, no endpoint), and a script, -e or a scripted
-- session says so in one line on stderr, which quiet_emulator silences. Credentials
-- or a profile without an endpoint make every call fail with NoEndpoint, naming the
-- three places to set one: never a silent call to the emulator.
local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")
local q = t.quote

local CALL = 'print(cloud.cluster.update_snapshot{ SnapshotName = "snap-1" }.snapshot.name)'
local NOTICE = "cloudlua: no account configured; using the embedded emulator\n"

-- nothing configured: the emulator serves, and one line on stderr says so
local out, err, code = t.cloudlua("-e " .. q(CALL))
t.eq(code, 0, "-e on the emulator: status (" .. err .. ")")
t.eq(out, "snap-1\n", "-e on the emulator: the call ran")
t.eq(err, NOTICE, "-e on the emulator: the notice, once")
out, err = t.cloudlua(q(t.temp_file(CALL .. "\n")))
t.eq(out .. err, "snap-1\n" .. NOTICE, "a script on the emulator")
out, err = t.cloudlua("", { input = CALL .. "\n" })
t.eq(out .. err, "snap-1\n" .. NOTICE, "a scripted session on the emulator")
out, err = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_REGION = "jp-west-1" } })
t.eq(out .. err, "snap-1\n" .. NOTICE, "a region alone is no account")

-- quiet_emulator silences it, from the environment or the config file
out, err = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_QUIET_EMULATOR = "1" } })
t.eq(out .. err, "snap-1\n", "CLOUDLUA_QUIET_EMULATOR=1")
local quiet = t.temp_file("[default]\nquiet_emulator = true\n")
out, err = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_CONFIG_FILE = quiet } })
t.eq(out .. err, "snap-1\n", "quiet_emulator = true in the profile")
out, err, code = t.cloudlua("-e " .. q(CALL), { env = { CLOUDLUA_QUIET_EMULATOR = "yes" } })
t.eq(code, 1, "a bad quiet_emulator is refused")
t.has(err, "CLOUDLUA_QUIET_EMULATOR: quiet_emulator must be true or false (got 'yes')", "the bad value's message")

-- credentials or a profile without an endpoint: NoEndpoint, nothing sent, no notice
local profiles = t.temp_file("[prod]\nregion = jp-west-1\n\n[keys]\naccess_key_id = AKIDPROD\nsecret_access_key = prod-secret-key-0001\n", "600")
local keyed_default = t.temp_file("[default]\naccess_key_id = AKIDPROD\nsecret_access_key = prod-secret-key-0001\n", "600")
local cases = {
  { "flags", "--access-key AKIDPROD --secret-key prod-secret-key-0001", {} },
  { "variables", "", { CLOUDLUA_ACCESS_KEY_ID = "AKIDPROD", CLOUDLUA_SECRET_ACCESS_KEY = "prod-secret-key-0001" } },
  { "--profile", "--profile prod", { CLOUDLUA_CONFIG_FILE = profiles } },
  { "CLOUDLUA_PROFILE", "", { CLOUDLUA_CONFIG_FILE = profiles, CLOUDLUA_PROFILE = "prod" } },
  { "a profile's keys", "--profile keys", { CLOUDLUA_CONFIG_FILE = profiles } },
  { "the default profile's keys", "", { CLOUDLUA_CONFIG_FILE = keyed_default } },
}
for _, case in ipairs(cases) do
  local what, flags, env = case[1], case[2], case[3]
  out, err, code = t.cloudlua(flags .. " -e " .. q(CALL), { env = env })
  t.eq(code, 1, what .. ": status")
  t.eq(out, "", what .. ": nothing printed")
  t.has(err, "config error in UpdateSnapshot: NoEndpoint: no endpoint configured for the cluster API", what .. ": NoEndpoint")
  t.has(err, "set endpoint.cluster in the profile, CLOUDLUA_ENDPOINT_CLUSTER or --endpoint cluster=URL", what .. ": the three places")
  t.has(err, "no account configured", what .. ": no notice", true)
end

-- `cloudlua test` follows the same rule
local probe = t.temp_file('test("a call", function() ' .. CALL .. ' end)\n')
out, err, code = t.cloudlua("test --access-key AKIDPROD --secret-key prod-secret-key-0001 " .. q(probe))
t.eq(code, 1, "cloudlua test with credentials and no endpoint fails")
t.has(out, "NoEndpoint", "cloudlua test: NoEndpoint")

-- `cloudlua config` says where calls go
out = t.cloudlua("config")
t.has(out, "endpoint.cluster   (the embedded emulator)", "config: the emulator")
t.has(out, "quiet_emulator     false", "config: quiet_emulator shown")
out = t.cloudlua("config --access-key AKIDPROD --secret-key prod-secret-key-0001")
t.has(out, "calls to this API fail: no endpoint", "config: credentials without an endpoint")
t.has(out, "(the embedded emulator)", "config: no emulator with credentials", true)

t.cleanup()
print("cli_no_account_test: ok")
