-- The REPL with stdin not a terminal (`cloudlua -i < file`): no banner and no
-- prompts, expression values shown as on a terminal but never in colour, multi-line
-- chunks continued, errors on stderr without ending the session, no history written.
-- CLOUDLUA_TEST_BIN names the binary. Fails by raising an error.

local bin = assert(os.getenv("CLOUDLUA_TEST_BIN"), "CLOUDLUA_TEST_BIN not set")

local function eq(actual, expected, what)
  if actual ~= expected then
    error(("%s:\nexpected:\n%s\ngot:\n%s"):format(what, tostring(expected), tostring(actual)), 2)
  end
end

local function write_file(name, text)
  local f = assert(io.open(name, "w"))
  f:write(text)
  f:close()
end

local function read_file(name)
  local f = io.open(name, "r")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Runs `cloudlua -i` on `input`; returns stdout, stderr and whether it exited 0.
local function session(input, env)
  local input_file, err_file = os.tmpname(), os.tmpname()
  write_file(input_file, input)
  local p = assert(io.popen(("%s %s -i < %s 2> %s"):format(env or "", bin, input_file, err_file), "r"))
  local out = p:read("a")
  local ok = p:close() == true
  local err = read_file(err_file)
  os.remove(input_file)
  os.remove(err_file)
  return out, err, ok
end

local history = os.tmpname()
os.remove(history)
local out, err, ok = session([[
1 + 1
"text", 2
{ b = 2, a = { 1, 2 }, [10] = cloud.null }
cloud.cluster.update_snapshot{
  SnapshotName = "snap-1",
  snapshot = { description = "piped" },
}.snapshot.description
x = 5
x
error("oops")
_PROMPT = "custom> "
local t = {} t.self = t return t == t.self
print("end")
]], "NO_COLOR= CLOUDLUA_HISTORY=" .. history)
eq(ok, true, "exit status at the end of input")
eq(out, table.concat({
  "2",
  "text\t2",
  "{ [10] = null, a = { 1, 2 }, b = 2 }",
  "piped",
  "5",
  "true",
  "end",
}, "\n") .. "\n", "stdout: values only, no banner, no prompts, no colour")
assert(err:find("^cloudlua: stdin:1: oops\nstack traceback:\n"), "the error on stderr: " .. err)
eq(read_file(history), nil, "no history written when stdin is not a terminal")

-- an unfinished chunk at the end of input is reported, as a syntax error
out, err, ok = session("x = {\n  1,\n")
eq(ok, true, "exit status")
eq(out, "", "nothing shown")
assert(err:find("^cloudlua: stdin:2: .*near <eof>\n"), "unfinished chunk: " .. err)

-- help() prints from the model in a piped session as well
out = session('help"UpdateSnapshot"\n')
assert(out:find("^cloud%.cluster%.update_snapshot{%.%.%.}  %(UpdateSnapshot, cluster API%)\n"), "help: " .. out)
print("repl_pipe_test: ok")
