// Scripted sessions: stdin that is not a terminal, with no script named, is a REPL
// session typed by a program. It is read statement by statement as the REPL reads
// (each chunk tried as `return <chunk>` first, continued while its syntax error ends
// at <eof>), without prompts or banners; expression values are printed (as JSON with
// --output json). The first error stops the session with status 1; with
// --keep-going the session carries on and still ends with 1. As in the REPL, each
// statement is its own chunk, so a `local` lasts one statement (`cloudlua -` runs
// stdin as one script instead).
#include <lauxlib.h>
#include <lua.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "repl/cli.h"

namespace cloud {

namespace {

bool read_line(std::string& line) {
  line.clear();
  char buf[4096];
  while (std::fgets(buf, sizeof buf, stdin)) {
    line += buf;
    if (line.back() == '\n') {
      line.pop_back();
      return true;
    }
  }
  return !line.empty();
}

// True when the status is a syntax error at the end of the text: more is to come.
bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len = 0;
  const char* msg = lua_tolstring(L, -1, &len);
  const char* mark = "<eof>";
  size_t mark_len = std::strlen(mark);
  return len >= mark_len && std::strcmp(msg + len - mark_len, mark) == 0;
}

// Compiles `chunk`, which starts on line `first_line` of stdin, as an expression,
// else as a statement. Blank lines in front keep Lua's line numbers those of stdin,
// so messages read "stdin:12: ...".
int compile(lua_State* L, const std::string& chunk, int first_line) {
  std::string lead(static_cast<size_t>(first_line - 1), '\n');
  std::string expression = "return " + lead + chunk + ";";
  if (luaL_loadbuffer(L, expression.data(), expression.size(), "=stdin") == LUA_OK) return LUA_OK;
  lua_pop(L, 1);
  std::string statement = lead + chunk;
  return luaL_loadbuffer(L, statement.data(), statement.size(), "=stdin");
}

// Runs the compiled chunk on top of the stack and prints what it returns.
bool run_compiled(lua_State* L, Output output) {
  int base = lua_gettop(L);
  int status = protected_call(L, 0, LUA_MULTRET);
  if (status == LUA_OK && !print_values(L, base, output)) status = LUA_ERRRUN;
  report_error(L, status);
  return status == LUA_OK;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

int run_session_script(lua_State* L, const RunOptions& o) {
  bool failed = false;
  std::string chunk, line;
  int line_no = 0, first_line = 0;
  while (read_line(line)) {
    ++line_no;
    if (chunk.empty() && (blank(line) || (line_no == 1 && line.rfind("#!", 0) == 0))) continue;
    if (chunk.empty()) first_line = line_no;
    chunk += (chunk.empty() ? "" : "\n") + line;
    lua_settop(L, 0);
    int status = compile(L, chunk, first_line);
    if (incomplete(L, status)) continue;
    chunk.clear();
    bool ok = status == LUA_OK ? run_compiled(L, o.output) : (report_error(L, status), false);
    failed = failed || !ok;
    if (!ok && !o.keep_going) return 1;
  }
  if (!chunk.empty()) {  // the input ended inside a statement
    report_error(L, compile(L, chunk, first_line));
    failed = true;
  }
  lua_settop(L, 0);
  return failed ? 1 : 0;
}

}  // namespace cloud
