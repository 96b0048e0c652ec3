// Configuration: the config file's syntax and its errors (file:line), the order
// flags > environment > file > defaults with the origin of every value, profiles,
// credentials as a unit (inline, from a credentials file, refused when others can
// read them), the `cloudlua config` report with secrets masked, and the one table of
// settings that the profile, the variables and cloud.client{} all go through.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <tuple>

#include "core/client/config.h"
#include "core/client/settings.h"

namespace {

using cloud::ConfigOverrides;
using cloud::LoadedConfig;

// A private temporary folder, removed with its files at the end of the test.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/cloudlua-config-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  // Writes `text` to `name` with permissions `mode`; returns the full path.
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    chmod(p.c_str(), mode);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An environment made of the given variables only.
struct Env {
  std::map<std::string, std::string> vars;
  cloud::EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

const cloud::Setting& setting(const LoadedConfig& c, const std::string& name) {
  for (const cloud::Setting& s : c.settings)
    if (s.name == name) return s;
  FAIL("no setting " << name);
  throw;
}

const char* const kProfiles =
    "# two accounts\n"
    "[default]\n"
    "region = jp-east-1\n"
    "endpoint.storage = https://storage.example.com\n"
    "\n"
    "[qa]\n"
    "region = jp-west-1\n"
    "dialect = aws\n"
    "endpoint.cluster = http://127.0.0.1:9002\n"
    "service.cluster = k8s\n"
    "max_attempts = 5\n"
    "timeout = 2.5\n";

}  // namespace

TEST_CASE("config file: sections, keys, values and line numbers", "[config]") {
  auto f = cloud::parse_ini("; comment\n[a]\n  key = some value  \n\n[b.c-d_e]\nx.y=1\r\n", "f");
  REQUIRE(f.ok());
  REQUIRE(f->sections.size() == 2);
  CHECK(f->sections[0].name == "a");
  CHECK(f->sections[0].line == 2);
  CHECK(f->sections[0].entries[0].value == "some value");
  CHECK(f->sections[0].entries[0].line == 3);
  CHECK(f->sections[1].name == "b.c-d_e");
  CHECK(f->sections[1].find("x.y")->value == "1");
}

TEST_CASE("config file: each syntax error names the file and line", "[config]") {
  auto error_of = [](const std::string& text) {
    auto f = cloud::parse_ini(text, "/etc/x");
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().kind == cloud::ErrorKind::config);
    CHECK(f.error().code == "ConfigSyntax");
    return f.error().message;
  };
  CHECK(error_of("region = x\n") == "/etc/x:1: region is set outside any [profile] section");
  CHECK(error_of("[a]\nregion\n") ==
        "/etc/x:2: expected 'key = value', a [profile] header or a # comment (got 'region' without '=')");
  // A line without '=' may be a secret: never shown, only a setting's name is.
  CHECK(error_of("[a]\nsecret_access_key wJalrXUtnFEMI/K7MDENG\n") ==
        "/etc/x:2: expected 'key = value', a [profile] header or a # comment (got 'secret_access_key' without '=')");
  CHECK(error_of("[a]\nwJalrXUtnFEMI/K7MDENG\n") ==
        "/etc/x:2: expected 'key = value', a [profile] header or a # comment "
        "(got a line that is none of these; not shown, as it may hold a secret)");
  CHECK(error_of("[a\n") == "/etc/x:1: a section header is [name], closed with ']'");
  CHECK(error_of("[a]\n[a]\n") == "/etc/x:2: profile [a] is defined twice (first at line 1)");
  CHECK(error_of("[a]\nregion = 1\nregion = 2\n") == "/etc/x:3: region is set twice in [a] (first at line 2)");
  CHECK(error_of("[a]\nregion =\n") == "/etc/x:2: region has no value");
  CHECK(error_of("[profile qa]\n") ==
        "/etc/x:1: a profile name is letters, digits, '-', '_' and '.' (got 'profile qa')");
}

