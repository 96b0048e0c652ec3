// Opens a session: configuration first, then the embedded emulator when no endpoint
// was configured, with the configured credentials if any (so client and emulator
// agree), else the documented built-in test credentials.
#include "lua/session.h"

#include <cstdlib>

namespace cloud {

namespace {

Outcome<bool> start_embedded_emulator(Session& s) {
  EmulatorOptions options;
  options.region = s.config.client.region;
  if (s.config.credentials_configured) options.credentials = s.config.client.credentials;
  options.credentials.session_token.clear();
  s.emulator = std::make_unique<Emulator>(options);
  auto started = s.emulator->start();
  if (!started.ok()) return started.error();
  for (const auto& [api, url] : s.emulator->endpoints()) s.config.client.endpoints[api] = url;
  if (!s.config.credentials_configured) {
    s.config.client.credentials.access_key_id = kEmulatorAccessKey;
    s.config.client.credentials.secret_access_key = kEmulatorSecretKey;
  }
  return true;
}

}  // namespace

Outcome<std::shared_ptr<Session>> open_session(const ConfigOverrides& flags) {
  auto loaded = load_config(flags, [](const char* name) { return std::getenv(name); });
  if (!loaded.ok()) return loaded.error();
  auto session = std::make_shared<Session>();
  session->config = std::move(loaded.value());
  if (!session->config.endpoints_configured) {
    auto started = start_embedded_emulator(*session);
    if (!started.ok()) return started.error();
  }
  session->client = std::make_shared<Client>(session->config.client);
  return session;
}

}  // namespace cloud
