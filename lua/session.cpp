// Opens a session: configuration first, then, when no account is configured at all
// (no endpoint, no credentials, no profile chosen), the embedded emulator, started by
// the first call that needs it (a run that makes none never starts it), with the
// documented built-in test credentials on both sides. Credentials or a profile
// without an endpoint are never sent to the emulator in silence: the client's calls
// fail with NoEndpoint instead.
#include "lua/session.h"

#include <csignal>
#include <cstdlib>
#include <set>

#include "core/client/config.h"
#include "core/wire/uri.h"
#include "emulator/service.h"

namespace cloud {

namespace {

std::atomic<bool> interrupt_requested{false};  // constant-initialised: safe in a signal handler

// Makes the emulator's clock follow the seconds the loop's clock skips (a waiter's
// pause, and every wait under `cloudlua test`), and the previous follower return
// when the session goes. The client is kept: its transport keeps the loop.
void follow_loop_clock(Session& s) {
  Loop& loop = s.client->transport().loop();
  Platform* platform = &s.emulator->platform();
  // a wait's seconds: a refusal (a clock at its latest) leaves the clock where it is
  auto before = loop.follow([platform](double seconds) { (void)platform->advance(seconds); });
  s.clock_follower = std::shared_ptr<void>(nullptr, [client = s.client, &loop, before](void*) { loop.follow(before); });
}

Outcome<bool> start_embedded_emulator(Session& s) {
  EmulatorOptions options;
  options.region = s.config.client.region;
  options.seed = s.seed;
  s.emulator = std::make_unique<Emulator>(options);
  // The server threads start with SIGINT blocked, so Ctrl-C always reaches the
  // thread that runs Lua (the REPL's handler sets a hook on its state).
  sigset_t interrupt, previous;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupt, &previous);
  auto started = s.emulator->start();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (!started.ok()) return started.error();
  for (const auto& [api, url] : s.emulator->endpoints()) s.config.client.endpoints[api] = url;
  s.config.client.credentials = {kEmulatorAccessKey, kEmulatorSecretKey, ""};
  follow_loop_clock(s);
  if (s.on_emulator_start) s.on_emulator_start();
  return true;
}

}  // namespace

Outcome<const ClientConfig*> complete_config(Session& session) {
  if (session.emulated && !session.emulator) {
    auto started = start_embedded_emulator(session);
    if (!started.ok()) {
      session.emulator.reset();
      return started.error();
    }
  }
  return &session.config.client;
}

Outcome<std::shared_ptr<Session>> open_session(const ConfigOverrides& flags) {
  auto loaded = load_config(flags, [](const char* name) { return std::getenv(name); });
  if (!loaded.ok()) return loaded.error();
  auto session = std::make_shared<Session>();
  session->config = std::move(loaded.value());
  session->emulated = !session->config.account_configured && session->config.client.replay.empty();
  session->served = !session->config.client.endpoint_url.empty();
  process_buffer_budget().set_limit(session->config.client.max_buffer_bytes);
  auto client = make_client(session->config.client);
  if (!client.ok()) return client.error();
  session->client = std::move(client.value());
  if (!session->config.client.replay.empty())  // a replayed session's waits are skipped (docs/design.md, One clock)
    session->virtual_time = session->client->transport().loop().hold_virtual_time();
  if (session->emulated) {
    std::weak_ptr<Session> weak = session;  // the session owns the client: no cycle
    session->client->set_completer([weak](ClientConfig& config) -> std::optional<Error> {
      auto s = weak.lock();
      if (!s) return std::nullopt;
      auto complete = complete_config(*s);
      if (!complete.ok()) return complete.error();
      config.endpoints = complete.value()->endpoints;
      config.credentials = complete.value()->credentials;
      return std::nullopt;
    });
  }
  return session;
}

bool waits_skipped(const Session& session) { return session.emulated || session.served_virtual_time; }

std::atomic<bool>& interrupt_flag() { return interrupt_requested; }

Error interrupt_error() { return make_error(ErrorKind::transport, "Interrupted", "interrupted!"); }

Outcome<std::shared_ptr<Client>> make_client(ClientConfig config) {
  auto cassette = open_cassette(config, api_names());
  if (!cassette.ok()) return cassette.error();
  auto client = std::make_shared<Client>(config);
  client->transport().loop().set_interrupt_flag(&interrupt_requested);
  client->set_cassette(cassette.value());
  return client;
}

std::string session_label(const Session& session) {
  if (session.emulated) return "emulator";
  const ClientConfig& c = session.config.client;
  if (c.profile != "default") return c.profile;
  std::set<std::string> hosts;
  if (!c.endpoint_url.empty() && c.endpoints.empty()) {  // a serve's: its host and port
    auto parsed = parse_url(c.endpoint_url);
    return parsed.ok() ? parsed->authority() : c.endpoint_url;
  }
  for (const auto& [api, url] : c.endpoints) {
    auto parsed = parse_url(url);
    hosts.insert(parsed.ok() ? parsed->authority() : url);
  }
  return hosts.size() == 1 ? *hosts.begin() : "default";
}

}  // namespace cloud
