// `cloudlua serve`: the emulator as a standalone server for other clients. It prints
// one line per API (`<api> <base-url>`) and then the access key it accepts, before
// anything else, so a script can read the endpoints; then, after a blank line, a
// block to paste for cloudlua (one setting), aws-cli/boto3 and rclone (the built-in
// credentials shown, an operator's secret only named), and with --profile NAME it
// writes cloudlua's into the config file's profile NAME; then it serves until SIGINT or
// SIGTERM and shuts down cleanly (exit status 0). With --state FILE the platform
// starts from FILE when it exists and writes it after every change, before answering;
// without, the bytes of objects and parts are kept in a temporary folder, removed at
// the end.
// Beyond loopback it needs credentials of the user's own, and says on stderr what it
// exposes.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "core/client/config.h"
#include "core/net/redact.h"
#include "core/client/settings.h"
#include "emulator/emulator.h"
#include "emulator/worlds.h"
#include "emulator/service.h"
#include "repl/cli.h"

namespace cloud {

namespace {

// The emulator's options from serve's flags: the region and the credentials to accept
// follow the rules they have everywhere (core's table of settings; keys as a unit,
// from the flags, else the CLOUDLUA_* variables).
Outcome<EmulatorOptions> emulator_options(const ServeOptions& o) {
  EmulatorOptions e;
  e.host = o.host;
  e.port = o.port;
  e.dialect = o.dialect;
  e.state_file = o.state_file;
  ClientConfig checked;
  auto region = apply_setting(*find_setting("region"), "", o.config.region, "--region", checked);
  if (!region.ok()) return region.error();
  if (!o.config.region.empty()) e.region = checked.region;
  auto credentials = given_credentials(o.config, [](const char* name) { return std::getenv(name); });
  if (!credentials.ok()) return credentials.error();
  if (!credentials->access_key_id.empty())
    e.credentials = {credentials->access_key_id, credentials->secret_access_key, ""};
  for (const std::string& account : o.accounts) {  // more accounts: --account, then --accounts FILE
    auto parsed = parse_account(account, "--account");
    if (!parsed.ok()) return parsed.error();
    e.accounts.push_back(*parsed);
  }
  if (!o.accounts_file.empty()) {
    auto listed = read_accounts_file(o.accounts_file);
    if (!listed.ok()) return listed.error();
    e.accounts.insert(e.accounts.end(), listed->begin(), listed->end());
  }
  return e;
}

// One line on stderr for a server beyond loopback: where, which APIs (and the control
// plane, which can reset the platform), which key.
std::string exposure(const Emulator& emulator) {
  const EmulatorOptions& o = emulator.options();
  std::string apis;
  for (const auto& [api, url] : emulator.endpoints())
    apis += (apis.empty() ? "" : ", ") + api + " :" + url.substr(url.rfind(':') + 1);
  std::string signatures = o.dialect == "any" ? "ext or aws" : o.dialect;
  return "cloudlua serve: listening on " + o.host + ", beyond loopback: anyone who can reach it can call " + apis +
         " and the control plane (/_cloudlua/: reset, restore, fault...) with requests signed (" + signatures +
         ") with access key id " + o.credentials.access_key_id + "\n";
}

// Where the operator's secret came from, for the block: "" for the built-in one.
std::string secret_origin(const ServeOptions& o, const EmulatorOptions& e) {
  if (e.credentials.access_key_id == kEmulatorAccessKey && e.credentials.secret_access_key == kEmulatorSecretKey)
    return "";
  return o.config.secret_access_key.empty() ? "CLOUDLUA_SECRET_ACCESS_KEY" : "--secret-key";
}

// The secret's value in the block: the built-in one as it is; an operator's by the
// variable it came from (a shell expands it where that variable is set), or nothing
// when it came from a flag. Never the operator's secret itself.
std::string secret_text(const std::string& origin, const std::string& built_in) {
  if (origin.empty()) return built_in;
  return origin == "--secret-key" ? "<the secret given to serve with --secret-key>" : "\"$CLOUDLUA_SECRET_ACCESS_KEY\"";
}

// The block to paste (docs/emulator.md, "Reaching serve"): cloudlua's one setting,
// then aws-cli/boto3's and rclone's variables when serve takes aws signatures.
std::string paste_block(const ServeOptions& o, const Emulator& emulator, const std::string& url) {
  const EmulatorOptions& e = emulator.options();
  std::string origin = secret_origin(o, e), key = e.credentials.access_key_id;
  std::string secret = secret_text(origin, e.credentials.secret_access_key);
  std::string out =
      "\n# cloudlua: this one setting (or --endpoint " + url + ")\nexport CLOUDLUA_ENDPOINT_URL=" + url + "\n";
  if (!origin.empty())
    out += "# serve takes credentials of its own (its secret from " + origin +
           ", not shown): give them as\nexport CLOUDLUA_ACCESS_KEY_ID=" + key +
           " CLOUDLUA_SECRET_ACCESS_KEY=" + secret + "\n";
  if (e.dialect == "ext")
    return out +
           "# aws-cli, boto3, rclone sign in the aws dialect: serve takes ext only here (--dialect any or aws for "
           "them)\n";
  out +=
      "\n# aws-cli 2.13+, boto3 1.28+ (aws-cli before 2.13, as Debian 12's: aws --endpoint-url $AWS_ENDPOINT_URL)\n"
      "export AWS_ENDPOINT_URL=" +
      url + " AWS_DEFAULT_REGION=" + e.region + "\nexport AWS_ACCESS_KEY_ID=" + key +
      " AWS_SECRET_ACCESS_KEY=" + secret + "\n";
  out +=
      "\n# rclone: the remote serve: (rclone ls serve:bucket)\nexport RCLONE_CONFIG_SERVE_TYPE=s3 "
      "RCLONE_CONFIG_SERVE_PROVIDER=Other "
      "RCLONE_CONFIG_SERVE_ENDPOINT=" +
      url + " RCLONE_CONFIG_SERVE_REGION=" + e.region + "\nexport RCLONE_CONFIG_SERVE_ACCESS_KEY_ID=" + key +
      " RCLONE_CONFIG_SERVE_SECRET_ACCESS_KEY=" + secret + "\n";
  return out;
}

// `text` on stderr, with the secret it must not show redacted.
void to_stderr(const std::string& text, const std::string& secret) {
  std::fputs(redact(text, {secret}).c_str(), stderr);
}

// "2s", "500ms", "1m" or a plain number of seconds, as seconds; nullopt otherwise.
std::optional<double> parse_duration(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0)) return std::nullopt;
  std::string unit(end);
  if (unit.empty() || unit == "s") return value;
  if (unit == "ms") return value / 1000;
  if (unit == "m") return value * 60;
  return std::nullopt;
}