TEST_CASE("config: flags over environment over the file over defaults, each with its origin", "[config]") {
  TempDir dir;
  std::string file = dir.write("config", kProfiles);
  Env env{{{"CLOUDLUA_CONFIG_FILE", file}, {"CLOUDLUA_PROFILE", "qa"}}};
  ConfigOverrides flags;

  auto from_file = cloud::load_config(flags, env.lookup());
  REQUIRE(from_file.ok());
  CHECK(from_file->client.profile == "qa");
  CHECK(setting(*from_file, "profile").origin == "env CLOUDLUA_PROFILE");
  CHECK(from_file->client.region == "jp-west-1");
  CHECK(setting(*from_file, "region").origin == "file " + file + ":7");
  CHECK(from_file->client.dialect->name == "aws");
  CHECK(from_file->client.services.at("cluster") == "k8s");
  CHECK(from_file->client.retry.max_attempts == 5);
  CHECK(from_file->client.transport.timeout_ms == 2500);
  CHECK(from_file->client.endpoints.at("cluster") == "http://127.0.0.1:9002");
  CHECK(from_file->endpoints_configured);
  CHECK(setting(*from_file, "connect_timeout").origin == "default");

  env.vars["CLOUDLUA_REGION"] = "eu-1";
  auto from_env = cloud::load_config(flags, env.lookup());
  REQUIRE(from_env.ok());
  CHECK(from_env->client.region == "eu-1");
  CHECK(setting(*from_env, "region").origin == "env CLOUDLUA_REGION");

  flags.region = "us-2";
  flags.profile = "default";
  flags.endpoints["cluster"] = "http://127.0.0.1:1";
  auto from_flags = cloud::load_config(flags, env.lookup());
  REQUIRE(from_flags.ok());
  CHECK(from_flags->client.region == "us-2");
  CHECK(setting(*from_flags, "region").origin == "flag --region");
  CHECK(setting(*from_flags, "profile").origin == "flag --profile");
  CHECK(setting(*from_flags, "endpoint.cluster").origin == "flag --endpoint");
  CHECK(from_flags->client.endpoints.at("storage") == "https://storage.example.com");
  CHECK(from_flags->client.dialect->name == "ext");  // [default] does not set it
}

TEST_CASE("config: the file's location", "[config]") {
  TempDir dir;
  dir.write("config", "");  // so that mkdir below has a parent to sit beside
  std::string xdg = dir.path() + "/xdg";
  mkdir(xdg.c_str(), 0700);
  mkdir((xdg + "/cloudlua").c_str(), 0700);
  dir.write("xdg/cloudlua/config", "[default]\nregion = xdg-1\n");

  Env env{{{"XDG_CONFIG_HOME", xdg}, {"HOME", "/nonexistent"}}};
  auto found = cloud::load_config({}, env.lookup());
  REQUIRE(found.ok());
  CHECK(found->file == xdg + "/cloudlua/config");
  CHECK(found->client.region == "xdg-1");

  env.vars["CLOUDLUA_CONFIG_FILE"] = "";  // empty: no file at all
  auto none = cloud::load_config({}, env.lookup());
  REQUIRE(none.ok());
  CHECK(none->file.empty());
  CHECK(none->client.region == "jp-east-1");
  CHECK_FALSE(none->endpoints_configured);

  env.vars["CLOUDLUA_CONFIG_FILE"] = dir.path() + "/missing";
  auto missing = cloud::load_config({}, env.lookup());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "the config file " + dir.path() + "/missing does not exist");

  Env absent{{{"HOME", dir.path()}}};  // ~/.config/cloudlua/config does not exist: fine
  auto defaults = cloud::load_config({}, absent.lookup());
  REQUIRE(defaults.ok());
  CHECK(defaults->file.empty());
}

TEST_CASE("config: an unknown profile lists the known ones", "[config]") {
  TempDir dir;
  Env env{{{"CLOUDLUA_CONFIG_FILE", dir.write("config", kProfiles)}}};
  ConfigOverrides flags;
  flags.profile = "prod";
  auto r = cloud::load_config(flags, env.lookup());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "UnknownProfile");
  CHECK(r.error().message ==
        "no profile 'prod' (chosen by --profile) in " + env.vars["CLOUDLUA_CONFIG_FILE"] + " (profiles: default, qa)");

  Env no_file{{{"CLOUDLUA_CONFIG_FILE", ""}, {"CLOUDLUA_PROFILE", "prod"}}};
  auto r2 = cloud::load_config({}, no_file.lookup());
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().message.find("no profile 'prod' (chosen by CLOUDLUA_PROFILE): there is no config file") == 0);

  flags.profile = "default";  // always known, file or not
  CHECK(cloud::load_config(flags, no_file.lookup()).ok());
}

