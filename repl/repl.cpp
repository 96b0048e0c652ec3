// The first REPL, after lua.c: each line is tried as `return <line>` so expressions
// print their values; a chunk whose syntax error ends at <eof> keeps reading lines.
// Errors are shown and the loop carries on. Prompts only when stdin is a terminal.
#include <lauxlib.h>
#include <lua.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "repl/cli.h"

namespace cloud {

namespace {

bool read_line(const char* prompt, std::string& line) {
  if (isatty(STDIN_FILENO)) std::fputs(prompt, stdout), std::fflush(stdout);
  line.clear();
  char buf[4096];
  while (std::fgets(buf, sizeof buf, stdin)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      return true;
    }
  }
  return !line.empty();
}

bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len = 0;
  const char* msg = lua_tolstring(L, -1, &len);
  const char* mark = "<eof>";
  size_t mark_len = std::strlen(mark);
  return len >= mark_len && std::strcmp(msg + len - mark_len, mark) == 0;
}

// Compiles a whole statement or expression, reading more lines while it is unfinished.
int load_chunk(lua_State* L, std::string& chunk) {
  std::string as_expression = "return " + chunk + ";";
  if (luaL_loadbuffer(L, as_expression.data(), as_expression.size(), "=stdin") == LUA_OK) return LUA_OK;
  lua_pop(L, 1);
  for (;;) {
    int status = luaL_loadbuffer(L, chunk.data(), chunk.size(), "=stdin");
    if (!incomplete(L, status)) return status;
    lua_pop(L, 1);
    std::string more;
    if (!read_line(">> ", more)) return status;
    chunk += "\n" + more;
  }
}

void print_results(lua_State* L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK) report_error(L, LUA_ERRRUN);
}

}  // namespace

void run_repl(lua_State* L) {
  std::string line;
  while (read_line("> ", line)) {
    lua_settop(L, 0);
    int status = load_chunk(L, line);
    if (status == LUA_OK) status = protected_call(L, 0, LUA_MULTRET);
    if (status == LUA_OK) print_results(L);
    else report_error(L, status);
  }
  lua_settop(L, 0);
  if (isatty(STDIN_FILENO)) std::fputs("\n", stdout);
}

}  // namespace cloud
