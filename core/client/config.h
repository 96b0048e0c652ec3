// Configuration: where the client's settings come from, highest first: arguments of
// cloud.client{} (applied by the binding), command-line flags, CLOUDLUA_* environment
// variables, the selected profile of the config file, built-in defaults. Every
// effective value remembers where it came from, so `cloudlua config` can say.
//
// The config file is an INI file a person edits by hand: `[profile]` sections of
// `key = value` lines, `#` or `;` comments. It lives in the user's config directory
// ($XDG_CONFIG_HOME/cloudlua/config, else ~/.config/cloudlua/config) unless
// CLOUDLUA_CONFIG_FILE names another ("" for none). Credentials are a unit: the
// highest layer that gives an access key gives the secret and the session token too,
// so two accounts are never mixed. A file that holds secrets is refused when group
// or others can read it, as ssh refuses a readable private key.
//
// When no account is configured at all (no endpoint, no credentials, no profile
// chosen), `account_configured` is false and the layer above starts the embedded
// emulator; core itself never does.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/base/error.h"
#include "core/client/settings.h"

namespace cloud {

// Settings given on the command line; empty strings mean "not given".
struct ConfigOverrides {
  std::string profile;
  std::string region;
  std::string dialect;
  std::string access_key_id;
  std::string secret_access_key;
  std::map<std::string, std::string> endpoints;   // api -> URL
  std::string endpoint_url;                       // --endpoint URL: a cloudlua serve's
  std::function<void(const std::string&)> debug;  // --debug: where the wire dumps go
  std::string record;                             // --record DIR
  std::string replay;                             // --replay DIR
};

// One effective setting and where its value came from.
struct Setting {
  std::string name;    // "region", "endpoint.storage", "secret_access_key"
  std::string value;   // "" when not set
  std::string origin;  // "flag --region", "env CLOUDLUA_REGION", "file /home/u/.config/cloudlua/config:7", "default"
  bool secret = false;
  std::string placeholder;  // shown as it is when nothing sets the value: "(the embedded emulator)"
};

struct LoadedConfig {
  ClientConfig client;
  bool endpoints_configured = false;
  bool credentials_configured = false;
  bool account_configured = false;    // endpoints, credentials or a profile chosen by flag or variable
  std::string file;                   // the config file read; "" when none
  std::string file_origin;            // "env CLOUDLUA_CONFIG_FILE" or "default location"
  std::vector<std::string> profiles;  // the profiles the file defines, in its order
  std::vector<Setting> settings;      // every setting, in the order `cloudlua config` shows them
};

using EnvLookup = std::function<const char*(const char* name)>;

// Merges flags over the environment over the config file over defaults. Errors (kind
// config) say what is wrong and where: "file:line: ..." for the file, the variable
// or flag otherwise; an unknown profile lists the known ones.
Outcome<LoadedConfig> load_config(const ConfigOverrides& flags, const EnvLookup& env);

// A named profile on its own, for cloud.client{profile=}: the config file's section
// over defaults; flags and CLOUDLUA_* settings belong to the session's profile and
// do not apply (only the variables that locate the file are read).
Outcome<LoadedConfig> load_profile(const std::string& profile, const EnvLookup& env);

// The credentials the flags give, else the CLOUDLUA_* variables, taken as a unit as
// load_config takes them, without a profile (`serve` accepts these); empty when
// neither gives any.
Outcome<Credentials> given_credentials(const ConfigOverrides& flags, const EnvLookup& env);

// `cloudlua serve --profile NAME`: writes the profile NAME into the config file (the
// one load_config reads; made, with its folder, when absent) as
// `endpoint_url = URL` under a comment saying serve wrote it; a profile NAME serve
// wrote before is replaced, one it did not write is refused (ProfileExists), and the
// rest of the file is kept byte for byte. The new file is written beside it and
// renamed over it (its mode kept). Returns the file's path.
Outcome<std::string> write_serve_profile(const std::string& name, const std::string& url, const EnvLookup& env);

// What `cloudlua config` prints: one line per setting, value (secrets masked) and origin.
std::string config_report(const LoadedConfig& config);

// The value as it may be shown: secrets as "********", the access key id with its
// last four characters only; for nothing, the placeholder as it is, else "(not set)".
std::string masked_value(const Setting& setting);

// The config file's syntax, exposed for tests: sections of key = value entries.
struct IniEntry {
  std::string key;
  std::string value;
  int line = 0;
};
struct IniSection {
  std::string name;
  int line = 0;
  std::vector<IniEntry> entries;
  const IniEntry* find(const std::string& key) const;
};
struct IniFile {
  std::string path;
  std::vector<IniSection> sections;
  const IniSection* find(const std::string& name) const;
};

// Errors (kind config, code ConfigSyntax) read "path:line: what is wrong".
Outcome<IniFile> parse_ini(const std::string& text, const std::string& path);

// Parses "api=url" (the --endpoint flag); a bare http:// or https:// URL is
// endpoint_url's, returned with the API "".
Outcome<std::pair<std::string, std::string>> parse_endpoint_setting(const std::string& setting);

// The configuration of cloud.client{args}: the named profile on its own
// (load_profile) or else `session`, with every other argument on top
// (apply_client_arguments). Errors read "cloud.client: ...".
Outcome<ClientConfig> client_config(const json& args, const ClientConfig& session, const EnvLookup& env);

}  // namespace cloud
