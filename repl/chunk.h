// Lua typed a statement at a time, as lua.c reads it: each chunk is tried as
// `return <chunk>` first, then as a statement, and a syntax error at <eof> means
// more lines are to come. Shared by the REPL and scripted sessions.
#pragma once

#include <string>

struct lua_State;

namespace cloud {

// True when `status` is a syntax error at the end of the text (message on the stack).
bool chunk_incomplete(lua_State* L, int status);

// Compiles `chunk` as an expression, else as a statement, named "=stdin"; leaves the
// function or the statement's error message on the stack. A chunk starting on line
// `first_line` of stdin keeps that line number in messages ("stdin:12: ...").
int compile_chunk(lua_State* L, const std::string& chunk, int first_line = 1);

}  // namespace cloud
