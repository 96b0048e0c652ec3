// Ctrl-C (and, for a script, SIGTERM) as lua.c does Ctrl-C. While a chunk runs, the
// first signal only raises flags: the transport's interrupt flag, so that the
// transfers under way end with an "Interrupted" error, and a Lua hook that raises the
// same error (lua/session.h, interrupt_error) at the next Lua instruction, so that a
// loop in Lua stops. Code that catches it (storage.sync, upload_file) cleans up, its
// own requests going out normally, and raises it again. A second signal gets the
// default action: the process ends at once, as with `lua`.
#pragma once

struct lua_State;

namespace cloud {

// The signals handled as above while alive: SIGINT, and SIGTERM too with
// `terminate` (a script's run; the REPL leaves SIGTERM alone). On leaving, the
// previous handling comes back and the hook and the flag are cleared, so the next
// chunk starts clean. Nests: only the outermost guard installs and restores.
class InterruptGuard {
 public:
  explicit InterruptGuard(lua_State* L, bool terminate = false);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // Whether a signal came while this guard's chunk ran.
  bool interrupted() const;
};

}  // namespace cloud
