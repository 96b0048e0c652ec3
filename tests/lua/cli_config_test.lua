-- Configuration for real accounts, through the binary: `cloudlua config` with the
-- origin of each value (flag > env > file:line > default) and secrets masked;
-- clear errors for an unknown profile, a malformed file, a readable credentials
-- file and missing credentials; cloud.client{profile=} for two accounts in one
-- script; and --debug dumps that never hold a secret, signature or session token.
-- The "accounts" are this test's own embedded emulator, which keeps serving while
-- the child processes run.
-- Run: cloudlua test tests/lua/cli_config_test.lua
local t = dofile("tests/lua/support/cli.lua")
local q = t.quote

local emulator = cloud.emulator and cloud.emulator.endpoints() or {}
local KEY, SECRET = "CLOUDLUAEMULATORKEY", "cloudlua-emulator-secret"

-- A private folder for the config and credentials files (made by setup, removed by
-- teardown), and files written in it.
local dir
local function write(name, text, mode)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  assert(os.execute("chmod " .. (mode or "600") .. " " .. q(dir .. "/" .. name)))
  return dir .. "/" .. name
end

local config, env

setup(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -m 700 " .. q(dir)))
  config = write("config", table.concat({
    "# accounts for cloudlua_config_test",
    "[default]",
    "region = jp-east-1",
    "",
    "[good]",
    "region = jp-east-1",
    "endpoint.cluster = " .. tostring(emulator.cluster),
    "credentials_file = credentials",
    "",
    "[bad]",
    "dialect = aws",
    "endpoint.cluster = " .. tostring(emulator.cluster),
    "credentials_file = credentials",
    "",
    "[nocreds]",
    "endpoint.cluster = " .. tostring(emulator.cluster),
  }, "\n") .. "\n", "644")
  write("credentials", ("[good]\naccess_key_id = %s\nsecret_access_key = %s\n"
    .. "[bad]\naccess_key_id = %s\nsecret_access_key = not-the-secret\n")
    :format(KEY, SECRET, KEY))
  env = { CLOUDLUA_CONFIG_FILE = config }
end)

teardown(function()
  if dir then
    for _, name in ipairs{ "config", "credentials", "broken" } do os.remove(dir .. "/" .. name) end
    os.remove(dir)
  end
  t.cleanup()
end)

---------------------------------------------------------------- cloudlua config: values, masked secrets, origins

test("config shows the file read, the profile and their origins", function()
  local out, err, code = t.cloudlua("config --profile good", { env = env })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_contain("config_file        " .. config .. "  ")
  expect(out).to_contain("profile            good")
  expect(out).to_contain("flag --profile")
  expect(out).to_contain("profiles in the file: default, good, bad, nocreds")
end)

test("config shows a value from the file with its file and line, a default as such", function()
  local out = t.cloudlua("config --profile good", { env = env })
  expect(out).to_contain("region             jp-east-1")
  expect(out).to_contain("file " .. config .. ":6")
  expect(out).to_contain("dialect            ext")
end)

test("config masks the secret and shows its origin: the credentials file", function()
  local out = t.cloudlua("config --profile good", { env = env })
  expect(out).to_contain("file " .. dir .. "/credentials:3")
  expect(out:find(SECRET, 1, true)).to_be_nil()  -- the secret never shows
  expect(out).to_contain("secret_access_key  ********")
  expect(out).to_contain("access_key_id      ***************RKEY")  -- the key id's last four characters
end)

test("env beats the file", function()
  local out = t.cloudlua("--profile good config", { env = { CLOUDLUA_CONFIG_FILE = config, CLOUDLUA_REGION = "env-1" } })
  expect(out).to_contain("region             env-1")
  expect(out).to_contain("env CLOUDLUA_REGION")
end)

test("a flag beats env; --endpoint", function()
  local out = t.cloudlua("config --profile good --region flag-1 --endpoint catalog=http://127.0.0.1:1",
    { env = { CLOUDLUA_CONFIG_FILE = config, CLOUDLUA_REGION = "env-1", CLOUDLUA_PROFILE = "bad" } })
  expect(out).to_contain("region             flag-1")
  expect(out).to_contain("flag --region")
  expect(out).to_contain("endpoint.catalog   http://127.0.0.1:1")
  expect(out).to_contain("flag --endpoint")
end)

