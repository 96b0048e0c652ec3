-- The command line as a user meets it: -v, -e, a script with its arguments, a
-- failing script's exit status, stdin as a script, and `cloudlua serve` used by a
-- second cloudlua process through --endpoint. CLOUDLUA_TEST_BIN names the binary.

local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")
local bin, eq, sh_quote, temp_script = t.bin, t.eq, t.quote, t.temp_file

-- Runs a shell command; returns its stdout and whether it exited 0.
local function run(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok == true
end

-- -v and -e
local out, ok = run(sh_quote(bin) .. " -v")
assert(ok and out:match("^cloudlua %d+%.%d+%.%d+ %(Lua 5%.4"), "version line: " .. out)
out = run(sh_quote(bin) .. " -e 'print(1 + 1)'")
eq(out, "2\n", "-e runs the chunk")

-- a script sees its arguments as `lua` gives them; options after it are its own
local script = temp_script("print(arg[0] == ... and 'no' or 'yes', #arg, arg[1], arg[2], select('#', ...))")
out = run(sh_quote(bin) .. " " .. script .. " one -e")
eq(out, "yes\t2\tone\t-e\t2\n", "script arguments")
os.remove(script)

-- a failing script: message on stderr, exit status non-zero, nothing on stdout
script = temp_script("print('before')\nerror('boom')\nprint('after')")
out, ok = run(sh_quote(bin) .. " " .. script .. " 2>/dev/null")
eq(ok, false, "failing script exits non-zero")
eq(out, "before\n", "stops at the error")
local err = run(sh_quote(bin) .. " " .. script .. " 2>&1 >/dev/null")
assert(err:find("cloudlua: .*boom") and err:find("stack traceback"), "error and traceback on stderr: " .. err)
os.remove(script)

-- an error object from the platform prints readably, not as "table: 0x..."
err = run(sh_quote(bin) .. " -e 'cloud.cluster.update_snapshot{SnapshotName=\"none\"}' 2>&1")
assert(err:find("api error in UpdateSnapshot %(HTTP 404%): SnapshotNotFound"), "readable api error: " .. err)

-- stdin that is not a terminal runs as a script
out, ok = run("printf 'x = 40\\nprint(x + 2)\\n' | " .. sh_quote(bin))
assert(ok, "stdin script exit status")
eq(out, "42\n", "stdin as a script")
out, ok = run("printf 'error(\"stop\")\\n' | " .. sh_quote(bin) .. " 2>/dev/null")
eq(ok, false, "stdin script error exits non-zero")

-- the REPL (-i): expressions print their values, unfinished chunks continue on the
-- next line, an error is shown and the session carries on
out, ok = run("printf '1 + 1\\nt = {\\n  10, 20 }\\n#t\\nerror(\"oops\")\\nprint(\"still here\")\\n' | "
  .. sh_quote(bin) .. " -i 2>/dev/null")
assert(ok, "REPL exits 0 at end of input")
assert(out:find("^2\n2\nstill here\n$"), "REPL output (no banner when stdin is not a terminal): " .. out)

-- serve: the endpoint lines, then the access key, before anything else
local server = assert(io.popen("sh -c 'echo $$; exec " .. bin .. " serve --dialect ext 2>/dev/null'", "r"))
local pid = server:read("l")
local endpoints = {}
for _ = 1, 4 do
  local api, url = server:read("l"):match("^(%a+) (http://127%.0%.0%.1:%d+)$")
  assert(api, "serve prints '<api> <base-url>' lines")
  endpoints[api] = url
end
assert(endpoints.storage and endpoints.devops and endpoints.cluster and endpoints.catalog, "four APIs")
eq(server:read("l"), "access_key_id CLOUDLUAEMULATORKEY", "access key line")

-- a second process talks to it with the documented built-in credentials
local client_cmd = ("%s --endpoint cluster=%s --access-key CLOUDLUAEMULATORKEY --secret-key cloudlua-emulator-secret "
  .. "-e 'print(cloud.cluster.update_snapshot{SnapshotName=\"snap-1\", snapshot={description=\"served\"}}.snapshot.description)'")
  :format(sh_quote(bin), endpoints.cluster)
out, ok = run(client_cmd)
eq(out, "served\n", "client against serve")
out = run(client_cmd:gsub("%-%-endpoint", "--dialect aws --endpoint") .. " 2>&1")
assert(out:find("IncompleteSignature"), "serve --dialect ext refuses aws signatures: " .. out)

-- SIGTERM stops it cleanly
os.execute("kill -TERM " .. pid)
server:read("a")
local closed, how, code = server:close()
eq(closed, true, "serve exits 0 on SIGTERM (" .. tostring(how) .. " " .. tostring(code) .. ")")
print("cli_test: ok")
