// The REPL, after lua.c. Each chunk is first tried as `return <chunk>` so that an
// expression shows its values, then as a statement; a chunk whose syntax error ends
// at <eof> is continued on the next line (unlike lua.c, a finished multi-line chunk
// is tried as an expression too, so a call spread over lines shows its result).
// Values are shown by cloud.pretty, in colour on a terminal unless NO_COLOR is set,
// through the pager when they are taller than the terminal.
// Errors are shown and the loop carries on. Ctrl-C cancels the line being typed or
// the chunk running, an HTTP call included; Ctrl-D or the end of input leaves.
// Prompts and the banner appear only when stdin is a terminal.
#include <lua.hpp>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/base/pager.h"
#include "core/net/redact.h"
#include "lua/binding.h"
#include "lua/session.h"
#include "repl/chunk.h"
#include "repl/cli.h"
#include "repl/complete.h"
#include "repl/interrupt.h"
#include "repl/line_reader.h"

namespace cloud {

namespace {

struct Repl {
  lua_State* L;
  std::unique_ptr<LineReader> reader;
  std::string label;  // the session in the prompt: "emulator", a profile, a host
};

// _PROMPT or _PROMPT2 when set, as lua.c honours them; else "cloudlua[label]> " and,
// for continuation lines, ">> " right-aligned under it.
std::string prompt(const Repl& r, bool first_line) {
  std::string out = "cloudlua[" + r.label + "]> ";
  if (!first_line) out = std::string(out.size() - 3, ' ') + ">> ";
  lua_rawgeti(r.L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);  // raw: no metamethod may raise out here
  lua_pushstring(r.L, first_line ? "_PROMPT" : "_PROMPT2");
  if (lua_rawget(r.L, -2) == LUA_TSTRING || lua_isnumber(r.L, -1)) out = lua_tostring(r.L, -1);
  lua_pop(r.L, 2);
  return out;
}

enum class Got { chunk, interrupted, end };

// Reads lines until they make a chunk that compiles, or that fails for a reason other
// than being unfinished; `status` and the stack as compile_chunk() leaves them. The chunk
// goes into the history as typed.
Got read_chunk(Repl& r, int& status) {
  std::string chunk, line;
  for (bool first = true;; first = false) {
    LineReader::Status got = r.reader->read(prompt(r, first), line);
    if (got == LineReader::Status::interrupted) return Got::interrupted;
    if (got == LineReader::Status::end && first) return Got::end;
    if (got == LineReader::Status::line) chunk += (first ? "" : "\n") + line;
    status = compile_chunk(r.L, chunk);
    if (got == LineReader::Status::end || !chunk_incomplete(r.L, status)) break;
    lua_pop(r.L, 1);
  }
  if (chunk.find_first_not_of(" \t") != std::string::npos) r.reader->remember(chunk);
  return Got::chunk;
}

bool colour_wanted() {
  const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && std::strcmp(term, "dumb") == 0);
}

int terminal_width() {
  struct winsize size {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
  return 80;
}

// Pushes cloud.pretty.results and its options table; false (nothing pushed) when a
// script has taken the module away.
bool push_printer(lua_State* L) {
  int top = lua_gettop(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "cloud.pretty") != LUA_TTABLE || lua_getfield(L, -1, "results") != LUA_TFUNCTION) {
    lua_settop(L, top);
    return false;
  }
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  lua_createtable(L, 0, 2);
  lua_pushboolean(L, colour_wanted());
  lua_setfield(L, -2, "color");
  lua_pushinteger(L, terminal_width());
  lua_setfield(L, -2, "width");
  return true;
}

}  // namespace

bool show_values(lua_State* L, int first) {
  int n = lua_gettop(L) - first + 1;
  if (n <= 0) return true;
  if (!lua_checkstack(L, LUA_MINSTACK)) raise_text(L, "stack overflow (too many results to show)");
  int status = LUA_OK;
  if (!push_printer(L)) {
    lua_getglobal(L, "print");
    lua_insert(L, first);
    status = protected_call(L, n, 0);
  } else {
    lua_rotate(L, first, 2);  // printer and options below the values
    status = protected_call(L, n + 1, 1);
    size_t len = 0;
    const char* text = status == LUA_OK ? lua_tolstring(L, -1, &len) : nullptr;
    if (text) write_paged(redact(std::string(text, len) + "\n"));  // a long result through the pager, on a terminal
  }
  if (status != LUA_OK) return false;  // the message is on top, for report_error
  lua_settop(L, first - 1);
  return true;
}

namespace {

// Runs the compiled chunk on top of the stack with Ctrl-C able to stop it.
void run_chunk(lua_State* L) {
  InterruptGuard guard(L);
  int status = protected_call(L, 0, LUA_MULTRET);
  if (status == LUA_OK && !show_values(L, 1)) status = LUA_ERRRUN;
  report_error(L, status);
}

void print_banner(const Repl& r) {
  std::printf("cloudlua %s (%s), session: %s\n", CLOUDLUA_VERSION, LUA_RELEASE, r.label.c_str());
  std::printf("help() lists the operations; Ctrl-C cancels, Ctrl-D leaves.\n");
}

}  // namespace

void run_repl(lua_State* L) {
  Repl r{L, LineReader::open(history_file_path(), [L](const std::string& before) { return complete_at(L, before); }),
         session_label(session_of(L))};
  if (r.reader->interactive()) print_banner(r);
  for (;;) {
    lua_settop(L, 0);
    int status = LUA_OK;
    Got got = read_chunk(r, status);
    if (got == Got::end) break;
    if (got == Got::interrupted) {
      std::fputc('\n', stdout);
      continue;
    }
    if (status == LUA_OK) run_chunk(L);
    else report_error(L, status);
  }
  lua_settop(L, 0);
  if (r.reader->interactive()) std::fputc('\n', stdout);
}

}  // namespace cloud
