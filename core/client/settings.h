// The settings of a client, as one table: each setting's name, the kind of value it
// takes with its range or allowed values, its flag, a line of documentation, and where
// it goes in ClientConfig. Every layer parses through this table — a profile of the
// config file, the CLOUDLUA_* variables, the command-line flags, the arguments of
// cloud.client{} and `serve`'s flags — so a value has one rule wherever it is set, and
// a bad one is refused with the same words, prefixed by where it came from.
#pragma once

#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/base/error.h"
#include "core/model/model.h"

namespace cloud {

enum class SettingKind { name, choice, url, text, integer, seconds, boolean, field_names };

struct SettingSpec {
  std::string key;  // "region"; a per-API setting is "endpoint.<api>" in a profile
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

// Whether `url` holds a user name or password (`https://user:pass@host`): endpoints
// may not, the credentials are settings of their own.
bool holds_user_info(const std::string& url);

// The APIs an endpoint can be set for, in the model's order.
std::vector<std::string> api_names();

// cloud.client{args}'s profile ("" for none), once `args` is known to be a table and
// its profile a string; errors read "cloud.client: ...".
Outcome<std::string> client_profile(const json& args);

// Every argument of cloud.client{args} but the profile, each through the table and the
// credentials field by field, on top of `config`; an unknown argument is an error. A
// record or replay of its own replaces the session's --record/--replay.
Outcome<bool> apply_client_arguments(const json& args, ClientConfig& config);

}  // namespace cloud
