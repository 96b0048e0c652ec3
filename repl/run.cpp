// Running Lua the way `lua` does: one state, the `cloud` module installed, the `arg`
// table, CLOUDLUA_INIT (as LUA_INIT), -e and -l in command-line order, then the
// script (or stdin), then maybe the REPL, all inside one protected call (lua.c's
// pmain). Every chunk runs under a message handler that adds a traceback (the
// user's frames only, every frame with --debug); a sub-command of lua/commands.lua
// runs in place of the script (run_command). A failure prints "cloudlua: <message>"
// on stderr and makes the exit status 1, or 130 when SIGINT or SIGTERM interrupted it
// (repl/interrupt.h: the first signal surfaces in Lua as an "Interrupted" error, which
// sync and the transfers clean up after); an interruption prints the one line
// "cloudlua: interrupted", wherever it stopped the run. With --output json the values a -e chunk or the script returns
// are printed as JSON, one document per line.
#include <lua.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/base/embedded.h"
#include "core/net/redact.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"
#include "repl/cli.h"
#include "repl/interrupt.h"

namespace cloud {

namespace {

const char* const kErrorValueKey = "cloudlua.error_value";

// How report_error writes: as text, or as one JSON document (--output json); set by run_lua.
Output error_output = Output::text;

// --debug: tracebacks keep every frame (set by run_lua).
bool full_traceback = false;

// Whether a frame is one of cloudlua's own: a C function or a chunk embedded in the
// binary (its name starts "[cloudlua]", lua/modules.cpp), the user's code is neither.
bool own_frame(const lua_Debug& ar) {
  return std::strcmp(ar.what, "C") == 0 || std::strncmp(ar.short_src, "[cloudlua]", 10) == 0;
}

// Pushes `msg` followed by the traceback of the user's own frames (as luaL_traceback
// writes them); nothing follows the message when none of the frames is the user's (a
// sub-command, or an error raised inside cloudlua's own Lua from a -e chunk).
void push_user_traceback(lua_State* L, const char* msg) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, msg);
  lua_Debug ar;
  bool first = true;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Slnt", &ar) || own_frame(ar)) continue;
    if (first) luaL_addstring(&b, "\nstack traceback:");
    first = false;
    std::string line = std::string("\n\t") + ar.short_src + ":" + std::to_string(ar.currentline) + ": in ";
    if (*ar.namewhat) line += std::string(ar.namewhat) + " '" + (ar.name ? ar.name : "?") + "'";
    else if (*ar.what == 'm') line += "main chunk";
    else line += std::string("function <") + ar.short_src + ":" + std::to_string(ar.linedefined) + ">";
    luaL_addlstring(&b, line.data(), line.size());
  }
  luaL_pushresult(&b);
}

// Whether a chunk failed after a signal interrupted it: the run's exit status is then 130.
bool run_interrupted = false;

// The exit status of a run whose chunk failed.
int failed_status() { return run_interrupted ? 130 : 1; }

// Error objects are tables with __tostring; anything else without a string form is
// named by its type, as lua.c does. The value raised is kept (kErrorValueKey) for
// report_error's JSON form. The traceback shows the user's frames only, unless
// --debug asked for every one.
int message_handler(lua_State* L) {
  lua_pushvalue(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorValueKey);
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
    else msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  if (full_traceback) luaL_traceback(L, L, msg, 1);
  else push_user_traceback(L, msg);
  return 1;
}

// arg[0] is the script, arg[1..] its arguments, negative indexes what came before.
void create_arg_table(lua_State* L, const RunOptions& o) {
  int script_index = o.script.empty() ? 0 : static_cast<int>(o.argv.size() - o.script_args.size()) - 1;
  lua_createtable(L, static_cast<int>(o.script_args.size()), script_index + 1);
  for (int i = 0; i < static_cast<int>(o.argv.size()); ++i) {
    lua_pushstring(L, o.argv[static_cast<size_t>(i)].c_str());
    lua_rawseti(L, -2, i - script_index);
  }
  lua_setglobal(L, "arg");
}

// The one line that says where calls go when a script, -e or a scripted session runs
// on the embedded emulator, said when the emulator starts (a run that makes no call
// starts none); the REPL's banner says it instead. quiet_emulator silences it.
void announce_emulator(Session& session, const RunOptions& o) {
  bool repl_only = o.script.empty() && o.steps.empty() && (o.interactive || isatty(STDIN_FILENO));
  if (!session.emulated || session.config.client.quiet_emulator || repl_only) return;
  session.on_emulator_start = [] {
    std::fputs("cloudlua: no account configured; using the embedded emulator\n", stderr);
    std::fflush(stderr);
  };
}

