// Configuration: where the client's settings come from, highest first: arguments of
// cloud.client{} (applied by the binding), command-line flags, CLOUDLUA_* environment
// variables, then built-in defaults. The config file arrives with the REPL/CLI issue.
// When no endpoint is configured anywhere, `endpoints_configured` is false and the
// layer above starts the embedded emulator; core itself never does.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/client.h"
#include "core/error.h"

namespace cloud {

// Settings given on the command line; empty strings mean "not given".
struct ConfigOverrides {
  std::string profile;
  std::string region;
  std::string dialect;
  std::string access_key_id;
  std::string secret_access_key;
  std::map<std::string, std::string> endpoints;  // api -> URL
};

struct LoadedConfig {
  ClientConfig client;
  bool endpoints_configured = false;
  bool credentials_configured = false;
};

using EnvLookup = std::function<const char*(const char* name)>;

// Merges flags over the environment over defaults. Errors (kind config) name the
// setting and the allowed values: an unknown dialect, an unknown API in an endpoint.
Outcome<LoadedConfig> load_config(const ConfigOverrides& flags, const EnvLookup& env);

// Parses "api=url" (the --endpoint flag and CLOUDLUA_ENDPOINT_<API>).
Outcome<std::pair<std::string, std::string>> parse_endpoint_setting(const std::string& setting);

// The APIs an endpoint can be set for, in the model's order.
std::vector<std::string> api_names();

}  // namespace cloud
