// The C side of tasks (the Lua side, cloud.spawn, join and cloud.map, is lua/tasks.lua).
// A call made inside a task starts its transfer (or timer) on its client's loop,
// leaves a `cloud.parked` userdata on its stack and yields that userdata to the
// scheduler; the scheduler turns the loop (cloud._loop.run_once) and resumes the task
// once the userdata is ready; the continuation pushes the results. Outside a task the
// same code runs the loop itself until the userdata is ready: one path either way.
// No C++ object lives across the yield but the userdata, whose __gc cancels what it
// waits on: a task nobody references any more releases its transfer with it, once.
#include "lua/tasks.h"

#include <lauxlib.h>
#include <lua.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/client.h"
#include "lua/binding.h"

namespace cloud {

namespace {

const char* const kParkedMeta = "cloud.parked";
const char* const kTasksKey = "cloud.tasks";  // registry: a weak set of the tasks' threads
constexpr double kTurnSeconds = 0.1;

// One wait on the loop: who runs it, what cancels it, and once ended what it delivers.
struct Parked {
  std::shared_ptr<Client> client;  // keeps the loop alive while something waits on it
  std::function<void()> cancel;    // empty once ended or cancelled
  Deliver deliver;                 // set when ended
};

// The waits not ended yet, of every state: what the scheduler's loop turns and Ctrl-C cancels.
std::set<Parked*>& active() {
  static std::set<Parked*> parked;
  return parked;
}

// Cancels what `p` waits on, once; resumed after that, its task raises `e`.
void cancel_parked(Parked& p, const Error& e) {
  if (!p.cancel) return;
  std::function<void()> cancel = std::move(p.cancel);
  p.cancel = nullptr;
  active().erase(&p);
  cancel();
  p.deliver = [e](lua_State* L) { return push_error(L, e), -1; };
}

// __gc: a wait still under way is cancelled (its task was abandoned).
int parked_gc(lua_State* L) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, 1, kParkedMeta));
  cancel_parked(*p, make_error(ErrorKind::transport, "Cancelled", "the task was abandoned"));
  p->~Parked();
  return 0;
}

// The continuation of a parked call: pushes what was delivered, or raises it.
int resume_parked(lua_State* L, int, lua_KContext at) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, static_cast<int>(at), kParkedMeta));
  if (!p->deliver) return luaL_error(L, "a task was resumed before its call ended");
  int n = 0;
  {
    Deliver deliver = std::move(p->deliver);  // gone before a raise skips its destructor
    p->deliver = nullptr;
    n = deliver(L);
  }
  return n < 0 ? lua_error(L) : n;
}

// Whether the running coroutine is a task that may yield here.
bool in_task(lua_State* L) {
  if (!lua_isyieldable(L)) return false;  // a metamethod or a C callback: block instead
  lua_getfield(L, LUA_REGISTRYINDEX, kTasksKey);
  lua_pushthread(L);
  bool task = lua_rawget(L, -2) != LUA_TNIL;
  lua_pop(L, 2);
  return task;
}

// cloud._loop.mark(co): makes the coroutine a task: its calls park.
int l_mark(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTHREAD);
  lua_getfield(L, LUA_REGISTRYINDEX, kTasksKey);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  return 0;
}

// cloud._loop.is_parked(v): whether v is what a parked call yields.
int l_is_parked(lua_State* L) {
  lua_pushboolean(L, luaL_testudata(L, 1, kParkedMeta) != nullptr);
  return 1;
}

// cloud._loop.ready(parked): whether its call has ended (the task may be resumed).
int l_ready(lua_State* L) {
  lua_pushboolean(L, static_cast<Parked*>(luaL_checkudata(L, 1, kParkedMeta))->deliver != nullptr);
  return 1;
}

// cloud._loop.cancel(parked): cancels its call or timer (nothing if it has ended).
int l_cancel(lua_State* L) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, 1, kParkedMeta));
  cancel_parked(*p, make_error(ErrorKind::transport, "Cancelled", "the task was cancelled"));
  return 0;
}

// cloud._loop.run_once(timeout): one turn of the loop of every client a task waits
// on, sharing `timeout` seconds between them. Returns how many waits are under way.
int l_run_once(lua_State* L) {
  double timeout = luaL_optnumber(L, 1, kTurnSeconds);
  std::vector<std::shared_ptr<Client>> clients;  // held: a callback may end the last wait on one
  for (Parked* p : active())
    if (std::find(clients.begin(), clients.end(), p->client) == clients.end()) clients.push_back(p->client);
  for (const auto& c : clients) c->transport().run_once(timeout / static_cast<double>(clients.size()));
  lua_pushinteger(L, static_cast<lua_Integer>(active().size()));
  return 1;
}

}  // namespace

int park(lua_State* L, std::shared_ptr<Client> client, const Starter& start) {
  auto* p = new (lua_newuserdatauv(L, sizeof(Parked), 0)) Parked{std::move(client), nullptr, nullptr};
  luaL_setmetatable(L, kParkedMeta);
  active().insert(p);
  p->cancel = start([p](Deliver delivered) {
    p->cancel = nullptr;
    p->deliver = std::move(delivered);
    active().erase(p);
  });
  return lua_gettop(L);
}

int wait_parked(lua_State* L, int at) {
  if (in_task(L)) {
    lua_pushvalue(L, at);
    return lua_yieldk(L, 1, at, resume_parked);
  }
  auto* p = static_cast<Parked*>(luaL_checkudata(L, at, kParkedMeta));
  while (!p->deliver) p->client->transport().run_once(kTurnSeconds);
  return resume_parked(L, LUA_OK, at);
}

void cancel_all_parked() {
  std::set<Parked*> parked = active();
  for (Parked* p : parked) cancel_parked(*p, make_error(ErrorKind::transport, "Interrupted", "interrupted"));
}

void open_tasks(lua_State* L, int module) {
  luaL_newmetatable(L, kParkedMeta);
  lua_pushcfunction(L, parked_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_newtable(L);  // the tasks' threads, weak: a task's thread may be collected
  lua_createtable(L, 0, 1);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kTasksKey);
  const luaL_Reg fns[] = {{"cancel", protect<l_cancel>}, {"is_parked", protect<l_is_parked>}, {"mark", protect<l_mark>},
                          {"ready", protect<l_ready>},   {"run_once", protect<l_run_once>},   {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setfield(L, module, "_loop");
}

}  // namespace cloud
