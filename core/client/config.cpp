// The effective configuration and where each value came from; see config.h for the
// order and the file format. One table of settings drives the flags, the variables,
// the file keys and `cloudlua config`; credentials are picked as a unit.
#include "core/client/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/base/files.h"
#include "core/model/model.h"
#include "core/net/redact.h"
#include "core/client/settings.h"

namespace cloud {

namespace {

// ------------------------------------------------------------------ small helpers

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// The variable for a file key: CLOUDLUA_ and the key in capitals, dots as underscores
// (endpoint.storage -> CLOUDLUA_ENDPOINT_STORAGE).
std::string env_name(const std::string& key) {
  std::string out = "CLOUDLUA_" + upper(key);
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

bool valid_name_char(char c, const char* extra) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr(extra, c) != nullptr;
}

bool valid_name(const std::string& s, const char* extra) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [extra](char c) { return valid_name_char(c, extra); });
}

Error config_error(const std::string& code, const std::string& message) {
  return make_error(ErrorKind::config, code, message);
}

std::string located(const std::string& path, int line) { return path + ":" + std::to_string(line); }

// ------------------------------------------------------------------ files

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Outcome<std::string> read_text(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return config_error("ConfigFileNotFound", "the " + what + " " + path + " does not exist");
  if (S_ISDIR(st.st_mode)) return config_error("ConfigFileUnreadable", "the " + what + " " + path + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return config_error("ConfigFileUnreadable", "cannot read the " + what + " " + path + " (permission denied?)");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file holding secrets must be private to its owner, as ssh wants private keys.
Outcome<bool> check_private(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IRGRP | S_IROTH)) == 0) return true;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return config_error("UnsafePermissions", "the " + what + " " + path +
                                               " holds secrets and can be read by group or others (mode " + mode +
                                               "); make it private with: chmod 600 " + path);
}

// "~/x" from HOME; a relative path from the folder of the file that names it.
std::string resolve_path(const std::string& path, const std::string& relative_to, const EnvLookup& env) {
  if (path.rfind("~/", 0) == 0) {
    const char* home = env("HOME");
    return std::string(home ? home : "") + path.substr(1);
  }
  if (path.empty() || path.front() == '/') return path;
  size_t slash = relative_to.rfind('/');
  return slash == std::string::npos ? path : relative_to.substr(0, slash + 1) + path;
}

// ------------------------------------------------------------------ the file's keys

const std::vector<std::string>& credential_keys() {
  static const std::vector<std::string> keys{"access_key_id", "secret_access_key", "session_token"};
  return keys;
}

bool is_secret_key(const std::string& key) { return key == "secret_access_key" || key == "session_token"; }

// The keys a profile may set, for messages: per-API keys written with <api>.
std::vector<std::string> profile_keys() {
  std::vector<std::string> keys;
  for (const SettingSpec& s : setting_specs())
    if (s.in_profiles) keys.push_back(s.per_api ? s.key + ".<api>" : s.key);
  keys.push_back("credentials_file");
  keys.insert(keys.end(), credential_keys().begin(), credential_keys().end());
  return keys;
}

// "" when `key` may appear in a profile, else what is wrong with it.
std::string key_problem(const std::string& key) {
  std::string api;
  const SettingSpec* spec = find_setting(key, &api);
  if (spec && spec->per_api && !Model::builtin().has_api(api))
    return "no API named '" + api + "' in '" + key + "' (APIs: " + joined(api_names()) + ")";
  if (spec && !spec->in_profiles) return key + " is an argument of cloud.client{} only, not a profile setting";
  if (spec) return "";
  for (const std::string& k : profile_keys())
    if (k == key) return "";
  return "unknown setting '" + key + "' (settings: " + joined(profile_keys()) + ")";
}