TEST_CASE("config: bad keys and values are errors that point at them", "[config]") {
  TempDir dir;
  auto error_for = [&](const std::string& text, const Env& extra = {}) {
    Env env = extra;
    env.vars["CLOUDLUA_CONFIG_FILE"] = dir.write("config", text);
    auto r = cloud::load_config({}, env.lookup());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == cloud::ErrorKind::config);
    return r.error().message;
  };
  std::string path = dir.path() + "/config";
  CHECK(error_for("[default]\nregoin = x\n").find(path + ":2: unknown setting 'regoin' (settings: region, dialect,") ==
        0);
  CHECK(error_for("[other]\nendpoint.stroage = http://x\n") ==
        path + ":2: no API named 'stroage' in 'endpoint.stroage' (APIs: catalog, cluster, devops, storage)");
  CHECK(error_for("[default]\n\ndialect = aws4\n") == path + ":3: dialect must be ext or aws (got 'aws4')");
  CHECK(error_for("[default]\nendpoint.devops = ftp://x\n") ==
        path + ":2: endpoint.devops must be a URL starting with http:// or https:// (got 'ftp://x')");
  CHECK(error_for("[default]\nmax_attempts = 0\n") ==
        path + ":2: max_attempts must be an integer from 1 to 10 (got 0)");
  CHECK(error_for("[default]\ntimeout = soon\n") ==
        path + ":2: timeout must be a number of seconds from 0.001 to 86400 (got 'soon')");
  CHECK(error_for("[default]\nendpoint.cluster = https://ops:pw@cluster.example.com/v1\n") ==
        path +
            ":2: endpoint.cluster must not hold a user name or password "
            "(got 'https://ops:<redacted>@cluster.example.com/v1'): give credentials as access_key_id and "
            "secret_access_key");
  CHECK(error_for("[default]\nquiet_emulator = yes\n") ==
        path + ":2: quiet_emulator must be true or false (got 'yes')");
  CHECK(error_for("[default]\n", Env{{{"CLOUDLUA_DIALECT", "v2"}}}) ==
        "CLOUDLUA_DIALECT: dialect must be ext or aws (got 'v2')");

  ConfigOverrides flags;
  flags.endpoints["compute"] = "http://x";
  Env none{{{"CLOUDLUA_CONFIG_FILE", ""}}};
  auto r = cloud::load_config(flags, none.lookup());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "--endpoint: no API named 'compute' (APIs: catalog, cluster, devops, storage)");
}

TEST_CASE("config: an account is endpoints, credentials or a chosen profile, only without one the emulator serves",
          "[config]") {
  TempDir dir;
  std::string file =
      dir.write("config", "[default]\nregion = jp-west-1\nquiet_emulator = true\n\n[prod]\nregion = jp-east-1\n");
  auto account = [&](const Env& extra, const ConfigOverrides& flags = {}) {
    Env env = extra;
    env.vars["CLOUDLUA_CONFIG_FILE"] = file;
    auto c = cloud::load_config(flags, env.lookup());
    REQUIRE(c.ok());
    return c->account_configured;
  };
  CHECK_FALSE(account({}));  // the default profile's region alone is no account
  CHECK_FALSE(account({{{"CLOUDLUA_REGION", "jp-west-1"}}}));
  CHECK(account({{{"CLOUDLUA_PROFILE", "prod"}}}));
  ConfigOverrides profile;
  profile.profile = "default";  // chosen, even the default one
  CHECK(account({}, profile));
  CHECK(account({{{"CLOUDLUA_ACCESS_KEY_ID", "AKID"}, {"CLOUDLUA_SECRET_ACCESS_KEY", "s"}}}));
  CHECK(account({{{"CLOUDLUA_ENDPOINT_STORAGE", "http://127.0.0.1:9000"}}}));

  Env quiet{{{"CLOUDLUA_CONFIG_FILE", file}}};
  CHECK(cloud::load_config({}, quiet.lookup())->client.quiet_emulator);
  quiet.vars["CLOUDLUA_QUIET_EMULATOR"] = "0";  // the variable over the file
  CHECK_FALSE(cloud::load_config({}, quiet.lookup())->client.quiet_emulator);
}

