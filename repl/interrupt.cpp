// SIGINT (and SIGTERM) while a chunk runs: see interrupt.h. The handler touches only
// what is safe in a signal handler: an atomic flag, lua_sethook (documented as
// signal-safe, and what lua.c does) and the signal dispositions.
#include "repl/interrupt.h"

#include <lua.hpp>

#include <csignal>

#include "lua/binding.h"
#include "lua/session.h"
#include "lua/tasks.h"

namespace cloud {

namespace {

lua_State* running_state = nullptr;
int guard_depth = 0;
bool handles_term = false;
struct sigaction previous_int, previous_term;

// Raises the interruption's error in the running Lua code; once only. Inside a C
// function it waits for Lua code: that C function may be the message handler of an
// error already under way (a call the transport aborted raises its own "Interrupted"
// error), which must not be replaced.
void stop_hook(lua_State* L, lua_Debug* ar) {
  if (lua_getinfo(L, "S", ar) && ar->what[0] == 'C') return;
  lua_sethook(L, nullptr, 0, 0);
  push_error(L, interrupt_error());
  lua_error(L);
}

void on_signal(int) {
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C (or SIGTERM) ends the process
  if (handles_term) std::signal(SIGTERM, SIG_DFL);
  interrupt_flag().store(true);
  if (running_state) lua_sethook(running_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

}  // namespace

InterruptGuard::InterruptGuard(lua_State* L, bool terminate) {
  if (guard_depth++ > 0) return;
  running_state = L;
  handles_term = terminate;
  interrupt_flag().store(false);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_int);
  if (terminate) sigaction(SIGTERM, &action, &previous_term);
}

InterruptGuard::~InterruptGuard() {
  if (--guard_depth > 0) return;
  sigaction(SIGINT, &previous_int, nullptr);
  if (handles_term) sigaction(SIGTERM, &previous_term, nullptr);
  if (lua_gethook(running_state) == stop_hook) lua_sethook(running_state, nullptr, 0, 0);  // a user's hook stays
  running_state = nullptr;
  if (interrupt_flag().load()) cancel_all_parked();  // the tasks the chunk left waiting end too
  interrupt_flag().store(false);
}

bool InterruptGuard::interrupted() const { return interrupt_flag().load(); }

}  // namespace cloud