Outcome<bool> check_keys(const IniFile& file, const std::vector<std::string>* only) {
  for (const IniSection& s : file.sections)
    for (const IniEntry& e : s.entries) {
      std::string problem = only ? (std::find(only->begin(), only->end(), e.key) != only->end()
                                        ? ""
                                        : "a credentials file holds " + joined(*only) + " only (got '" + e.key + "')")
                                 : key_problem(e.key);
      if (!problem.empty()) return config_error("ConfigSyntax", located(file.path, e.line) + ": " + problem);
    }
  return true;
}

bool holds_secrets(const IniFile& file) {
  for (const IniSection& s : file.sections)
    for (const IniEntry& e : s.entries)
      if (is_secret_key(e.key)) return true;
  return false;
}

// Reads, parses and checks a config or credentials file.
Outcome<IniFile> load_ini(const std::string& path, const std::string& what, const std::vector<std::string>* only_keys) {
  auto text = read_text(path, what);
  if (!text.ok()) return text.error();
  auto file = parse_ini(*text, path);
  if (!file.ok()) return file.error();
  auto keys = check_keys(*file, only_keys);
  if (!keys.ok()) return keys.error();
  if (only_keys || holds_secrets(*file)) {
    auto safe = check_private(path, what);
    if (!safe.ok()) return safe.error();
  }
  return file;
}

// The user's config directory's file: $XDG_CONFIG_HOME/cloudlua/config, else
// ~/.config/cloudlua/config; "" when neither variable is set.
std::string default_config_path(const EnvLookup& env) {
  const char* xdg = env("XDG_CONFIG_HOME");
  const char* home = env("HOME");
  if (xdg && *xdg) return std::string(xdg) + "/cloudlua/config";
  if (home && *home) return std::string(home) + "/.config/cloudlua/config";
  return "";
}

// The config file to read: CLOUDLUA_CONFIG_FILE ("" for none; a named file must
// exist), else the user's config directory (may be absent).
Outcome<bool> read_config_file(const EnvLookup& env, LoadedConfig& out, std::optional<IniFile>& file) {
  const char* named = env("CLOUDLUA_CONFIG_FILE");
  if (named && !*named) return true;
  std::string path;
  if (named) {
    path = named;
    out.file_origin = "env CLOUDLUA_CONFIG_FILE";
  } else {
    path = default_config_path(env);
    out.file_origin = "default location";
    if (path.empty() || !file_exists(path)) {
      out.file_origin += ", absent: " + (path.empty() ? "HOME is not set" : path);
      return true;
    }
  }
  auto loaded = load_ini(path, "config file", nullptr);
  if (!loaded.ok()) return loaded.error();
  out.file = path;
  for (const IniSection& s : loaded->sections) out.profiles.push_back(s.name);
  file = std::move(loaded.value());
  return true;
}

// ------------------------------------------------------------------ layers

// One value and where it came from; `where` is what an error message points at.
struct Found {
  std::string value;
  std::string origin = "default";
  std::string where;
};

struct Sources {
  const ConfigOverrides& flags;
  const EnvLookup& env;
  const IniFile* file = nullptr;
  const IniSection* profile = nullptr;
};

// `flag` is "--region" and the like, or "cloud.client{profile=}" for a client's profile.
Found from_flag(const std::string& flag, const std::string& value) {
  return {value, flag.rfind("--", 0) == 0 ? "flag " + flag : flag, flag};
}

Found from_env(const EnvLookup& env, const std::string& name) {
  const char* v = env(name.c_str());
  if (!v || !*v) return {};
  return {v, "env " + name, name};
}

Found from_entry(const std::string& path, const IniEntry& e) {
  std::string where = located(path, e.line);
  return {e.value, "file " + where, where};
}

Found from_profile(const Sources& s, const std::string& key) {
  const IniEntry* e = s.profile ? s.profile->find(key) : nullptr;
  return e ? from_entry(s.file->path, *e) : Found{};
}

// Flag, else variable, else the profile's key, else nothing (origin "default").
Found pick(const Sources& s, const std::string& key, const std::string& flag, const std::string& flag_value) {
  if (!flag_value.empty()) return from_flag(flag, flag_value);
  Found f = from_env(s.env, env_name(key));
  return f.value.empty() ? from_profile(s, key) : f;
}