TEST_CASE("config: credentials are a unit from the highest layer that has them", "[config]") {
  TempDir dir;
  Env env{{{"CLOUDLUA_CONFIG_FILE", dir.write("config",
                                              "[default]\naccess_key_id = FILEKEY1\nsecret_access_key = file-secret\n"
                                              "session_token = file-token\n")}}};
  auto file = cloud::load_config({}, env.lookup());
  REQUIRE(file.ok());
  CHECK(file->credentials_configured);
  CHECK(file->client.credentials.access_key_id == "FILEKEY1");
  CHECK(file->client.credentials.session_token == "file-token");
  CHECK(setting(*file, "secret_access_key").origin == "file " + dir.path() + "/config:3");

  env.vars["CLOUDLUA_ACCESS_KEY_ID"] = "ENVKEY";
  env.vars["CLOUDLUA_SECRET_ACCESS_KEY"] = "env-secret";
  auto from_env = cloud::load_config({}, env.lookup());
  REQUIRE(from_env.ok());
  CHECK(from_env->client.credentials.access_key_id == "ENVKEY");
  CHECK(from_env->client.credentials.session_token.empty());  // not the file's token: never mixed

  ConfigOverrides flags;
  flags.access_key_id = "FLAGKEY";
  flags.secret_access_key = "flag-secret";
  auto from_flags = cloud::load_config(flags, env.lookup());
  REQUIRE(from_flags.ok());
  CHECK(from_flags->client.credentials.secret_access_key == "flag-secret");
  CHECK(setting(*from_flags, "access_key_id").origin == "flag --access-key");

  flags.secret_access_key.clear();
  auto half = cloud::load_config(flags, env.lookup());
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().code == "MissingCredentials");
  CHECK(half.error().message == "--access-key is set but --secret-key is not: give both");

  env.vars.erase("CLOUDLUA_ACCESS_KEY_ID");
  auto env_half = cloud::load_config({}, env.lookup());
  REQUIRE_FALSE(env_half.ok());
  CHECK(env_half.error().message == "CLOUDLUA_SECRET_ACCESS_KEY is set but CLOUDLUA_ACCESS_KEY_ID is not: give both");

  Env token_only{{{"CLOUDLUA_CONFIG_FILE", ""}, {"CLOUDLUA_SESSION_TOKEN", "t"}}};
  auto token = cloud::load_config({}, token_only.lookup());
  REQUIRE_FALSE(token.ok());
  CHECK(token.error().message.find("a session token is set without CLOUDLUA_ACCESS_KEY_ID") == 0);

  Env file_half{{{"CLOUDLUA_CONFIG_FILE", dir.write("half", "[default]\naccess_key_id = K\n")}}};
  auto r = cloud::load_config({}, file_half.lookup());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        dir.path() + "/half:2: profile 'default': access_key_id is set but secret_access_key is not: give both");
}

TEST_CASE("config: a credentials file, one section per profile", "[config]") {
  TempDir dir;
  dir.write("credentials", "[qa]\naccess_key_id = QAKEY\nsecret_access_key = qa-secret\n");
  Env env{
      {{"CLOUDLUA_CONFIG_FILE",
        dir.write("config", "[qa]\ncredentials_file = credentials\n[prod]\ncredentials_file = credentials\n", 0644)},
       {"HOME", dir.path()}}};
  ConfigOverrides flags;
  flags.profile = "qa";
  auto qa = cloud::load_config(flags, env.lookup());
  REQUIRE(qa.ok());
  CHECK(qa->client.credentials.access_key_id == "QAKEY");
  CHECK(setting(*qa, "secret_access_key").origin == "file " + dir.path() + "/credentials:3");

  flags.profile = "prod";
  auto prod = cloud::load_config(flags, env.lookup());
  REQUIRE_FALSE(prod.ok());
  CHECK(prod.error().message == dir.path() + "/config:4: the credentials file " + dir.path() +
                                    "/credentials has no [prod] section (it has: qa)");

  dir.write("config", "[qa]\ncredentials_file = ~/credentials\naccess_key_id = X\n");
  flags.profile = "qa";
  auto both = cloud::load_config(flags, env.lookup());
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().message ==
        dir.path() + "/config:2: profile 'qa' has both credentials_file and keys of its own: keep one");

  dir.write("config", "[qa]\ncredentials_file = ~/credentials\n");
  dir.write("credentials", "[qa]\naccess_key_id = QAKEY\nregion = x\n");
  auto stray = cloud::load_config(flags, env.lookup());
  REQUIRE_FALSE(stray.ok());
  CHECK(stray.error().message == dir.path() +
                                     "/credentials:3: a credentials file holds access_key_id, secret_access_key, "
                                     "session_token only (got 'region')");
}