// Runs the function on top of the stack (its `nargs` arguments above it), SIGINT and
// SIGTERM interrupting it; its results are printed when the output is JSON.
int run_function(lua_State* L, int nargs, Output output) {
  int base = lua_gettop(L) - nargs;  // the function's index
  bool json_out = output != Output::text;
  int status = LUA_OK;
  {
    InterruptGuard guard(L, true);
    status = protected_call(L, nargs, json_out ? LUA_MULTRET : 0);
    if (status != LUA_OK && guard.interrupted()) run_interrupted = true;
  }
  if (status == LUA_OK && json_out && !print_values(L, base, output)) status = LUA_ERRRUN;
  report_error(L, status);
  return status;
}

int run_chunk(lua_State* L, int load_status, Output output) {
  if (load_status != LUA_OK) {
    report_error(L, load_status);
    return load_status;
  }
  return run_function(L, 0, output);
}

// -l MOD requires MOD into the global MOD; -l g=MOD into the global g (Lua 5.4.4).
int require_module(lua_State* L, const std::string& spec) {
  size_t eq = spec.find('=');
  std::string global = eq == std::string::npos ? spec : spec.substr(0, eq);
  std::string module = eq == std::string::npos ? spec : spec.substr(eq + 1);
  lua_getglobal(L, "require");
  lua_pushstring(L, module.c_str());
  int status = protected_call(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, global.c_str());
  report_error(L, status);
  return status;
}

// CLOUDLUA_INIT, as lua's LUA_INIT: "@file" runs the file, anything else is code.
int run_init(lua_State* L) {
  const char* init = std::getenv("CLOUDLUA_INIT");
  if (!init || !*init) return LUA_OK;
  if (init[0] == '@') return run_chunk(L, luaL_loadfile(L, init + 1), Output::text);
  return run_chunk(L, luaL_loadbuffer(L, init, std::strlen(init), "=CLOUDLUA_INIT"), Output::text);
}

int run_steps(lua_State* L, const RunOptions& o) {
  for (const LuaStep& step : o.steps) {
    int status = step.require ? require_module(L, step.text)
                              : run_chunk(L, luaL_loadbuffer(L, step.text.data(), step.text.size(), "=(command line)"),
                                          o.output);
    if (status != LUA_OK) return status;
  }
  return LUA_OK;
}

// The file a script name stands for: the name itself when it names a file; else a
// name under scripts/ is the installed example script, share/cloudlua/scripts/NAME of
// the prefix the binary runs from (bin/..), when that exists (docs/scripts.md).
std::string script_file(const std::string& name) {
  if (name.rfind("scripts/", 0) != 0 || access(name.c_str(), F_OK) == 0) return name;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof exe) return name;
  std::string binary(exe, static_cast<size_t>(n));
  std::string bin = binary.substr(0, binary.rfind('/'));  // PREFIX/bin
  std::string installed = bin.substr(0, bin.rfind('/')) + "/share/cloudlua/" + name;
  return access(installed.c_str(), F_OK) == 0 ? installed : name;
}

int run_script(lua_State* L, const RunOptions& o) {
  std::string path = script_file(o.script);
  const char* file = o.script == "-" ? nullptr : path.c_str();
  int status = luaL_loadfile(L, file);
  if (status != LUA_OK) return run_chunk(L, status, o.output);
  for (const std::string& a : o.script_args) lua_pushstring(L, a.c_str());
  return run_function(L, static_cast<int>(o.script_args.size()), o.output);
}

// `cloudlua NAME ARGS...`: require("cloud.commands").main(NAME, ARGS...), whose
// result is the exit status (0 done, 1 failed or differs, 2 a usage error); an error
// it raises is reported as any other and makes the status 1.
int run_command(lua_State* L, const RunOptions& o) {
  static const char code[] = "return require('cloud.commands').main(...)";
  if (luaL_loadbuffer(L, code, sizeof code - 1, "=[cloudlua] command line") != LUA_OK)
    return report_error(L, LUA_ERRSYNTAX), 1;
  lua_pushstring(L, o.command.c_str());
  for (const std::string& a : o.command_args) lua_pushlstring(L, a.data(), a.size());
  int status = LUA_OK;
  {
    InterruptGuard guard(L, true);
    status = protected_call(L, static_cast<int>(o.command_args.size()) + 1, 1);
    if (status != LUA_OK && guard.interrupted()) run_interrupted = true;
  }
  if (status != LUA_OK) return report_error(L, status), failed_status();
  int code_out = lua_isinteger(L, -1) ? static_cast<int>(lua_tointeger(L, -1)) : 1;
  lua_pop(L, 1);
  return code_out;
}

