// Parking a task on the loop (see tasks.cpp): what the bindings of calls, cloud.request
// and cloud.sleep use so that inside a task they yield and outside one they block.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <variant>

#include "core/client/client.h"

struct lua_State;

namespace cloud {

// What a wait ends with: an operation's outcome, cloud.request's, or nothing (a timer).
using WaitResult = std::variant<std::monostate, Outcome<CallResult>, Outcome<RawResult>>;

// One wait on the loop, in its `cloud.parked` userdata: what it waits on, what cancels
// it and, once ended, its result.
struct Parked {
  // Pushes the result (`p.result`) and returns how many values; or pushes an error
  // object and returns -1 (the continuation raises it).
  using Push = int (*)(lua_State* L, const Parked& p);

  std::uint64_t id = 0;            // never 0, never reused: how the scheduler names it
  std::shared_ptr<Client> client;  // keeps the loop's client alive while something waits
  Push push = nullptr;
  std::function<void()> cancel;  // empty once ended or cancelled
  WaitResult result;
  std::optional<Error> error;  // cancelled: its task, resumed, raises this
  bool ended = false;
  bool yielded = false;  // a task waits on it (its id goes to the scheduler)

  // The one continuation: the loop's callback hands the result here, once; the task
  // parked on it is queued for the scheduler to resume.
  void end(WaitResult r);
};

// Leaves a new `cloud.parked` userdata on the stack and returns its wait; the caller
// starts the call or timer, whose callback calls `end`, and sets `cancel`.
Parked& park(lua_State* L, std::shared_ptr<Client> client, Parked::Push push);
// Waits for the wait parked at `at`: inside a task, yields to the scheduler (which
// resumes the task when the loop has handed back this wait); elsewhere, runs the
// loop until it has ended. Returns what it ended with (raising its error). Call it as
// `return wait_parked(L, at);` from a function behind the edge (protect<fn>), whose
// call_protected yields once the function's frames are gone.
int wait_parked(lua_State* L, int at);

// Sets cloud._loop, the primitives lua/tasks.lua composes, in the table at `module`.
void open_tasks(lua_State* L, int module);

// Ctrl-C: cancels every call and timer a task is parked on; each such task, if
// resumed, raises an "Interrupted" error.
void cancel_all_parked();

}  // namespace cloud
