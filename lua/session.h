// A cloudlua session: the effective configuration, the default client, and — when
// nothing points the session at an endpoint — the embedded emulator it starts on
// 127.0.0.1. This is the layer that reads the configuration (DESIGN.md), so it is
// the one that decides to start the emulator; core never does.
#pragma once

#include <memory>

#include "core/client.h"
#include "core/config.h"
#include "emulator/emulator.h"

struct lua_State;

namespace cloud {

struct Session {
  LoadedConfig config;                // as loaded, with the emulator's endpoints filled in
  std::unique_ptr<Emulator> emulator; // set when the embedded emulator serves the session
  std::shared_ptr<Client> client;     // the default client: `cloud` itself
};

Outcome<std::shared_ptr<Session>> open_session(const ConfigOverrides& flags);

// Installs the `cloud` module for `session` as a global and in package.loaded.
void open_cloud(lua_State* L, std::shared_ptr<Session> session);

}  // namespace cloud
