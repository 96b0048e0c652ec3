-- No secret in any output, on every path. This test's own emulator stands for a
-- server that echoes the request in its error body (cloud.emulator.fault{echo=true}):
-- its Authorization header with the signature, its session token, its body (which
-- holds the secret key here). What the child processes show of that error —
-- tostring, err.message, uncaught errors and their tracebacks (-e, scripts, scripted
-- sessions), --output json, a scripted session's values, `cloudlua test`'s TAP,
-- --debug — holds none of them. Also: a config line holding a secret without '=',
-- and endpoints carrying a password.
local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")
local q = t.quote

local emulator = cloud.emulator.endpoints()
local KEY, SECRET = "CLOUDLUAEMULATORKEY", "cloudlua-emulator-secret"
local TOKEN = "FwoGZXIvYXdzEJr-cloudlua-echoed-session-token"
local ACCOUNT = { CLOUDLUA_ACCESS_KEY_ID = KEY, CLOUDLUA_SECRET_ACCESS_KEY = SECRET, CLOUDLUA_SESSION_TOKEN = TOKEN }
local AT = "--endpoint cluster=" .. emulator.cluster .. " "
local CALL = ('cloud.cluster.update_snapshot{ SnapshotName = "snap-1", snapshot = { description = %q } }'):format(SECRET)
local ECHOED = "api error in UpdateSnapshot (HTTP 400): BadRequest: you sent: PUT /v1/snapshots/snap-1"

-- Raises unless `text` is free of the secret key, the token and any signature.
local function clean(text, what)
  t.has(text, SECRET, what .. ": the secret key", true)
  t.has(text, TOKEN, what .. ": the session token", true)
  if text:find(("%x"):rep(64)) then error(what .. ": a signature shows in:\n" .. text, 2) end
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

-- the echo itself: it does hold the signed request
echo_next()
local ok, e = pcall(cloud.cluster.update_snapshot, { SnapshotName = "snap-1" })
assert(not ok and e.code == "BadRequest", "the echo fault answers 400 BadRequest")
t.has(e.message, "Authorization: EXT4-HMAC-SHA256 Credential=" .. KEY .. "/", "the echo holds the Authorization header")
t.has(e.message, "Signature=<redacted>", "the echoed signature is redacted in err.message")

-- an uncaught error in -e: the message and its traceback
echo_next()
local out, err, code = run(AT .. "-e " .. q(CALL))
t.eq(code, 1, "-e: status")
t.has(err, "cloudlua: " .. ECHOED, "-e: the echoed error is shown")
t.has(err, "Signature=<redacted>", "-e: the signature redacted")
t.has(err, "X-Ext-Security-Token: <redacted>", "-e: the token redacted")
t.has(err, "stack traceback:", "-e: the traceback")
clean(err, "-e: stderr")

-- a script: tostring, the message field, print, and the uncaught error
echo_next()
local script = t.temp_file(([[
local ok, err = pcall(function() return %s end)
print(tostring(err))
print(err.message)
io.stderr:write(err.message, "\n")
error(err)
]]):format(CALL))
out, err, code = run(AT .. q(script))
t.eq(code, 1, "script: status")
t.has(out, ECHOED, "script: tostring shows the error")
clean(out, "script: stdout")
clean(err, "script: stderr")

-- a plain string error holding the secret, as a script might raise
out, err = run(AT .. "-e " .. q(("error('the secret is %s')"):format(SECRET)))
t.has(err, "cloudlua: (command line):1: the secret is <redacted>", "a string error redacted")

-- --output json: the error object and its text
echo_next()
out, err, code = run(AT .. "--output json -e " .. q(("local ok, e = pcall(function() return %s end) return e, tostring(e)"):format(CALL)))
t.eq(code, 0, "--output json: status (" .. err .. ")")
t.has(out, '"code":"BadRequest"', "--output json: the error object")
clean(out, "--output json: stdout")

-- a scripted session: an uncaught error, then (with --keep-going) values shown
echo_next(2)
local raw = 'cloud.request{ api = "cluster", method = "PUT", path = "/v1/snapshots/snap-1", body = "{}" }.body'
out, err, code = run(AT .. "--keep-going", { input = CALL .. "\n" .. raw .. "\n" })
t.eq(code, 1, "scripted session: status")
t.has(err, "cloudlua: " .. ECHOED, "scripted session: the error")
t.has(out, "Authorization: EXT4-HMAC-SHA256", "scripted session: the echoed body shown")
clean(out, "scripted session: stdout")
clean(err, "scripted session: stderr")

-- `cloudlua test`: a failing case's diagnostics and what a case prints
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
out, err = run("test " .. AT .. q(test_file))
t.has(out, "not ok 1 - an echoed error, uncaught", "TAP: the failing case")
t.has(out, "#   " .. ECHOED, "TAP: the diagnostics")
t.has(out, "ok 2 - an echoed error, printed", "TAP: the printing case")
t.has(out, "# the secret is <redacted>\n", "TAP: what a case prints is redacted")
clean(out, "TAP")
clean(err, "cloudlua test: stderr")

-- --debug
echo_next()
out, err = run(AT .. "--debug -e " .. q(CALL))
t.has(err, "< HTTP 400", "--debug: the exchange")
clean(err, "--debug")

-- a config line holding a secret without '=' is not echoed
local bad = t.temp_file("[default]\nsecret_access_key " .. SECRET .. "\n", "600")
for _, args in ipairs { "config", "-e 'print(1)'" } do
  out, err, code = t.cloudlua(args, { env = { CLOUDLUA_CONFIG_FILE = bad } })
  t.eq(code, 1, "config line without '=': status of " .. args)
  t.has(err, bad .. ":2: expected 'key = value', a [profile] header or a # comment (got 'secret_access_key' without '=')",
    "config line without '=': the message")
  clean(err, "config line without '='")
end

-- an endpoint with a password is refused, the password never shown
local PASSWORD = "pa55-w0rd-in-url"
local URL = "https://ops:" .. PASSWORD .. "@cluster.example.com/"
local SHOWN = "the endpoint of cluster must not hold a user name or password (got 'https://ops:<redacted>@cluster.example.com/')"
local in_file = t.temp_file("[default]\nendpoint.cluster = " .. URL .. "\n")
for _, case in ipairs {
  { "--endpoint", "--endpoint " .. q("cluster=" .. URL) .. " -e 'print(1)'", {} },
  { "the variable", "-e 'print(1)'", { CLOUDLUA_ENDPOINT_CLUSTER = URL } },
  { "the config file", "config", { CLOUDLUA_CONFIG_FILE = in_file } },
  { "cloud.client", "-e " .. q(("cloud.client{ endpoints = { cluster = %q } }"):format(URL)), {} },
  { "no API=", "--endpoint " .. q(URL) .. " -e 'print(1)'", {} },
} do
  out, err, code = t.cloudlua(case[2], { env = case[3] })
  t.eq(code, 1, "password in " .. case[1] .. ": status")
  t.has(err, case[1] == "no API=" and "(got 'https://ops:<redacted>@cluster.example.com/')" or SHOWN,
    "password in " .. case[1] .. ": the message")
  t.has(out .. err, PASSWORD, "password in " .. case[1] .. ": never shown", true)
end

t.cleanup()
print("cli_secrets_test: ok")
