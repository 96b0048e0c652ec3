#include "repl/chunk.h"

#include <lua.hpp>

#include <cstring>

namespace cloud {

bool chunk_incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len = 0;
  const char* msg = lua_tolstring(L, -1, &len);
  const char* mark = "<eof>";
  size_t mark_len = std::strlen(mark);
  return len >= mark_len && std::strcmp(msg + len - mark_len, mark) == 0;
}

int compile_chunk(lua_State* L, const std::string& chunk, int first_line) {
  // Blank lines in front move the chunk to its line of stdin.
  std::string lead(static_cast<size_t>(first_line > 1 ? first_line - 1 : 0), '\n');
  std::string expression = "return " + lead + chunk + ";";
  if (luaL_loadbuffer(L, expression.data(), expression.size(), "=stdin") == LUA_OK) return LUA_OK;
  lua_pop(L, 1);
  std::string statement = lead + chunk;
  return luaL_loadbuffer(L, statement.data(), statement.size(), "=stdin");
}

}  // namespace cloud