// ------------------------------------------------------------------ the settings

// The value a flag gives the setting, "" when not given.
std::string flag_value(const ConfigOverrides& flags, const SettingSpec& spec, const std::string& api) {
  if (spec.key == "region") return flags.region;
  if (spec.key == "dialect") return flags.dialect;
  if (spec.key == "endpoint_url") return flags.endpoint_url;
  auto endpoint = flags.endpoints.find(api);
  return spec.key == "endpoint" && endpoint != flags.endpoints.end() ? endpoint->second : "";
}

// What `cloudlua config` shows for a setting nothing sets.
std::string default_shown(const SettingSpec& spec, const std::string& api) {
  return spec.shown_default.empty() ? shown_setting(spec, api, ClientConfig{}) : spec.shown_default;
}

Outcome<bool> check_flag_apis(const ConfigOverrides& flags) {
  for (const auto& [api, url] : flags.endpoints)
    if (!Model::builtin().has_api(api))
      return config_error("UnknownApi", "--endpoint: no API named '" + api + "' (APIs: " + joined(api_names()) + ")");
  return true;
}

// aws-cli's variable for the one setting, AWS_ENDPOINT_URL, taken as endpoint_url when
// nothing of cloudlua's (flag, CLOUDLUA_* variable, profile) sets an endpoint.
Outcome<bool> apply_aws_endpoint_url(const Sources& s, LoadedConfig& out) {
  Found f = from_env(s.env, "AWS_ENDPOINT_URL");
  if (out.endpoints_configured || f.value.empty()) return true;
  auto applied = apply_setting(*find_setting("endpoint_url"), "", f.value, f.where, out.client);
  if (!applied.ok()) return applied.error();
  out.endpoints_configured = true;
  for (Setting& setting : out.settings)
    if (setting.name == "endpoint_url") setting.value = f.value, setting.origin = f.origin;
  return true;
}

Outcome<bool> apply_settings(const Sources& s, LoadedConfig& out) {
  auto flags_ok = check_flag_apis(s.flags);
  if (!flags_ok.ok()) return flags_ok.error();
  for (const SettingSpec& spec : setting_specs()) {
    if (!spec.in_profiles) continue;
    for (const std::string& api : spec.per_api ? api_names() : std::vector<std::string>{""}) {
      std::string name = setting_name(spec, api);
      Found f = pick(s, name, spec.flag, flag_value(s.flags, spec, api));
      if (!f.value.empty()) {
        auto applied = apply_setting(spec, api, f.value, f.where, out.client);
        if (!applied.ok()) return applied.error();
        if (spec.key == "endpoint" || spec.key == "endpoint_url") out.endpoints_configured = true;
      }
      out.settings.push_back({name, f.value.empty() ? default_shown(spec, api) : f.value, f.origin, false, ""});
    }
  }
  return apply_aws_endpoint_url(s, out);
}

// ------------------------------------------------------------------ credentials

// The access key, secret and token of one layer; `given` when the layer has any.
struct CredentialLayer {
  Found key, secret, token;
  bool given() const { return !key.value.empty() || !secret.value.empty() || !token.value.empty(); }
};

Outcome<bool> check_complete(const CredentialLayer& c, const std::string& key_name, const std::string& secret_name) {
  if (!c.key.value.empty() && !c.secret.value.empty()) return true;
  std::string message = !c.key.value.empty()      ? key_name + " is set but " + secret_name + " is not: give both"
                        : !c.secret.value.empty() ? secret_name + " is set but " + key_name + " is not: give both"
                                                  : "a session token is set without " + key_name + " and " +
                                                        secret_name + ": it goes with the keys it was issued for";
  return config_error("MissingCredentials", message);
}

CredentialLayer credentials_in(const std::string& path, const IniSection& section) {
  CredentialLayer c;
  Found* slots[] = {&c.key, &c.secret, &c.token};
  for (size_t i = 0; i < 3; ++i)
    if (const IniEntry* e = section.find(credential_keys()[i])) *slots[i] = from_entry(path, *e);
  return c;
}

