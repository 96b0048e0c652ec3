// The settings of a client, as one table: each setting's name, the kind of value it
// takes with its range or allowed values, its flag, a line of documentation, and where
// it goes in ClientConfig. Every layer parses through this table — a profile of the
// config file, the CLOUDLUA_* variables, the command-line flags, the arguments of
// cloud.client{} and `serve`'s flags — so a value has one rule wherever it is set, and
// a bad one is refused with the same words, prefixed by where it came from.
#pragma once

#include <string>
#include <vector>

#include "core/client.h"
#include "core/config.h"
#include "core/error.h"
#include "core/model.h"

namespace cloud {

enum class SettingKind { name, choice, url, text, integer, seconds, boolean, field_names };

struct SettingSpec {
  std::string key;                   // "region"; a per-API setting is "endpoint.<api>" in a profile
  SettingKind kind = SettingKind::text;
  bool per_api = false;              // one value per API (endpoint, service)
  bool in_profiles = true;           // false: an argument of cloud.client{} only (retry tuning)
  double low = 0, high = 0;          // integer and seconds: the range, both ends allowed
  std::vector<std::string> choices;  // choice: the values allowed
  std::string flag;                  // the command-line flag, "" for none
  std::string client_key;            // the field of cloud.client{}: `endpoints = { api = url }`
  std::string shown_default;         // what `cloudlua config` shows when unset, "" for the value
  std::string doc;
  void (*set)(ClientConfig& c, const std::string& api, const json& value) = nullptr;  // null: the default
  json (*get)(const ClientConfig& c, const std::string& api) = nullptr;               // null: not set
};

// The table, in the order `cloudlua config` shows the settings.
const std::vector<SettingSpec>& setting_specs();

// The setting of a profile key ("region", "endpoint.storage": api set to "storage"),
// or nullptr.
const SettingSpec* find_setting(const std::string& key, std::string* api = nullptr);

// The name of a setting as a profile writes it: "region", "endpoint.storage".
std::string setting_name(const SettingSpec& spec, const std::string& api);

// Checks `value` against the setting's rule and stores it in `config`. Text from a
// file, a variable or a flag is read as the kind wants ("3" as a number, "true" as a
// boolean); an empty string restores the default. The error is a config error,
// InvalidSetting, "<where>: <name> must be <rule> (got <value>)".
Outcome<bool> apply_setting(const SettingSpec& spec, const std::string& api, const json& value,
                            const std::string& where, ClientConfig& config);

// The value as `cloudlua config` shows it ("120" for a timeout); "" when not set.
std::string shown_setting(const SettingSpec& spec, const std::string& api, const ClientConfig& config);

// The configuration of cloud.client{args}: the named profile on its own
// (load_profile) or else `session`, with every other argument on top, each through
// the table and the credentials field by field. Errors read "cloud.client: ...";
// an unknown argument is one of them.
Outcome<ClientConfig> client_config(const json& args, const ClientConfig& session, const EnvLookup& env);

}  // namespace cloud
