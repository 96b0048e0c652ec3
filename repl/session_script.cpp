// Scripted sessions: stdin that is not a terminal, with no script named, is a REPL
// session typed by a program. It is read statement by statement as the REPL reads
// (each chunk tried as `return <chunk>` first, continued while its syntax error ends
// at <eof>), without prompts or banners; expression values are printed (as JSON with
// --output json). The first error stops the session with status 1; with
// --keep-going the session carries on and still ends with 1. As in the REPL, each
// statement is its own chunk, so a `local` lasts one statement (`cloudlua -` runs
// stdin as one script instead).
#include <lua.hpp>

#include <memory>
#include <string>

#include "repl/chunk.h"
#include "repl/cli.h"
#include "repl/line_reader.h"

namespace cloud {

namespace {

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
  std::unique_ptr<LineReader> reader = LineReader::open("");  // plain reads: stdin is no terminal
  std::string chunk, line;
  int line_no = 0, first_line = 0;
  while (reader->read("", line) == LineReader::Status::line) {
    ++line_no;
    if (chunk.empty() && (blank(line) || (line_no == 1 && line.rfind("#!", 0) == 0))) continue;
    if (chunk.empty()) first_line = line_no;
    chunk += (chunk.empty() ? "" : "\n") + line;
    lua_settop(L, 0);
    int status = compile_chunk(L, chunk, first_line);
    if (chunk_incomplete(L, status)) continue;
    chunk.clear();
    bool ok = status == LUA_OK ? run_compiled(L, o.output) : (report_error(L, status), false);
    failed = failed || !ok;
    if (!ok && !o.keep_going) return 1;
  }
  if (!chunk.empty()) {  // the input ended inside a statement
    report_error(L, compile_chunk(L, chunk, first_line));
    failed = true;
  }
  lua_settop(L, 0);
  return failed ? 1 : 0;
}

}  // namespace cloud
