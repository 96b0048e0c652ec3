// cloudlua's entry point: the command line of `lua` (script and args, -e, -l, -i,
// -v, -) plus the configuration flags and the `serve` sub-command, parsed by CLI11.
// Everything after the script name belongs to the script, as with `lua`.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "repl/cli.h"

namespace {

void add_config_flags(CLI::App& app, cloud::ConfigOverrides& c, std::vector<std::string>& endpoints) {
  app.add_option("--profile", c.profile, "Configuration profile");
  app.add_option("--region", c.region, "Region (default jp-east-1)");
  app.add_option("--endpoint", endpoints, "API=URL, repeatable (e.g. cluster=http://127.0.0.1:9002)");
  app.add_option("--access-key", c.access_key_id, "Access key id (else CLOUDLUA_ACCESS_KEY_ID)");
  app.add_option("--secret-key", c.secret_access_key, "Secret access key (else CLOUDLUA_SECRET_ACCESS_KEY)");
}

// --endpoint values into the overrides; false (with a message) on a malformed one.
bool apply_endpoints(const std::vector<std::string>& endpoints, cloud::ConfigOverrides& c) {
  for (const std::string& e : endpoints) {
    auto parsed = cloud::parse_endpoint_setting(e);
    if (!parsed.ok()) {
      std::fprintf(stderr, "cloudlua: %s\n", parsed.error().message.c_str());
      return false;
    }
    c.endpoints[parsed->first] = parsed->second;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cloudlua: the cloud platform's APIs as Lua functions.\n"
               "  cloudlua [options] [script [args]]   run a script, or the REPL when none is given"};
  app.prefix_command();
  cloud::RunOptions run;
  std::vector<std::string> endpoints;
  add_config_flags(app, run.config, endpoints);
  app.add_option("--dialect", run.config.dialect, "Signing dialect: ext (default) or aws");
  app.add_option("-e", run.exec, "Execute the Lua chunk CODE")->type_name("CODE")->allow_extra_args(false);
  app.add_option("-l", run.modules, "Require module MOD into the global MOD")->type_name("MOD")->allow_extra_args(false);
  app.add_flag("-i", run.interactive, "Enter the REPL after running the script");
  app.add_flag("-v,--version", run.version, "Show the version");

  cloud::ServeOptions serve;
  std::vector<std::string> serve_endpoints;
  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the emulator of the platform on loopback");
  serve_cmd->add_option("--port", serve.port, "First port (the APIs take it and the next three); default: free ports");
  serve_cmd->add_option("--host", serve.host, "Address to listen on (default 127.0.0.1)");
  serve_cmd->add_option("--dialect", serve.dialect, "Signatures accepted: ext, aws or any")
      ->check(CLI::IsMember({"ext", "aws", "any"}));
  serve_cmd->add_option("--access-key", serve.config.access_key_id, "Access key id to accept");
  serve_cmd->add_option("--secret-key", serve.config.secret_access_key, "Its secret");
  serve_cmd->add_option("--region", serve.config.region, "Region of the emulated platform");
  serve_cmd->add_option("--state", serve.state_file,
                        "Keep the platform's state in FILE across restarts (written before each change is answered)")
      ->type_name("FILE");

  CLI11_PARSE(app, argc, argv);
  if (!apply_endpoints(endpoints, run.config)) return 1;
  if (*serve_cmd) return cloud::run_serve(serve);

  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  if (!rest.empty()) {
    run.script = rest.front();
    run.script_args.assign(rest.begin() + 1, rest.end());
  }
  run.argv.assign(argv, argv + argc);
  return cloud::run_lua(run);
}
