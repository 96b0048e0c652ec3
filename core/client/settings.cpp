// The table of settings and the one rule of each kind of value; see settings.h.
#include "core/client/settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/base/suggest.h"
#include "core/net/redact.h"

namespace cloud {

namespace {

// ------------------------------------------------------------------ values

// A number as a person writes it: 3, 0.5, 86400.
std::string number_text(double n) {
  std::ostringstream out;
  out << n;
  return out.str();
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

// A value as an error message quotes it: 'text', 0, 2.5, true, a table.
std::string quoted(const json& v) {
  if (v.is_string()) return "'" + redact(v.get<std::string>()) + "'";
  if (v.is_number_float()) return number_text(v.get<double>());
  if (v.is_number() || v.is_boolean() || v.is_null()) return v.dump();
  return v.is_array() ? "a list" : "a table";
}

// Text from a file, a variable or a flag read as the kind wants; other values as they are.
json read_text(const SettingSpec& s, const json& v) {
  if (!v.is_string()) return v;
  const std::string& text = v.get_ref<const std::string&>();
  if (s.kind == SettingKind::boolean)
    return text == "true" || text == "1" ? json(true) : text == "false" || text == "0" ? json(false) : v;
  if (s.kind != SettingKind::integer && s.kind != SettingKind::seconds) return v;
  char* end = nullptr;
  double n = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(n)) return v;
  if (n == std::floor(n) && std::fabs(n) < 1e15) return json(static_cast<long long>(n));
  return json(n);
}

bool is_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

bool in_range(const SettingSpec& s, const json& v) {
  return v.is_number() && v.get<double>() >= s.low && v.get<double>() <= s.high;
}

// Whether `v` (already read by read_text) keeps the rule of `s`.
bool fits(const SettingSpec& s, const json& v) {
  const std::string* text = v.is_string() ? &v.get_ref<const std::string&>() : nullptr;
  switch (s.kind) {
    case SettingKind::name: return text && is_name(*text);
    case SettingKind::choice: return text && std::find(s.choices.begin(), s.choices.end(), *text) != s.choices.end();
    case SettingKind::url: return text && (text->rfind("http://", 0) == 0 || text->rfind("https://", 0) == 0);
    case SettingKind::text: return text != nullptr;
    case SettingKind::integer: return in_range(s, v) && v.get<double>() == std::floor(v.get<double>());
    case SettingKind::seconds: return in_range(s, v);
    case SettingKind::boolean: return v.is_boolean();
    case SettingKind::field_names: return text && !bad_field_name(*text);
  }
  return false;
}

// What the setting must be, for messages: "an integer from 1 to 10".
std::string rule(const SettingSpec& s) {
  std::string range = "from " + number_text(s.low) + " to " + number_text(s.high);
  switch (s.kind) {
    case SettingKind::name: return "letters, digits and hyphens, e.g. " + s.get(ClientConfig{}, "").get<std::string>();
    case SettingKind::choice: return joined(s.choices, " or ");
    case SettingKind::url: return "a URL starting with http:// or https://";
    case SettingKind::text: return "a string";
    case SettingKind::integer: return "an integer " + range;
    case SettingKind::seconds: return "a number of seconds " + range;
    case SettingKind::boolean: return "true or false";
    case SettingKind::field_names:
      return "field names separated by commas (letters, digits, '_', '-', '.', '*' for any of them)";
  }
  return "";
}

Error setting_error(const std::string& where, const std::string& problem) {
  return make_error(ErrorKind::config, "InvalidSetting", (where.empty() ? "" : where + ": ") + problem);
}

// apply_setting with the name the layer uses ("endpoints.storage" in cloud.client{}).
Outcome<bool> apply_named(const SettingSpec& s, const std::string& api, const std::string& name, const json& value,
                          const std::string& where, ClientConfig& c) {
  if (value.is_string() && value.get_ref<const std::string&>().empty()) {
    s.set(c, api, s.get(ClientConfig{}, api));
    return true;
  }
  json v = read_text(s, value);
  if (!fits(s, v)) return setting_error(where, name + " must be " + rule(s) + " (got " + quoted(v) + ")");
  if (s.kind == SettingKind::url && holds_user_info(v.get<std::string>()))
    return setting_error(where, name + " must not hold a user name or password (got " + quoted(v) +
                                    "): give credentials as access_key_id and secret_access_key");
  s.set(c, api, v);
  return true;
}

// ------------------------------------------------------------------ the table

json map_value(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? json() : json(it->second);
}

void set_map_value(std::map<std::string, std::string>& m, const std::string& key, const json& v) {
  if (v.is_null()) m.erase(key);
  else m[key] = v.get<std::string>();
}

long milliseconds(const json& seconds) { return std::lround(seconds.get<double>() * 1000); }

std::vector<SettingSpec> make_specs() {
  std::vector<SettingSpec> t;
  auto add = [&t](const char* key, SettingKind kind, const char* doc) -> SettingSpec& {
    t.emplace_back();
    t.back().key = t.back().client_key = key;
    t.back().kind = kind;
    t.back().doc = doc;
    return t.back();
  };
  SettingSpec* s = &add("region", SettingKind::name, "the region: endpoints' and signatures' scope");
  s->flag = "--region";
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.region = v.get<std::string>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.region); };