// The profile's credentials: inline, or from the section of the same name in the
// file that credentials_file names.
Outcome<CredentialLayer> file_credentials(const Sources& s, const std::string& profile) {
  if (!s.profile) return CredentialLayer{};
  CredentialLayer inline_keys = credentials_in(s.file->path, *s.profile);
  const IniEntry* named = s.profile->find("credentials_file");
  if (!named) return inline_keys;
  std::string where = located(s.file->path, named->line);
  if (inline_keys.given())
    return config_error("ConfigSyntax",
                        where + ": profile '" + profile + "' has both credentials_file and keys of its own: keep one");
  std::string path = resolve_path(named->value, s.file->path, s.env);
  auto file = load_ini(path, "credentials file", &credential_keys());
  if (!file.ok()) return file.error();
  const IniSection* section = file->find(profile);
  if (!section) {
    std::vector<std::string> names;
    for (const IniSection& sec : file->sections) names.push_back(sec.name);
    return config_error("MissingCredentials", where + ": the credentials file " + path + " has no [" + profile +
                                                  "] section (it has: " + (names.empty() ? "none" : joined(names)) +
                                                  ")");
  }
  return credentials_in(path, *section);
}

Outcome<CredentialLayer> pick_credentials(const Sources& s, const std::string& profile) {
  CredentialLayer flags{
      from_flag("--access-key", s.flags.access_key_id), from_flag("--secret-key", s.flags.secret_access_key), {}};
  if (s.flags.access_key_id.empty()) flags.key = {};
  if (s.flags.secret_access_key.empty()) flags.secret = {};
  if (flags.given()) {
    auto ok = check_complete(flags, "--access-key", "--secret-key");
    return ok.ok() ? Outcome<CredentialLayer>(flags) : ok.error();
  }
  CredentialLayer env{from_env(s.env, "CLOUDLUA_ACCESS_KEY_ID"), from_env(s.env, "CLOUDLUA_SECRET_ACCESS_KEY"),
                      from_env(s.env, "CLOUDLUA_SESSION_TOKEN")};
  if (env.given()) {
    auto ok = check_complete(env, "CLOUDLUA_ACCESS_KEY_ID", "CLOUDLUA_SECRET_ACCESS_KEY");
    return ok.ok() ? Outcome<CredentialLayer>(env) : ok.error();
  }
  auto file = file_credentials(s, profile);
  if (!file.ok() || !file->given()) return file;
  std::string where = file->key.where.empty() ? file->secret.where : file->key.where;
  auto ok = check_complete(*file, "access_key_id", "secret_access_key");
  if (!ok.ok()) ok.error().message = where + ": profile '" + profile + "': " + ok.error().message;
  return ok.ok() ? file : ok.error();
}

void apply_credentials(const CredentialLayer& c, LoadedConfig& out) {
  Credentials& creds = out.client.credentials;
  creds = {c.key.value, c.secret.value, c.token.value};
  out.credentials_configured = !creds.access_key_id.empty();
  out.settings.push_back({"access_key_id", c.key.value, c.key.origin, false, ""});
  out.settings.push_back({"secret_access_key", c.secret.value, c.secret.origin, true, ""});
  out.settings.push_back({"session_token", c.token.value, c.token.origin, true, ""});
}

// ------------------------------------------------------------------ the profile

// `flag` names what chose the profile: "--profile", or cloud.client's argument.
Outcome<Found> choose_profile(const Sources& s, const std::string& flag) {
  Found f = pick(s, "profile", flag, s.flags.profile);
  if (f.value.empty()) f.value = "default";
  bool known = s.file && s.file->find(f.value);
  if (known || f.value == "default") return f;
  std::string message = "no profile '" + f.value + "' (chosen by " + f.where + ")";
  if (!s.file)
    message += ": there is no config file (CLOUDLUA_CONFIG_FILE names one; the default is ~/.config/cloudlua/config)";
  else if (s.file->sections.empty()) message += " in " + s.file->path + ", which defines no profiles";
  else {
    std::vector<std::string> names;
    for (const IniSection& sec : s.file->sections) names.push_back(sec.name);
    message += " in " + s.file->path + " (profiles: " + joined(names) + ")";
  }
  return config_error("UnknownProfile", message);
}