-- aws-cli's spellings of the one setting: --endpoint-url URL (as --endpoint URL), and
-- AWS_ENDPOINT_URL, read only when nothing of cloudlua's sets an endpoint.
test("--endpoint-url URL is --endpoint URL, on the main command and config", function()
  for _, args in ipairs{ "config --endpoint-url http://127.0.0.1:1", "--endpoint-url http://127.0.0.1:1 config" } do
    local out, err, code = t.cloudlua(args)
    expect(err).to_equal("")
    expect(code).to_equal(0)
    expect(out).to_match("endpoint_url%s+http://127%.0%.0%.1:1%s+flag %-%-endpoint")
  end
end)

test("--endpoint-url takes a URL only; API=URL is --endpoint's", function()
  local _, err, code = t.cloudlua("--endpoint-url storage=http://127.0.0.1:1 -e 'print(1)'")
  expect(code).to_equal(1)
  expect(err).to_contain("--endpoint-url")
  expect(err).to_contain("--endpoint storage=http://127.0.0.1:1")
end)

test("AWS_ENDPOINT_URL when nothing else sets an endpoint, shown as its origin", function()
  local out = t.cloudlua("config", { env = { AWS_ENDPOINT_URL = "http://127.0.0.1:2" } })
  expect(out).to_match("endpoint_url%s+http://127%.0%.0%.1:2%s+env AWS_ENDPOINT_URL")
end)

test("AWS_ENDPOINT_URL gives way to CLOUDLUA_ENDPOINT_URL, --endpoint and a profile's endpoints", function()
  local out = t.cloudlua("config", { env = { AWS_ENDPOINT_URL = "http://127.0.0.1:2",
                                             CLOUDLUA_ENDPOINT_URL = "http://127.0.0.1:3" } })
  expect(out).to_match("endpoint_url%s+http://127%.0%.0%.1:3%s+env CLOUDLUA_ENDPOINT_URL")
  out = t.cloudlua("config --endpoint storage=http://127.0.0.1:4", { env = { AWS_ENDPOINT_URL = "http://127.0.0.1:2" } })
  expect(out:find("127.0.0.1:2", 1, true)).to_be_nil()
  out = t.cloudlua("config --profile good", { env = { CLOUDLUA_CONFIG_FILE = config, AWS_ENDPOINT_URL = "http://127.0.0.1:2" } })
  expect(out:find("127.0.0.1:2", 1, true)).to_be_nil()
end)

test("the profile from env, with its own settings", function()
  local out = t.cloudlua("config", { env = { CLOUDLUA_CONFIG_FILE = config, CLOUDLUA_PROFILE = "bad" } })
  expect(out).to_contain("env CLOUDLUA_PROFILE")
  expect(out).to_contain("dialect            aws")
end)

---------------------------------------------------------------- errors a person can act on

-- An unknown profile: the known ones listed, for config and for running code alike.
for _, args in ipairs { "config --profile prod", "--profile prod -e 'print(1)'" } do
  test("an unknown profile lists the known ones: " .. args, function()
    local out, err, code = t.cloudlua(args, { env = env })
    expect(code).to_equal(1)
    expect(err).to_contain("no profile 'prod' (chosen by --profile) in " .. config
                           .. " (profiles: default, good, bad, nocreds)")
    expect(out).to_equal("")  -- nothing ran
  end)
end

test("a malformed file: file:line and what is wrong", function()
  local broken = write("broken", "[default]\nregion = x\nendpoint.stroage = http://x\n")
  local _, err, code = t.cloudlua("-e 'print(1)'", { env = { CLOUDLUA_CONFIG_FILE = broken } })
  expect(code).to_equal(1)
  expect(err).to_contain(broken .. ":3: no API named 'stroage' in 'endpoint.stroage'")
end)

test("a syntax error in the file: file:line and what is wrong", function()
  local broken = write("broken", "[default\n")
  local _, err = t.cloudlua("config", { env = { CLOUDLUA_CONFIG_FILE = broken } })
  expect(err).to_contain(broken .. ":1: a section header is [name], closed with ']'")
end)