  s = &add("dialect", SettingKind::choice, "the signing dialect");
  s->choices = {"ext", "aws"};
  s->flag = "--dialect";
  s->set = [](ClientConfig& c, const std::string&, const json& v) {
    c.dialect = Dialect::find(v.get<std::string>());
    c.dialect_given = true;
  };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.dialect->name); };

  s = &add("endpoint", SettingKind::url, "the API's base URL");
  s->per_api = true;
  s->flag = "--endpoint";
  s->client_key = "endpoints";
  s->set = [](ClientConfig& c, const std::string& api, const json& v) { set_map_value(c.endpoints, api, v); };
  s->get = [](const ClientConfig& c, const std::string& api) { return map_value(c.endpoints, api); };

  s = &add("endpoint_url", SettingKind::url,
           "a cloudlua serve's URL: every API's endpoint asked of it; any other S3 server's: storage's endpoint");
  s->flag = "--endpoint";
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.endpoint_url = v.get<std::string>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.endpoint_url); };

  s = &add("service", SettingKind::text, "the credential scope's service");
  s->per_api = true;
  s->client_key = "services";
  s->set = [](ClientConfig& c, const std::string& api, const json& v) { set_map_value(c.services, api, v); };
  s->get = [](const ClientConfig& c, const std::string& api) {
    json v = map_value(c.services, api);
    std::string known = Model::builtin().default_service(api);
    return v.is_null() && !known.empty() ? json(known) : v;
  };

  s = &add("ca_file", SettingKind::text, "the CA bundle for TLS");
  s->shown_default = "(the system's)";
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.transport.ca_file = v.get<std::string>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.transport.ca_file); };

  s = &add("max_attempts", SettingKind::integer, "requests per call, retries included");
  s->low = 1, s->high = 10;
  s->set = [](ClientConfig& c, const std::string&, const json& v) {
    c.retry.max_attempts = static_cast<int>(v.get<double>());
  };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.retry.max_attempts); };

  s = &add("timeout", SettingKind::seconds, "seconds for a whole request");
  s->low = 0.001, s->high = 86400;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.transport.timeout_ms = milliseconds(v); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.transport.timeout_ms / 1000.0); };

  s = &add("connect_timeout", SettingKind::seconds, "seconds to connect");
  s->low = 0.001, s->high = 86400;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.transport.connect_timeout_ms = milliseconds(v); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.transport.connect_timeout_ms / 1000.0); };

  s = &add("payload_signing", SettingKind::choice,
           "a file body's signature: per chunk as it streams, or its whole hash first");
  s->choices = {"streaming", "whole"};
  s->set = [](ClientConfig& c, const std::string&, const json& v) {
    c.stream_payloads = v.get<std::string>() == "streaming";
  };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.stream_payloads ? "streaming" : "whole"); };

  s = &add("retry_base_delay", SettingKind::seconds, "back-off: the first wait's upper bound, doubled per attempt");
  s->in_profiles = false, s->low = 0, s->high = 3600;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.retry.base_delay = v.get<double>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.retry.base_delay); };

  s = &add("retry_max_delay", SettingKind::seconds, "back-off: the longest wait");
  s->in_profiles = false, s->low = 0, s->high = 3600;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.retry.max_delay = v.get<double>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.retry.max_delay); };

  s = &add("invalid_part_delay", SettingKind::seconds, "the wait before repeating an InvalidPart");
  s->in_profiles = false, s->low = 0, s->high = 3600;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.retry.invalid_part_delay = v.get<double>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.retry.invalid_part_delay); };

  s = &add("retry_restores", SettingKind::boolean, "resend restores even after they may have arrived");
  s->in_profiles = false;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.retry.retry_non_idempotent = v.get<bool>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.retry.retry_non_idempotent); };

  s = &add("record", SettingKind::text, "record every exchange into this folder (docs/testing.md)");
  s->in_profiles = false;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.record = v.get<std::string>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.record); };

  s = &add("replay", SettingKind::text, "answer every call from the recording in this folder, offline");
  s->in_profiles = false;
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.replay = v.get<std::string>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.replay); };

  s = &add("redact_fields", SettingKind::field_names,
           "more names of fields whose values are secrets, removed from all output and recordings (docs/testing.md)");
  s->client_key = "";  // the process's: redaction is one for all clients
  s->shown_default = "(none: the built-in names)";
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.redact_fields = v.get<std::string>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.redact_fields); };

  s = &add("quiet_emulator", SettingKind::boolean, "no line on stderr when the embedded emulator serves");
  s->client_key = "";  // the session's, not a client's
  s->shown_default = "false";
  s->set = [](ClientConfig& c, const std::string&, const json& v) { c.quiet_emulator = v.get<bool>(); };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.quiet_emulator); };

  s = &add("max_buffer_bytes", SettingKind::integer,
           "bytes of answers being received the process holds at once, every transfer together");
  s->client_key = "";  // the session's, not a client's: one budget for the process
  s->low = 1 << 20, s->high = 1LL << 40;
  s->set = [](ClientConfig& c, const std::string&, const json& v) {
    c.max_buffer_bytes = static_cast<std::uint64_t>(v.get<double>());
  };
  s->get = [](const ClientConfig& c, const std::string&) { return json(c.max_buffer_bytes); };
  return t;
}

