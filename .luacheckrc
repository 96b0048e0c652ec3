-- luacheck settings of the repository's own Lua (lua/, scripts/, tests/; ctest's
-- `luacheck` entry): those of users' scripts (packaging/luacheckrc: Lua 5.4 and
-- cloudlua's globals), lines of 140 columns at most, shadowing
-- allowed, and the harness itself allowed to install its globals.
local users = assert(loadfile("packaging/luacheckrc"))
setfenv(users, getfenv(1))()
max_line_length = 140
ignore = { "421", "431", "432" }  -- shadowing: `ok, err` and `_` are reused by intent
exclude_files = { "build/**", "tests/interop/node_modules/**" }
files["lua/testing.lua"] = { globals = { "test", "skip", "expect", "expect_error", "setup", "teardown",
                                         "before_each", "after_each", "print", "it", "spec", "describe",
                                         "context", "insulate", "expose", "pending", "finally", "lazy_setup",
                                         "lazy_teardown", "strict_setup", "strict_teardown" } }
