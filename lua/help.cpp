// help() and cloud.describe: the operation model's help, reached from Lua by an
// operation function (cloud.devops.restore_instance), an API table (cloud.devops),
// or a name ("RestoreInstance", "restore_instance", "devops"). The text and the
// data both come from core/model/help, which reads them off the model. The other functions
// of cloud (cloud.wait_until, cloud.emulator...) are documented in one place, the
// data of lua/reference.lua. A name help does not know lists the names containing it,
// or is refused with the nearest one (core/base/suggest).
#include <lua.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "core/model/help.h"
#include "core/base/pager.h"
#include "core/base/suggest.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"

namespace cloud {

namespace {

const char* const kPrefix = "cloud.";

const Model& model_of(lua_State* L) { return session_of(L).client->model(); }

// The operation named by the value at `index`: an operation function or a name.
const Operation* operation_at(lua_State* L, int index) {
  const char* name = nullptr;
  if (lua_type(L, index) == LUA_TFUNCTION) name = operation_name_of(L, index);
  else if (lua_type(L, index) == LUA_TSTRING) name = lua_tostring(L, index);
  return name ? model_of(L).find(name) : nullptr;
}

// The API named by the value at `index`: its name, or a client's API table (known
// by its first operation function).
const Api* api_at(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TSTRING) return model_of(L).api(lua_tostring(L, index));
  if (lua_type(L, index) != LUA_TTABLE) return nullptr;
  index = lua_absindex(L, index);
  for (const Api& api : model_of(L).apis()) {
    if (api.operations.empty()) continue;
    lua_pushstring(L, api.operations.front()->snake_name.c_str());
    lua_rawget(L, index);  // raw: an API table raises for a name it does not hold
    const Operation* op = operation_at(L, -1);
    lua_pop(L, 1);
    if (op && op->api == api.name) return &api;
  }
  return nullptr;
}

// True for `cloud` itself or a cloud.client{} table: its first API is an API table.
bool is_client_at(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE || model_of(L).apis().empty()) return false;
  index = lua_absindex(L, index);
  lua_pushstring(L, model_of(L).apis().front().name.c_str());
  lua_rawget(L, index);
  bool client = api_at(L, -1) != nullptr;
  lua_pop(L, 1);
  return client;
}

// One function of cloud documented in lua/reference.lua (the documentation data).
struct Reference {
  std::string name, usage, summary, text, see, declared;  // declared: its arguments and results
};

std::string string_field(lua_State* L, int table, const char* key) {
  lua_getfield(L, table, key);
  std::string value = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return value;
}

// The entries of lua/reference.lua, in their order.
std::vector<Reference> reference_entries(lua_State* L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cloud.reference");
  call_lua(L, 1, 1);
  std::vector<Reference> entries;
  int table = lua_gettop(L);
  for (lua_Integer i = 1; lua_rawgeti(L, table, i) == LUA_TTABLE; ++i) {
    int e = lua_gettop(L);
    entries.push_back({string_field(L, e, "name"), string_field(L, e, "usage"), string_field(L, e, "summary"),
                       string_field(L, e, "text"), string_field(L, e, "see"), string_field(L, e, "declared")});
    lua_pop(L, 1);
  }
  lua_settop(L, table - 1);
  return entries;
}

// Whether the value at `index` (absolute) is the one `path` ("cloud.emulator.fault")
// names from the globals.
bool is_value_of(lua_State* L, int index, const std::string& path) {
  push_global_path(L, path);
  bool same = lua_rawequal(L, -1, index);
  lua_pop(L, 1);
  return same;
}

// The entry for the value at `index`: the function or table itself, or a name, full
// ("cloud.wait_until") or its last parts ("wait_until", "emulator.fault").
const Reference* reference_at(lua_State* L, int index, const std::vector<Reference>& entries) {
  for (const Reference& r : entries) {
    if (lua_type(L, index) == LUA_TSTRING) {
      std::string name = lua_tostring(L, index);
      if (r.name == name || (r.name.size() > name.size() &&
                             r.name.compare(r.name.size() - name.size() - 1, std::string::npos, "." + name) == 0))
        return &r;
    } else if ((lua_istable(L, index) || lua_isfunction(L, index)) && is_value_of(L, index, r.name)) {
      return &r;
    }
  }
  return nullptr;
}

