// Parking a task on the loop (see tasks.cpp): what the bindings of calls, cloud.request
// and cloud.sleep use so that inside a task they yield and outside one they block.
#pragma once

#include <functional>
#include <memory>

struct lua_State;

namespace cloud {

class Client;

// Pushes what a call that ended hands back and returns how many values; or pushes
// an error object and returns -1 (the caller raises it).
using Deliver = std::function<int(lua_State* L)>;
// Starts a call or a timer on the client's loop; it hands `ended` its Deliver once,
// from the loop. Returns what cancels it.
using Starter = std::function<std::function<void()>(std::function<void(Deliver)> ended)>;

// Starts what `start` starts on the client's loop and leaves its `cloud.parked`
// userdata on the stack; returns that userdata's index.
int park(lua_State* L, std::shared_ptr<Client> client, const Starter& start);
// Waits for the wait parked at `at`: inside a task, yields to the scheduler (which
// resumes the task when the loop has delivered); elsewhere, runs the client's loop
// until it has. Returns what was delivered (raising its error). Call it as
// `return wait_parked(L, at);` with no C++ object alive: a yield skips destructors.
int wait_parked(lua_State* L, int at);

// Sets cloud._loop, the primitives lua/tasks.lua composes, in the table at `module`.
void open_tasks(lua_State* L, int module);

// Ctrl-C: cancels every call and timer a task is parked on; each such task, if
// resumed, raises an "Interrupted" error.
void cancel_all_parked();

}  // namespace cloud
