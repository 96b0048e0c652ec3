// Opens a session: configuration first, then the embedded emulator when no account is
// configured at all (no endpoint, no credentials, no profile chosen), with the
// documented built-in test credentials on both sides. Credentials or a profile
// without an endpoint are never sent to the emulator in silence: the client's calls
// fail with NoEndpoint instead.
#include "lua/session.h"

#include <csignal>
#include <cstdlib>
#include <set>

#include "core/uri.h"

namespace cloud {

namespace {

std::atomic<bool> interrupt_requested{false};  // constant-initialised: safe in a signal handler

Outcome<bool> start_embedded_emulator(Session& s) {
  EmulatorOptions options;
  options.region = s.config.client.region;
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
  return true;
}

}  // namespace

Outcome<std::shared_ptr<Session>> open_session(const ConfigOverrides& flags) {
  auto loaded = load_config(flags, [](const char* name) { return std::getenv(name); });
  if (!loaded.ok()) return loaded.error();
  auto session = std::make_shared<Session>();
  session->config = std::move(loaded.value());
  if (!session->config.account_configured) {
    auto started = start_embedded_emulator(*session);
    if (!started.ok()) return started.error();
  }
  session->client = make_client(session->config.client);
  return session;
}

std::atomic<bool>& interrupt_flag() { return interrupt_requested; }

std::shared_ptr<Client> make_client(const ClientConfig& config) {
  auto client = std::make_shared<Client>(config);
  client->transport().set_interrupt_flag(&interrupt_requested);
  return client;
}

std::string session_label(const Session& session) {
  if (session.emulator) return "emulator";
  const ClientConfig& c = session.config.client;
  if (c.profile != "default") return c.profile;
  std::set<std::string> hosts;
  for (const auto& [api, url] : c.endpoints) {
    auto parsed = parse_url(url);
    hosts.insert(parsed.ok() ? parsed->authority() : url);
  }
  return hosts.size() == 1 ? *hosts.begin() : "default";
}

}  // namespace cloud
