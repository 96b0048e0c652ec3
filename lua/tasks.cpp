// The C side of tasks (the Lua side, cloud.spawn, join and cloud.map, is lua/tasks.lua),
// after OpenResty's cosockets. A call made inside a task starts its transfer (or timer)
// on the loop, leaves a `cloud.parked` userdata on its stack and yields its id to the
// scheduler (through the edge, lua/binding.h: a yield is a longjmp and no C++ frame
// may be alive under it). When the loop hands the call's result to the wait (Parked::end, the one
// continuation), the wait's id joins the list of ended waits; the scheduler's turn
// (cloud._loop.run_once, then take_ended) takes that list and resumes exactly those tasks: nothing asks
// every task whether it is ready. Outside a task the same code runs the loop itself
// until the wait has ended: one path either way. No C++ object lives across the yield
// but the userdata, whose __gc cancels what it waits on: a task nobody references any
// more releases its transfer with it, once. Whether a coroutine is a task is one table,
// the registry's `cloud.tasks` (thread -> task, weak), which tasks.lua fills.
#include "lua/tasks.h"

#include <lua.hpp>

#include <unordered_set>
#include <vector>

#include "lua/binding.h"
#include "lua/session.h"

namespace cloud {

namespace {

const char* const kParkedMeta = "cloud.parked";
const char* const kTasksKey = "cloud.tasks";  // registry: thread -> task, weak keys
char kParkedMark;                             // a task yields (&kParkedMark, id, the userdata) to park

// The waits not ended yet: what Ctrl-C cancels and run_once counts.
std::unordered_set<Parked*>& active() {
  static std::unordered_set<Parked*> parked;
  return parked;
}

// The ids of tasks' waits that ended since the scheduler last asked, in the order they did.
std::vector<std::uint64_t>& ended_waits() {
  static std::vector<std::uint64_t> ended;
  return ended;
}

// Cancels what `p` waits on, once; resumed after that, its task raises `e`.
void cancel_parked(Parked& p, const Error& e) {
  if (!p.cancel) return;
  std::function<void()> cancel = std::move(p.cancel);
  p.cancel = nullptr;
  cancel();
  p.error = e;
  p.end(std::monostate{});
}

// __gc: a wait still under way is cancelled (its task was abandoned).
int parked_gc(lua_State* L) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, 1, kParkedMeta));
  cancel_parked(*p, make_error(ErrorKind::transport, "Cancelled", "the task was abandoned"));
  active().erase(p);
  p->~Parked();
  return 0;
}

// What a parked call ended with: pushes it and returns the count, or raises it (behind
// the edge).
int finish_parked(lua_State* L, int, lua_KContext at) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, static_cast<int>(at), kParkedMeta));
  if (!p->ended) luaL_error(L, "a task was resumed before its call ended");
  int n = p->error ? (push_error(L, *p->error), -1) : p->push(L, *p);
  p->result = std::monostate{};  // the answer's memory goes now, not with the userdata
  if (n < 0) raise_top(L);
  return n;
}

// The continuation of a parked call, resumed by the scheduler.
int resume_parked(lua_State* L, int status, lua_KContext at) {
  return continue_protected(L, finish_parked, status, at);
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

// cloud._loop.cancel(parked): cancels its call or timer (nothing if it has ended).
int l_cancel(lua_State* L) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, 1, kParkedMeta));
  cancel_parked(*p, make_error(ErrorKind::transport, "Cancelled", "the task was cancelled"));
  return 0;
}

// cloud._loop.run_once([timeout]): one turn of the loop every client shares (no wait
// when a task's wait has ended already; without a timeout, the loop's poll interval).
// Returns how many waits are under way.
int l_run_once(lua_State* L) {
  double timeout = luaL_optnumber(L, 1, Loop::kPollSeconds);
  Loop::current().run_once(ended_waits().empty() ? timeout : 0);
  lua_pushinteger(L, static_cast<lua_Integer>(active().size()));
  return 1;
}

// cloud._loop.take_ended(): the ids of the tasks' waits that have ended since the
// last time, in the order they did (the scheduler's: each resumes its own task).
int l_take_ended(lua_State* L) {
  std::vector<std::uint64_t> ended;
  ended.swap(ended_waits());
  lua_createtable(L, static_cast<int>(ended.size()), 0);
  for (size_t i = 0; i < ended.size(); ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(ended[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

}  // namespace

void Parked::end(WaitResult r) {
  result = std::move(r);
  cancel = nullptr;
  ended = true;
  active().erase(this);
  if (yielded) ended_waits().push_back(id);
}

Parked& park(lua_State* L, std::shared_ptr<Client> client, Parked::Push push) {
  static std::uint64_t last_id = 0;
  auto* p = new (lua_newuserdatauv(L, sizeof(Parked), 0)) Parked{};
  luaL_setmetatable(L, kParkedMeta);
  p->id = ++last_id;
  p->client = std::move(client);
  p->push = push;
  active().insert(p);
  return *p;
}

int wait_parked(lua_State* L, int at) {
  auto* p = static_cast<Parked*>(luaL_checkudata(L, at, kParkedMeta));
  if (in_task(L)) {
    p->yielded = true;
    lua_pushlightuserdata(L, &kParkedMark);
    lua_pushinteger(L, static_cast<lua_Integer>(p->id));
    lua_pushvalue(L, at);
    return yield_at_edge(L, 3, at, resume_parked);
  }
  p->client->transport().loop().run_until([p] { return p->ended; });
  return finish_parked(L, LUA_OK, at);
}

void cancel_all_parked() {
  std::vector<Parked*> parked(active().begin(), active().end());
  for (Parked* p : parked) cancel_parked(*p, interrupt_error());
}

void open_tasks(lua_State* L, int module) {
  luaL_newmetatable(L, kParkedMeta);
  lua_pushcfunction(L, parked_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  const luaL_Reg fns[] = {{"cancel", protect<l_cancel>},
                          {"run_once", protect<l_run_once>},
                          {"take_ended", protect<l_take_ended>},
                          {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_newtable(L);  // the tasks' threads, weak: a task's thread may be collected
  lua_createtable(L, 0, 1);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kTasksKey);
  lua_setfield(L, -2, "tasks");  // the same table: tasks.lua fills it, in_task reads it
  lua_pushlightuserdata(L, &kParkedMark);
  lua_setfield(L, -2, "PARKED");
  lua_setfield(L, module, "_loop");
}

}  // namespace cloud
