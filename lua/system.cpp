// A handful of primitives that Lua's standard library lacks and that the pure-Lua
// helpers (cloud.wait_until, the test harness) and user scripts compose: a monotonic
// clock, a sleep, and whether a file handle is a terminal (progress lines belong on
// terminals only). Each follows the binding's order: check, act, push, return.
#include <lauxlib.h>
#include <lua.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "lua/binding.h"
#include "lua/session.h"

namespace cloud {

namespace {

// cloud.clock(): seconds on a monotonic clock (only differences mean anything).
int l_clock(lua_State* L) {
  auto since = std::chrono::steady_clock::now().time_since_epoch();
  lua_pushnumber(L, std::chrono::duration<double>(since).count());
  return 1;
}

// cloud.sleep(seconds): blocks this thread; resumes after a signal with the rest,
// except after Ctrl-C (the REPL's handler raised interrupt_flag()), which ends it
// with lua.c's "interrupted!" rather than after the rest of the time.
int l_sleep(lua_State* L) {
  int is_number = 0;
  lua_Number seconds = lua_tonumberx(L, 1, &is_number);
  if (!is_number) type_error(L, 1, "number");
  if (!(seconds >= 0 && std::isfinite(seconds))) arg_error(L, 1, "seconds must be a non-negative number");
  timespec left{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR)
    if (interrupt_flag().load()) luaL_error(L, "interrupted!");
  return 0;
}

// cloud.isatty(file): true when the Lua file handle (io.stderr, io.stdout...) is a terminal.
int l_isatty(lua_State* L) {
  auto* stream = static_cast<luaL_Stream*>(luaL_testudata(L, 1, LUA_FILEHANDLE));
  if (!stream) type_error(L, 1, LUA_FILEHANDLE);
  lua_pushboolean(L, stream->f != nullptr && isatty(fileno(stream->f)));
  return 1;
}

}  // namespace

void open_system(lua_State* L, int module) {
  const luaL_Reg fns[] = {{"clock", l_clock}, {"isatty", l_isatty}, {"sleep", l_sleep}, {nullptr, nullptr}};
  lua_pushvalue(L, module);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}

}  // namespace cloud