// The string field `key` of the table on top, or "".
std::string string_field(lua_State* L, const char* key) {
  std::string value = lua_getfield(L, -1, key) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return value;
}

// The sub-commands as the embedded declaration lists them (lua_commands reads them once).
std::vector<std::pair<std::string, std::string>> read_lua_commands() {
  std::vector<std::pair<std::string, std::string>> list;
  const EmbeddedFile* f = lua_module_files;
  while (f->name && std::strcmp(f->name, "command_specs.lua") != 0) ++f;
  lua_State* L = f->name ? luaL_newstate() : nullptr;  // pure data: no library is needed
  if (!L) return list;
  if (luaL_loadbuffer(L, f->text, std::strlen(f->text), "=[cloudlua] command_specs.lua") == LUA_OK &&
      lua_pcall(L, 0, 1, 0) == LUA_OK && lua_istable(L, -1) && lua_getfield(L, -1, "commands") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i, lua_pop(L, 1))
      list.emplace_back(string_field(L, "name"), string_field(L, "summary"));
  }
  lua_close(L);
  return list;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> lua_commands() {
  static const std::vector<std::pair<std::string, std::string>> list = read_lua_commands();
  return list;
}

namespace {

void print_version() { std::printf("cloudlua %s (%s)\n", CLOUDLUA_VERSION, LUA_RELEASE); }

// The state made ready as `lua` makes it, with the `cloud` module of a new session;
// false (reported) when the configuration cannot work.
bool open_state(lua_State* L, const RunOptions& o) {
  auto session = open_session(o.config);
  if (!session.ok()) {
    std::fprintf(stderr, "cloudlua: %s\n", session.error().describe().c_str());
    return false;
  }
  if (o.ignore_env) {  // as lua -E: the package library then ignores LUA_PATH and LUA_CPATH
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  if (o.warnings) lua_warning(L, "@on", 0);
  announce_emulator(*session.value(), o);
  open_cloud(L, session.value());
  return true;
}

int run_all(lua_State* L, const RunOptions& o) {
  create_arg_table(L, o);
  if (!o.ignore_env && run_init(L) != LUA_OK) return failed_status();
  if (!o.command.empty()) return run_command(L, o);
  if (run_steps(L, o) != LUA_OK) return failed_status();
  if (!o.script.empty() && run_script(L, o) != LUA_OK) return failed_status();
  bool nothing_given = o.script.empty() && o.steps.empty() && !o.version;
  // Values typed are shown by cloud.pretty, which the `cloud` table loads when the
  // field is first read (from then on a field like any other, which completion lists).
  if (o.interactive || nothing_given) {
    int top = lua_gettop(L);
    if (lua_getglobal(L, "cloud") == LUA_TTABLE) lua_getfield(L, -1, "pretty");
    lua_settop(L, top);
  }
  if (o.interactive || (nothing_given && isatty(STDIN_FILENO))) {
    run_repl(L);  // it shows the banner when stdin is a terminal
  } else if (nothing_given) {
    return run_session_script(L, o);
  }
  return 0;
}

// The whole run, as lua.c's pmain: -v, the session, the libraries and the module,
// `arg`, CLOUDLUA_INIT, -e and -l, the script, the REPL, all inside the one protected
// call run_lua makes, so that an error outside the chunks' own calls (a _G that
// refuses the global -l sets) is reported, not a panic. Returns the exit status.
int pmain(lua_State* L) {
  const RunOptions& o = *static_cast<const RunOptions*>(lua_touserdata(L, 1));
  if (o.version) print_version();
  bool only_version = o.version && o.script.empty() && o.steps.empty() && !o.interactive;
  lua_pushinteger(L, only_version ? 0 : !open_state(L, o) ? 1 : run_all(L, o));
  return 1;
}

// Pushes the JSON text of the value at `index` (the `position`th returned), or an
// error message naming the value and the field without a JSON form; false on error.
bool push_json_text(lua_State* L, int index, int position) {
  if (lua_isnil(L, index)) return lua_pushliteral(L, "null"), true;
  auto value = to_json(L, index);
  if (!value.ok()) {
    const Error& e = value.error();
    std::string field = e.fields.empty() || e.fields.front().path == "(argument)" ? "" : " at " + e.fields.front().path;
    lua_pushfstring(L, "--output json: returned value %d%s has no JSON form (%s)", position, field.c_str(),
                    e.message.c_str());
    return false;
  }
  std::string text = value->dump(-1, ' ', false, json::error_handler_t::replace);
  lua_pushlstring(L, text.data(), text.size());
  return true;
}

// Whether the error being reported (the value raised, kErrorValueKey) is an
// interruption: code "Interrupted" (SIGINT, SIGTERM; repl/interrupt.h), whichever
// request or instruction it stopped. It is said in one plain line, as lua.c says
// "interrupted!": no kind, code or traceback, and a sync's summary already said so.
bool reporting_interruption(lua_State* L) {
  int top = lua_gettop(L);
  bool interrupted = false;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kErrorValueKey) == LUA_TTABLE) {
    lua_pushliteral(L, "code");
    interrupted = lua_rawget(L, -2) == LUA_TSTRING && std::strcmp(lua_tostring(L, -1), "Interrupted") == 0;
  }
  lua_settop(L, top);
  return interrupted;
}

