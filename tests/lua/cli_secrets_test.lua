-- No secret in any output, on every path. This test's own emulator stands for a
-- server that echoes the request in its error body (cloud.emulator.fault{echo=true}):
-- its Authorization header with the signature, its session token, its body (which
-- holds the secret key here). What the child processes show of that error —
-- tostring, err.message, uncaught errors and their tracebacks (-e, scripts, scripted
-- sessions), --output json, a scripted session's values, `cloudlua test`'s TAP,
-- --debug — holds none of them. Also: a config line holding a secret without '=',
-- and endpoints carrying a password.
local t = dofile("tests/lua/support/cli.lua")
local q = t.quote

local emulator = cloud.emulator.endpoints()
local KEY, SECRET = "CLOUDLUAEMULATORKEY", "cloudlua-emulator-secret"
local TOKEN = "FwoGZXIvYXdzEJr-cloudlua-echoed-session-token"
local ACCOUNT = { CLOUDLUA_ACCESS_KEY_ID = KEY, CLOUDLUA_SECRET_ACCESS_KEY = SECRET, CLOUDLUA_SESSION_TOKEN = TOKEN }
local AT = "--endpoint cluster=" .. emulator.cluster .. " "
local CALL = ('cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = %q } }'):format(SECRET)
local ECHOED = "api error in UpdateSnapshot (HTTP 400): BadRequest: you sent: PUT /v1/snapshots/snap-1"

-- Fails the case unless `text` is free of the secret key, the token and any signature.
local function clean(text)
  expect(text:find(SECRET, 1, true)).to_be_nil()
  expect(text:find(TOKEN, 1, true)).to_be_nil()
  expect(text:match(("%x"):rep(64))).to_be_nil()
end

-- The next `times` UpdateSnapshot requests are answered 400 with the request echoed.
local function echo_next(times)
  cloud.emulator.fault{ operation = "UpdateSnapshot", echo = true, status = 400, code = "BadRequest", times = times or 1 }
end

local function run(args, opts)
  opts = opts or {}
  opts.env = opts.env or ACCOUNT
  return t.cloudlua(args, opts)
end

teardown(function() t.cleanup() end)

test("the echo itself holds the signed request; err.message has the signature redacted", function()
  echo_next()
  local e = expect(cloud.cluster.update_snapshot, { SnapshotName = "snap-1" }).to_fail{ code = "BadRequest" }
  expect(e.message).to_contain("Authorization: EXT4-HMAC-SHA256 Credential=" .. KEY .. "/")
  expect(e.message).to_contain("Signature=<redacted>")
end)

test("an uncaught error in -e: the message and its traceback", function()
  echo_next()
  local _, err, code = run(AT .. "-e " .. q(CALL))
  expect(code).to_equal(1)
  expect(err).to_contain("cloudlua: " .. ECHOED)
  expect(err).to_contain("Signature=<redacted>")
  expect(err).to_contain("X-Ext-Security-Token: <redacted>")
  expect(err).to_contain("stack traceback:")
  clean(err)
end)

test("a script: tostring, the message field, print, and the uncaught error", function()
  echo_next()
  local script = t.temp_file(([[
local ok, err = pcall(function() return %s end)
print(tostring(err))
print(err.message)
io.stderr:write(err.message, "\n")
error(err)
]]):format(CALL))
  local out, err, code = run(AT .. q(script))
  expect(code).to_equal(1)
  expect(out).to_contain(ECHOED)
  clean(out)
  clean(err)
end)

test("a plain string error holding the secret is redacted", function()
  local _, err = run(AT .. "-e " .. q(("error('the secret is %s')"):format(SECRET)))
  expect(err).to_contain("cloudlua: (command line):1: the secret is <redacted>")
end)

test("--output json: the error object and its text", function()
  echo_next()
  local chunk = ("local ok, e = pcall(function() return %s end) return e, tostring(e)"):format(CALL)
  local out, err, code = run(AT .. "--output json -e " .. q(chunk))
  expect(err).to_equal("")
  expect(code).to_equal(0)
  expect(out).to_contain('"code":"BadRequest"')
  clean(out)
end)

test("a scripted session: an uncaught error, then (with --keep-going) values shown", function()
  echo_next(2)
  local raw = 'cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/snap-1", body = "{}" }.body'
  local out, err, code = run(AT .. "--keep-going", { input = CALL .. "\n" .. raw .. "\n" })
  expect(code).to_equal(1)
  expect(err).to_contain("cloudlua: " .. ECHOED)
  expect(out).to_contain("Authorization: EXT4-HMAC-SHA256")
  clean(out)
  clean(err)
end)

test("cloudlua test: a failing case's diagnostics and what a case prints", function()
  echo_next(2)
  local test_file = t.temp_file(([[
test("an echoed error, uncaught", function() %s end)
test("an echoed error, printed", function()
  local ok, e = pcall(function() return %s end)
  print(e)
  print(e.message)
  print("the secret is " .. os.getenv("CLOUDLUA_SECRET_ACCESS_KEY"))
end)
]]):format(CALL, CALL))
  local out, err = run("test " .. AT .. q(test_file))
  expect(out).to_contain("not ok 1 - an echoed error, uncaught")
  expect(out).to_contain("#   " .. ECHOED)
  expect(out).to_contain("ok 2 - an echoed error, printed")
  expect(out).to_contain("# the secret is <redacted>\n")
  clean(out)
  clean(err)
end)

test("--debug shows the exchange and no secret", function()
  echo_next()
  local _, err = run(AT .. "--debug -e " .. q(CALL))
  expect(err).to_contain("< HTTP 400")
  clean(err)
end)

for _, args in ipairs { "config", "-e 'print(1)'" } do
  test("a config line holding a secret without '=' is not echoed: " .. args, function()
    local bad = t.temp_file("[default]\nsecret_access_key " .. SECRET .. "\n", "600")
    local _, err, code = t.cloudlua(args, { env = { CLOUDLUA_CONFIG_FILE = bad } })
    expect(code).to_equal(1)
    expect(err).to_contain(bad .. ":2: expected 'key = value', a [profile] header or a # comment (got 'secret_access_key' without '=')")
    clean(err)
  end)
end

local PASSWORD = "pa55-w0rd-in-url"
local URL = "https://ops:" .. PASSWORD .. "@cluster.example.com/"
for _, case in ipairs {
  { "--endpoint", "--endpoint " .. q("cluster=" .. URL) .. " -e 'print(1)'", {} },
  { "the variable", "-e 'print(1)'", { CLOUDLUA_ENDPOINT_CLUSTER = URL } },
  { "the config file", "config", { CLOUDLUA_CONFIG_FILE = URL } },
  { "cloud.client", "-e " .. q(("cloud.client{ endpoints = { cluster = %q } }"):format(URL)), {} },
  { "no API=", "--endpoint " .. q(URL) .. " -e 'print(1)'", {} },
} do
  test("an endpoint with a password is refused, the password never shown: " .. case[1], function()
    local env = {}
    for k, v in pairs(case[3]) do env[k] = v end
    if env.CLOUDLUA_CONFIG_FILE then env.CLOUDLUA_CONFIG_FILE = t.temp_file("[default]\nendpoint.cluster = " .. URL .. "\n") end
    local out, err, code = t.cloudlua(case[2], { env = env })
    expect(code).to_equal(1)
    expect(err).to_contain(case[1] == "no API=" and "(got 'https://ops:<redacted>@cluster.example.com/')"
                           or "must not hold a user name or password (got 'https://ops:<redacted>@cluster.example.com/')")
    expect((out .. err):find(PASSWORD, 1, true)).to_be_nil()
  end)
end
