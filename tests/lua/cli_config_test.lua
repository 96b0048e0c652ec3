-- Configuration for real accounts, through the binary: `cloudlua config` with the
-- origin of each value (flag > env > file:line > default) and secrets masked;
-- clear errors for an unknown profile, a malformed file, a readable credentials
-- file and missing credentials; cloud.client{profile=} for two accounts in one
-- script; and --debug dumps that never hold a secret, signature or session token.
-- The "accounts" are this test's own embedded emulator, which keeps serving while
-- the child processes run.
local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")
local q = t.quote

local emulator = cloud.emulator.endpoints()
local KEY, SECRET = "CLOUDLUAEMULATORKEY", "cloudlua-emulator-secret"

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -m 700 " .. q(dir)))
local function write(name, text, mode)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  assert(os.execute("chmod " .. (mode or "600") .. " " .. q(dir .. "/" .. name)))
  return dir .. "/" .. name
end

local config = write("config", table.concat({
  "# accounts for cloudlua_config_test",
  "[default]",
  "region = jp-east-1",
  "",
  "[good]",
  "region = jp-east-1",
  "endpoint.cluster = " .. emulator.cluster,
  "credentials_file = credentials",
  "",
  "[bad]",
  "dialect = aws",
  "endpoint.cluster = " .. emulator.cluster,
  "credentials_file = credentials",
  "",
  "[nocreds]",
  "endpoint.cluster = " .. emulator.cluster,
}, "\n") .. "\n", "644")
write("credentials", ("[good]\naccess_key_id = %s\nsecret_access_key = %s\n[bad]\naccess_key_id = %s\nsecret_access_key = not-the-secret\n")
  :format(KEY, SECRET, KEY))
local env = { CLOUDLUA_CONFIG_FILE = config }

-- `cloudlua config`: values, masked secrets, origins
local out, err, code = t.cloudlua("config --profile good", { env = env })
t.eq(code, 0, "config status (" .. err .. ")")
t.has(out, "config_file        " .. config .. "  ", "the file read")
t.has(out, "profile            good", "the profile")
t.has(out, "flag --profile", "the profile's origin")
t.has(out, "region             jp-east-1", "region from the file")
t.has(out, "file " .. config .. ":6", "region's origin: file and line")
t.has(out, "file " .. dir .. "/credentials:3", "the secret's origin: the credentials file")
t.has(out, SECRET, "the secret never shows", true)
t.has(out, "secret_access_key  ********", "the secret masked")
t.has(out, "access_key_id      ***************RKEY", "the key id shows its last four characters")
t.has(out, "dialect            ext", "dialect default")
t.has(out, "profiles in the file: default, good, bad, nocreds", "the profiles listed")

-- env over file, flag over env
out = t.cloudlua("--profile good config", { env = { CLOUDLUA_CONFIG_FILE = config, CLOUDLUA_REGION = "env-1" } })
t.has(out, "region             env-1", "env beats the file")
t.has(out, "env CLOUDLUA_REGION", "env origin")
out = t.cloudlua("config --profile good --region flag-1 --endpoint catalog=http://127.0.0.1:1",
  { env = { CLOUDLUA_CONFIG_FILE = config, CLOUDLUA_REGION = "env-1", CLOUDLUA_PROFILE = "bad" } })
t.has(out, "region             flag-1", "a flag beats env")
t.has(out, "flag --region", "flag origin")
t.has(out, "endpoint.catalog   http://127.0.0.1:1", "--endpoint")
t.has(out, "flag --endpoint", "--endpoint origin")
out = t.cloudlua("config", { env = { CLOUDLUA_CONFIG_FILE = config, CLOUDLUA_PROFILE = "bad" } })
t.has(out, "env CLOUDLUA_PROFILE", "profile from env")
t.has(out, "dialect            aws", "the env profile's dialect")

-- unknown profile: the known ones listed, for config and for running code alike
for _, args in ipairs { "config --profile prod", "--profile prod -e 'print(1)'" } do
  out, err, code = t.cloudlua(args, { env = env })
  t.eq(code, 1, "unknown profile status: " .. args)
  t.has(err, "no profile 'prod' (chosen by --profile) in " .. config .. " (profiles: default, good, bad, nocreds)",
    "unknown profile message")
  t.eq(out, "", "nothing ran")
end

