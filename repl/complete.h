// Tab completion in the REPL: what a word before the cursor may become, read off the
// Lua state without running any code (raw reads only, so no metamethod runs).
#pragma once

#include <string>

#include "repl/line_reader.h"

struct lua_State;

namespace cloud {

// Globals and the fields of a table reached by a dotted path from them
// ("cloud.clu" -> "cloud.cluster", "string.fo" -> "string.format"), and inside the
// braces of an operation's call ("cloud.cluster.update_snapshot{Sn") the names of its
// top-level arguments, from the model. Candidates sorted.
Completion complete_at(lua_State* L, const std::string& before_cursor);

}  // namespace cloud
