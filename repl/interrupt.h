// Ctrl-C as lua.c does it. While a chunk runs, SIGINT only raises flags: the
// transport's interrupt flag, so that a running HTTP transfer aborts with an
// "Interrupted" error, and a Lua hook that raises "interrupted!" at the next Lua
// instruction, so that a loop in Lua stops. A second Ctrl-C before either takes
// effect gets the default action (the process ends), as with `lua`.
#pragma once

struct lua_State;

namespace cloud {

// SIGINT handled as above while alive; on leaving, the previous handling comes back
// and the hook and the flag are cleared, so the next chunk starts clean. Nests: only
// the outermost guard installs and restores.
class InterruptGuard {
 public:
  explicit InterruptGuard(lua_State* L);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

}  // namespace cloud
