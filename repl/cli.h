// The pieces of the command line: the Lua runner (scripts, -e, the REPL, scripted
// sessions) and the `serve` and `config` sub-commands. main.cpp parses the options
// with CLI11 and calls these.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/client/config.h"

struct lua_State;

namespace cloud {

// --output: text (values not printed, as lua), json (each returned value a JSON
// document, a call's meta left out; errors as one JSON document on stderr), or
// json_meta (json with the meta kept).
enum class Output { text, json, json_meta };

// One -e CODE or -l [g=]MOD, kept in command-line order as lua runs them.
struct LuaStep {
  bool require = false;
  std::string text;
};

struct RunOptions {
  ConfigOverrides config;
  std::vector<LuaStep> steps;    // -e and -l, in order
  bool interactive = false;      // -i
  bool version = false;          // -v
  bool ignore_env = false;       // -E: no CLOUDLUA_INIT, LUA_PATH, LUA_CPATH
  bool warnings = false;         // -W
  bool keep_going = false;       // scripted sessions: carry on after an error
  Output output = Output::text;  // --output json / json-meta: returned values as JSON
  std::string script;            // "" none, "-" stdin
  std::vector<std::string> script_args;
  std::vector<std::string> argv;          // the whole command line, for `arg`
  std::string command;                    // a sub-command of lua/command_specs.lua, or ""
  std::vector<std::string> command_args;  // its words
  bool full_traceback = false;            // --debug: errors with every frame, cloudlua's own too
};

int run_lua(const RunOptions& options);

// The sub-commands written in Lua, { name, summary } each, in the order of their
// declaration (lua/command_specs.lua), read from the embedded module in a Lua state
// of its own: main.cpp recognises and lists them by it, never spelling a name.
std::vector<std::pair<std::string, std::string>> lua_commands();

struct ServeOptions {
  ConfigOverrides config;
  std::string host = "127.0.0.1";
  int port = 0;
  std::string dialect = "any";
  std::string state_file;             // --state: "" keeps state in memory only
  std::string restore;                // --restore: the checkpoint of the state to start from
  std::string settle;                 // --settle: every transition's duration ("2s", "500ms"); "" the defaults
  long long min_part_size = -1;       // --min-part-size: bytes a part must have unless last; -1 the default
  std::vector<std::string> accounts;  // --account KEY:SECRET, each an account of the default world
  std::string accounts_file;          // --accounts FILE: a KEY:SECRET a line
};

int run_serve(const ServeOptions& options);

// `cloudlua config`: the effective configuration, secrets masked, and where each
// value came from.
int run_config(const ConfigOverrides& config);

// A scripted session (stdin not a terminal, no script given): stdin read as the REPL
// reads it, statement by statement, without prompts; values of expressions printed
// (as JSON with --output json). Stops at the first error with status 1, unless
// keep_going, when it carries on and still ends with 1.
int run_session_script(lua_State* L, const RunOptions& options);

// Prints the values from stack index `first` to the top and pops them, redacted: one
// JSON document per line, or as the REPL shows them (show_values). False, with the
// message on top for report_error, when a value has no JSON form or no string.
bool print_values(lua_State* L, int first, Output how);

// Shows the values from stack index `first` to the top as the REPL does (cloud.pretty:
// tables laid out, strings as they are; colour and the pager on a terminal only) and
// pops them. False, with the message on top for report_error, when that fails.
bool show_values(lua_State* L, int first);

// The REPL on an open state: reads lines until end of input.
void run_repl(lua_State* L);

// Runs the function on top of the stack (with nargs below it) under a traceback
// handler; on error prints "cloudlua: <message>" on stderr. Returns LUA_OK or the status.
// The traceback holds the user's own frames only: none of cloudlua's embedded Lua
// ("[cloudlua]" chunks) nor C functions, unless run_lua was given full_traceback.
int protected_call(lua_State* L, int nargs, int nresults);
void report_error(lua_State* L, int status);

// Writes text that leaves the process (values shown, errors) redacted by core/net/redact.
void write_redacted(std::FILE* to, const std::string& text);

}  // namespace cloud