// ------------------------------------------------------------------ cloud.client{}

const char* const kCredentialFields[] = {"access_key_id", "secret_access_key", "session_token"};

// The fields cloud.client{} takes.
std::vector<std::string> client_field_names() {
  std::vector<std::string> names{"profile"};
  for (const SettingSpec& s : setting_specs())
    if (!s.client_key.empty()) names.push_back(s.client_key);
  names.push_back("credentials");
  return names;
}

// The fields of cloud.client{}'s credentials, by their full name ("credentials.access_key_id").
std::vector<std::string> credential_names() {
  std::vector<std::string> names;
  for (const char* field : kCredentialFields) names.push_back(std::string("credentials.") + field);
  return names;
}

// `endpoints = { storage = url, ... }`: each API's value through the table.
Outcome<bool> apply_per_api(const SettingSpec& s, const json& value, ClientConfig& c) {
  if (!value.is_object())
    return setting_error("cloud.client", s.client_key + " must be a table of API = value (got " + quoted(value) + ")");
  for (const auto& [api, v] : value.items()) {
    std::string name = s.client_key + "." + api;
    if (!Model::builtin().has_api(api))
      return setting_error("cloud.client",
                           "no API named '" + api + "' in '" + name + "' (APIs: " + joined(api_names(), ", ") + ")");
    auto applied = apply_named(s, api, name, v, "cloud.client", c);
    if (!applied.ok()) return applied;
  }
  return true;
}

