-- The lua-compatible command line: -e and -l in the order given, -l g=MOD, -E,
-- CLOUDLUA_INIT (code and @file), `-` with arguments, `--`, -i after a script,
-- failures with a traceback and status 1, and --output json for -e chunks and
-- scripts (cloud.null as null).
local t = dofile(arg[0]:match("^(.*/)") .. "support/cli.lua")
local q = t.quote

-- -e and -l run in command-line order, as lua runs them
local module_dir = os.tmpname()
os.remove(module_dir)
assert(os.execute("mkdir " .. q(module_dir)))
local f = assert(io.open(module_dir .. "/greet.lua", "w"))
f:write("print('loading greet', order)\nreturn { hello = function() return 'hello' end }\n")
f:close()
local lua_path = { LUA_PATH = module_dir .. "/?.lua" }
local out, err, code = t.cloudlua("-e 'order = 1' -l greet -e 'print(greet.hello())' -l g=greet -e 'print(g == greet)'",
  { env = lua_path })
t.eq(code, 0, "steps exit status (" .. err .. ")")
t.eq(out, "loading greet\t1\nhello\ntrue\n", "-e and -l in order, -l g=MOD")

-- -E: LUA_PATH and CLOUDLUA_INIT ignored
out, err, code = t.cloudlua("-E -l greet", { env = lua_path })
t.eq(code, 1, "-E ignores LUA_PATH")
t.has(err, "module 'greet' not found", "-E error")
os.remove(module_dir .. "/greet.lua")
os.remove(module_dir)

-- CLOUDLUA_INIT: code, or @file; it runs before -e; -E skips it
out = t.cloudlua("-e 'print(greeting)'", { env = { CLOUDLUA_INIT = "greeting = 'from init'" } })
t.eq(out, "from init\n", "CLOUDLUA_INIT code")
local init_file = t.temp_file("greeting = 'from a file'; print(#arg)\n")
out = t.cloudlua("-e 'print(greeting)' x", { env = { CLOUDLUA_INIT = "@" .. init_file } })
t.eq(out, "0\nfrom a file\n", "CLOUDLUA_INIT @file")
out = t.cloudlua("-E -e 'print(greeting)'", { env = { CLOUDLUA_INIT = "greeting = 1" } })
t.eq(out, "nil\n", "-E skips CLOUDLUA_INIT")
out, err, code = t.cloudlua("-e 'print(1)'", { env = { CLOUDLUA_INIT = "error('bad init')" } })
t.eq(code, 1, "a failing CLOUDLUA_INIT stops everything")
t.eq(out, "", "nothing ran after the failing init")
t.has(err, "cloudlua: CLOUDLUA_INIT:1: bad init", "init error names CLOUDLUA_INIT")

-- `-` runs stdin as one script, with arguments; `--` ends the options
out = t.cloudlua("- a b", { input = "local n = select('#', ...)\nprint(arg[0], n, ...)\n" })
t.eq(out, "-\t2\ta\tb\n", "- reads the script from stdin")
local script = t.temp_file("print(arg[0] ~= nil, ...)\n")
out = t.cloudlua("-e 'x = 1' -- " .. q(script) .. " -e y")
t.eq(out, "true\t-e\ty\n", "-- then the script and its own options")

-- -i: the REPL after the script, reading stdin
out, err, code = t.cloudlua("-i " .. q(t.temp_file("answer = 42\n")), { input = "print(answer)\n" })
t.eq(code, 0, "-i exit status")
t.has(out, "42\n", "-i runs the REPL after the script")

-- a failing -e chunk: message and traceback on stderr, status 1, later steps not run
out, err, code = t.cloudlua("-e 'local function f() error(\"deep\") end f()' -e 'print(\"not reached\")'")
t.eq(code, 1, "failing -e exit status")
t.eq(out, "", "later -e not run")
t.has(err, "cloudlua: (command line):1: deep\nstack traceback:\n", "error then traceback")
t.has(err, "in local 'f'", "traceback names the function")
out, err, code = t.cloudlua(q(t.temp_file("x = = 1")))
t.eq(code, 1, "syntax error exit status")
t.has(err, "unexpected symbol near '='", "syntax error message")

-- --output json: what -e chunks and scripts return, one JSON document per line
out, err, code = t.cloudlua([[--output json -e 'return {name = "snap-1", tags = {}, size = 3, ok = true, gone = cloud.null}, nil, 1.5' ]]
  .. [[-e 'x = 1' -e 'return "two"']])
t.eq(code, 0, "--output json exit status (" .. err .. ")")
local first, second, third, fourth = out:match("^(.-)\n(.-)\n(.-)\n(.-)\n$")
assert(first, "four JSON lines: " .. out)
for _, part in ipairs { '"name":"snap-1"', '"tags":{}', '"size":3', '"ok":true', '"gone":null' } do
  t.has(first, part, "first document")
end
t.eq(second, "null", "nil is null")
t.eq(third, "1.5", "a number")
t.eq(fourth, '"two"', "the second chunk's value")

out = t.cloudlua("--output json " .. q(t.temp_file("return cloud.cluster.update_snapshot{SnapshotName = ..., snapshot = { description = 'json' }}\n")) .. " snap-2")
local result, meta = out:match("^(.-)\n(.-)\n$")
assert(result and result:find('"description":"json"', 1, true) and result:find('"name":"snap-2"', 1, true), "script result as JSON: " .. out)
assert(meta:find('"status":200', 1, true), "meta as JSON: " .. tostring(meta))

out, err, code = t.cloudlua("--output json -e 'return {f = print}'")
t.eq(code, 1, "a value without a JSON form fails")
t.has(err, "cloudlua: --output json: returned value 1 at f has no JSON form (cannot send a function)", "names the field")
out = t.cloudlua("-e 'return 1'")
t.eq(out, "", "without --output json, returned values are not printed (as lua)")
out, err, code = t.cloudlua("--output yaml -e 1")
t.eq(code ~= 0, true, "unknown output format refused")
t.has(err, "yaml", "the refused value is named")

t.cleanup()
print("cli_options_test: ok")
