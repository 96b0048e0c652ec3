// The pieces of the command line: the Lua runner (scripts, -e, the REPL) and the
// `serve` sub-command. main.cpp parses the options with CLI11 and calls these.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"

struct lua_State;

namespace cloud {

struct RunOptions {
  ConfigOverrides config;
  std::vector<std::string> exec;        // -e chunks, in order
  std::vector<std::string> modules;     // -l modules, in order
  bool interactive = false;             // -i
  bool version = false;                 // -v
  std::string script;                   // "" none, "-" stdin
  std::vector<std::string> script_args;
  std::vector<std::string> argv;        // the whole command line, for `arg`
};

int run_lua(const RunOptions& options);

struct ServeOptions {
  ConfigOverrides config;
  std::string host = "127.0.0.1";
  int port = 0;
  std::string dialect = "any";
  std::string state_file;  // --state: "" keeps state in memory only
};

int run_serve(const ServeOptions& options);

// The REPL on an open state: reads lines until end of input.
void run_repl(lua_State* L);

// Runs the function on top of the stack (with nargs below it) under a traceback
// handler; on error prints "cloudlua: <message>" on stderr. Returns LUA_OK or the status.
int protected_call(lua_State* L, int nargs, int nresults);
void report_error(lua_State* L, int status);

}  // namespace cloud