// `credentials = { access_key_id =, secret_access_key =, session_token = }`, each
// over the base's ("" clears one).
Outcome<bool> apply_credentials(const json& value, Credentials& creds) {
  if (!value.is_object())
    return setting_error("cloud.client", "credentials must be a table (got " + quoted(value) + ")");
  std::string* slots[] = {&creds.access_key_id, &creds.secret_access_key, &creds.session_token};
  for (const auto& [key, v] : value.items()) {
    auto field = std::find(std::begin(kCredentialFields), std::end(kCredentialFields), key);
    if (field == std::end(kCredentialFields))
      return setting_error("cloud.client",
                           unknown_field("credentials." + key, credential_names(),
                                         "credentials: access_key_id, secret_access_key, session_token"));
    if (!v.is_string())
      return setting_error("cloud.client", "credentials." + key + " must be a string (got " + quoted(v) + ")");
    *slots[field - std::begin(kCredentialFields)] = v.get<std::string>();
  }
  return true;
}

const SettingSpec* client_setting(const std::string& field) {
  for (const SettingSpec& s : setting_specs())
    if (!s.client_key.empty() && s.client_key == field) return &s;
  return nullptr;
}

// One field of cloud.client{} into `c`.
Outcome<bool> apply_client_field(const std::string& field, const json& value, ClientConfig& c) {
  if (field == "profile") return true;  // chosen first, by client_config (core/client/config)
  if (field == "credentials") return apply_credentials(value, c.credentials);
  const SettingSpec* s = client_setting(field);
  if (!s)
    return setting_error("cloud.client",
                         unknown_field(field, client_field_names(), "fields: " + joined(client_field_names(), ", ")));
  return s->per_api ? apply_per_api(*s, value, c) : apply_named(*s, "", field, value, "cloud.client", c);
}

}  // namespace

// ------------------------------------------------------------------ public

std::vector<std::string> api_names() { return Model::builtin().api_names(); }

bool holds_user_info(const std::string& url) {
  size_t start = url.find("://");
  std::string rest = start == std::string::npos ? url : url.substr(start + 3);
  return rest.substr(0, rest.find_first_of("/?#")).find('@') != std::string::npos;
}

const std::vector<SettingSpec>& setting_specs() {
  static const std::vector<SettingSpec> specs = make_specs();
  return specs;
}

const SettingSpec* find_setting(const std::string& key, std::string* api) {
  size_t dot = key.find('.');
  std::string name = key.substr(0, dot);
  for (const SettingSpec& s : setting_specs()) {
    if (s.key != name || s.per_api != (dot != std::string::npos)) continue;
    if (api) *api = s.per_api ? key.substr(dot + 1) : "";
    return &s;
  }
  return nullptr;
}

std::string setting_name(const SettingSpec& spec, const std::string& api) {
  return spec.per_api ? spec.key + "." + api : spec.key;
}

Outcome<bool> apply_setting(const SettingSpec& spec, const std::string& api, const json& value,
                            const std::string& where, ClientConfig& config) {
  return apply_named(spec, api, setting_name(spec, api), value, where, config);
}

std::string shown_setting(const SettingSpec& spec, const std::string& api, const ClientConfig& config) {
  json v = spec.get(config, api);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return number_text(v.get<double>());
  return v.is_null() ? "" : v.dump();
}

Outcome<std::string> client_profile(const json& args) {
  if (!args.is_object())
    return setting_error("cloud.client", "the settings are a table of name = value (got " + quoted(args) + ")");
  auto profile = args.find("profile");
  if (profile == args.end()) return std::string();
  if (!profile->is_string())
    return setting_error("cloud.client", "profile must be a string (got " + quoted(*profile) + ")");
  return profile->get<std::string>();
}

Outcome<bool> apply_client_arguments(const json& args, ClientConfig& c) {
  if (args.contains("record") != args.contains("replay"))
    c.record.clear(), c.replay.clear();  // its own replaces --record/--replay
  for (const auto& [field, value] : args.items()) {
    auto applied = apply_client_field(field, value, c);
    if (!applied.ok()) return applied.error();
  }
  return true;
}

}  // namespace cloud
