// A cloudlua session: the effective configuration, the default client, and — when
// no account is configured at all — the embedded emulator it starts on 127.0.0.1,
// on the first call (or cloud.emulator use, or cloud.client{}) that needs it.
// This is the layer that reads the configuration (docs/design.md), so it is the one
// that decides to start the emulator; core never does.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/client/client.h"
#include "core/client/config.h"
#include "emulator/emulator.h"

struct lua_State;

namespace cloud {

struct Session {
  LoadedConfig config;    // as loaded; the emulator's endpoints filled in once it runs
  bool emulated = false;  // the embedded emulator serves the session (nothing configured)
  bool served = false;    // a `cloudlua serve` does, reached by endpoint_url (cloud.emulator over HTTP)
  // This session asked serve for virtual time (cloud.emulator.configure{ real_time =
  // false }): its waiters' pauses are then skipped and serve's clock follows. A serve
  // is shared, so its clock is real time, and waits are, unless the session asks.
  bool served_virtual_time = false;
  std::unique_ptr<Emulator> emulator;       // set once the embedded emulator has started
  std::shared_ptr<Client> client;           // the default client: `cloud` itself
  std::function<void()> on_emulator_start;  // the runner's notice, said when it starts
  std::optional<std::uint64_t> seed;        // the embedded emulator's, from its start
  // While the embedded emulator runs: its clock follows the seconds the loop's clock
  // skips (Loop::follow), until the session goes (declared after `emulator`: it goes first).
  std::shared_ptr<void> clock_follower;
  std::shared_ptr<void> virtual_time;  // replaying (--replay): the loop's virtual time, held
};

Outcome<std::shared_ptr<Session>> open_session(const ConfigOverrides& flags);

// Whether a waiter's pause is skipped, the emulator's clock following it (docs/design.md,
// One clock): with the embedded emulator, which is the process's own, or a serve whose
// virtual time this session asked for. Against a shared serve otherwise, waits are real
// time (or virtual where the whole session's time is: --replay).
bool waits_skipped(const Session& session);

// The session's configuration, complete: when the emulator serves the session, it is
// started first (once), which fills in its endpoints and credentials.
Outcome<const ClientConfig*> complete_config(Session& session);

// Raised by Ctrl-C (the SIGINT handler of the REPL and the runner may set it; an
// atomic store is async-signal-safe). While it is set, every client made through
// make_client aborts its running transfer with an "Interrupted" transport error.
std::atomic<bool>& interrupt_flag();
// The error an interruption surfaces as in Lua, wherever it is seen (the Lua hook, a
// sleep, a cancelled wait; a transfer's own says which request): kind transport,
// code "Interrupted", what sync and the transfers catch to clean up and re-raise,
// and what a script's run maps to exit status 130.
Error interrupt_error();

// A client that honours interrupt_flag(): the session's and cloud.client{}'s. With
// record or replay set it sends through that cassette (core/net/cassette.h); replaying,
// its back-off is skipped on the loop's clock. Fails (kind config) when the cassette cannot open.
Outcome<std::shared_ptr<Client>> make_client(ClientConfig config);

// What the REPL's prompt calls the session: "emulator" when the embedded emulator
// serves it, else the profile when one was chosen, else endpoint_url's host[:port],
// else the endpoints' host[:port] when they share one, else "default".
std::string session_label(const Session& session);

// Makes what varies from run to run repeatable from `seed` (cloud.emulator.configure{
// seed = N }, cloudlua test --seed N): the embedded emulator's ids, request ids and
// times (Emulator::set_seed), the retry back-off's jitter and Lua's math.random.
void seed_session(lua_State* L, Session& session, std::uint64_t seed);

// `operation` of serve's control plane (emulator/control.h) with `args`, sent by
// `client` and signed with its key pair, so that it acts on that key's world; an
// endpoint_url that is another S3 server's is NoServe, nothing sent (lua/emulator.cpp).
Outcome<json> served_control(Client& client, const std::string& operation, const json& args);

// Installs the `cloud` module for `session` as a global and in package.loaded.
void open_cloud(lua_State* L, std::shared_ptr<Session> session);

}  // namespace cloud