// Shows what the emulator stands in for, once it is known whether it will.
void describe_defaults(LoadedConfig& out) {
  for (Setting& s : out.settings) {
    bool endpoint = s.name.rfind("endpoint.", 0) == 0;
    bool credential = s.name == "access_key_id" || s.name == "secret_access_key";
    if (!s.value.empty() || s.origin != "default" || !(endpoint || credential)) continue;
    if (!out.account_configured) {
      s.placeholder = endpoint ? "(the embedded emulator)" : "(the emulator's built-in one)";
    } else if (!out.client.endpoint_url.empty()) {
      s.origin = endpoint ? "asked of endpoint_url's serve (another S3 server there: storage's only)"
                          : "serve's built-in one when it uses it (asked of endpoint_url)";
    } else s.origin = endpoint ? "calls to this API fail: no endpoint" : "calls fail: no credentials";
  }
}

}  // namespace

// ------------------------------------------------------------------ public

const IniEntry* IniSection::find(const std::string& key) const {
  for (const IniEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const IniSection* IniFile::find(const std::string& name) const {
  for (const IniSection& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

namespace {

// A line that is neither a comment, a header nor key = value is never shown: it may
// be a secret (`secret_access_key SECRET`). Its first word is, when it names a setting.
std::string no_equals_problem(const std::string& line) {
  std::string word = line.substr(0, line.find_first_of(" \t:"));
  std::string got = key_problem(word).empty() ? "'" + word + "' without '='"
                                              : "a line that is none of these; not shown, as it may hold a secret";
  return "expected 'key = value', a [profile] header or a # comment (got " + got + ")";
}

// One line of an INI file into `file`; "" or what is wrong with it.
std::string parse_ini_line(const std::string& raw, int n, IniFile& file) {
  std::string line = trim(raw);
  if (line.empty() || line[0] == '#' || line[0] == ';') return "";
  if (line[0] == '[') {
    if (line.back() != ']') return "a section header is [name], closed with ']'";
    std::string name = trim(line.substr(1, line.size() - 2));
    if (!valid_name(name, "-_.")) return "a profile name is letters, digits, '-', '_' and '.' (got '" + name + "')";
    if (const IniSection* first = file.find(name))
      return "profile [" + name + "] is defined twice (first at line " + std::to_string(first->line) + ")";
    file.sections.push_back({name, n, {}});
    return "";
  }
  size_t eq = line.find('=');
  if (eq == std::string::npos) return no_equals_problem(line);
  std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
  if (!valid_name(key, "_.")) return "a key is lowercase letters, digits, '_' and '.' (got '" + key + "')";
  if (file.sections.empty()) return key + " is set outside any [profile] section";
  IniSection& section = file.sections.back();
  if (value.empty()) return key + " has no value";
  if (const IniEntry* first = section.find(key))
    return key + " is set twice in [" + section.name + "] (first at line " + std::to_string(first->line) + ")";
  section.entries.push_back({key, value, n});
  return "";
}

}  // namespace

Outcome<IniFile> parse_ini(const std::string& text, const std::string& path) {
  IniFile file{path, {}};
  std::istringstream in(text);
  std::string raw;
  for (int n = 1; std::getline(in, raw); ++n) {
    std::string problem = parse_ini_line(raw, n, file);
    if (!problem.empty()) return config_error("ConfigSyntax", located(path, n) + ": " + problem);
  }
  return file;
}

Outcome<std::pair<std::string, std::string>> parse_endpoint_setting(const std::string& setting) {
  if (setting.rfind("http://", 0) == 0 || setting.rfind("https://", 0) == 0)
    return std::make_pair(std::string(), setting);
  size_t eq = setting.find('=');
  if (eq == std::string::npos || eq == 0)
    return config_error(
        "InvalidEndpoint",
        "an endpoint is given as API=URL, e.g. storage=http://127.0.0.1:9000, or as a URL alone, a cloudlua "
        "serve's or an S3 server's, e.g. http://127.0.0.1:9000 (got '" +
            redact(setting) + "')");
  return std::make_pair(setting.substr(0, eq), setting.substr(eq + 1));
}

namespace {

Outcome<LoadedConfig> load_layers(const ConfigOverrides& flags, const EnvLookup& env, const std::string& profile_flag) {
  LoadedConfig out;
  std::optional<IniFile> file;
  auto read = read_config_file(env, out, file);
  if (!read.ok()) return read.error();
  Sources s{flags, env, file ? &*file : nullptr, nullptr};
  auto profile = choose_profile(s, profile_flag);
  if (!profile.ok()) return profile.error();
  out.client.profile = profile->value;
  bool profile_chosen = profile->origin != "default";
  out.client.debug = flags.debug;
  out.client.record = flags.record;
  out.client.replay = flags.replay;
  out.settings.push_back({"profile", profile->value, profile->origin, false, ""});
  s.profile = file ? file->find(profile->value) : nullptr;
  auto applied = apply_settings(s, out);
  if (!applied.ok()) return applied.error();
  auto credentials = pick_credentials(s, profile->value);
  if (!credentials.ok()) return credentials.error();
  apply_credentials(*credentials, out);
  out.account_configured = out.endpoints_configured || out.credentials_configured || profile_chosen;
  describe_defaults(out);
  return out;
}

}  // namespace

Outcome<LoadedConfig> load_config(const ConfigOverrides& flags, const EnvLookup& env) {
  return load_layers(flags, env, "--profile");
}

Outcome<Credentials> given_credentials(const ConfigOverrides& flags, const EnvLookup& env) {
  auto picked = pick_credentials(Sources{flags, env, nullptr, nullptr}, "");
  if (!picked.ok()) return picked.error();
  return Credentials{picked->key.value, picked->secret.value, picked->token.value};
}

Outcome<LoadedConfig> load_profile(const std::string& profile, const EnvLookup& env) {
  EnvLookup locating_only = [&env](const char* name) -> const char* {
    for (const char* keep : {"CLOUDLUA_CONFIG_FILE", "XDG_CONFIG_HOME", "HOME"})
      if (std::strcmp(name, keep) == 0) return env(name);
    return nullptr;
  };
  ConfigOverrides flags;
  flags.profile = profile;
  return load_layers(flags, locating_only, "cloud.client{profile=}");
}

std::string masked_value(const Setting& s) {
  if (s.value.empty()) return s.placeholder.empty() ? "(not set)" : s.placeholder;  // no value: nothing to mask
  if (s.secret) return "********";
  if (s.name == "access_key_id")
    return s.value.size() <= 4 ? std::string(s.value.size(), '*')
                               : std::string(s.value.size() - 4, '*') + s.value.substr(s.value.size() - 4);
  return s.value;
}

std::string config_report(const LoadedConfig& c) {
  std::vector<std::pair<std::string, std::string>> rows;  // name, value
  std::vector<std::string> origins;
  rows.push_back({"config_file", c.file.empty() ? "(none)" : c.file});
  origins.push_back(c.file_origin.empty() ? "CLOUDLUA_CONFIG_FILE is empty" : c.file_origin);
  for (const Setting& s : c.settings) rows.push_back({s.name, masked_value(s)}), origins.push_back(s.origin);
  size_t name_width = 0, value_width = 0;
  for (const auto& [name, value] : rows)
    name_width = std::max(name_width, name.size()), value_width = std::max(value_width, value.size());
  value_width = std::min<size_t>(value_width, 48);
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line = rows[i].first + std::string(name_width + 2 - rows[i].first.size(), ' ') + rows[i].second;
    size_t pad = rows[i].second.size() < value_width ? value_width - rows[i].second.size() : 0;
    out += line + std::string(pad + 2, ' ') + origins[i] + "\n";
  }
  if (!c.profiles.empty()) out += "profiles in the file: " + joined(c.profiles) + "\n";
  return redact(out);
}

// ------------------------------------------------------------------ serve --profile

namespace {

const char* const kServeMark = "# written by cloudlua serve: it replaces this profile when run with --profile again";

// `text` with the lines of section `name` (its header to the next header) replaced
// by `section`, or `section` appended when it has none.
std::string with_section(const std::string& text, const IniSection* old, const std::string& section) {
  std::istringstream in(text);
  std::string out, raw;
  bool inside = false;
  for (int n = 1; std::getline(in, raw); ++n) {
    std::string line = trim(raw);
    if (old && n == old->line) inside = true, out += section;
    else if (inside && !line.empty() && line[0] == '[') inside = false;
    if (!inside) out += raw + "\n";
  }
  if (!old) out += (out.empty() || out.substr(out.size() > 1 ? out.size() - 2 : 0) == "\n\n" ? "" : "\n") + section;
  return out;
}

// Writes `text` to a new file beside `path` and renames it over `path` (mode `mode`),
// through core/base/files' one durable write.
Outcome<bool> replace_file(const std::string& path, const std::string& text, mode_t mode) {
  std::string problem = write_durably(path, [&](int fd) {
    return ::fchmod(fd, mode) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  });
  if (problem.empty()) return true;
  return config_error("ConfigFileUnwritable", problem);
}

// Makes the folders of `path` (0700) that do not exist.
void make_parents(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
    ::mkdir(path.substr(0, slash).c_str(), 0700);
}

}  // namespace

Outcome<std::string> write_serve_profile(const std::string& name, const std::string& url, const EnvLookup& env) {
  if (!valid_name(name, "-_."))
    return config_error("InvalidProfile",
                        "a profile name is letters, digits, '-', '_' and '.' (got '" + redact(name) + "')");
  const char* named = env("CLOUDLUA_CONFIG_FILE");
  std::string path = named ? named : default_config_path(env);
  if (path.empty())
    return config_error("NoConfigFile",
                        "--profile: no config file to write (CLOUDLUA_CONFIG_FILE is empty, or HOME is not set)");
  std::string text;
  mode_t mode = 0600;
  if (file_exists(path)) {
    auto read = read_text(path, "config file");
    if (!read.ok()) return read.error();
    text = *read;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  } else {
    make_parents(path);
  }
  auto file = parse_ini(text, path);
  if (!file.ok()) return file.error();
  const IniSection* old = file->find(name);
  if (old) {
    std::istringstream in(text);
    std::string line;
    for (int n = 0; n <= old->line && std::getline(in, line);) ++n;
    if (trim(line) != kServeMark)
      return config_error("ProfileExists", "--profile " + name + ": " + located(path, old->line) + " defines [" + name +
                                               "] and cloudlua serve did not write it; choose another name");
  }
  std::string section = "[" + name + "]\n" + kServeMark + "\nendpoint_url = " + url + "\n";
  auto written = replace_file(path, with_section(text, old, section), mode);
  if (!written.ok()) return written.error();
  return path;
}

Outcome<ClientConfig> client_config(const json& args, const ClientConfig& session, const EnvLookup& env) {
  auto profile = client_profile(args);
  if (!profile.ok()) return profile.error();
  ClientConfig c = session;
  if (!profile->empty()) {
    auto loaded = load_profile(*profile, env);
    if (!loaded.ok()) return loaded.error();
    c = std::move(loaded->client);
    c.debug = session.debug;  // --debug, --record and --replay cover every client
    c.record = session.record;
    c.replay = session.replay;
  }
  auto applied = apply_client_arguments(args, c);
  if (!applied.ok()) return applied.error();
  return c;
}

}  // namespace cloud
