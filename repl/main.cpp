// cloudlua's entry point: the command line of `lua` (script and args, -e, -l, -i,
// -v, -E, -W, -, --) plus the configuration flags, the output and debug switches, and
// the `serve`, `config` and `test` sub-commands, parsed by CLI11. Everything after
// the script name belongs to the script, as with `lua`. The sub-commands written in
// Lua (declared in lua/command_specs.lua, run by lua/commands.lua) take their own words:
// main finds the command's name, keeps the configuration flags given among its words
// for itself and hands the rest, in order, to the Lua function.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/net/redact.h"
#include "repl/cli.h"
#include "repl/test_runner.h"
#include "repl/usage.h"

namespace {

// "" when --endpoint-url's value is a URL alone, else what to give instead.
std::string endpoint_url_problem(std::string& value) {
  auto parsed = cloud::parse_endpoint_setting(value);
  if (parsed.ok() && parsed->first.empty()) return "";
  std::string hint = parsed.ok() ? "; one API's endpoint is --endpoint " + cloud::redact(value) : "";
  return "takes an http:// or https:// URL alone, as aws-cli's does (got '" + cloud::redact(value) + "')" + hint;
}

// The flags that choose the account and endpoints; the main command and the
// sub-commands that talk to the platform take them (before or after their name).
void add_config_flags(CLI::App& app, cloud::ConfigOverrides& c, std::vector<std::string>& endpoints) {
  app.add_option("--profile", c.profile, "Profile of the config file (else CLOUDLUA_PROFILE, else default)")
      ->type_name("NAME");
  app.add_option("--region", c.region, "Region (default jp-east-1)")->type_name("REGION");
  app.add_option(
         "--endpoint", endpoints,
         "API=URL, repeatable (e.g. cluster=http://127.0.0.1:9002), or the URL alone of a cloudlua serve or an S3 "
         "server (storage)")
      ->type_name("API=URL|URL")
      ->allow_extra_args(false);
  app.add_option("--endpoint-url", c.endpoint_url, "URL alone, as --endpoint URL (aws-cli's spelling)")
      ->type_name("URL")
      ->check(CLI::Validator(endpoint_url_problem, "URL"));
  app.add_option("--dialect", c.dialect, "Signing dialect: ext (default) or aws")->type_name("DIALECT");
  app.add_option("--access-key", c.access_key_id, "Access key id (else CLOUDLUA_ACCESS_KEY_ID, else the profile's)")
      ->type_name("ID");
  app.add_option("--secret-key", c.secret_access_key, "Secret access key (given with --access-key)")
      ->type_name("SECRET");
  app.add_option("--record", c.record, "Record every exchange into DIR (JSON lines, secrets removed; docs/testing.md)")
      ->type_name("DIR");
  app.add_option("--replay", c.replay, "Answer every call from the recording in DIR: offline, no credentials needed")
      ->type_name("DIR");
}

// --endpoint values into the overrides; false (with a message) on a malformed one.
bool apply_endpoints(const std::vector<std::string>& endpoints, cloud::ConfigOverrides& c) {
  for (const std::string& e : endpoints) {
    auto parsed = cloud::parse_endpoint_setting(e);
    if (!parsed.ok()) {
      std::fprintf(stderr, "cloudlua: %s\n", parsed.error().message.c_str());
      return false;
    }
    (parsed->first.empty() ? c.endpoint_url : c.endpoints[parsed->first]) = parsed->second;
  }
  return true;
}

// The index in argv of the first word that is neither an option of the main command
// nor an option's value (a script's name or a sub-command's), or 0 when there is none;
// after "--" or "-" there is none.
int first_word_index(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--" || word == "-") return 0;
    if (word.size() > 1 && word[0] == '-') {
      const CLI::Option* o = word.find('=') == std::string::npos ? app.get_option_no_throw(word) : nullptr;
      if (o && o->get_expected_max() > 0) ++i;  // the option's value (a flag expects none)
      continue;
    }
    return i;
  }
  return 0;
}

// Whether the command line asks for help (-h or --help anywhere).
bool asks_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") return true;
  return false;
}

// The sub-commands written in Lua (lua/command_specs.lua), added to `app` as disabled
// sub-commands (listed by --help, never parsed by CLI11) when the command line may
// name one or asks for help: read only then, `cloudlua -e CODE` does not pay for them.
// The index in argv of the word naming one, or 0.
int add_lua_commands(CLI::App& app, int argc, char** argv) {
  int at = first_word_index(app, argc, argv);
  if (at == 0 && !asks_help(argc, argv)) return 0;
  bool named = false;
  for (const auto& [name, summary] : cloud::lua_commands()) {
    app.add_subcommand(name, summary)->disabled();
    named = named || (at > 0 && name == argv[at]);
  }
  return named ? at : 0;
}