-- a malformed file: file:line and what is wrong
local broken = write("broken", "[default]\nregion = x\nendpoint.stroage = http://x\n")
out, err, code = t.cloudlua("-e 'print(1)'", { env = { CLOUDLUA_CONFIG_FILE = broken } })
t.eq(code, 1, "malformed file status")
t.has(err, broken .. ":3: no API named 'stroage' in 'endpoint.stroage'", "malformed file message")
write("broken", "[default\n")
out, err = t.cloudlua("config", { env = { CLOUDLUA_CONFIG_FILE = broken } })
t.has(err, broken .. ":1: a section header is [name], closed with ']'", "syntax error message")

-- a credentials file others can read is refused, with the fix
assert(os.execute("chmod 644 " .. q(dir .. "/credentials")))
out, err, code = t.cloudlua("--profile good -e 'print(1)'", { env = env })
t.eq(code, 1, "readable credentials refused")
t.has(err, "can be read by group or others (mode 0644); make it private with: chmod 600 " .. dir .. "/credentials",
  "readable credentials message")
assert(os.execute("chmod 600 " .. q(dir .. "/credentials")))

-- missing credentials: said by `config`, and a clear error on the first call
out = t.cloudlua("config --profile nocreds", { env = env })
t.has(out, "secret_access_key  (not set)", "no secret")
t.has(out, "calls fail: no credentials", "config says calls will fail")
out, err, code = t.cloudlua("--profile nocreds -e 'cloud.cluster.update_snapshot{SnapshotName = \"snap-1\"}'", { env = env })
t.eq(code, 1, "missing credentials status")
t.has(err, "config error in UpdateSnapshot: NoCredentials: no credentials for profile 'nocreds'", "missing credentials message")

-- two accounts in one script: cloud.client{profile=} takes each profile's settings
local script = t.temp_file([[
local good = cloud.client{ profile = "good" }
local bad = cloud.client{ profile = "bad" }
print(good, bad)
print(good.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "by good" } }.snapshot.description)
local ok, e = pcall(bad.cluster.update_snapshot, { SnapshotName = "snap-1" })
print(ok, e.code)
local ok2, e2 = pcall(cloud.client, { profile = "prod" })
print(ok2, e2.code)
]])
out, err, code = t.cloudlua(q(script), { env = env })
t.eq(code, 0, "two accounts status (" .. err .. ")")
t.eq(out, table.concat({
  "cloud.client (profile good, region jp-east-1, dialect ext)\tcloud.client (profile bad, region jp-east-1, dialect aws)",
  "by good",
  "false\tSignatureDoesNotMatch",
  "false\tUnknownProfile",
}, "\n") .. "\n", "each client uses its own profile")

-- --debug: every exchange on stderr, and never a secret, signature or session token
local TOKEN = "FwoGZXIvYXdzEJr-cloudlua-test-session-token"
script = t.temp_file(([[
cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "debugged" } }
cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/snap-1",
               body = '{"snapshot":{"description":"secret is %s"}}' }
pcall(cloud.client{ credentials = { secret_access_key = "a-wrong-secret-value" } }.cluster.update_snapshot,
      { SnapshotName = "snap-1" })
print("done")
]]):format(SECRET))
out, err, code = t.cloudlua("--debug --endpoint cluster=" .. emulator.cluster .. " " .. q(script), { env = {
  CLOUDLUA_ACCESS_KEY_ID = KEY, CLOUDLUA_SECRET_ACCESS_KEY = SECRET, CLOUDLUA_SESSION_TOKEN = TOKEN } })
t.eq(code, 0, "--debug status (" .. err .. ")")
t.eq(out, "done\n", "--debug writes nothing on stdout")
t.has(err, "* UpdateSnapshot, attempt 1\n> PUT " .. emulator.cluster .. "/v1/snapshots/snap-1\n", "the exchange's first lines")
t.has(err, '"description":"debugged"', "the request body")
t.has(err, "< HTTP 200", "the answer")
t.has(err, "< HTTP 403", "the refused call")
t.has(err, "SignatureDoesNotMatch", "the refusal's body")
t.has(err, "Signature=<redacted>", "signature redacted")
t.has(err, "X-Ext-Security-Token: <redacted>", "token header redacted")
t.has(err, "secret is <redacted>", "a secret in a body redacted")
for _, secret in ipairs { SECRET, TOKEN, "a-wrong-secret-value" } do
  t.has(err, secret, "--debug output holds no secret", true)
end
assert(not err:find("%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x"),
  "no 64-hex-digit signature anywhere in --debug output:\n" .. err)

os.remove(dir .. "/credentials")
os.remove(dir .. "/broken")
os.remove(config)
os.remove(dir)
t.cleanup()
print("cli_config_test: ok")