test("a credentials file others can read is refused, with the fix", function()
  assert(os.execute("chmod 644 " .. q(dir .. "/credentials")))
  local _, err, code = t.cloudlua("--profile good -e 'print(1)'", { env = env })
  assert(os.execute("chmod 600 " .. q(dir .. "/credentials")))  -- before any check can fail
  expect(code).to_equal(1)
  expect(err).to_contain("can be read by group or others (mode 0644); make it private with: chmod 600 "
                         .. dir .. "/credentials")
end)

test("missing credentials: config says calls will fail", function()
  local out = t.cloudlua("config --profile nocreds", { env = env })
  expect(out).to_contain("secret_access_key  (not set)")
  expect(out).to_contain("calls fail: no credentials")
end)

test("missing credentials: a clear error on the first call", function()
  local _, err, code = t.cloudlua("--profile nocreds -e 'cloud.cluster.update_snapshot{SnapshotName = \"snap-1\"}'",
                                  { env = env })
  expect(code).to_equal(1)
  expect(err).to_contain("config error in UpdateSnapshot: NoCredentials: no credentials for profile 'nocreds'")
end)

---------------------------------------------------------------- two accounts in one script

test("cloud.client{profile=} takes each profile's settings", function()
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
  local out, err, code = t.cloudlua(q(script), { env = env })
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_equal(table.concat({
    "cloud.client (profile good, region jp-east-1, dialect ext)\tcloud.client (profile bad, region jp-east-1, dialect aws)",
    "by good",
    "false\tSignatureDoesNotMatch",
    "false\tUnknownProfile",
  }, "\n") .. "\n")
end)

---------------------------------------------------------------- --debug

local TOKEN = "FwoGZXIvYXdzEJr-cloudlua-test-session-token"
local debug_out, debug_err, debug_code  -- what the --debug run gave, once it ran

-- Runs, once, a script under --debug that makes a call, a raw request holding the
-- secret in its body and custom headers (secret ones by name, and near misses), and a
-- call refused for a wrong secret.
local function debug_run()
  if not debug_code then
    local script = t.temp_file(([[
cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = "debugged" } }
cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/snap-1",
               body = '{"snapshot":{"description":"secret is %s"}}',
               headers = { ["X-My-Secret"] = "header-value-1", ["x-api-key"] = "header-value-2",
                           ["X-Auth-Token"] = "header-value-3", ["X-DB-Password"] = "header-value-4",
                           ["X-Monkey"] = "banana", ["X-Tokens-Left"] = "7", ["X-Kms-Key-Id"] = "key-7" } }
pcall(cloud.client{ credentials = { secret_access_key = "a-wrong-secret-value" } }.cluster.update_snapshot,
      { SnapshotName = "snap-1" })
print("done")
]]):format(SECRET))
    debug_out, debug_err, debug_code = t.cloudlua("--debug --endpoint cluster=" .. emulator.cluster .. " " .. q(script),
      { env = { CLOUDLUA_ACCESS_KEY_ID = KEY, CLOUDLUA_SECRET_ACCESS_KEY = SECRET, CLOUDLUA_SESSION_TOKEN = TOKEN } })
  end
  return debug_out, debug_err, debug_code
end

test("--debug writes every exchange on stderr, nothing on stdout", function()
  local out, err, code = debug_run()
  expect(code).to_equal(0)
  expect(out).to_equal("done\n")
  expect(err).to_contain("* UpdateSnapshot, attempt 1\n> PUT " .. emulator.cluster .. "/v1/snapshots/snap-1\n")
  expect(err).to_contain('"description":"debugged"')  -- the request body
  expect(err).to_contain("< HTTP 200")                -- the answer
  expect(err).to_contain("< HTTP 403")                -- the refused call
  expect(err).to_contain("SignatureDoesNotMatch")     -- the refusal's body
end)

test("--debug redacts the signature, the token header and a secret in a body", function()
  local _, err = debug_run()
  expect(err).to_contain("Signature=<redacted>")
  expect(err).to_contain("X-Ext-Security-Token: <redacted>")
  expect(err).to_contain("secret is <redacted>")
end)