// The error on top (its message, with the traceback) as one JSON document: the error
// object raised (kind, code, message, status, request_id, fields...), or for any other
// value {"kind":"lua","message":...} without the traceback.
std::string error_document(lua_State* L) {
  std::string text = lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)";
  lua_getfield(L, LUA_REGISTRYINDEX, kErrorValueKey);
  auto object = lua_istable(L, -1) ? to_json(L, -1) : Outcome<json>(json());
  lua_pop(L, 1);
  if (object.ok() && object->is_object()) return object->dump(-1, ' ', false, json::error_handler_t::replace);
  std::string message = text.substr(0, text.find("\nstack traceback:"));
  return json{{"kind", "lua"}, {"message", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

bool print_values(lua_State* L, int first, Output how) {
  int last = lua_gettop(L);
  if (how == Output::text) return show_values(L, first);
  for (int i = first; i <= last; ++i) {
    if (how == Output::json && has_mark(L, i, kMetaMark)) continue;  // a call's meta: json-meta shows it
    bool ok = push_json_text(L, i, i - first + 1);
    if (!ok) {
      lua_replace(L, first);
      lua_settop(L, first);
      return false;  // the message is on top, for report_error
    }
    write_redacted(stdout, std::string(lua_tostring(L, -1)) + "\n");
    lua_pop(L, 1);
  }
  std::fflush(stdout);
  lua_settop(L, first - 1);
  return true;
}

int protected_call(lua_State* L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  return status;
}

void report_error(lua_State* L, int status) {
  if (status == LUA_OK) return;
  const char* msg = lua_tostring(L, -1);
  if (error_output != Output::text) write_redacted(stderr, error_document(L) + "\n");
  else if (reporting_interruption(L)) write_redacted(stderr, "cloudlua: interrupted\n");
  else
    write_redacted(stderr,
                   printable(std::string("cloudlua: ") + (msg ? msg : "(error object is not a string)") + "\n"));
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorValueKey);
}

void write_redacted(std::FILE* to, const std::string& text) {
  std::string shown = redact(text);
  std::fwrite(shown.data(), 1, shown.size(), to);
  std::fflush(to);
}

int run_lua(const RunOptions& o) {
  error_output = o.output;
  full_traceback = o.full_traceback;
  std::unique_ptr<lua_State, void (*)(lua_State*)> L(luaL_newstate(), lua_close);
  if (!L) return std::fprintf(stderr, "cloudlua: cannot create state: not enough memory\n"), 1;
  lua_pushcfunction(L.get(), protect<pmain>);
  lua_pushlightuserdata(L.get(), const_cast<RunOptions*>(&o));
  int status = protected_call(L.get(), 1, 1);
  if (status != LUA_OK) return report_error(L.get(), status), 1;
  return static_cast<int>(lua_tointeger(L.get(), -1));
}

}  // namespace cloud
