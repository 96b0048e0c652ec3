// What the command line says about itself: `--help` (one usage block per command,
// made from the options CLI11 knows, so a new option appears in it) and the errors
// of a command line it cannot run, each "cloudlua: <reason>" with the usage, exit 1.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace cloud {

// The help of `cmd` (the main command or a sub-command): usage, options, and for the
// main command `-`, `--`, the sub-commands, the environment and the exit status.
std::string help_text(const CLI::App& cmd);

// Writes "cloudlua[ <sub>]: <reason>" and the usage lines on stderr; returns the exit
// status of a command line that cannot run (1, as lua's).
int usage_error(const CLI::App& cmd, const std::string& reason);

// "unknown option '--bogus'" (with "; did you mean '--debug'?" when one of the options
// of `cmd` is near: core/base/suggest's unknown_option, the Lua sub-commands' wording
// too), or "unexpected argument 'x'" for a word that is no option.
std::string unrecognized(const CLI::App& cmd, const std::string& word);

// The reason for a script name that is no file: "cannot open confg (no such file);
// did you mean the sub-command 'config'?" when a sub-command is near, else "".
std::string mistyped_subcommand(const CLI::App& app, const std::string& script);

}  // namespace cloud