// Splits a Lua sub-command's words: the configuration flags and --debug (with their
// values) go to `main_words`, for CLI11; the rest, in order, are the command's own.
// After "--" every word is the command's.
std::vector<std::string> command_words(const CLI::App& app, int argc, char** argv, int at,
                                       std::vector<std::string>& main_words) {
  static const char* const kMoved[] = {"--profile",    "--region",     "--endpoint", "--endpoint-url", "--dialect",
                                       "--access-key", "--secret-key", "--record",   "--replay",       "--debug"};
  std::vector<std::string> own;
  for (int i = at + 1; i < argc; ++i) {
    std::string word = argv[i];
    std::string name = word.substr(0, word.find('='));
    bool moved = false;
    for (const char* m : kMoved) moved = moved || name == m;
    if (word == "--") {
      own.insert(own.end(), argv + i, argv + argc);
      break;
    }
    if (!moved) {
      own.push_back(word);
      continue;
    }
    main_words.push_back(word);
    const CLI::Option* o = app.get_option_no_throw(name);
    if (o && o->get_expected_max() > 0 && word.find('=') == std::string::npos && i + 1 < argc)
      main_words.push_back(argv[++i]);
  }
  return own;
}

void write_debug(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

// -e and -l in the order they were given: lua runs them so.
std::vector<cloud::LuaStep> ordered_steps(const CLI::App& app, const CLI::Option* exec, const CLI::Option* require) {
  std::vector<cloud::LuaStep> steps;
  size_t e = 0, l = 0;
  for (const CLI::Option* opt : app.parse_order()) {
    if (opt == exec) steps.push_back({false, exec->results().at(e++)});
    if (opt == require) steps.push_back({true, require->results().at(l++)});
  }
  return steps;
}

void add_serve_command(CLI::App& app, cloud::ServeOptions& serve) {
  CLI::App* cmd = app.add_subcommand("serve", "Run the emulator of the platform on loopback");
  // The main command passes what it does not know to the script; serve has no script,
  // and an option it does not know (a typo, one of another version) is an error.
  cmd->prefix_command(false)->allow_extras(false);
  cmd->add_option("--port", serve.port,
                  "Storage (S3) on PORT; catalog, cluster and devops on the next three, as printed at start; default: "
                  "free ports")
      ->type_name("PORT");
  cmd->add_option("--host", serve.host,
                  "Address to listen on (default 127.0.0.1); beyond loopback, credentials of your own are required")
      ->type_name("ADDR");
  cmd->add_option("--dialect", serve.dialect, "Signatures accepted: ext, aws or any")
      ->type_name("DIALECT")
      ->check(CLI::IsMember({"ext", "aws", "any"}));
  cmd->add_option("--access-key", serve.config.access_key_id, "Access key id to accept")->type_name("ID");
  cmd->add_option("--secret-key", serve.config.secret_access_key, "Its secret")->type_name("SECRET");
  cmd->add_option("--account", serve.accounts,
                  "Accept the key pair KEY:SECRET too, as an account of its own (repeatable): each account owns "
                  "the buckets it creates")
      ->type_name("KEY:SECRET")
      ->allow_extra_args(false);
  cmd->add_option("--accounts", serve.accounts_file,
                  "Accept the accounts of FILE too: a KEY:SECRET a line, # comments (readable by you only)")
      ->type_name("FILE");
  cmd->add_option("--region", serve.config.region, "Region of the emulated platform")->type_name("REGION");
  cmd->add_option("--profile", serve.config.profile,
                  "Also write how to reach this serve into the config file's profile NAME")
      ->type_name("NAME");
  cmd->add_option("--state", serve.state_file,
                  "Keep the platform's state across restarts in the SQLite database FILE, bytes in FILE.bytes/ (each "
                  "change saved before it is answered; a JSON state file there is imported)")
      ->type_name("FILE");
  cmd->add_option("--restore", serve.restore,
                  "Start from the checkpoint NAME of the --state (saved by cloud.emulator.checkpoint or the control "
                  "plane's checkpoint)")
      ->type_name("NAME");
  cmd->add_option("--settle", serve.settle, "Every transition takes DURATION (2s, 500ms, 1m) instead of its default")
      ->type_name("DURATION");
  cmd->add_option(
         "--min-part-size", serve.min_part_size,
         "Bytes a multipart part must have unless it is the last (default 5 MiB; tests with small parts lower it)")
      ->type_name("BYTES")
      ->check(CLI::Range(0LL, 5LL * 1024 * 1024 * 1024));
}

// `cloudlua test [paths...]`: the test runner (repl/test_runner.cpp) provides run_tests.
CLI::App* add_test_command(CLI::App& app, cloud::TestOptions& test, cloud::ConfigOverrides& config,
                           std::vector<std::string>& endpoints) {
  CLI::App* cmd =
      app.add_subcommand("test", "Run Lua test files (a folder: its *_test.lua and *_spec.lua files); TAP output");
  cmd->prefix_command(false)->allow_extras(false);  // as serve: an unknown option is an error
  cmd->add_option("paths", test.paths, "Test files and folders");
  cmd->add_option("--filter", test.filter, "Run only the cases whose name matches PATTERN")->type_name("PATTERN");
  cmd->add_flag("--list", test.list, "List the cases without running them");
  cmd->add_option("--tags", test.tags, "Run only the cases with one of these tags (#TAG in a name, its describes' too)")
      ->type_name("TAG,...")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmd->add_option("--exclude-tags", test.exclude_tags, "Leave out the cases with one of these tags")
      ->type_name("TAG,...")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmd->add_option("-j,--jobs", test.jobs,
                  "Run N files at once, each in a process of its own (output in order; -j 1: one at a time; "
                  "without -j: in the runner's process)")
      ->type_name("N")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--timeout", test.timeout,
                  "Kill and fail a file still running after SECONDS (default 600 under -j; 0: no limit)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--keep-worlds", test.keep_worlds,
                "Against a serve (--endpoint URL): keep the world each file ran in, and print its key pair (else "
                "removed when the file ends)");
  cmd->add_flag("--update-snapshots", test.update_snapshots,
                "Write (or rewrite) the files expect(v).to_match_snapshot(name) compares with");
  cmd->add_option("--seed", test.seed, "Make ids, request ids and times repeatable: the same N, the same output")
      ->type_name("N");
  cmd->add_option("--output", test.output,
                  "The report on stdout: tap (the default), junit (JUnit XML) or json (JSON lines, an event a line)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"tap", "junit", "json"}));
  cmd->add_option("--junit", test.junit, "Also write a JUnit XML report to FILE (the --output report stays on stdout)")
      ->type_name("FILE");
  cmd->add_option("--coverage", test.coverage,
                  "Write the lines the tests ran of the Lua files under the current folder to DIR/lcov.info and "
                  "DIR/cobertura.xml")
      ->type_name("DIR");
  cmd->add_option("--shard", test.shard, "Run only the I-th of N parts of the files (every file in exactly one part)")
      ->type_name("I/N");
  cmd->add_option("--timings", test.timings, "With --shard: balance the parts by the file times of this JUnit report")
      ->type_name("FILE");
  cmd->add_option("--merge-junit", test.merge_junit, "Merge the JUnit reports given as paths into FILE, run nothing")
      ->type_name("FILE");
  add_config_flags(*cmd, config, endpoints);
  return cmd;
}

// The sub-command being parsed, else the main command: the one an error or --help is about.
const CLI::App& current_command(const CLI::App& app) {
  std::vector<CLI::App*> parsed = app.get_subcommands();
  return parsed.empty() ? app : *parsed.front();
}

// Parses the command line: -1 to carry on, else the exit status, after the help
// (--help, status 0) or a usage error ("cloudlua: <reason>" and the usage, status 1).
int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::CallForHelp&) {
    std::fputs(cloud::help_text(current_command(app)).c_str(), stdout);
    return 0;
  } catch (const CLI::ExtrasError& e) {
    const CLI::App& cmd = current_command(app);
    std::vector<std::string> extras = cmd.remaining(false);
    return cloud::usage_error(cmd, extras.empty() ? e.what() : cloud::unrecognized(cmd, extras.front()));
  } catch (const CLI::ParseError& e) {
    return cloud::usage_error(current_command(app), e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The cloud platform's APIs as Lua functions: runs a Lua script, -e chunks, the REPL\n"
      "(stdin a terminal) or a scripted session (stdin not a terminal).",
      "cloudlua"};
  app.prefix_command();
  app.set_help_flag("-h,--help", "Show this help");  // the sub-commands take it over
  cloud::RunOptions run;
  std::vector<std::string> endpoints;
  add_config_flags(app, run.config, endpoints);
  std::vector<std::string> exec_values, require_values;  // read back in order by ordered_steps
  CLI::Option* exec =
      app.add_option("-e", exec_values, "Execute the Lua chunk CODE")->type_name("CODE")->allow_extra_args(false);
  CLI::Option* require = app.add_option("-l", require_values, "Require module MOD into the global MOD (g=MOD: into g)")
                             ->type_name("MOD")
                             ->allow_extra_args(false);
  app.add_flag("-i", run.interactive, "Enter the REPL after running the script");
  app.add_flag("-v,--version", run.version, "Show the version");
  app.add_flag("-E", run.ignore_env, "Ignore CLOUDLUA_INIT, LUA_PATH and LUA_CPATH");
  app.add_flag("-W", run.warnings, "Turn Lua warnings on");
  std::string output = "text";
  app.add_option("--output", output,
                 "How -e chunks' and scripts' returned values (and errors) are printed: text, json, or json-meta "
                 "(a call's meta too)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json", "json-meta"}));
  bool debug = false;
  app.add_flag("--debug", debug,
               "Show every HTTP exchange on stderr, secrets redacted, and errors with every Lua frame");
  app.add_flag("--keep-going", run.keep_going, "Scripted session (stdin not a terminal): carry on after errors");
  bool lua_definitions = false;
  app.add_flag("--lua-definitions", lua_definitions,
               "Print the Lua language server's definitions of cloudlua's globals (for editors; docs/lua-api.md)");

  cloud::ServeOptions serve;
  add_serve_command(app, serve);
  std::vector<std::string> config_endpoints;
  CLI::App* config_cmd =
      app.add_subcommand("config", "Show the effective configuration and where each value came from");
  config_cmd->prefix_command(false)->allow_extras(false);
  add_config_flags(*config_cmd, run.config, config_endpoints);
  cloud::TestOptions test;
  std::vector<std::string> test_endpoints;
  CLI::App* test_cmd = add_test_command(app, test, run.config, test_endpoints);
  // A Lua sub-command: CLI11 parses the main command's words before it and the
  // configuration flags among its words; the others are the command's.
  std::vector<std::string> main_words(argv, argv + argc);
  if (int at = add_lua_commands(app, argc, argv); at > 0) {
    main_words.assign(argv, argv + at);
    run.command = argv[at];
    run.command_args = command_words(app, argc, argv, at, main_words);
  }
  std::vector<char*> main_argv;
  for (std::string& w : main_words) main_argv.push_back(w.data());
  int parsed = parse_command_line(app, static_cast<int>(main_argv.size()), main_argv.data());
  if (parsed >= 0) return parsed;
  endpoints.insert(endpoints.end(), config_endpoints.begin(), config_endpoints.end());
  endpoints.insert(endpoints.end(), test_endpoints.begin(), test_endpoints.end());
  if (!apply_endpoints(endpoints, run.config)) return 1;
  if (!run.config.record.empty() && !run.config.replay.empty())
    return cloud::usage_error(current_command(app),
                              "--record and --replay cannot be given together: record a run, then replay it");
  if (debug) run.config.debug = write_debug;
  run.full_traceback = debug;
  run.output = output == "json"        ? cloud::Output::json
               : output == "json-meta" ? cloud::Output::json_meta
                                       : cloud::Output::text;
  if (app.got_subcommand("serve")) return cloud::run_serve(serve);
  if (*config_cmd) return cloud::run_config(run.config);
  if (*test_cmd) {
    test.config = run.config;  // the configuration flags, given before or after `test`
    return cloud::run_tests(test);
  }

  run.steps = ordered_steps(app, exec, require);
  if (!run.command.empty()) {
    if (output != "text") run.command_args.insert(run.command_args.begin(), {"--output", output});
    run.output = cloud::Output::text;  // the command prints; its status is the exit status
    run.argv.assign(argv, argv + argc);
    return cloud::run_lua(run);
  }
  if (lua_definitions)  // lua/definitions.lua makes them; nothing else runs
    return run.steps = {{false, "io.write((require('cloud.definitions')()))"}}, cloud::run_lua(run);
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-' && rest.front() != "--")
    return cloud::usage_error(app, cloud::unrecognized(app, rest.front()));  // as lua's "unrecognized option"
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  else if (!rest.empty() && !cloud::mistyped_subcommand(app, rest.front()).empty())
    return cloud::usage_error(app, cloud::mistyped_subcommand(app, rest.front()));
  if (!rest.empty()) {
    run.script = rest.front();
    run.script_args.assign(rest.begin() + 1, rest.end());
  }
  run.argv.assign(argv, argv + argc);
  return cloud::run_lua(run);
}