test("--debug redacts a header whose name has secret, token, password or key as a word", function()
  local _, err = debug_run()
  expect(err:find("header-value-", 1, true)).to_be_nil()
  for _, name in ipairs{ "X-My-Secret", "x-api-key", "X-Auth-Token", "X-DB-Password" } do
    expect(err).to_contain("> " .. name .. ": <redacted>\n")
  end
  -- near misses keep their values: a word holding "key", a count of tokens, a key's id
  expect(err).to_contain("> X-Monkey: banana\n")
  expect(err).to_contain("> X-Tokens-Left: 7\n")
  expect(err).to_contain("> X-Kms-Key-Id: key-7\n")
  expect(err).to_contain("> X-Ext-Date: 2")
end)

for _, secret in ipairs { { "the secret", SECRET }, { "the session token", TOKEN },
                          { "a wrong secret", "a-wrong-secret-value" } } do
  test("--debug output never holds " .. secret[1], function()
    local _, err = debug_run()
    expect(err:find(secret[2], 1, true)).to_be_nil()
  end)
end

test("--debug output holds no 64-hex-digit signature anywhere", function()
  local _, err = debug_run()
  expect(err:find(("%x"):rep(64))).to_be_nil()
end)

---------------------------------------------------------------- --record

-- A test file recorded under --debug (the embedded emulator answering) and replayed:
-- a raw request with custom headers holding credentials, and an object whose metadata
-- comes back as an answer header named like a secret.
local HEADER_SECRETS = { "s3cr3t-value", "abc.def", "cHJveHk6cHc", "cookie-value-1", "tok-value-1" }
local recorded  -- what the recording and the replay gave, once they ran

-- Records the file, then replays it; the recording's files are read (grep) and removed.
local function record_run()
  if not recorded then
    local file = t.temp_file([[
test("a request with credentials in its headers", function()
  cloud.storage.create_bucket{ Bucket = "taped" }
  local r = cloud.request{ api = "storage", method = "PUT", path = "/taped/o", body = "x",
    headers = { { "X-My-Secret", "s3cr3t-value" }, { "Authorization", "Bearer abc.def" },
                { "Proxy-Authorization", "Basic cHJveHk6cHc=" }, { "Cookie", "sid=cookie-value-1" },
                { "x-amz-security-token", "tok-value-1" }, { "X-Ext-Meta-My-Secret", "s3cr3t-value" } } }
  expect(r.status).to_equal(200)
  r = cloud.request{ api = "storage", method = "GET", path = "/taped/o" }
  expect(r.status).to_equal(200)
  expect(r.body).to_equal("x")
  expect(r.headers["x-ext-meta-my-secret"]).to_be_truthy()  -- recorded by its name
end)
]])
    local tapes = os.tmpname()
    os.remove(tapes)
    recorded = { record = { t.cloudlua("--debug test --record " .. q(tapes) .. " " .. q(file)) },
                 replay = { t.cloudlua("test --replay " .. q(tapes) .. " " .. q(file)) }, holding = {} }
    for _, secret in ipairs(HEADER_SECRETS) do
      local ok = os.execute("grep -rqF -- " .. q(secret) .. " " .. q(tapes))
      if ok then recorded.holding[#recorded.holding + 1] = secret end
    end
    recorded.secret_header = os.execute("grep -rqF '\"x-ext-meta-my-secret\":\"<redacted>\"' " .. q(tapes)) == true
    assert(os.execute("rm -rf " .. q(tapes)))
  end
  return recorded
end

test("--record keeps no header's credential; the recording replays", function()
  local r = record_run()
  expect(r.record[3]).to_equal(0)
  expect(r.record[1]).to_contain("ok 1 - a request with credentials in its headers")
  expect(r.holding).to_equal({})
  expect(r.secret_header).to_be(true)  -- kept by its name, its value redacted
  expect(r.replay[3]).to_equal(0)
  expect(r.replay[1]).to_contain("ok 1 - a request with credentials in its headers")
end)

test("--debug shows no header's credential: Authorization's, Proxy-Authorization, Cookie", function()
  local err = record_run().record[2]
  for _, secret in ipairs(HEADER_SECRETS) do expect(err:find(secret, 1, true)).to_be_nil() end
  expect(err).to_contain("> X-My-Secret: <redacted>\n")
  expect(err).to_contain("> Proxy-Authorization: Basic <redacted>\n")
  expect(err).to_contain("> Cookie: <redacted>\n")
  expect(err).to_contain("< x-ext-meta-my-secret: <redacted>\n")
end)
