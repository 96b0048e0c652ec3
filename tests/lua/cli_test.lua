-- The command line as a user meets it: -v, -e, a script with its arguments, a
-- failing script's exit status, stdin as a script, and `cloudlua serve` used by a
-- second cloudlua process through --endpoint. CLOUDLUA_TEST_BIN names the binary.
-- Run: cloudlua test tests/lua/cli_test.lua

local t = dofile("tests/lua/support/cli.lua")
local bin, sh_quote, temp_script = t.bin, t.quote, t.temp_file

-- Runs a shell command; returns its stdout and whether it exited 0.
local function run(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok == true
end

teardown(t.cleanup)

test("-v prints the version line", function()
  local out, ok = run(sh_quote(bin) .. " -v")
  expect(ok).to_equal(true)
  expect(out).to_match("^cloudlua %d+%.%d+%.%d+ %(Lua 5%.4")
end)

test("-e runs the chunk", function()
  expect((run(sh_quote(bin) .. " -e 'print(1 + 1)'"))).to_equal("2\n")
end)

test("a script sees its arguments as lua gives them; options after it are its own", function()
  local script = temp_script("print(arg[0] == ... and 'no' or 'yes', #arg, arg[1], arg[2], select('#', ...))")
  expect((run(sh_quote(bin) .. " " .. script .. " one -e"))).to_equal("yes\t2\tone\t-e\t2\n")
end)

test("a failing script stops at the error and exits non-zero", function()
  local script = temp_script("print('before')\nerror('boom')\nprint('after')")
  local out, ok = run(sh_quote(bin) .. " " .. script .. " 2>/dev/null")
  expect(ok).to_equal(false)
  expect(out).to_equal("before\n")
end)

test("a failing script: the error and a traceback on stderr", function()
  local script = temp_script("print('before')\nerror('boom')\nprint('after')")
  local err = run(sh_quote(bin) .. " " .. script .. " 2>&1 >/dev/null")
  expect(err).to_match("cloudlua: .*boom")
  expect(err).to_contain("stack traceback")
end)

test("an error object from the platform prints readably, not as table: 0x...", function()
  local err = run(sh_quote(bin) .. " -e 'cloud.cluster.update_snapshot{SnapshotName=\"none\"}' 2>&1")
  expect(err).to_contain("api error in UpdateSnapshot (HTTP 404): SnapshotNotFound")
end)

test("stdin that is not a terminal runs as a script", function()
  local out, ok = run("printf 'x = 40\\nprint(x + 2)\\n' | " .. sh_quote(bin))
  expect(ok).to_equal(true)
  expect(out).to_equal("42\n")
end)

test("an error in a script read from stdin exits non-zero", function()
  local _, ok = run("printf 'error(\"stop\")\\n' | " .. sh_quote(bin) .. " 2>/dev/null")
  expect(ok).to_equal(false)
end)

-- Expressions print their values, unfinished chunks continue on the next line, an
-- error is shown and the session carries on; no banner when stdin is not a terminal.
test("the REPL (-i) on piped input", function()
  local out, ok = run("printf '1 + 1\\nt = {\\n  10, 20 }\\n#t\\nerror(\"oops\")\\nprint(\"still here\")\\n' | "
    .. sh_quote(bin) .. " -i 2>/dev/null")
  expect(ok).to_equal(true)
  expect(out).to_equal("2\n2\nstill here\n")
end)

---------------------------------------------------------------- serve, used by a second process

local server, pid, header = nil, nil, {}

-- Starts `cloudlua serve --dialect ext` the first time; returns the lines it printed
-- first (four endpoint lines, then the access key). It runs until the SIGTERM case,
-- or teardown.
local function serve()
  if not server then
    server = assert(io.popen("sh -c 'echo $$; exec " .. sh_quote(bin) .. " serve --dialect ext 2>/dev/null'", "r"))
    pid = server:read("l")
    for i = 1, 5 do header[i] = server:read("l") end
  end
  return header
end

teardown(function()
  if server then os.execute("kill -TERM " .. pid) server:read("a") server:close() end
end)

-- The APIs serve prints, by name: { storage = "http://127.0.0.1:N", ... }.
local function endpoints()
  local found = {}
  for i = 1, 4 do
    local api, url = tostring(serve()[i]):match("^(%a+) (http://127%.0%.0%.1:%d+)$")
    if api then found[api] = url end
  end
  return found
end

test("serve prints '<api> <base-url>' for the four APIs, then the access key", function()
  local lines = serve()
  for i = 1, 4 do expect(lines[i]).to_match("^%a+ http://127%.0%.0%.1:%d+$") end
  local found = endpoints()
  for _, api in ipairs{ "storage", "devops", "cluster", "catalog" } do expect(found[api]).to_be_a("string") end
  expect(lines[5]).to_equal("access_key_id CLOUDLUAEMULATORKEY")
end)

-- A second process talks to serve with the documented built-in credentials.
local function client_cmd(options)
  return ("%s %s --endpoint cluster=%s --access-key CLOUDLUAEMULATORKEY --secret-key cloudlua-emulator-secret "
    .. "-e 'print(cloud.cluster.update_snapshot{SnapshotName=\"snap-1\", snapshot={description=\"served\"}}.snapshot.description)'")
    :format(sh_quote(bin), options, endpoints().cluster)
end

test("a second process uses serve with the built-in credentials", function()
  expect((run(client_cmd("")))).to_equal("served\n")
end)

test("serve --dialect ext refuses aws signatures", function()
  expect((run(client_cmd("--dialect aws") .. " 2>&1"))).to_contain("IncompleteSignature")
end)

test("serve exits 0 on SIGTERM", function()
  serve()
  os.execute("kill -TERM " .. pid)
  server:read("a")
  local closed, how, code = server:close()
  server = nil
  expect({ closed, how, code }).to_equal{ true, "exit", 0 }
end)