// --settle: the seconds every transition of the platform takes (nullopt: the defaults).
Outcome<std::optional<double>> settle_seconds(const std::string& settle) {
  if (settle.empty()) return std::optional<double>();
  std::optional<double> seconds = parse_duration(settle);
  if (!seconds)
    return make_error(ErrorKind::config, "BadOption",
                      "--settle wants a duration such as 2s, 500ms or 1m, got '" + settle + "'");
  return seconds;
}

// The folder that holds serve's object and part bytes when there is no --state: made
// under $TMPDIR (else /tmp), emptied and removed when serve ends (a normal exit, SIGINT,
// SIGTERM: it goes after the emulator, whose bytes remove their own files). A kill -9
// leaves it behind, as any program's temporary files.
class TemporaryFolder {
 public:
  // Makes the folder; path() is "" when it could not be made (error() says why).
  TemporaryFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cloudlua-serve-XXXXXX";
    if (::mkdtemp(&pattern[0])) path_ = pattern;
    else
      error_ = "cannot create a folder for the bytes of objects in " + pattern.substr(0, pattern.rfind('/')) + ": " +
               std::strerror(errno);
  }
  ~TemporaryFolder() {
    if (path_.empty()) return;
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          ::unlink((path_ + "/" + e->d_name).c_str());
      ::closedir(d);
    }
    ::rmdir(path_.c_str());
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_, error_;
};

