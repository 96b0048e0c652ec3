// Tab completion in the REPL: what a word before the cursor may become, read off the
// Lua state without running any code (raw reads only, so no metamethod runs).
#pragma once

#include <string>

#include "repl/line_reader.h"

struct lua_State;

namespace cloud {

// Globals and the fields of a table reached by a dotted path from them
// ("cloud.clu" -> "cloud.cluster", "string.fo" -> "string.format"). Where a field's
// name is typed inside an operation's argument table, at any depth
// ("cloud.cluster.update_snapshot{ snapshot = { ta" -> tags), the names the model
// gives that place; inside a library function's option table
// ("cloud.storage.sync{ dr" -> dry_run), the fields its usage line in
// lua/reference.lua declares. Names only, no " = " added. Candidates sorted.
Completion complete_at(lua_State* L, const std::string& before_cursor);

}  // namespace cloud
