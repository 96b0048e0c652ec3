// A handful of primitives that Lua's standard library lacks and that the pure-Lua
// helpers (cloud.wait_until, the test harness) and user scripts compose: a monotonic
// clock, a sleep (a timer on the loop), and whether a file handle is a terminal (progress lines belong on
// terminals only). Each follows the binding's order: check, act, push, return.
#include <lauxlib.h>
#include <lua.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "lua/binding.h"
#include "lua/session.h"
#include "lua/tasks.h"

namespace cloud {

namespace {

// cloud.clock(): seconds on a monotonic clock (only differences mean anything).
int l_clock(lua_State* L) {
  auto since = std::chrono::steady_clock::now().time_since_epoch();
  lua_pushnumber(L, std::chrono::duration<double>(since).count());
  return 1;
}

// Starts a timer of `seconds` on the session's loop (parked: see tasks.h); the index
// of the wait. It ends with lua.c's "interrupted!" when Ctrl-C brought it due.
int start_sleep(lua_State* L, double seconds) {
  std::shared_ptr<Client> client = session_of(L).client;
  Transport* loop = &client->transport();
  return park(L, client, [&](std::function<void(Deliver)> ended) {
    Transport::Id id = loop->add_timer(seconds, [ended] {
      ended([](lua_State* S) { return interrupt_flag().load() ? (lua_pushliteral(S, "interrupted!"), -1) : 0; });
    });
    return [loop, id] { loop->cancel(id); };
  });
}

// cloud.sleep(seconds): waits on the loop, so that inside a task other tasks run
// meanwhile; Ctrl-C (the REPL's handler raised interrupt_flag()) ends it at once.
int l_sleep(lua_State* L) {
  int is_number = 0;
  lua_Number seconds = lua_tonumberx(L, 1, &is_number);
  if (!is_number) type_error(L, 1, "number");
  if (!(seconds >= 0 && std::isfinite(seconds))) arg_error(L, 1, "seconds must be a non-negative number");
  int at = start_sleep(L, seconds);
  return wait_parked(L, at);
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
