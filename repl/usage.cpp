// --help and the command-line errors (usage.h). The option lines are read off the
// CLI11 definitions in main.cpp; what CLI11 does not know (`-`, `--`, the environment,
// the exit status) is written here, once.
#include "repl/usage.h"

#include <unistd.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "core/base/suggest.h"
#include "repl/cli.h"

namespace cloud {

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// The lines the main command's help adds to its options.
const Entries kMainExtras = {
    {"-", "Run the script from stdin (the arguments after it are its own)"},
    {"--", "End the options: the script and its arguments follow"},
};

const Entries kEnvironment = {
    {"CLOUDLUA_INIT", "Lua code, or @FILE, run before everything else (as lua's LUA_INIT)"},
    {"CLOUDLUA_PROFILE", "Profile of the config file (CLOUDLUA_CONFIG_FILE names the file)"},
    {"CLOUDLUA_ACCESS_KEY_ID", "With CLOUDLUA_SECRET_ACCESS_KEY: the account's key; every setting"},
    {"", "has its CLOUDLUA_<SETTING> (docs/configuration.md; `cloudlua config`)"},
    {"CLOUDLUA_HISTORY", "The REPL's history file (default ~/.cloudlua_history; empty: none)"},
    {"NO_COLOR", "Set and not empty: no colour in the REPL"},
    {"PAGER", "Pager for long help on a terminal (default: less -FRX)"},
    {"LUA_PATH, LUA_CPATH", "Where require looks (ignored with -E)"},
};

// The exit statuses; `lua_names` are the sub-commands written in Lua ("sync, check, ...").
std::string exit_status(const std::string& lua_names) {
  return "Exit status: 0 on success; 1 when a script, chunk or scripted session fails or the\n"
         "command line cannot run; `cloudlua test`: 1 when a case fails, 2 when it cannot run;\n" +
         lua_names + ": 1 when something failed or differs, 2 on a usage error.\n";
}

// The names of the sub-commands written in Lua (their declaration, lua/command_specs.lua),
// joined by `sep` and the last by `last_sep`: "sync, check or rb".
std::string lua_command_names(const std::string& sep, const std::string& last_sep) {
  std::vector<std::string> names;
  for (const auto& [name, summary] : lua_commands()) names.push_back(name);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? last_sep : sep) + names[i];
  return out;
}

// "cloudlua" or "cloudlua serve".
std::string command_name(const CLI::App& cmd) {
  return cmd.get_parent() ? "cloudlua " + cmd.get_name() : std::string("cloudlua");
}

// "-v, --version" or "--profile NAME": how an option is written on the command line.
std::string option_form(const CLI::Option& o) {
  std::string form;
  for (const std::string& s : o.get_snames()) form += (form.empty() ? "-" : ", -") + s;
  for (const std::string& l : o.get_lnames()) form += (form.empty() ? "--" : ", --") + l;
  std::string type = o.get_type_name();  // "FORMAT:{text,json}": the values are in the description
  if (o.get_type_size() != 0) form += " " + type.substr(0, type.find(':'));
  return form;
}

// Two columns, the second from column 25 (or after two spaces).
std::string columns(const std::string& title, const Entries& entries) {
  std::string out = title + ":\n";
  for (const auto& [left, right] : entries) {
    std::string line = "  " + left;
    line += line.size() < 24 ? std::string(24 - line.size(), ' ') : "  ";
    out += line + right + "\n";
  }
  return out;
}

// The usage lines: the main command's two forms, or the sub-command's one.
std::string synopsis(const CLI::App& cmd) {
  if (!cmd.get_parent())
    return "usage: cloudlua [options] [script [args]]   a script; the REPL when none is given\n"
           "       cloudlua COMMAND [options]           COMMAND: serve, config or test\n"
           "       cloudlua COMMAND ARGS [options]      COMMAND: " +
           lua_command_names(", ", " or ") +
           "\n"
           "A first word naming a sub-command is that sub-command; a script of that name runs as ./NAME.\n";
  std::string line = "usage: " + command_name(cmd) + " [options]";
  for (const CLI::Option* o : cmd.get_options())
    if (o->get_lnames().empty() && o->get_snames().empty()) line += " [" + o->get_name(true) + "...]";
  return line + "\n";
}

Entries option_entries(const CLI::App& cmd) {
  Entries entries;
  for (const CLI::Option* o : cmd.get_options()) {
    std::string form = option_form(*o);
    if (!o->get_lnames().empty() || !o->get_snames().empty()) entries.emplace_back(form, o->get_description());
  }
  return entries;
}

// The names of every option of `cmd`, as typed: "-e", "--debug".
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

}  // namespace

std::string help_text(const CLI::App& cmd) {
  std::string text = synopsis(cmd) + "\n" + cmd.get_description() + "\n\n";
  Entries options = option_entries(cmd);
  if (cmd.get_parent()) return text + columns("Options", options);
  options.insert(options.end(), kMainExtras.begin(), kMainExtras.end());
  Entries commands;
  for (const CLI::App* sub : cmd.get_subcommands({})) commands.emplace_back(sub->get_name(), sub->get_description());
  return text + columns("Options", options) + "\n" +
         columns("Sub-commands (cloudlua COMMAND --help shows the options of one)", commands) + "\n" +
         columns("Environment", kEnvironment) + "\n" + exit_status(lua_command_names(", ", ", "));
}

int usage_error(const CLI::App& cmd, const std::string& reason) {
  std::string text = command_name(cmd) + ": " + reason + "\n" + synopsis(cmd) + "Run '" + command_name(cmd) +
                     " --help' for every option.\n";
  std::fputs(text.c_str(), stderr);
  return 1;
}

std::string unrecognized(const CLI::App& cmd, const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return "unexpected argument '" + word + "'";
  std::string typed = word.substr(0, word.find('='));  // --opt=value: the option's name
  return unknown_option(typed, option_names(cmd));
}

std::string mistyped_subcommand(const CLI::App& app, const std::string& script) {
  if (script == "-" || access(script.c_str(), F_OK) == 0) return "";
  auto near = nearest_name(script, subcommand_names(app));
  if (!near) return "";
  return "cannot open " + script + " (no such file); did you mean the sub-command '" + *near + "'?";
}

}  // namespace cloud
