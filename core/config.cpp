// Effective configuration from flags and environment; see config.h for the order.
#include "core/config.h"

#include <cctype>

#include "core/model.h"

namespace cloud {

namespace {

std::string env_or(const EnvLookup& env, const char* name, const std::string& fallback = "") {
  const char* v = env(name);
  return v && *v ? v : fallback;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Outcome<bool> set_endpoint(ClientConfig& config, const std::string& api, const std::string& url) {
  if (!Model::builtin().api(api)) {
    std::string known;
    for (const std::string& a : api_names()) known += (known.empty() ? "" : ", ") + a;
    return make_error(ErrorKind::config, "UnknownApi", "no API named '" + api + "' (known: " + known + ")");
  }
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return make_error(ErrorKind::config, "InvalidEndpoint",
                      "the endpoint of " + api + " must start with http:// or https:// (got '" + url + "')");
  config.endpoints[api] = url;
  return true;
}

}  // namespace

std::vector<std::string> api_names() {
  std::vector<std::string> out;
  for (const Api& a : Model::builtin().apis()) out.push_back(a.name);
  return out;
}

Outcome<std::pair<std::string, std::string>> parse_endpoint_setting(const std::string& setting) {
  size_t eq = setting.find('=');
  if (eq == std::string::npos || eq == 0)
    return make_error(ErrorKind::config, "InvalidEndpoint",
                      "an endpoint is given as API=URL, e.g. storage=http://127.0.0.1:9000 (got '" + setting + "')");
  return std::make_pair(setting.substr(0, eq), setting.substr(eq + 1));
}

Outcome<LoadedConfig> load_config(const ConfigOverrides& flags, const EnvLookup& env) {
  LoadedConfig out;
  ClientConfig& c = out.client;
  c.profile = flags.profile.empty() ? env_or(env, "CLOUDLUA_PROFILE", "default") : flags.profile;
  c.region = flags.region.empty() ? env_or(env, "CLOUDLUA_REGION", c.region) : flags.region;
  std::string dialect = flags.dialect.empty() ? env_or(env, "CLOUDLUA_DIALECT", "ext") : flags.dialect;
  c.dialect = Dialect::find(dialect);
  if (!c.dialect)
    return make_error(ErrorKind::config, "InvalidDialect", "dialect must be ext or aws (got '" + dialect + "')");
  c.credentials.access_key_id = flags.access_key_id.empty() ? env_or(env, "CLOUDLUA_ACCESS_KEY_ID") : flags.access_key_id;
  c.credentials.secret_access_key =
      flags.secret_access_key.empty() ? env_or(env, "CLOUDLUA_SECRET_ACCESS_KEY") : flags.secret_access_key;
  c.credentials.session_token = env_or(env, "CLOUDLUA_SESSION_TOKEN");
  out.credentials_configured = !c.credentials.access_key_id.empty();
  for (const std::string& api : api_names()) {
    std::string url = env_or(env, ("CLOUDLUA_ENDPOINT_" + upper(api)).c_str());
    if (!url.empty()) {
      auto set = set_endpoint(c, api, url);
      if (!set.ok()) return set.error();
    }
  }
  for (const auto& [api, url] : flags.endpoints) {
    auto set = set_endpoint(c, api, url);
    if (!set.ok()) return set.error();
  }
  out.endpoints_configured = !c.endpoints.empty();
  return out;
}

}  // namespace cloud
