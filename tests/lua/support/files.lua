-- Helpers for the tests of bodies and transfers to and from files: read and write a
-- whole file, and a temporary directory whose names a test can list. Loaded with
-- dofile("tests/lua/support/files.lua") (run from the repository's root, as ctest
-- does); not a test file itself.
local M = {}

-- The bytes of the file at `path`, or nil when it cannot be opened.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- Writes `s` as the whole file at `path`.
function M.write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A new empty temporary directory; its path.
function M.make_dir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir '" .. dir .. "'"))
  return dir
end

-- A new temporary directory holding `tree` (relative path -> text), with the folders
-- its paths name; its path.
function M.make_tree(tree)
  local dir = M.make_dir()
  for path, text in pairs(tree) do
    local folder = path:match("^(.*)/[^/]*$")
    if folder then assert(os.execute("mkdir -p '" .. dir .. "/" .. folder .. "'")) end
    M.write(dir .. "/" .. path, text)
  end
  return dir
end

-- Removes the directory `dir` and everything in it.
function M.remove_dir(dir) assert(os.execute("rm -rf '" .. dir .. "'")) end

-- The names in the directory `dir`, sorted.
function M.entries(dir)
  local out = {}
  for name in io.popen("ls -A '" .. dir .. "'"):lines() do out[#out + 1] = name end
  table.sort(out)
  return out
end

return M
