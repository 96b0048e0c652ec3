// Running Lua the way `lua` does: one state, the `cloud` module installed, the `arg`
// table, -l and -e in order, then the script (or stdin), then maybe the REPL. Every
// chunk runs under a message handler that adds a traceback; a failure prints
// "cloudlua: <message>" on stderr and makes the exit status 1.
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "lua/session.h"
#include "repl/cli.h"

namespace cloud {

namespace {

// Error objects are tables with __tostring; anything else without a string form is
// named by its type, as lua.c does.
int message_handler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
    else msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

// arg[0] is the script, arg[1..] its arguments, negative indexes what came before.
void create_arg_table(lua_State* L, const RunOptions& o) {
  int script_index = o.script.empty() ? 0 : static_cast<int>(o.argv.size() - o.script_args.size()) - 1;
  lua_createtable(L, static_cast<int>(o.script_args.size()), script_index + 1);
  for (int i = 0; i < static_cast<int>(o.argv.size()); ++i) {
    lua_pushstring(L, o.argv[static_cast<size_t>(i)].c_str());
    lua_rawseti(L, -2, i - script_index);
  }
  lua_setglobal(L, "arg");
}

int run_chunk(lua_State* L, int status) {
  if (status == LUA_OK) status = protected_call(L, 0, 0);
  report_error(L, status);
  return status;
}

int require_module(lua_State* L, const std::string& name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name.c_str());
  int status = protected_call(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, name.c_str());
  report_error(L, status);
  return status;
}

int run_script(lua_State* L, const RunOptions& o) {
  const char* file = o.script == "-" ? nullptr : o.script.c_str();
  int status = luaL_loadfile(L, file);
  if (status != LUA_OK) return run_chunk(L, status);
  for (const std::string& a : o.script_args) lua_pushstring(L, a.c_str());
  status = protected_call(L, static_cast<int>(o.script_args.size()), 0);
  report_error(L, status);
  return status;
}

void print_version() { std::printf("cloudlua %s (%s)\n", CLOUDLUA_VERSION, LUA_RELEASE); }

int run_all(lua_State* L, const RunOptions& o) {
  create_arg_table(L, o);
  for (const std::string& m : o.modules)
    if (require_module(L, m) != LUA_OK) return 1;
  for (const std::string& code : o.exec)
    if (run_chunk(L, luaL_loadbuffer(L, code.data(), code.size(), "=(command line)")) != LUA_OK) return 1;
  if (!o.script.empty() && run_script(L, o) != LUA_OK) return 1;
  bool nothing_given = o.script.empty() && o.exec.empty() && !o.version;
  if (o.interactive || (nothing_given && isatty(STDIN_FILENO))) {
    run_repl(L);  // it shows the banner when stdin is a terminal
  } else if (nothing_given) {
    RunOptions from_stdin = o;
    from_stdin.script = "-";
    if (run_script(L, from_stdin) != LUA_OK) return 1;
  }
  return 0;
}

}  // namespace

int protected_call(lua_State* L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  return status;
}

void report_error(lua_State* L, int status) {
  if (status == LUA_OK) return;
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "cloudlua: %s\n", msg ? msg : "(error object is not a string)");
  std::fflush(stderr);
  lua_pop(L, 1);
}

int run_lua(const RunOptions& o) {
  if (o.version) print_version();
  if (o.version && o.script.empty() && o.exec.empty() && !o.interactive) return 0;
  auto session = open_session(o.config);
  if (!session.ok()) {
    std::fprintf(stderr, "cloudlua: %s\n", session.error().describe().c_str());
    return 1;
  }
  std::unique_ptr<lua_State, void (*)(lua_State*)> L(luaL_newstate(), lua_close);
  luaL_openlibs(L.get());
  open_cloud(L.get(), session.value());
  return run_all(L.get(), o);
}

}  // namespace cloud