// Every transition of the platform takes `seconds`.
void settle_in(Platform& platform, double seconds) {
  for (const PlatformSetting& s : platform_settings())
    if (s.transition) platform.set_setting(s.name, seconds);
}

// Each connection is a descriptor, and thousands may be open (ConnectionLimits): the
// soft limit on open files (1,024 on many systems) is raised to the hard one.
void raise_open_files_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);
}

}  // namespace

int run_serve(const ServeOptions& o) {
  // Blocked before the server threads start, so they inherit the mask and only
  // sigwait below sees the signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A shell starts background jobs with SIGINT ignored; sigwait wants it delivered.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  raise_open_files_limit();

  auto options = emulator_options(o);
  if (!options.ok()) {
    to_stderr("cloudlua serve: " + options.error().describe() + "\n", "");
    return 1;
  }
  std::optional<TemporaryFolder> bytes;  // without --state; removed after the emulator
  if (o.state_file.empty()) {
    bytes.emplace();
    if (bytes->path().empty()) {
      to_stderr("cloudlua serve: " + bytes->error() + "\n", "");
      return 1;
    }
    options->body_folder = bytes->path();
  }
  Emulator emulator(*options);
  const std::string& secret = options->credentials.secret_access_key;
  auto settle = settle_seconds(o.settle);
  if (!settle.ok()) {
    to_stderr("cloudlua serve: " + settle.error().describe() + "\n", secret);
    return 1;
  }
  auto started =
      o.restore.empty() || !o.state_file.empty()
          ? emulator.start()
          : Outcome<bool>(make_error(ErrorKind::config, "BadOption",
                                     "--restore needs --state: checkpoints without a state file live in memory"));
  if (started.ok() && !o.restore.empty()) started = emulator.restore(o.restore);
  if (!started.ok()) {
    to_stderr("cloudlua serve: " + started.error().describe() + "\n", secret);
    return 1;
  }
  if (*settle) settle_in(emulator.platform(), **settle);  // after start: a --state file's settings are read then
  if (o.min_part_size >= 0) emulator.platform().set_setting("min_part_size", static_cast<double>(o.min_part_size));
  std::string storage_url;
  for (const auto& [api, url] : emulator.endpoints()) {
    std::printf("%s %s\n", api.c_str(), url.c_str());
    if (api == "storage") storage_url = url;
  }
  std::printf("access_key_id %s\n", emulator.options().credentials.access_key_id.c_str());
  std::string block = paste_block(o, emulator, storage_url);
  if (!o.config.profile.empty()) {
    auto written =
        write_serve_profile(o.config.profile, storage_url, [](const char* name) { return std::getenv(name); });
    if (!written.ok()) {
      to_stderr("cloudlua serve: " + written.error().describe() + "\n", secret);
      emulator.stop();
      return 1;
    }
    block += "\n# written to the profile " + o.config.profile + " of " + *written + ": cloudlua --profile " +
             o.config.profile + ", or CLOUDLUA_PROFILE=" + o.config.profile + "\n";
  }
  // Not through redact: the block is made of serve's own values and never holds an
  // operator's secret (only the variable it came from), and the built-in secret,
  // public, must be shown, which redact's secrets-by-name rule would hide.
  std::fputs(block.c_str(), stdout);
  std::fflush(stdout);
  if (!is_loopback(o.host)) to_stderr(exposure(emulator), secret);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "cloudlua serve: %s received, stopping\n", signal == SIGINT ? "SIGINT" : "SIGTERM");
  emulator.stop();
  if (std::string commits = emulator.state_commits(); !commits.empty())
    to_stderr("cloudlua serve: " + printable(commits) + "\n", secret);
  return 0;
}

}  // namespace cloud