TEST_CASE("config: files holding secrets are refused when group or others can read them", "[config]") {
  TempDir dir;
  std::string creds = dir.write("credentials", "[default]\naccess_key_id = K\nsecret_access_key = s\n", 0640);
  Env env{{{"CLOUDLUA_CONFIG_FILE", dir.write("config", "[default]\ncredentials_file = " + creds + "\n", 0644)}}};
  auto r = cloud::load_config({}, env.lookup());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "UnsafePermissions");
  CHECK(r.error().message ==
        "the credentials file " + creds +
            " holds secrets and can be read by group or others (mode 0640); make it private with: chmod 600 " + creds);
  chmod(creds.c_str(), 0600);
  CHECK(cloud::load_config({}, env.lookup()).ok());  // the config file itself holds no secret: 0644 is fine

  std::string inline_secret = dir.write("inline", "[default]\naccess_key_id = K\nsecret_access_key = s\n", 0604);
  Env env2{{{"CLOUDLUA_CONFIG_FILE", inline_secret}}};
  auto r2 = cloud::load_config({}, env2.lookup());
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().message.find("the config file " + inline_secret + " holds secrets") == 0);
}

TEST_CASE("config report: every setting with its origin, secrets masked", "[config]") {
  TempDir dir;
  std::string file = dir.write("config",
                               "[default]\nregion = jp-west-1\nendpoint.storage = http://127.0.0.1:9000\n"
                               "access_key_id = AKIDEXAMPLE1234\nsecret_access_key = wJalrXUtnFEMI/K7MDENG\n"
                               "session_token = FwoGZXIvYXdzEJr//token\n");
  Env env{{{"CLOUDLUA_CONFIG_FILE", file}}};
  auto c = cloud::load_config({}, env.lookup());
  REQUIRE(c.ok());
  std::string report = cloud::config_report(*c);
  CHECK(report.find("wJalrXUtnFEMI") == std::string::npos);
  CHECK(report.find("FwoGZXIvYXdzEJr") == std::string::npos);
  CHECK(report.find("AKIDEXAMPLE") == std::string::npos);
  CHECK(report.find("***********1234") != std::string::npos);
  CHECK(report.find("secret_access_key  ********") != std::string::npos);
  CHECK(report.find("file " + file + ":5") != std::string::npos);
  CHECK(report.find("config_file        " + file) == 0);
  CHECK(report.find("region             jp-west-1") != std::string::npos);
  // Only storage has an endpoint: the others have none and the report says so.
  CHECK(report.find("endpoint.devops    (not set)") != std::string::npos);
  CHECK(report.find("calls to this API fail: no endpoint") != std::string::npos);
}

TEST_CASE("config: cloud.client{profile=} takes the profile alone, not the session's variables", "[config]") {
  TempDir dir;
  Env env{{{"CLOUDLUA_CONFIG_FILE", dir.write("config", kProfiles)},
           {"CLOUDLUA_REGION", "env-1"},
           {"CLOUDLUA_ACCESS_KEY_ID", "ENVKEY"},
           {"CLOUDLUA_SECRET_ACCESS_KEY", "env-secret"}}};
  auto qa = cloud::load_profile("qa", env.lookup());
  REQUIRE(qa.ok());
  CHECK(qa->client.region == "jp-west-1");
  CHECK(qa->client.credentials.access_key_id.empty());
  auto unknown = cloud::load_profile("nope", env.lookup());
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "UnknownProfile");
  CHECK(unknown.error().message.find("no profile 'nope' (chosen by cloud.client{profile=}) in ") == 0);
  CHECK(setting(*qa, "profile").origin == "cloud.client{profile=}");
}