std::string format_reference(const Reference& r) {
  std::string out = r.usage + "\n  " + r.summary + "\n";
  if (!r.text.empty()) out += "\n" + r.text + "\n";
  if (!r.declared.empty()) out += "\n" + r.declared + "\n";
  if (!r.see.empty()) out += "\nMore in " + r.see + ".\n";
  return out;
}

std::string overview(const Model& model, const std::vector<Reference>& entries) {
  std::string out = "The platform's APIs as Lua functions: tables in, tables out.\n\n" +
                    format_model_help(model, kPrefix) + "\nThe other functions of cloud:\n";
  for (const Reference& r : entries) out += "  " + r.usage + "\n      " + r.summary + "\n";
  return out +
         "\nhelp(cloud.devops.restore_instance) or help\"RestoreInstance\" describes an\n"
         "operation, help\"devops\" an API, help(cloud.wait_until) or help\"wait_until\" a\n"
         "function; help\"restore\" lists the names that contain \"restore\".\n";
}

// Every name help knows, with how it lists it: operations (both spellings), APIs
// and the documented functions.
std::vector<std::pair<std::string, std::string>> known_names(const Model& model,
                                                             const std::vector<Reference>& entries) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const Api& api : model.apis()) {
    names.push_back({api.name, kPrefix + api.name + " (the " + api.name + " API)"});
    for (const Operation* op : api.operations) {
      std::string listed = kPrefix + api.name + "." + op->snake_name + " (" + op->name + ")";
      names.push_back({op->name, listed});
      names.push_back({op->snake_name, listed});
    }
  }
  for (const Waiter* w : model.waiters()) names.push_back({w->name, w->name + " (a waiter)"});
  for (const Reference& r : entries) {
    names.push_back({r.name, r.name});
    names.push_back({r.name.substr(std::strlen(kPrefix)), r.name});  // "wait_until", "emulator.fault"
  }
  return names;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// For a name help does not know: the names that contain it, listed; else an error
// with the nearest name ("did you mean 'UpdateSnapshot'?").
std::string unknown_help_name(lua_State* L, const std::string& typed, const std::vector<Reference>& entries) {
  auto names = known_names(model_of(L), entries);
  std::vector<std::string> listed, candidates;
  for (const auto& [name, line] : names) {
    candidates.push_back(name);
    bool contains = lower(name).find(lower(typed)) != std::string::npos;
    if (contains && std::find(listed.begin(), listed.end(), line) == listed.end()) listed.push_back(line);
  }
  if (!typed.empty() && !listed.empty()) {
    std::string out = "No operation, API or function named '" + typed + "'; these names contain it:\n";
    for (const std::string& line : listed) out += "  " + line + "\n";
    return out;
  }
  arg_error(L, 1, unknown_name("operation, API or function", typed, candidates, "help() lists them"));
}

// The help text for the argument at index 1; raises for something help knows nothing of.
std::string help_text(lua_State* L) {
  std::vector<Reference> entries = reference_entries(L);
  if (lua_isnoneornil(L, 1) || is_client_at(L, 1)) return overview(model_of(L), entries);
  if (const Operation* op = operation_at(L, 1))
    return format_operation_help(describe_operation(*op), kPrefix + op->api + "." + op->snake_name);
  if (const Api* api = api_at(L, 1)) return format_api_help(*api, kPrefix);
  if (const Reference* r = reference_at(L, 1, entries)) return format_reference(*r);
  if (const Waiter* w = lua_type(L, 1) == LUA_TSTRING ? model_of(L).waiter(lua_tostring(L, 1)) : nullptr)
    return format_waiter_help(*w, kPrefix);
  if (lua_type(L, 1) == LUA_TSTRING) return unknown_help_name(L, lua_tostring(L, 1), entries);
  arg_error(L, 1,
            std::string("an operation, an API, a function of cloud or a name expected, got ") + luaL_typename(L, 1) +
                "; help() lists them");
}