TEST_CASE("settings: one rule per setting, the same words from a profile, a variable and cloud.client{}", "[config]") {
  TempDir dir;
  // each bad value as a file or a variable holds it, as cloud.client{} takes it, and the problem
  const std::vector<std::tuple<std::string, std::string, cloud::json, std::string>> cases{
      {"max_attempts", "0", 0, "max_attempts must be an integer from 1 to 10 (got 0)"},
      {"max_attempts", "11", 11, "max_attempts must be an integer from 1 to 10 (got 11)"},
      {"timeout", "0", 0, "timeout must be a number of seconds from 0.001 to 86400 (got 0)"},
      {"connect_timeout", "-1", -1, "connect_timeout must be a number of seconds from 0.001 to 86400 (got -1)"},
      {"dialect", "v4", "v4", "dialect must be ext or aws (got 'v4')"},
      {"region", "jp east", "jp east", "region must be letters, digits and hyphens, e.g. jp-east-1 (got 'jp east')"},
  };
  for (const auto& [key, text, value, problem] : cases) {
    INFO(key << " = " << text);
    std::string file = dir.write("config", "[default]\n" + key + " = " + text + "\n");
    auto from_file = cloud::load_config({}, Env{{{"CLOUDLUA_CONFIG_FILE", file}}}.lookup());
    REQUIRE_FALSE(from_file.ok());
    CHECK(from_file.error().code == "InvalidSetting");
    CHECK(from_file.error().message == file + ":2: " + problem);

    std::string variable = "CLOUDLUA_" + key;
    for (char& c : variable) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto from_env = cloud::load_config({}, Env{{{"CLOUDLUA_CONFIG_FILE", ""}, {variable, text}}}.lookup());
    REQUIRE_FALSE(from_env.ok());
    CHECK(from_env.error().message == variable + ": " + problem);

    auto from_client = cloud::client_config(cloud::json{{key, value}}, cloud::ClientConfig{}, Env{}.lookup());
    REQUIRE_FALSE(from_client.ok());
    CHECK(from_client.error().kind == cloud::ErrorKind::config);
    CHECK(from_client.error().code == "InvalidSetting");
    CHECK(from_client.error().message == "cloud.client: " + problem);
  }
}

TEST_CASE("settings: cloud.client{} over the session's or a profile's configuration", "[config]") {
  TempDir dir;
  Env env{{{"CLOUDLUA_CONFIG_FILE", dir.write("config", kProfiles)}}};
  cloud::ClientConfig session;
  session.region = "session-1";
  session.endpoints["devops"] = "http://127.0.0.1:1";
  session.credentials = {"SESSIONKEY", "session-secret", ""};

  auto c = cloud::client_config(cloud::json{{"max_attempts", 7},
                                            {"timeout", "2.5"},
                                            {"retry_restores", true},
                                            {"endpoints", {{"storage", "http://127.0.0.1:2"}, {"devops", ""}}},
                                            {"credentials", {{"secret_access_key", "other"}}}},
                                session, env.lookup());
  REQUIRE(c.ok());
  CHECK(c->region == "session-1");
  CHECK(c->retry.max_attempts == 7);
  CHECK(c->transport.timeout_ms == 2500);
  CHECK(c->retry.retry_non_idempotent);
  CHECK(c->endpoints.at("storage") == "http://127.0.0.1:2");
  CHECK(c->endpoints.count("devops") == 0);  // "" restores the default: no endpoint
  CHECK(c->credentials.access_key_id == "SESSIONKEY");
  CHECK(c->credentials.secret_access_key == "other");

  auto qa = cloud::client_config(cloud::json{{"profile", "qa"}, {"region", "jp-north-1"}}, session, env.lookup());
  REQUIRE(qa.ok());
  CHECK(qa->region == "jp-north-1");
  CHECK(qa->retry.max_attempts == 5);  // the profile's
  CHECK(qa->endpoints.count("devops") == 0);

  auto unknown = cloud::client_config(cloud::json{{"max_attempt", 3}}, session, env.lookup());
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "cloud.client: unknown field 'max_attempt', did you mean 'max_attempts'?");
  auto far = cloud::client_config(cloud::json{{"zzzzzz", 3}}, session, env.lookup());
  REQUIRE_FALSE(far.ok());
  CHECK(far.error().message.find("cloud.client: unknown field 'zzzzzz' (fields: profile, region,") == 0);
}