// Whether io.output() is io.stdout: help's text then goes to the terminal, if any.
// False when the global io has no output function or it fails.
bool output_is_stdout(lua_State* L) {
  int top = lua_gettop(L);
  bool same = false;
  if (lua_getglobal(L, "io") == LUA_TTABLE && lua_getfield(L, -1, "output") == LUA_TFUNCTION &&
      lua_pcall(L, 0, 1, 0) == LUA_OK) {
    lua_getfield(L, top + 1, "stdout");
    same = lua_rawequal(L, -1, -2);
  }
  lua_settop(L, top);
  return same;
}

// help([x]): writes the help for x, or the list of everything: through the pager on
// a terminal (core/base/pager), else with io.write, so that io.output() can capture it;
// with fwrite when io is not loaded.
int l_help(lua_State* L) {
  std::string text = help_text(L);
  if (isatty(STDOUT_FILENO) && output_is_stdout(L)) return write_paged(text), 0;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_IOLIBNAME) == LUA_TTABLE && lua_getfield(L, -1, "write") == LUA_TFUNCTION) {
    lua_pushlstring(L, text.data(), text.size());
    call_lua(L, 1, 0);
    return 0;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

void set_string(lua_State* L, const char* key, const std::string& value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

void push_strings(lua_State* L, const std::vector<std::string>& list) {
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (size_t i = 0; i < list.size(); ++i) {
    lua_pushlstring(L, list[i].data(), list[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

void push_fields(lua_State* L, const std::vector<FieldHelp>& fields) {
  lua_createtable(L, static_cast<int>(fields.size()), 0);
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldHelp& f = fields[i];
    lua_createtable(L, 0, 9);
    set_string(L, "path", f.path);
    set_string(L, "location", f.location);
    if (!f.wire_name.empty()) set_string(L, "wire_name", f.wire_name);
    set_string(L, "type", f.type);
    lua_pushboolean(L, f.required);
    lua_setfield(L, -2, "required");
    push_strings(L, f.rules);
    lua_setfield(L, -2, "rules");
    push_json(L, json(f.allowed));
    lua_setfield(L, -2, "allowed");
    if (f.default_value) push_json(L, *f.default_value), lua_setfield(L, -2, "default");
    if (!f.default_text.empty()) set_string(L, "default_text", f.default_text);
    set_string(L, "doc", f.doc);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// cloud.describe(op): the operation as data — name, fn, api, method, path, doc,
// idempotent, parameters and result (lists of fields as help() shows them), and
// limits (the model's, { maxSourceBytes = 5368709120 }; empty for most).
int l_describe(lua_State* L) {
  const Operation* op = operation_at(L, 1);
  if (!op) arg_error(L, 1, "an operation function or name expected; help() lists them");
  OperationHelp help = describe_operation(*op);
  lua_createtable(L, 0, 9);
  for (auto [key, value] : {std::pair{"name", &op->name},
                            {"fn", &op->snake_name},
                            {"api", &op->api},
                            {"method", &op->method},
                            {"path", &op->path},
                            {"doc", &op->doc}})
    set_string(L, key, *value);
  lua_pushboolean(L, op->idempotent);
  lua_setfield(L, -2, "idempotent");
  push_fields(L, help.parameters);
  lua_setfield(L, -2, "parameters");
  push_fields(L, help.results);
  lua_setfield(L, -2, "result");
  lua_createtable(L, 0, static_cast<int>(op->limits.size()));
  for (const auto& [name, value] : op->limits) {
    lua_pushinteger(L, static_cast<lua_Integer>(value));
    lua_setfield(L, -2, name.c_str());
  }
  lua_setfield(L, -2, "limits");
  return 1;
}

// cloud.nearest(word, names): the string of the list `names` nearest to `word` by the
// rule of every "did you mean" (core/base/suggest), or nil when none is near enough.
int l_nearest(lua_State* L) {
  check_type(L, 1, LUA_TSTRING);
  check_type(L, 2, LUA_TTABLE);
  std::vector<std::string> names;
  for (lua_Integer i = 1; lua_rawgeti(L, 2, i) != LUA_TNIL; ++i, lua_pop(L, 1))
    if (lua_type(L, -1) == LUA_TSTRING) names.push_back(lua_tostring(L, -1));
  auto near = nearest_name(lua_tostring(L, 1), names);
  if (near) lua_pushlstring(L, near->data(), near->size());
  else lua_pushnil(L);
  return 1;
}

// The strings of the list at `index`.
std::vector<std::string> string_list(lua_State* L, int index) {
  std::vector<std::string> names;
  for (lua_Integer i = 1; lua_rawgeti(L, index, i) != LUA_TNIL; ++i, lua_pop(L, 1))
    if (lua_type(L, -1) == LUA_TSTRING) names.push_back(lua_tostring(L, -1));
  lua_pop(L, 1);
  return names;
}

// cloud._unknown_field(key, names): the one wording of an unknown field (core/base/
// suggest), "unknown field 'key', did you mean 'near'?"; lua/check.lua's.
int l_unknown_field(lua_State* L) {
  check_type(L, 2, LUA_TTABLE);
  const char* key = tolstring(L, 1);
  std::string text = unknown_field(key, string_list(L, 2));
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// cloud._unknown_name(kind, typed, names [, hint]): the one wording of a name that
// names nothing of its kind (core/base/suggest), "no waiter named 'x'; did you mean
// 'y'?"; lua/check.lua's.
int l_unknown_name(lua_State* L) {
  const char* kind = luaL_checkstring(L, 1);  // lauxlib's checks first: they raise by longjmp
  const char* typed = luaL_checkstring(L, 2);
  check_type(L, 3, LUA_TTABLE);
  const char* hint = luaL_optstring(L, 4, "");
  std::string text = unknown_name(kind, typed, string_list(L, 3), hint);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// cloud._unknown_option(typed, names): the command line's one wording of an unknown
// option (core/base/suggest), "unknown option '--x'; did you mean '--y'?"; the Lua
// sub-commands' (lua/command_line.lua).
int l_unknown_option(lua_State* L) {
  const char* typed = luaL_checkstring(L, 1);
  check_type(L, 2, LUA_TTABLE);
  std::string text = unknown_option(typed, string_list(L, 2));
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// cloud._suggested(text, typed, names): `text` with the one "did you mean" (core/base/
// suggest) for `typed` among `names`; for a refusal worded where it is made.
int l_suggested(lua_State* L) {
  const char* text = luaL_checkstring(L, 1);
  const char* typed = luaL_checkstring(L, 2);
  check_type(L, 3, LUA_TTABLE);
  std::string out = suggested(text, typed, string_list(L, 3));
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

}  // namespace

void push_global_path(lua_State* L, const std::string& path) {
  lua_pushglobaltable(L);
  for (size_t from = 0; from < path.size();) {
    size_t dot = std::min(path.find('.', from), path.size());
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      lua_pushnil(L);
      return;
    }
    lua_pushlstring(L, path.data() + from, dot - from);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    from = dot + 1;
  }
}

std::string reference_usage(lua_State* L, int index) {
  index = lua_absindex(L, index);
  std::vector<Reference> entries = reference_entries(L);
  const Reference* r = lua_isfunction(L, index) || lua_istable(L, index) ? reference_at(L, index, entries) : nullptr;
  return r ? r->usage : "";
}

void open_help(lua_State* L, int module) {
  lua_pushcfunction(L, protect<l_help>);
  lua_pushvalue(L, -1);
  lua_setfield(L, module, "help");
  lua_setglobal(L, "help");
  static const luaL_Reg functions[] = {{"describe", protect<l_describe>},
                                       {"nearest", protect<l_nearest>},
                                       {"_unknown_field", protect<l_unknown_field>},
                                       {"_unknown_name", protect<l_unknown_name>},
                                       {"_unknown_option", protect<l_unknown_option>},
                                       {"_suggested", protect<l_suggested>},
                                       {nullptr, nullptr}};
  lua_pushvalue(L, module);
  luaL_setfuncs(L, functions, 0);
  lua_pop(L, 1);
}

}  // namespace cloud
